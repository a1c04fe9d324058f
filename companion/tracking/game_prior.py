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
RUNNER_UP_RIGHT = 0.5
"""Share of wrong readings whose runner-up is the card really there: 10 of 20 readings over the
gate named wrong on held-out ornate-1 and minimal-1 scenes (`foreign_decks.py` frames, plain
and hard)."""


def with_pile(
    pile: Collection[str], readings: Iterable[tuple[str, str, float, str]]
) -> dict[str, tuple[str, float]]:
    """Card read -> (card, probability) given the pile, for the scan area's readings ((card,
    region, confidence, runner-up), one per card) that name a card of `pile` not read surely
    (`missing`), or that name unsurely a card the pile was not served with while their
    runner-up is missing, where the missing card comes out surer than the reading was. The
    place holds one of the n missing cards with probability SAME_PILE, any other card with the
    rest; the reading says its card with probability p, its runner-up with RUNNER_UP_RIGHT of
    the rest. A reading of a missing card whose runner-up is missing too is left alone: its
    doubt lies between two cards the pile holds."""
    scan = [r for r in readings if r[1] == SCAN_REGION]
    read = {card for card, *_ in scan}
    missing = set(pile) - {card for card, _, p, _ in scan if p >= SURE}
    n = len(missing)
    if not n:
        return {}
    one_missing = SAME_PILE / n
    one_other = (1 - SAME_PILE) / (len(CARD_IDS) - n)
    out: dict[str, tuple[str, float]] = {}
    for card, _, p, runner_up in scan:
        if card in missing and runner_up not in missing:
            # the rest of the reading's doubt spread over the other cards, each by its prior
            mine = one_missing * p
            rest = ((n - 1) * one_missing + (len(CARD_IDS) - n) * one_other) * (1 - p)
            posterior = mine / (mine + rest / (len(CARD_IDS) - 1))
            if posterior > p:
                out[card] = (card, posterior)
        elif card not in pile and p < SURE and runner_up in missing and runner_up not in read:
            # a card the pile was not served with read unsurely, its runner-up one the pile
            # lacks (a 6 read as a 0): which is likelier there (read surely, a card swapped
            # in the pile is what the cross-check is for)
            theirs = one_missing * (1 - p) * RUNNER_UP_RIGHT
            posterior = theirs / (theirs + one_other * p)
            if posterior > p:
                out[card] = (runner_up, posterior)
    return out


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
