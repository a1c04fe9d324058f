"""The renderer's ground truth matches its pixels, shrinks under overlap, and is reproducible."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.deck.deckdir import load_deck
from companion.synth.camera import Light, look_at_camera
from companion.synth.frame import FrameSpec, render_frame, render_scene
from companion.synth.raster import Look
from companion.synth.scene import Hand, PlacedCard, Scene, SceneStyle, random_scene


@pytest.fixture(scope="module")
def deck():
    return load_deck(None)


CLEAN = Light(blur_px=0.0, noise=0.0, jpeg_quality=98, gradient=(0.0, 0.0, 0.0), wb_error=0.0)
FLAT_LOOK = Look(shadow_strength=0.0, hand_shadow_strength=0.0, glare=(), paper_noise=0.0)


def _camera(k1: float = -0.05, tilt: float = 6.0):
    return look_at_camera(1280, (390.0, 220.0), 700.0, tilt, 30.0, 2.0, k1=k1)


def _scene(*items) -> Scene:
    return Scene(tuple(items), "flat", 3, markers=False)


def _render(deck, *items, cam=None):
    return render_scene(
        deck, _scene(*items), cam or _camera(), CLEAN, FLAT_LOOK, np.random.default_rng(0)
    )


def _fill(shape, polygon) -> np.ndarray:
    m = np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(m, [np.round(np.asarray(polygon) * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
    return m.astype(bool)


@pytest.mark.parametrize(
    ("card_id", "center", "angle"),
    [
        ("ajitama-3", (390.0, 220.0), 0.0),
        ("chashu-5", (150.0, 120.0), 23.0),
        ("negi-0", (650.0, 360.0), 181.0),
    ],
)
def test_card_polygon_matches_pixels(deck, card_id, center, angle):
    frame = _render(deck, PlacedCard(card_id, center, angle))
    card = frame.truth["cards"][0]
    # whatever differs from the flat table's colour is the card
    table = np.median(frame.image.reshape(-1, 3), axis=0)
    seen = np.abs(frame.image.astype(np.float32) - table).max(axis=2) > 40
    seen = cv2.morphologyEx(seen.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 5))).astype(bool)
    truth = _fill(frame.image.shape, card["polygon_px"])
    iou = (seen & truth).sum() / (seen | truth).sum()
    assert iou > 0.95
    assert card["visible_fraction"] == pytest.approx(1.0, abs=0.01)
    assert [s["visible_fraction"] for s in card["strips"]] == pytest.approx([1.0, 1.0], abs=0.02)


def test_covering_card_shrinks_visible_fraction(deck):
    below = PlacedCard("negi-2", (390.0, 200.0), 0.0)
    above = PlacedCard("menma-5", (390.0, 216.0), 0.0)  # one index strip lower: a cascade
    alone = _render(deck, below).truth["cards"][0]
    both = _render(deck, below, above).truth["cards"]
    first, second = both
    assert alone["visible_fraction"] == pytest.approx(1.0, abs=0.01)
    assert first["visible_fraction"] == pytest.approx(16 / 88, abs=0.03)
    top, bottom = first["strips"]
    assert top["visible_fraction"] > 0.95 and bottom["visible_fraction"] == 0.0
    assert second["visible_fraction"] == pytest.approx(1.0, abs=0.01)
    # the visible polygon of the lower card is the 16 mm band above the upper one
    band = _fill(_render(deck, below).image.shape, first["visible_polygons_px"][0]).sum()
    full = _fill(_render(deck, below).image.shape, first["polygon_px"]).sum()
    assert band / full == pytest.approx(16 / 88, abs=0.03)


def test_hand_over_a_strip_is_counted(deck):
    card = PlacedCard("chashu-7", (390.0, 220.0), 0.0)
    hand = Hand(root=(390.0, 900.0), tip=(390.0, 190.0), skin=(120, 150, 200))
    truth = _render(deck, card, hand).truth["cards"][0]
    top = truth["strips"][0]
    assert top["hand_fraction"] > 0.5
    assert top["visible_fraction"] < 0.5
    assert truth["visible_fraction"] < 0.5


def test_outside_the_frame_is_not_visible(deck):
    cam = look_at_camera(1280, (390.0, 220.0), 700.0)
    fp = cam.footprint_mm()
    x_edge = float(fp[:, 0].max())
    truth = _render(deck, PlacedCard("nori-1", (x_edge, 220.0), 0.0), cam=cam).truth["cards"][0]
    assert truth["visible_fraction"] == pytest.approx(0.5, abs=0.06)


def test_same_seed_same_bytes_other_seed_differs(deck):
    a = render_frame(deck, 11, 2, FrameSpec())
    b = render_frame(deck, 11, 2, FrameSpec())
    c = render_frame(deck, 12, 2, FrameSpec())
    assert a.image.tobytes() == b.image.tobytes()
    assert json.dumps(a.truth) == json.dumps(b.truth)
    assert a.image.shape != c.image.shape or a.image.tobytes() != c.image.tobytes()


def test_train_and_test_splits_use_other_streams(deck):
    a = render_frame(deck, 5, 0, FrameSpec(split="train"))
    b = render_frame(deck, 5, 0, FrameSpec(split="test"))
    assert a.truth["seed"] != b.truth["seed"]
    assert [c["card"] for c in a.truth["cards"]] != [c["card"] for c in b.truth["cards"]]


def test_random_scene_cards_are_unique_and_markers_are_seen(deck):
    for i in range(3):
        f = render_frame(deck, 21, i, FrameSpec(hard=True))
        ids = [c["card"] for c in f.truth["cards"]]
        assert len(ids) == len(set(ids))
        seen = [m for m in f.truth["markers"] if m["visible_fraction"] > 0.99]
        assert seen
        for m in seen:  # corners lie inside the frame
            pts = np.asarray(m["corners_px"])
            assert (pts >= -1).all() and (pts[:, 0] <= f.image.shape[1]).all()


def _laid_angles(style: SceneStyle) -> np.ndarray:
    """|angle| of the cards laid in the Fridge and the bowls, folded to 0..90 (a card laid
    upside down is as straight as one laid upright); the scan area may hold a fan."""
    out = []
    for seed in range(12):
        scene = random_scene(np.random.default_rng(seed), style)
        for item in scene.items:
            if isinstance(item, PlacedCard) and item.region not in (None, "scan"):
                out.append(abs((item.angle + 90.0) % 180.0 - 90.0))
    return np.asarray(out)


def test_laid_cards_sit_as_straight_as_the_skew_allows() -> None:
    """The benchmark's --skew slice lays cards as a player may (the README: within about 10
    degrees), spread across that range; the default scenes stay nearly straight."""
    straight = _laid_angles(SceneStyle())
    skewed = _laid_angles(SceneStyle(skew_deg=10.0))
    assert len(straight) > 100 and len(skewed) > 100
    assert np.median(straight) < 2.5 and straight.max() <= 10.0
    assert skewed.max() <= 10.0
    assert 4.0 < np.median(skewed) < 6.0  # uniform over 0..10: a median near 5
    assert (skewed > 8.0).mean() > 0.1


def _bowl_angles(truth: dict) -> np.ndarray:
    return np.asarray(
        [
            abs((c["angle_deg"] + 90.0) % 180.0 - 90.0)
            for c in truth["cards"]
            if str(c["placed_region"]).startswith("bowl")
        ]
    )


def test_skew_reaches_the_rendered_frame(deck) -> None:
    skewed = _bowl_angles(render_frame(deck, 31, 0, FrameSpec(split="test", skew_deg=10.0)).truth)
    straight = _bowl_angles(render_frame(deck, 31, 0, FrameSpec(split="test")).truth)
    assert len(skewed) >= 5 and len(straight) >= 5
    assert skewed.max() <= 10.0
    assert np.median(skewed) > np.median(straight) + 1.5
