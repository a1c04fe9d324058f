"""`companion history [--log PATH] [--json | --csv]`: every game of the game log, and each
player's record across them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "history"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="past games in the game log, and each player's record",
        description="Lists every game of the game log, oldest first (date, mode, players, "
        "winner, points; unfinished and damaged games too), then per player: games, wins, "
        "mean points and best bowl over the finished games (a 4p player shares their team's), "
        'and the solo best scores. --json prints {"games": [{"id", "started", "ended", "mode", '
        '"players", "finished", "scores": {NAME: {"points", "bowls", "cards"}}, "winners"}], '
        '"players": {NAME: {"games", "wins", "mean_points", "best_bowl"}}} (plus "stars" on '
        'a solo game, "damaged" with the reason on a game that does not replay); --csv one row '
        "per scorer per game.",
    )
    p.add_argument(
        "--log",
        type=Path,
        metavar="PATH",
        help="game log (SQLite); default $RAMEN_COMPANION_LOG or "
        "~/.local/share/ramen-companion/games.sqlite",
    )
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON")
    fmt.add_argument("--csv", action="store_true", help="print CSV for spreadsheets")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.recap.history import load_history
    from companion.recap.record import FINISHED
    from companion.ui.i18n import stars_text

    history = load_history(args.log)
    if args.json:
        print(json.dumps(history.to_json(), ensure_ascii=False))
        return 0
    if args.csv:
        print(history.to_csv(), end="")
        return 0
    if not history.games:
        print("no game in the log yet")
        return 0
    for g in history.games:
        if g.status == FINISHED:
            scores = ", ".join(f"{s.name} {s.points}" for s in g.standings)
            what = f"{' & '.join(g.winners)} won · {scores}"
        elif g.problem:
            what = f"damaged: {g.problem}"
        else:
            what = f"unfinished after {g.turns} turns"
        print(f"{g.date_text()}  {g.id}  {g.mode:<4} {', '.join(g.players):<28} {what}")
    if history.players:
        print(f"\n{'player':<16}{'games':>6}{'wins':>6}{'mean':>8}{'best bowl':>11}")
        for p in history.players:
            print(f"{p.name:<16}{p.games:>6}{p.wins:>6}{p.mean_points:>8.1f}{p.best_bowl:>11}")
    for name, runs in history.solo_runs().items():
        best = max(runs, key=lambda r: r.points)
        print(
            f"\nsolo, {name}: best {best.points} points ({stars_text(best.stars)}) on {best.date}"
        )
        for r in runs:
            mark = "  new best" if r.best_so_far else ""
            print(f"  {r.date}  {r.points:>3} points  {stars_text(r.stars)}{mark}")
    return 0
