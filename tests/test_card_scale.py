"""A still photo without markers takes the table's scale from its whole cards
(vision/card_scale.py), and `companion detect` says which scale it used."""

from __future__ import annotations

import json
from functools import cache

import cv2
import numpy as np
import pytest

from companion import layout
from companion.cli import main
from companion.deck.deckdir import load_deck
from companion.synth.camera import Light, look_at_camera
from companion.synth.frame import Frame, render_scene
from companion.synth.raster import Look
from companion.synth.scene import PlacedCard, Scene, cascade
from companion.vision.card_scale import calibration_from_cards
from companion.vision.detector import nominal_calibration

CLEAN = Light(blur_px=0.0, noise=0.0, jpeg_quality=95, gradient=(0.0, 0.0, 0.0), wb_error=0.0)
FLAT_LOOK = Look(shadow_strength=0.0, hand_shadow_strength=0.0, glare=(), paper_noise=0.0)
FRIDGE = ("nori-4", "chashu-5", "negi-2", "menma-1")


@cache
def oblique_photo() -> Frame:
    """Four Fridge cards and a bowl, no markers, from 900 mm up and 30 degrees off vertical:
    the kit camera guessed (700 mm, straight down) is far off."""
    rng = np.random.default_rng(3)
    fridge = [
        PlacedCard(cid, slot.center, 0.0, True, "fridge")
        for cid, slot in zip(FRIDGE, layout.fridge_slots(), strict=True)
    ]
    bowl = layout.region_by_id("bowl-2").rect
    pile = cascade(
        ["ajitama-3", "shiitake-6", "kamaboko-2"], (bowl.center[0], bowl.y0 + 8), rng, "bowl-2", 0.0
    )
    scene = Scene((*fridge, *pile), "felt", 5, markers=False)
    camera = look_at_camera(1920, (390.0, 220.0), 900.0, 30.0, 80.0, 2.0)
    return render_scene(load_deck(None), scene, camera, CLEAN, FLAT_LOOK, rng)


@cache
def detector():
    from companion.vision.backends import load_model
    from companion.vision.detector import CardDetector

    return CardDetector(load_model(), load_deck(None), reuse_names=False)


def test_cards_give_the_planes_scale():
    frame = oblique_photo()
    cal = calibration_from_cards(frame.image)
    assert cal is not None and not cal.regions_known and cal.markers == ()
    # 88 mm along a card on the measured plane is 88 mm on the true one, anywhere in view
    true = np.linalg.inv(frame.camera.image_from_plane)
    for card in frame.truth["cards"][:4]:
        corners = np.asarray(card["polygon_px"], np.float64)
        on_plane = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), cal.plane_from_image)
        on_true = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), true)
        sides = np.linalg.norm(np.diff(on_plane.reshape(-1, 2)[[0, 1, 2]], axis=0), axis=1)
        true_sides = np.linalg.norm(np.diff(on_true.reshape(-1, 2)[[0, 1, 2]], axis=0), axis=1)
        assert sides == pytest.approx(true_sides, rel=0.04)


@pytest.mark.slow
def test_oblique_photo_is_read_at_the_cards_scale():
    """Every Fridge card is named with the cards' scale; the guessed camera names fewer."""
    frame = oblique_photo()
    cal = calibration_from_cards(frame.image)
    assert cal is not None
    got = {r.card for r in detector().detect(frame.image, cal).cards}
    guessed = {
        r.card for r in detector().detect(frame.image, nominal_calibration(frame.image)).cards
    }
    on_table = {c["card"] for c in frame.truth["cards"]}
    assert set(FRIDGE) <= got
    assert got <= on_table
    assert len(got & on_table) > len(guessed & on_table)


@pytest.mark.parametrize(
    "image",
    [
        np.full((720, 1280, 3), (40, 120, 30), np.uint8),
        np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8),
        np.zeros((20, 20, 3), np.uint8),
    ],
    ids=["plain table", "noise", "tiny"],
)
def test_no_card_no_scale(image):
    assert calibration_from_cards(image) is None


@pytest.mark.slow
def test_detect_says_where_the_scale_came_from(tmp_path, capsys):
    """The detect command: a note for the cards' scale, the plain 'no markers' warning for a
    photo with no whole card; exit 0 and the JSON contract either way."""
    cards = tmp_path / "cards.jpg"
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(cards), oblique_photo().image)
    cv2.imwrite(str(blank), np.full((720, 1280, 3), (40, 120, 30), np.uint8))
    assert main(["detect", str(cards), str(blank), "--json"]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["image"] for line in lines] == [str(cards), str(blank)]
    assert set(FRIDGE) <= {c["card"] for c in lines[0]["cards"]}
    assert all(c["region"] is None for c in lines[0]["cards"])
    assert lines[1]["cards"] == []
    notes = err.splitlines()
    assert (
        f"{cards}: no table markers in view: the table's scale was taken from the whole cards"
        in notes[0]
    )
    assert f"{blank}: this photo has no table markers and no whole card" in notes[1]
    assert "--calibration" in notes[1] and "Traceback" not in err
