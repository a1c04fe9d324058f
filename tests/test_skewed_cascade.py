"""A bowl laid as loosely as the README allows (cards within about 10 degrees of straight, each
at its own angle) is read whole: the next card lying across a strip's lower part at another
angle must not set the angle the strip is read at."""

from __future__ import annotations

from functools import cache

import numpy as np

from companion import layout
from companion.deck.deckdir import load_deck
from companion.synth.frame import Frame
from companion.synth.scene import PlacedCard, Scene
from tests.plane_helpers import kit_view

BOWL = (
    ("menma-3", 0.0),
    ("ajitama-6", 9.5),
    ("kamaboko-4", -8.5),
    ("nori-2", 9.0),
    ("chashu-5", -9.5),
    ("shiitake-7", 8.0),
    ("negi-1", 0.0),
)
"""Top to bottom, each card on the one before, 17 mm lower."""


@cache
def table() -> Frame:
    top = layout.region_by_id("bowl-1").rect
    cx, y = top.center[0], top.y0 + 10.0 + layout.CARD_H_MM / 2
    cards = [
        PlacedCard(cid, (cx, y + 17.0 * i), angle, True, "bowl-1")
        for i, (cid, angle) in enumerate(BOWL)
    ]
    return kit_view(load_deck(None), Scene(tuple(cards), "felt", 3), 3)


def test_the_bowl_shows_every_cards_top_strip():
    """The test's premise: every card's top strip shows at least 60 %."""
    shown = {c["card"]: c["strips"][0]["visible_fraction"] for c in table().truth["cards"]}
    assert set(shown) == {cid for cid, _ in BOWL}
    assert min(shown.values()) >= 0.6, shown


def test_a_loosely_laid_bowl_is_read_whole():
    from companion.vision.detector import CardDetector

    reading = CardDetector().detect(table().image)
    read = {r.card: r for r in reading.cards}
    assert {cid for cid, _ in BOWL} <= set(read), sorted(read)
    assert {read[cid].region for cid, _ in BOWL} == {"bowl-1"}
    assert len(reading.cards) == len(BOWL), sorted(read)


def test_two_crossing_card_edges_are_both_found():
    """Where two cards cross, each one's edge is a candidate tilt, the longer first: a pale
    card's edge at 8 degrees across the patch, a shorter brown one at -5 under it (with a
    camera's noise, which sets how thin an edge the vote sees)."""
    import cv2

    from companion.vision.skew import line_skew_deg, line_skews_deg

    img = np.full((60, 160, 3), 40.0, np.float32)
    for angle, y0, x1, colour in ((8.0, 30, 160, (220, 220, 220)), (-5.0, 45, 100, (30, 60, 120))):
        t = np.tan(np.radians(angle))
        # image y points down: a line turned counter-clockwise rises to the right
        pts = np.array([[0, y0], [x1, y0 - x1 * t], [x1, 60], [0, 60]], np.int32)
        cv2.fillConvexPoly(img, pts, colour)
    noise = np.random.default_rng(0).normal(0, 8, img.shape)
    patch = np.clip(img + noise, 0, 255).astype(np.uint8)
    found = line_skews_deg(patch, 3)
    assert abs(found[0] - 8.0) < 1.0, found
    assert any(abs(a + 5.0) < 1.0 for a in found[1:]), found
    assert line_skew_deg(patch) == found[0]
