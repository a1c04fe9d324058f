"""What the game knows makes a reading surer, or says it is some other card.

- A pile spread in the scan area at the end: the game saw those cards served, one by one over
  many frames, and expects them back. A card the camera reads there too unsurely to name it
  outright (a pale look-alike at 720p: held-out minimal-1's ajitama and nori at 0.07-0.45) is
  still evidence: a reading that names, of 56 cards, exactly one of the pile's few cards not
  read surely is seldom wrong (`with_pile`).
- A card already served cannot lie on the table again: a reading of it is a misreading, and
  half the time the namer's runner-up is the card there (`instead_of_served`).

Pure Python, no I/O.
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


RUNNER_UP_RIGHT = 0.5
"""Share of wrong readings whose runner-up is the card really there: 10 of 20 readings over the
gate named wrong on held-out ornate-1 and minimal-1 scenes (`foreign_decks.py` frames, plain
and hard)."""


def instead_of_served(
    served: Collection[str], readings: Iterable[tuple[str, str, float, str]]
) -> dict[str, tuple[str, str, float]]:
    """Card read -> (runner-up, region, probability) for readings ((card, region, confidence,
    runner-up)) outside the scan area of a card already served whose runner-up is not served
    and not read itself: the card read is not there, its runner-up is with probability
    RUNNER_UP_RIGHT times the reading's (which says how surely a card lies there at all)."""
    readings = list(readings)
    read = {card for card, *_ in readings}
    out: dict[str, tuple[str, str, float]] = {}
    for card, region, p, runner_up in readings:
        if region == SCAN_REGION or card not in served:
            continue
        if runner_up in served or runner_up in read:
            continue
        out[card] = (runner_up, region, RUNNER_UP_RIGHT * p)
    return out
