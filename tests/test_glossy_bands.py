"""Cascades of glossy cards mirroring a broad light: the middle of each card veiled in grey
light, its curled rim not (path-traced frames: `benchmarks/pathtraced/`)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.synth.scene import Scene
from companion.vision.detector import CardDetector
from tests.plane_helpers import kit_view, ornate, sheen_over, three_bowls

CARDS = (
    *("chashu-0", "chashu-3", "nori-2", "chashu-5"),
    *("shiitake-4", "chashu-7", "kamaboko-1", "chashu-1"),
    *("menma-3", "chashu-2", "negi-6", "ajitama-4"),
)
VEIL = 0.3
"""Grey light mirrored over the middle of each card (linear, of white): path-traced ornate-1
plain frame 1's chashu-0 shows about 0.4 over its dark teal."""


def glossy_bowls(rim_mm: float) -> np.ndarray:
    """The three cascades in the kit's view, every card's middle veiled inside `rim_mm`."""
    return sheen_over(kit_view(ornate(), Scene(three_bowls(CARDS), "felt", 5), 5), VEIL, rim_mm)


@pytest.mark.parametrize("rim_mm", [5.0, 4.0])
def test_dark_cards_under_a_sheen_are_read_by_their_own_colour(rim_mm: float):
    """All 12 are read and none as a card not on the table, with a rim of 5 mm (about that
    chashu-0's) or 4 mm (the veil's edge just under the numerals' tops). A veiled dark teal is
    lighter and greyer than any lamp makes a card, and the veil ends at the rim, across each
    band: one veil fits no band, and before the sheen was taken off (`sheen`) 4 of the 12
    were read, a chashu-1 as a shiitake-1 (3 of 12 with the 4 mm rim). Taking it off with the
    rim closed over as if it were a numeral's stroke read 2 of 12 with the wrong value at
    4 mm (`sheen.CLOSE_MM`)."""
    image = glossy_bowls(rim_mm)
    cards = CardDetector(deck=ornate(), reuse_names=False).detect(image).cards
    read = {r.card: round(r.confidence, 2) for r in cards}
    assert set(read) == set(CARDS), (sorted(set(CARDS) - set(read)), read)
