"""A deck whose values differ only low in a tall corner index (a seven-segment 5 and 6 share
their top half): its bands are compared as deep as its index goes (`band_naming.INDEX_SHARE`)."""

from __future__ import annotations

from functools import cache

import pytest

from benchmarks.outsider_decks import outsider_deck
from companion.deck.deckdir import Deck
from companion.synth.scene import Scene
from companion.vision.band_naming import TOP_MM, BandNamer
from companion.vision.detector import CardDetector
from tests.plane_helpers import kit_view, ornate, three_bowls

CARDS = (
    *("ajitama-5", "ajitama-6", "chashu-2", "chashu-3"),
    *("menma-3", "menma-7", "negi-6", "negi-5"),
    *("kamaboko-3", "kamaboko-2", "nori-6", "shiitake-5"),
)
"""Pairs whose seven-segment numerals differ only below the index's middle bar."""


@cache
def segments() -> Deck:
    """Drawn by `benchmarks/outsider_decks.py`, code no model or constant was made on."""
    return outsider_deck("segment", 1)


def test_a_deck_with_its_values_apart_only_low_in_the_index_is_compared_deeper():
    assert BandNamer(segments(), embedder=False).index_mm > TOP_MM + 2.0
    assert BandNamer(ornate(), embedder=False).index_mm == TOP_MM


@pytest.mark.parametrize("seed", [5, 6])
def test_seven_segment_values_that_share_their_top_half_are_told_apart(seed: int):
    """All 12 read, none as another card, cascaded at the kit's step (17 mm). Compared over
    the top 12 mm only, where a 5 and a 6 (a 2 and a 3, a 3 and a 7) look the same, the
    held-out benchmark's frames of this deck read 59-65 % of their cards (`foreign_decks.py
    --families segment`)."""
    image = kit_view(segments(), Scene(three_bowls(CARDS), "felt", seed), seed).image
    cards = CardDetector(deck=segments(), reuse_names=False).detect(image).cards
    read = {r.card: round(r.confidence, 2) for r in cards}
    assert set(read) == set(CARDS), (sorted(set(CARDS) - set(read)), read)
