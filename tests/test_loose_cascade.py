"""A loosely laid cascade of a design with numerals in both top corners and a diagonal sheen:
each card turned a few degrees from the one above. The edge a band's tilt is taken from may be
the card above's, and a band read at that tilt fits its own way up worse than upside down (the
sheen and the centred icon look alike both ways), and its numerals were read as another
value."""

from __future__ import annotations

from functools import cache

from companion.deck.designs import design_deck
from companion.synth.scene import PlacedCard, Scene
from companion.vision.detector import CardDetector, FrameReading
from tests.plane_helpers import kit_view, three_bowls

INGREDIENTS = ("ajitama", "shiitake", "chashu", "menma", "nori", "negi", "kamaboko")
VALUES = (7, 6, 2, 4, 1, 0, 5, 3)
ANGLES = (-5.0, 1.0)
"""Every other card turned 6 degrees from its neighbours (held-out `foil` benchmark frames:
a kamaboko-7 at 0.8 degrees under a kamaboko-6 at -5.4 was read as a kamaboko-6)."""


def bowls() -> tuple[PlacedCard, ...]:
    return three_bowls([f"{INGREDIENTS[k % 7]}-{VALUES[k % 8]}" for k in range(12)], ANGLES)


@cache
def reading() -> FrameReading:
    deck = design_deck("foil", 1)
    frame = kit_view(deck, Scene(bowls(), "felt", 5), 5)
    return CardDetector(deck=deck, reuse_names=False).detect(frame.image)


def test_a_loose_cascade_is_read_without_a_phantom_card():
    """The 12 cards are read, and nothing else. Before each way up was also read at the other
    way's tilt: Bowl 3's last card (nori-4) was read right from its top and as a nori-6 from
    its bottom end (0.55), a card that is not on the table."""
    truth = {c.card for c in bowls()}
    read = {r.card: round(r.confidence, 2) for r in reading().cards}
    assert set(read) == truth, (sorted(truth - set(read)), {c: read[c] for c in set(read) - truth})
