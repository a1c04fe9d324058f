"""One logged game as a value: who served which bowls, the final standings, the score over the
turns. Pure: built from a game's row and its logged events, no I/O.

The game is re-derived from its logged *inputs* by `GameFollower.from_events` (the same replay
`run --resume` uses), so corrections made during the game (a renamed card, a bowl given to
another player, a scan kept as served) are in the record exactly as they were in the final
tally. Anything that does not replay (a row or an event that does not parse, an unknown mode,
a finished game without its scores) makes a *damaged* record with the reason, never an
exception: a history must list every game.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from companion.cards import parse_card
from companion.rules.modes import MODES
from companion.rules.scoring import POINTS_BY_TYPES, critics_stars, pile_points, pile_types
from companion.tracking.scored_piles import scored_piles
from companion.tracking.view import GameView

FINISHED: Final = "finished"
UNFINISHED: Final = "unfinished"
DAMAGED: Final = "damaged"
STATUSES: Final = (FINISHED, UNFINISHED, DAMAGED)


@dataclass(frozen=True, slots=True)
class BowlRecord:
    """One served bowl as it was scored."""

    index: int
    """Its place among the game's served bowls (0-based, serving order)."""
    scorer: str
    """Player, or team `A`/`B` in 4p."""
    region: str
    """`bowl-1`..`bowl-3`: where it was served from (`scan` for a pile only read at the end)."""
    cards: tuple[str, ...]
    types: int
    points: int
    t: float
    """Seconds on the game's clock when it was served."""
    turn: int
    """The turn it was served in (0 before the first turn)."""


@dataclass(frozen=True, slots=True)
class Standing:
    """One scorer's final line, best first."""

    name: str
    points: int
    bowls: int
    cards: int
    winner: bool
    members: tuple[str, ...] = ()
    """4p: the players of the team; otherwise the player alone."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    """Everything the recap and the history show about one game."""

    id: str
    mode: str
    players: tuple[str, ...]
    started: float
    """Wall clock, epoch seconds."""
    ended: float | None
    """Wall clock when finished; None otherwise."""
    status: str
    """`finished`, `unfinished` or `damaged` (STATUSES)."""
    problem: str = ""
    """Why the game is damaged (one line); empty otherwise."""
    scorers: tuple[str, ...] = ()
    bowls: tuple[BowlRecord, ...] = ()
    """The piles as scored, serving order."""
    standings: tuple[Standing, ...] = ()
    """Finished games: best first (the tally's order: points, bowls, fewest cards)."""
    winners: tuple[str, ...] = ()
    stars: float | None = None
    """Solo: the critics' stars."""
    turns: int = 0
    duration_s: float = 0.0
    """How long the game took on its own clock (the camera's), else the wall clock."""
    final: Mapping[str, Any] | None = None
    """The tally JSON as logged (PRODUCT.md `tally` output)."""

    @property
    def finished(self) -> bool:
        return self.status == FINISHED

    def bowls_of(self, scorer: str) -> tuple[BowlRecord, ...]:
        return tuple(b for b in self.bowls if b.scorer == scorer)

    def scorer_of(self, player: str) -> str:
        """The name a player's points are kept under (their team in 4p)."""
        mode = MODES[self.mode]
        if mode.teams and player in self.players:
            return mode.teams[self.players.index(player)]
        return player

    def timeline(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """Per scorer, the points held at the end of each turn (index 0 = before the first)."""
        last = max([self.turns, *(b.turn for b in self.bowls)], default=0)
        out = []
        for scorer in self.scorers:
            per_turn = [0] * (last + 1)
            for b in self.bowls_of(scorer):
                per_turn[b.turn] += b.points
            running, acc = [], 0
            for p in per_turn:
                acc += p
                running.append(acc)
            out.append((scorer, tuple(running)))
        return tuple(out)

    def next_star_points(self) -> int | None:
        """Solo: points the next half star (or star) needed; None at five stars or not solo."""
        if self.mode != "solo" or not self.standings:
            return None
        points = self.standings[0].points
        now = critics_stars(points)
        for more in range(1, 80):
            if critics_stars(points + more) > now:
                return points + more
        return None

    def date_text(self) -> str:
        """`2026-11-24 17:23` in local time."""
        return datetime.fromtimestamp(self.started).strftime("%Y-%m-%d %H:%M")


def damaged(
    game_id: str,
    problem: str,
    mode: str = "?",
    players: Sequence[str] = (),
    started: float = 0.0,
    ended: float | None = None,
) -> GameRecord:
    return GameRecord(
        str(game_id), str(mode), tuple(str(p) for p in players), started, ended, DAMAGED, problem
    )


def build_record(
    game_id: str,
    mode: str,
    players_json: str | Sequence[str],
    started: float,
    finished: float | None,
    final_json: str | Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
) -> GameRecord:
    """The record of one game from its log row and events; a damaged record when they do not
    replay. Columns may come raw (JSON text) from the log."""
    try:
        players = json.loads(players_json) if isinstance(players_json, str) else players_json
        if not isinstance(players, list | tuple) or not all(isinstance(p, str) for p in players):
            raise ValueError("players is not a list of names")
        started = float(started)
    except (ValueError, TypeError) as exc:
        return damaged(game_id, f"unreadable players ({exc})", mode, started=_num(started))
    try:
        return _replay(game_id, mode, tuple(players), started, finished, final_json, events)
    except Exception as exc:  # a log written by a bug or a disk fault: list it, never crash
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return damaged(game_id, reason[:160], mode, players, started, finished)


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def _replay(
    game_id: str,
    mode: str,
    players: tuple[str, ...],
    started: float,
    finished: float | None,
    final_json: str | Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
) -> GameRecord:
    from companion.tracking.follower import GameFollower

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    view = GameFollower.from_events(mode, players, events).view()
    turn_ts = sorted(
        (float(e["t"]), int(e["turn"])) for e in events if e.get("type") == "turn" and "turn" in e
    )
    times = [t for t, _ in turn_ts]
    bowls = _final_bowls(view, turn_ts, times)
    ts = [float(e["t"]) for e in events if "t" in e]
    duration = (max(ts) - min(ts)) if ts else 0.0
    if duration <= 0 and finished is not None:
        duration = max(0.0, float(finished) - started)
    base = GameRecord(
        id=game_id,
        mode=mode,
        players=players,
        started=started,
        ended=float(finished) if finished is not None else None,
        status=UNFINISHED,
        scorers=view.scorers,
        bowls=bowls,
        turns=view.turn,
        duration_s=duration,
    )
    if finished is None and view.final is None:
        return base
    # Over by its own events (the Scores screen is up, the log is marked at exit): finished.
    final = json.loads(final_json) if isinstance(final_json, str) else final_json
    if not final and view.final:
        final = view.final
    if not isinstance(final, Mapping) or not isinstance(final.get("scores"), Mapping):
        raise ValueError("finished without its scores")
    rows, winners = standings_of(final, view)
    stars = final.get("stars")
    return GameRecord(
        **{
            **_fields(base),
            "status": FINISHED,
            "ended": float(finished) if finished is not None else started + duration,
            "standings": rows,
            "winners": winners,
            "stars": float(stars) if isinstance(stars, int | float) else None,
            "final": dict(final),
        }
    )


def standings_of(
    final: Mapping[str, Any], view: GameView
) -> tuple[tuple[Standing, ...], tuple[str, ...]]:
    """(standings best first, winners) from the tally JSON; ValueError when it does not name
    the game's scorers."""
    scores = final["scores"]
    if not isinstance(scores, Mapping) or set(scores) != set(view.scorers):
        raise ValueError(f"scores name {sorted(scores)}, the game has {list(view.scorers)}")
    winners = tuple(str(w) for w in final.get("winners", ()))
    teams = MODES[view.mode].teams
    rows = []
    for name in view.scorers:
        s = scores[name]
        members = tuple(p for p, team in zip(view.players, teams, strict=False) if team == name)
        rows.append(
            Standing(
                name,
                int(s["points"]),
                int(s["bowls"]),
                int(s["cards"]),
                name in winners,
                members or (name,),
            )
        )
    rows.sort(key=lambda r: (-r.points, -r.bowls, r.cards))
    return tuple(rows), winners


def _fields(record: GameRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in GameRecord.__dataclass_fields__}


def _final_bowls(
    view: GameView, turn_ts: list[tuple[float, int]], times: list[float]
) -> tuple[BowlRecord, ...]:
    """The piles as the tally scored them (`scored_piles`, the follower's own rule), with
    where and when each was served (a scanned pile that matched no bowl: the scan, at the end)."""
    served = {p.index: p for p in view.served}
    end_t = max([view.t, *(p.t for p in view.served)], default=0.0)
    piles = scored_piles(
        ((p.index, p.scorer, p.cards) for p in view.served),
        ((s.index, s.scorer, s.keep, s.counted) for s in view.scans),
        view.scorers,
    )
    out: list[BowlRecord] = []
    for pile in piles:
        at = served.get(pile.served) if pile.served is not None else None
        t = at.t if at is not None else end_t
        parsed = [parse_card(c) for c in pile.cards]
        k = bisect.bisect_right(times, t) - 1
        out.append(
            BowlRecord(
                index=len(out),
                scorer=pile.scorer,
                region=at.region if at is not None else "scan",
                cards=pile.cards,
                types=pile_types(parsed),
                points=pile_points(parsed),
                t=t,
                turn=turn_ts[k][1] if k >= 0 else 0,
            )
        )
    return tuple(out)


BEST_POINTS: Final = POINTS_BY_TYPES[-1]
"""No bowl scores more than this (all 7 types)."""


def record_from_view(
    view: GameView, game_id: str, started: float, ended: float | None = None
) -> GameRecord:
    """The record of the game a follower holds now (the live Scores screen), from its view:
    the same bowls and standings the log will give once it is finished."""
    try:
        final = view.final
        return _replay_view(game_id, view, started, ended, final)
    except Exception as exc:  # never let a display helper take the screen down
        return damaged(game_id, str(exc)[:160], view.mode, view.players, started, ended)


def _replay_view(
    game_id: str,
    view: GameView,
    started: float,
    ended: float | None,
    final: Mapping[str, Any] | None,
) -> GameRecord:
    bowls = _final_bowls(view, [], [])
    base = GameRecord(
        id=game_id,
        mode=view.mode,
        players=view.players,
        started=started,
        ended=ended,
        status=UNFINISHED,
        scorers=view.scorers,
        bowls=bowls,
        turns=view.turn,
        duration_s=view.t,
    )
    if final is None:
        return base
    rows, winners = standings_of(final, view)
    stars = final.get("stars")
    return GameRecord(
        **{
            **_fields(base),
            "status": FINISHED,
            "ended": ended if ended is not None else started + view.t,
            "standings": rows,
            "winners": winners,
            "stars": float(stars) if isinstance(stars, int | float) else None,
            "final": dict(final),
        }
    )
