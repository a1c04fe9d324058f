"""What the game knows of a pile in the scan area makes an unsure reading of it surer.

At the end each player spreads a served pile in the scan area; the game saw those cards served,
one by one over many frames, and expects them back. A card the camera reads there too unsurely
to name it outright (a pale look-alike at 720p: held-out minimal-1's ajitama and nori at
0.07-0.45) is still evidence: a reading that names, of 56 cards, exactly one of the pile's few
cards not read surely is seldom wrong. Pure Python, no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from companion.cards import CARD_IDS

SCAN_REGION = "scan"
SAME_PILE = 0.95
"""Prior that a card in the spread pile is one of its served cards not read surely: piles come
back as they were served nearly always (a card swapped or lost is what the cross-check is for,
and the camera then reads the other card as surely as ever)."""
SURE = 0.6
"""A reading this confident is a card seen (the settler's full vote)."""


def with_pile(
    pile: Collection[str], readings: Iterable[tuple[str, str, float, str]]
) -> dict[str, float]:
    """Card -> its probability given the pile, for the scan area's readings ((card, region,
    confidence, runner-up), one per card) of cards of `pile` not read surely, where that is
    higher than the reading's own. The reading says its card with probability p and any other
    card with (1 - p) / 55; the place holds one of the n cards of the pile not read surely with
    probability SAME_PILE, any other card with the rest. A reading whose runner-up is such a
    card too is left alone: its doubt lies between two cards the pile holds."""
    scan = [r for r in readings if r[1] == SCAN_REGION]
    missing = set(pile) - {card for card, _, p, _ in scan if p >= SURE}
    n = len(missing)
    others = len(CARD_IDS) - 1
    out: dict[str, float] = {}
    for card, _, p, runner_up in scan:
        if card not in missing or runner_up in missing:
            continue
        mine = SAME_PILE / n * p
        rest = (SAME_PILE * (n - 1) / n + 1 - SAME_PILE) * (1 - p) / others
        posterior = mine / (mine + rest)
        if posterior > p:
            out[card] = posterior
    return out
