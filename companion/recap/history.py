"""Past games: every game of a game log as a `GameRecord`, and each player's record across them.

`load_history(path)` reads the log once (two queries, every game replayed in memory: about
1 ms a game) and never fails on one bad game: it is listed as damaged. `History.to_json()` is
the `companion history --json` contract (PRODUCT.md / issue 13); `to_csv()` is one row per
scorer per game for spreadsheets.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from companion.errors import BadInputError
from companion.recap.record import FINISHED, GameRecord, build_record, damaged

CSV_COLUMNS: Final = (
    "game",
    "started",
    "ended",
    "mode",
    "status",
    "scorer",
    "players",
    "points",
    "bowls",
    "cards",
    "winner",
    "stars",
    "best_bowl",
)


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """One player's record over the finished games of the log (their team's in 4p)."""

    name: str
    games: int
    wins: int
    mean_points: float
    best_bowl: int
    """Points of the best single bowl served (by them or their team)."""


@dataclass(frozen=True, slots=True)
class SoloBest:
    """A solo game's score in the run of solo games (for "best score and stars over time")."""

    game: str
    date: str
    points: int
    stars: float
    best_so_far: bool
    """A new best score when it was played."""


@dataclass(frozen=True, slots=True)
class History:
    games: tuple[GameRecord, ...]
    """Oldest first."""
    players: tuple[PlayerStats, ...]
    """Most wins first, then mean points."""

    def game(self, game_id: str) -> GameRecord:
        for g in self.games:
            if g.id == game_id:
                return g
        raise BadInputError(f"no game {game_id!r} in the log (see `companion history`)")

    def last_finished(self) -> GameRecord:
        finished = [g for g in self.games if g.status == FINISHED]
        if not finished:
            raise BadInputError("no finished game in the log yet")
        return finished[-1]

    def solo_runs(self) -> dict[str, tuple[SoloBest, ...]]:
        """Per solo player, their solo games in order with the best score so far marked."""
        out: dict[str, list[SoloBest]] = {}
        best: dict[str, int] = {}
        for g in self.games:
            if g.mode != "solo" or g.status != FINISHED or not g.standings:
                continue
            s = g.standings[0]
            new_best = s.points > best.get(s.name, -1)
            best[s.name] = max(best.get(s.name, -1), s.points)
            stars = g.stars if g.stars is not None else 0.0
            out.setdefault(s.name, []).append(
                SoloBest(g.id, g.date_text(), s.points, stars, new_best)
            )
        return {k: tuple(v) for k, v in out.items()}

    def to_json(self) -> dict[str, Any]:
        """`{"games": [...], "players": {...}}` (see companion history --help)."""
        return {
            "games": [game_json(g) for g in self.games],
            "players": {
                p.name: {
                    "games": p.games,
                    "wins": p.wins,
                    "mean_points": p.mean_points,
                    "best_bowl": p.best_bowl,
                }
                for p in self.players
            },
        }

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        for g in self.games:
            head = [g.id, _iso(g.started), _iso(g.ended), g.mode, g.status]
            if not g.standings:
                w.writerow([*head, "", " & ".join(g.players), "", "", "", "", "", ""])
                continue
            for s in g.standings:
                best = max((b.points for b in g.bowls_of(s.name)), default=0)
                stars = "" if g.stars is None else f"{g.stars:g}"
                score = [s.points, s.bowls, s.cards, int(s.winner), stars, best]
                w.writerow([*head, s.name, " & ".join(s.members), *score])
        return buf.getvalue()


def game_json(g: GameRecord) -> dict[str, Any]:
    """One game of `history --json`: the contract's keys, `stars` in solo (as `tally`), and
    `damaged` (the reason) for a game that does not replay."""
    out: dict[str, Any] = {
        "id": g.id,
        "started": _iso(g.started),
        "ended": _iso(g.ended),
        "mode": g.mode,
        "players": list(g.players),
        "finished": g.status == FINISHED,
        "scores": {
            s.name: {"points": s.points, "bowls": s.bowls, "cards": s.cards} for s in g.standings
        },
        "winners": list(g.winners),
    }
    if g.stars is not None:
        out["stars"] = g.stars
    if g.problem:
        out["damaged"] = g.problem
    return out


def _iso(t: float | None) -> str | None:
    """Local time with its offset, to the second: `2026-11-24T17:23:39+00:00`."""
    if t is None:
        return None
    try:
        return datetime.fromtimestamp(t).astimezone().isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        return None


def player_stats(games: Sequence[GameRecord]) -> tuple[PlayerStats, ...]:
    """Games, wins, mean points and best bowl per player over the finished games; a 4p player
    shares their team's points, bowls and wins."""
    acc: dict[str, list[Any]] = {}
    for g in games:
        if g.status != FINISHED:
            continue
        for s in g.standings:
            best = max((b.points for b in g.bowls_of(s.name)), default=0)
            for player in s.members:
                a = acc.setdefault(player, [0, 0, 0, 0])
                a[0] += 1
                a[1] += int(s.winner)
                a[2] += s.points
                a[3] = max(a[3], best)
    stats = [
        PlayerStats(name, n, wins, round(total / n, 2), best)
        for name, (n, wins, total, best) in acc.items()
    ]
    stats.sort(key=lambda p: (-p.wins, -p.mean_points, p.name))
    return tuple(stats)


def read_records(log: Any, game_id: str | None = None) -> tuple[GameRecord, ...]:
    """Every game of an open GameLog as a record, oldest first (two queries); only the game
    `game_id` when given."""
    where, params = ("WHERE id = ?", (game_id,)) if game_id is not None else ("", ())
    rows = log.query(
        "SELECT id, mode, players, started, finished, final FROM games "
        f"{where} ORDER BY started, rowid",
        params,
    )
    by_game: dict[str, list[dict[str, Any]]] = {}
    broken: dict[str, str] = {}
    for game_id, t, kind, payload in log.query(
        f"SELECT game_id, t, type, payload FROM events {where.replace('id', 'game_id')} "
        "ORDER BY seq",
        params,
    ):
        try:
            fields = json.loads(payload)
            if not isinstance(fields, dict):
                raise ValueError("not an object")
            by_game.setdefault(game_id, []).append({**fields, "t": t, "type": kind})
        except (ValueError, TypeError) as exc:
            broken.setdefault(game_id, f"an event does not parse ({exc})")
    records = []
    for game_id, mode, players, started, finished, final in rows:
        gid = str(game_id)
        if gid in broken:
            records.append(damaged(gid, broken[gid], str(mode), (), _num(started)))
            continue
        records.append(
            build_record(gid, str(mode), players, started, finished, final, by_game.get(gid, []))
        )
    return tuple(records)


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def open_log(path: str | Path | None) -> Any:
    """The game log at path (default: the usual one), which must exist: BadInputError else."""
    from companion.tracking.gamelog import GameLog, default_log_path

    target = default_log_path() if path is None else Path(path).expanduser()
    if not target.is_file():
        raise BadInputError(f"no game log at {target} (play a game first, or give --log PATH)")
    return GameLog.open(target)


def load_history(path: str | Path | None = None) -> History:
    """The history of the game log at path; BadInputError / GameLogError (one line) when the
    log is missing or unreadable as a whole."""
    with open_log(path) as log:
        games = read_records(log)
    return History(games, player_stats(games))


def load_record(path: str | Path | None, game_id: str) -> GameRecord:
    """One game of the log (BadInputError when the log or the game is not there)."""
    with open_log(path) as log:
        games = read_records(log, game_id)
    if not games:
        raise BadInputError(f"no game {game_id!r} in the log (see `companion history`)")
    return games[0]
