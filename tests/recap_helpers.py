"""Finished games in a real game log without a camera: simulated legal games, followed by the
real GameFollower step by step (as a perfect camera would show them), every event logged."""

from __future__ import annotations

from collections.abc import Sequence

from companion.rules.simulate import Record, simulate
from companion.tracking.follower import GameFollower
from companion.tracking.gamelog import GameLog
from companion.tracking.replay import table_steps


def log_game(
    log: GameLog,
    mode: str,
    seed: int,
    players: Sequence[str] | None = None,
    finish: bool = True,
    steps: int | None = None,
) -> tuple[str, Record, GameFollower]:
    """Follow simulated game (mode, seed) into log; (game id, the simulator's record, the
    follower). `steps`: stop after that many table changes (an unfinished game)."""
    record = simulate(mode, seed, players)
    follower = GameFollower(record.mode, record.players)
    game_id = log.new_game(mode, list(follower.players), f"simulated:{mode}:{seed}")
    follower.sink = lambda e: log.append(game_id, e)
    all_steps = table_steps(record)
    for i, step in enumerate(all_steps[:steps] if steps is not None else all_steps):
        follower.update(dict(step.table), 2.0 * i)
    if finish:
        follower.finish()
        final = follower.view().final
        assert final is not None
        log.finish(game_id, final)
    return game_id, record, follower


def served_in(record: Record) -> list[tuple[str, tuple[str, ...]]]:
    """(scorer, cards) of every bowl the simulator served, in order."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for turn in record.turns:
        for s in turn.served:
            out.append((s.to, tuple(c.id for c in s.cards)))
    return out
