"""`companion simulate --mode MODE --seed N [--players A,B] [--bot greedy|random] [--json]`.

Plays one whole legal game with bots and prints its record (issue 2's JSON) or a readable log.
"""

from __future__ import annotations

import argparse
import json

from companion.errors import BadInputError
from companion.inputs import SEED_MAX

NAME = "simulate"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="play one whole game with bots",
        description="Play one whole legal game of Ramen! Ramen! with simple bots. With --json: "
        'one JSON object {"mode", "seed", "players", "setup", "turns", "final"}; otherwise a '
        "turn-by-turn log and the final scoreboard.",
    )
    p.add_argument("--mode", required=True, help="solo, 2p, 3p or 4p")
    p.add_argument("--seed", required=True, help="integer: same seed, same game")
    p.add_argument("--players", help="comma-separated names in turn order (4p: A1,B1,A2,B2)")
    p.add_argument("--bot", default="greedy", help="greedy (default) or random")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.set_defaults(func=run)


def format_log(record: object) -> str:
    """A readable turn-by-turn account of a Record."""
    from companion.rules.scoring import critics_review
    from companion.rules.simulate import Record

    assert isinstance(record, Record)
    ids = lambda cards: " ".join(c.id for c in cards) or "-"  # noqa: E731
    s = record.setup
    lines = [f"Ramen! Ramen! {record.mode.name}, seed {record.seed}: {', '.join(record.players)}"]
    if record.mode.teams:
        teams = ", ".join(
            f"{p} ({t})" for p, t in zip(record.players, record.mode.teams, strict=True)
        )
        lines.append(f"teams: {teams}; bowl-1 communal, bowl-2 team A, bowl-3 team B")
    for name, hand in zip(record.players, s.hands, strict=True):
        lines.append(f"  {name} is dealt {ids(hand)}")
    lines.append(f"  Fridge: {ids(s.fridge)}; deck {len(s.deck)} cards")
    if s.discarded:
        lines.append(f"  discarded face down: {len(s.discarded)} cards")
    for n, t in enumerate(record.turns, start=1):
        plays = ", ".join(f"{p.card.id} -> {p.bowl}" for p in t.plays) or "nothing to play"
        lines.append(f"turn {n:2} {t.player}: plays {plays}")
        for sv in t.served:
            why = "all 7 ingredients" if sv.reason == "all_types" else "sum >= 14"
            lines.append(f"        {sv.bowl} served to {sv.to} ({why}): {ids(sv.cards)}")
        took = f"takes {ids(t.took)} from the Fridge" if t.took else "Fridge empty"
        extra = f"; Fridge refilled with {ids(t.refilled)}" if t.refilled else ""
        drew = f"; draws {ids(t.drew)}" if t.drew else ""
        lines.append(f"        {took}{extra}{drew}")
    lines.append("final scoreboard:")
    for name, sc in record.final.scores:
        star = " <- winner" if name in record.final.winners else ""
        lines.append(f"  {name}: {sc.points} points, {sc.bowls} bowls, {sc.cards} cards{star}")
    if len(record.final.winners) > 1:
        lines.append(f"  shared victory: {', '.join(record.final.winners)}")
    if record.final.stars is not None:
        pts = record.final.scores[0][1].points
        lines.append(f"  critics: {record.final.stars:g} stars. {critics_review(pts)}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from companion.rules.simulate import get_mode, record_to_json, simulate

    mode = get_mode(args.mode)
    try:
        seed = int(args.seed)
    except ValueError:
        raise BadInputError(f"--seed must be an integer, got {args.seed!r}") from None
    if not 0 <= seed <= SEED_MAX:
        raise BadInputError(f"--seed must be an integer from 0 to {SEED_MAX}, got {seed}")
    players = args.players.split(",") if args.players is not None else None
    record = simulate(mode, seed, players=players, bot=args.bot)
    if args.json:
        print(json.dumps(record_to_json(record)))
    else:
        print(format_log(record))
    return 0
