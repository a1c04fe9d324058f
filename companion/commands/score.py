"""`companion score CARD... [--json]`: points of one served pile (PRODUCT.md contract)."""

from __future__ import annotations

import argparse
import json

NAME = "score"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="points of one served pile",
        description="Score one served pile: 1..7 distinct ingredient types give 0, 1, 2, 3, 5, "
        '7, 10 points; values never score. With --json: {"types": N, "points": P}.',
    )
    p.add_argument("cards", nargs="+", metavar="CARD", help="card ids such as nori-4")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.cards import parse_cards
    from companion.rules.scoring import pile_points, pile_types

    cards = parse_cards(args.cards)
    types, points = pile_types(cards), pile_points(cards)
    if args.json:
        print(json.dumps({"types": types, "points": points}))
    else:
        print(f"{len(cards)} cards, {types} ingredient types: {points} points")
    return 0
