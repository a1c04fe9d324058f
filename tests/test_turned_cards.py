"""Cards lying turned on the table (a fanned scan pile, a card dropped askew) are read: the
finder boxes bands along the table's axes only, so whole turned cards are found by their
outline (vision/turned_cards.py) and named upright."""

from __future__ import annotations

import math
from functools import cache

import cv2
import numpy as np
import pytest

from companion import layout
from companion.deck.deckdir import Deck, load_deck
from companion.deck.designs import design_deck
from companion.synth.frame import Frame
from companion.synth.scene import PlacedCard, Scene, fan
from companion.vision.calibration import calibrate
from companion.vision.naming import Naming
from companion.vision.turned_cards import CardPose, turned_cards
from tests.plane_helpers import kit_view

FAN = ("nori-0", "shiitake-3", "menma-6", "kamaboko-2", "chashu-4", "negi-7")
"""Laid left to right, each on the one before: only negi-7 shows whole."""
ASKEW = (("ajitama-5", (150.0, 330.0), 35.0), ("menma-1", (300.0, 330.0), -62.0))
"""Loose cards dropped on the table, turned 35 and 62 degrees (the latter nearer landscape)."""


def _scene(seed: int) -> Scene:
    rng = np.random.default_rng(seed)
    scan = layout.region_by_id("scan").rect
    pile = fan(list(FAN), (scan.center[0], scan.center[1] + 60.0), rng, "scan")
    loose = [PlacedCard(cid, centre, angle, True, None) for cid, centre, angle in ASKEW]
    return Scene((*pile, *loose), "felt", seed)


@cache
def table(deck_name: str) -> Frame:
    """The kit's camera (700 mm, straight down) over a fan and two askew cards."""
    return kit_view(_deck(deck_name), _scene(5), 5)


@cache
def _deck(name: str) -> Deck:
    return load_deck(None) if name == "default" else design_deck(name, 3)


def _whole_turned(frame: Frame) -> dict[str, tuple[float, float]]:
    return {
        c["card"]: tuple(c["center_mm"])
        for c in frame.truth["cards"]
        if c["visible_fraction"] > 0.95 and abs((c["angle_deg"] + 45.0) % 90.0 - 45.0) > 20.0
    }


def test_the_scene_holds_turned_whole_cards():
    """The test's own premise: the fan's last card and the two loose ones lie whole and
    turned more than 20 degrees."""
    assert set(_whole_turned(table("default"))) == {"negi-7", "ajitama-5", "menma-1"}


@pytest.mark.parametrize("deck_name", ["default", "tarot", "minimal"])
def test_turned_whole_cards_are_found_where_they_lie(deck_name):
    from companion.vision.plane import rectify

    frame = table(deck_name)
    cal = calibrate(frame.image)
    assert cal is not None
    poses = turned_cards(rectify(frame.image, cal))
    for card, centre in _whole_turned(frame).items():
        near = [p for p in poses if math.dist(p.center_mm, centre) < 4.0]
        assert near, f"{card} at {centre} not found among {poses}"


def test_cards_along_the_tables_axes_and_a_lone_edge_are_not_turned_cards():
    """Upright cards are the strip finder's; a ruler's straight edge is no card."""
    view = np.full((440, 780, 3), (60, 110, 70), np.uint8)
    cv2.rectangle(view, (100, 100), (163, 188), (235, 235, 235), -1)  # upright card
    cv2.rectangle(view, (300, 100), (388, 163), (235, 235, 235), -1)  # landscape card
    ruler = cv2.boxPoints(((560.0, 250.0), (260.0, 20.0), 30.0)).astype(np.int32)
    cv2.fillPoly(view, [ruler], (30, 200, 230))
    assert turned_cards(view) == []


def test_a_turned_card_on_plain_cloth_is_posed_to_the_millimetre():
    view = np.full((440, 780, 3), (60, 110, 70), np.uint8)
    corners = cv2.boxPoints(((400.0, 220.0), (63.0, 88.0), -40.0))
    cv2.fillPoly(view, [np.round(corners).astype(np.int32)], (235, 235, 235))
    poses = turned_cards(view)
    assert len(poses) == 1
    pose = poses[0]
    assert math.dist(pose.center_mm, (400.0, 220.0)) < 1.5
    sides = np.roll(corners, -1, axis=0) - corners
    long_side = max(sides, key=lambda v: float(np.hypot(*v)))
    want = math.degrees(math.atan2(long_side[0], long_side[1]))  # as CardPose.angle_deg
    off = abs((pose.angle_deg - want + 90.0) % 180.0 - 90.0)  # which end is the top: unknown
    assert off < 2.0
    assert abs(abs(pose.angle_deg) - 40.0) < 2.0


def _striped_card_view(centre: tuple[float, float], turn_deg: float) -> np.ndarray:
    """Mid-red cloth and one card whose print is diagonal stripes, darker and lighter than the
    cloth in turn, running off its rim (a foil or full-bleed design): each side's edge flips
    polarity every stripe."""
    view = np.full((440, 780, 3), (70, 80, 200), np.uint8)
    stripes = np.zeros_like(view)
    yy, xx = np.mgrid[0 : view.shape[0], 0 : view.shape[1]]
    dark = ((xx + 2 * yy) // 28) % 2 == 0
    stripes[dark] = (40, 30, 60)
    stripes[~dark] = (220, 215, 235)
    corners = cv2.boxPoints((centre, (63.0, 88.0), turn_deg))
    mask = np.zeros(view.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(corners).astype(np.int32)], 255)
    view[mask > 0] = stripes[mask > 0]
    return cv2.GaussianBlur(view, (3, 3), 0)


@pytest.mark.parametrize("turn_deg", [-50.0, -30.0, 25.0, 35.0, 45.0, 60.0])
def test_a_card_whose_rim_flips_from_dark_to_light_is_still_found(turn_deg):
    """Its sides show only as short pieces of edge, none of them a card's side long."""
    view = _striped_card_view((400.0, 220.0), turn_deg)
    poses = turned_cards(view)
    assert poses, "the striped card was not found"
    assert math.dist(poses[0].center_mm, (400.0, 220.0)) < 3.0


@cache
def _detector(deck_name: str):
    from companion.vision.detector import CardDetector

    deck = _deck(deck_name)
    return CardDetector(deck=None if deck_name == "default" else deck, reuse_names=False)


@pytest.mark.parametrize("deck_name", ["default", "tarot", "minimal"])
def test_turned_whole_cards_are_read_and_nothing_off_the_table(deck_name):
    frame = table(deck_name)
    cal = calibrate(frame.image)
    reading = _detector(deck_name).detect(frame.image, cal)
    read = {c.card: c for c in reading.cards}
    for card, centre in _whole_turned(frame).items():
        assert card in read, f"{card} not read ({sorted(read)})"
        # placed on its own card: one of its ends, within half a card of its centre
        assert math.dist(read[card].center_mm, centre) < layout.CARD_H_MM / 2
    assert set(read) <= {c["card"] for c in frame.truth["cards"]}
    assert read["negi-7"].region == "scan"


def test_a_turned_card_stays_read_while_the_table_changes_elsewhere():
    """The live path searches only around a change; the turned cards read before stand, and a
    card turned in the change is found there."""
    from companion.vision.backends import load_model, model_path
    from companion.vision.detector import CardDetector

    if not model_path("ncnn").exists():
        pytest.skip("no NCNN model")
    frame = table("default")
    cal = calibrate(frame.image)
    assert cal is not None
    det = CardDetector(load_model("ncnn", threads=1))
    first = {c.card for c in det.detect(frame.image, cal).cards}
    assert {"negi-7", "ajitama-5", "menma-1"} <= first
    changed = frame.image.copy()  # a coin put down in the Fridge, far from the turned cards
    centre = cal.to_image(np.array([[120.0, 60.0]]))[0]
    cv2.circle(changed, tuple(int(v) for v in centre), 25, (40, 120, 200), -1)
    part = det.detect(changed, cal)
    assert part.searched and part.search_share < 1.0
    assert {"negi-7", "ajitama-5", "menma-1"} <= {c.card for c in part.cards}


def test_a_pose_from_the_view_maps_to_the_named_card_frame():
    """The turned calibration shows the card upright at its own centre."""
    from companion.vision.turned_cards import turned_calibration

    frame = table("default")
    cal = calibrate(frame.image)
    assert cal is not None
    pose = CardPose((150.0, 330.0), 35.0)
    upright = turned_calibration(cal, pose)
    # the upright frame's top band centre is the true card's top band centre
    top_upright = upright.to_image(np.array([[150.0, 330.0 - layout.CARD_H_MM / 2 + 6.0]]))[0]
    a = math.radians(35.0)
    along = np.array([math.sin(a), math.cos(a)])  # the long axis, as Naming.angle_deg has it
    top_true = np.array([150.0, 330.0]) - along * (layout.CARD_H_MM / 2 - 6.0)
    assert np.linalg.norm(top_upright - cal.to_image(top_true[None])[0]) < 0.5


def test_a_pose_found_off_along_the_card_snaps_onto_its_outline():
    """A fan lays its cards' long edges parallel a few millimetres apart: a pose made from
    them can sit half a band along the card. It is snapped onto the outline that shows."""
    import cv2

    from companion.vision.turned_cards import _snapped

    view = np.full((440, 780, 3), (60, 110, 70), np.uint8)
    corners = cv2.boxPoints(((400.0, 220.0), (63.0, 88.0), -40.0))
    cv2.fillPoly(view, [np.round(corners).astype(np.int32)], (235, 235, 235))
    gray = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    true = turned_cards(view)[0]
    a = math.radians(true.angle_deg)
    along = np.array([math.sin(a), math.cos(a)])
    off = CardPose(tuple(np.asarray(true.center_mm) + 14.0 * along), true.angle_deg)
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    support, snapped = _snapped(gx, gy, off)
    assert support > 0.95
    # to the snap's 2 mm step: the namers look for the band 4 mm round where it is put
    assert math.dist(snapped.center_mm, (400.0, 220.0)) < 3.0


@pytest.mark.parametrize(
    ("end", "upside_down", "off_mm", "read"),
    [
        (0, False, 0.0, True),
        (0, True, 0.0, False),
        (1, True, 0.0, True),
        (1, False, 0.0, False),
        (0, False, 14.0, False),
    ],
)
def test_a_turned_cards_band_is_its_only_when_it_puts_the_card_on_the_outline(
    end, upside_down, off_mm, read
):
    """The pose says which way each end faces: its first band is a top band (read upright),
    its second a bottom band (read upside down). A band read the other way, or fitted to
    something off the pose (a fan's first card, posed from the fan's edges, its top band the
    other cards' corners: minimal-1's chashu-5 at 0.997), puts the card off the outline: a
    face-down card's back read as a band of the deck (held-out minimal-1, 0.6)."""
    from companion.vision.detector import CardDetector
    from companion.vision.plane import rectify

    frame = table("default")
    cal = calibrate(frame.image)
    centre = _whole_turned(frame)["negi-7"]
    pose = next(
        p for p in turned_cards(rectify(frame.image, cal)) if math.dist(p.center_mm, centre) < 4
    )

    class OneBandNamer:  # what the namer made of the pose's two bands
        def name_boxes(self, image, cal, boxes, light=None, found=None):
            x0, y0, x1, y1 = boxes[end]
            at = ((x0 + x1) / 2, (y0 + y1) / 2 + off_mm)
            naming = Naming("menma-5", 0.9, 0.1, "menma-4", upside_down, 0.0, at, 0.6)
            return [naming if k == end else None for k in range(len(boxes))]

    detector = CardDetector(model=object(), classifier=None, reuse_names=False)  # type: ignore[arg-type]
    detector.namer = OneBandNamer()  # type: ignore[assignment]
    reading = detector._read_turned(frame.image, cal, pose)
    assert (reading is not None and reading.card == "menma-5") == read


def test_of_two_whole_cards_posed_across_each_other_the_surer_stands():
    """A fan's edges can fit a card askew across the top card: two whole cards cannot overlap."""
    from companion.vision.detector import CardReading, whole_cards_apart

    def read(card: str, pose: CardPose, p: float) -> tuple[CardPose, CardReading]:
        naming = Naming(card, 0.9, 0.1, card, False, 0.0, pose.center_mm, p)
        return pose, CardReading(card, p, (0, 0, 1, 1), "scan", pose.center_mm, naming)

    top = read("menma-1", CardPose((560.0, 230.0), 46.0), 1.0)
    across = read("menma-4", CardPose((580.0, 218.0), 24.0), 0.84)
    apart = read("nori-3", CardPose((400.0, 230.0), -30.0), 0.9)
    assert whole_cards_apart([across, top, apart]) == [top, apart]
