"""What a perfect camera would see of a simulated game: for golden tests and benchmarks.

`table_steps(record)` turns a `companion.rules.simulate` record into the sequence of settled
table states (card -> region) after every physical change: setup, each play, each serve, each
Fridge take and refill, in rulebook order. `scan_steps(record)` adds the end-game scan (each
served pile spread in the scan area, then cleared). `frames(steps)` expands states into camera
frames: a few moving frames (hands over the table, readings garbled) then still frames.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from companion.rules.simulate import Record
from companion.tracking.settle import Reading


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One settled table after one physical change."""

    table: tuple[tuple[str, str], ...]
    """(card, region), sorted: what the camera sees."""
    kind: str
    """`setup`, `play`, `serve`, `take`, `refill`, `scan`, `clear`."""
    turn: int
    """Record turn number (1-based; 0 for setup and scan steps)."""
    player: str | None
    """Whose turn it is (None for setup and scan steps)."""
    card: str | None = None
    """The card played/taken/refilled (None for serve/setup/scan)."""
    region: str | None = None


def _snap(table: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(table.items()))


def table_steps(record: Record) -> list[ReplayStep]:
    """The settled tables of a whole game, from setup to the last action."""
    table: dict[str, str] = {c.id: "fridge" for c in record.setup.fridge}
    steps = [ReplayStep(_snap(table), "setup", 0, None)]
    for n, turn in enumerate(record.turns, start=1):

        def add(
            kind: str, card: str | None, region: str | None, n: int = n, who: str = turn.player
        ) -> None:
            steps.append(ReplayStep(_snap(table), kind, n, who, card, region))

        for play in turn.plays:
            table[play.card.id] = play.bowl
            add("play", play.card.id, play.bowl)
        for served in turn.served:
            for c in served.cards:
                del table[c.id]
            add("serve", None, served.bowl)
        takes = list(turn.took)
        if takes:
            del table[takes[0].id]
            add("take", takes[0].id, "fridge")
        for card in turn.refilled:
            table[card.id] = "fridge"
            add("refill", card.id, "fridge")
        for card in takes[1:]:
            del table[card.id]
            add("take", card.id, "fridge")
    return steps


def scan_steps(record: Record, table: Iterable[tuple[str, str]] = ()) -> list[ReplayStep]:
    """End-game scan: every served pile (scorer order, then serve order) spread alone in the
    scan area, then removed; `table` = what else still lies on the table (unserved bowls)."""
    rest = dict(table)
    steps: list[ReplayStep] = []
    piles = [s for t in record.turns for s in t.served]
    for scorer in record.mode.scorer_names(record.players):
        for s in (p for p in piles if p.to == scorer):
            shown = {**rest, **{c.id: "scan" for c in s.cards}}
            steps.append(ReplayStep(_snap(shown), "scan", 0, None, None, "scan"))
            steps.append(ReplayStep(_snap(rest), "clear", 0, None, None, "scan"))
    return steps


def frames(
    steps: Sequence[ReplayStep],
    fps: float = 5.0,
    moving: int = 3,
    still: int = 6,
    confidence: float = 0.9,
    seed: int = 0,
) -> Iterator[tuple[float, list[Reading], float]]:
    """(t, readings, motion score) per frame: for every step `moving` frames with motion 1.0
    and garbled readings (cards hidden by the hand, one misread), then `still` clean frames."""
    rng = random.Random(seed)
    dt = 1.0 / fps
    t = 0.0
    previous: Sequence[tuple[str, str]] = ()
    for step in steps:
        for _ in range(moving if previous else 0):
            seen = [(c, r, confidence) for c, r in previous if rng.random() < 0.5]
            if seen:
                c, _r, _ = seen[0]
                seen[0] = (c, "bowl-3", 0.35)
            yield t, seen, 1.0
            t += dt
        for _ in range(still):
            yield t, [(c, r, confidence) for c, r in step.table], 0.0
            t += dt
        previous = step.table
