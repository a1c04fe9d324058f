"""The default deck under a lamp's sheen: strips its own strip namer is unsure of are named
against its faces too (`default_naming`)."""

from __future__ import annotations

import pytest

from companion.deck.deckdir import default_deck
from companion.synth.scene import Scene
from companion.vision.detector import CardDetector
from tests.plane_helpers import kit_view, sheen_over, three_bowls

CARD_SETS = (
    (
        *("chashu-0", "chashu-3", "nori-2", "chashu-5"),
        *("shiitake-4", "chashu-7", "kamaboko-1", "chashu-1"),
        *("menma-3", "chashu-2", "negi-6", "ajitama-4"),
    ),
    (
        *("ajitama-1", "nori-5", "menma-7", "kamaboko-2"),
        *("negi-0", "shiitake-3", "ajitama-6", "nori-0"),
        *("menma-2", "kamaboko-6", "negi-4", "shiitake-7"),
    ),
)
VEIL = 0.6
"""White mirrored over the middle of every card (linear): a lamp's sheen on a glossy deck
(path-traced default-deck tables wash whole bowls to pastels)."""


@pytest.mark.parametrize("cards", CARD_SETS, ids=["dark", "mixed"])
def test_default_cards_under_a_sheen_are_all_read(cards: tuple[str, ...]):
    """Every card of three cascades is read, none as a card not on the table. By the strip
    layout alone 1 and 3 of these 12 went unread (ajitama-4; ajitama-1, nori-5 and
    kamaboko-6): washed, their numeral panels and glyphs fit no strip surely."""
    image = sheen_over(kit_view(default_deck(), Scene(three_bowls(cards), "felt", 5), 5), VEIL, 5)
    read = {
        r.card: round(r.confidence, 2) for r in CardDetector(reuse_names=False).detect(image).cards
    }
    assert set(read) == set(cards), (sorted(set(cards) - set(read)), read)


def test_drawn_faces_are_the_default_faces():
    """The faces the second opinion reads, drawn one at a time, are the printed deck's."""
    lazy, whole = default_deck(lazy=True), default_deck()
    for cid in ("ajitama-0", "nori-5", "shiitake-7"):
        assert (lazy.face(cid) == whole.face(cid)).all()
