"""The piles the tally scores: served bowls as their end-of-game scans count them.

One rule for the follower's tally and for the recap's bowl list, so the history never shows
a bowl the score did not count (pure values, no I/O).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScoredPile:
    served: int | None
    """The served pile it stands for (its index), or None for a scanned pile that matched none."""
    scorer: str
    cards: tuple[str, ...]
    """Served order for a served pile (cards only its scan read last)."""


def scored_piles(
    served: Iterable[tuple[int, str, tuple[str, ...]]],
    scans: Iterable[tuple[int | None, str | None, str | None, tuple[str, ...]]],
    scorers: Iterable[str],
) -> list[ScoredPile]:
    """`served`: (index, scorer, cards) in serving order; `scans`: (served index or None,
    scorer, keep, counted cards). A scan kept as `expected` changes nothing; a matched scan
    replaces its served pile (and may give it to another scorer); an unmatched one with a
    scorer is an extra pile at the end. A card counts once, in the first pile that has it;
    piles left empty or of no scorer are dropped."""
    replaced: dict[int, tuple[str | None, tuple[str, ...]]] = {}
    extra: list[tuple[str, tuple[str, ...]]] = []
    for index, scorer, keep, counted in scans:
        if keep == "expected":
            continue
        if index is not None:
            replaced[index] = (scorer, counted)
        elif scorer is not None:
            extra.append((scorer, counted))
    rows: list[tuple[int | None, str | None, tuple[str, ...]]] = []
    for index, scorer, cards in served:
        if index in replaced:
            who, scanned = replaced[index]
            rank = {c: i for i, c in enumerate(cards)}
            rows.append((index, who, tuple(sorted(scanned, key=lambda c: rank.get(c, len(rank))))))
        else:
            rows.append((index, scorer, cards))
    rows += [(None, who, cards) for who, cards in extra]
    known = set(scorers)
    used: set[str] = set()
    out: list[ScoredPile] = []
    for index, who, cards in rows:
        pile = tuple(c for c in cards if c not in used)
        used.update(pile)
        if pile and who in known:
            out.append(ScoredPile(index, who, pile))
    return out
