"""`companion tally FILE.json [--json]`: the end-of-game scoreboard (PRODUCT.md contract)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from companion.errors import BadInputError

NAME = "tally"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="score every served pile and name the winners",
        description='Input {"mode": "2p", "served": {"Alice": [["nori-4", ...], ...], ...}} '
        "(teams A/B in 4p, one name in solo); FILE may be - for stdin. Output with --json: "
        '{"scores": {NAME: {"points", "bowls", "cards"}}, "winners": [...]} plus "stars" in solo. '
        "Ties: most points, then most bowls, then fewest cards, else a shared victory.",
    )
    p.add_argument("file", metavar="FILE.json", help="served piles as JSON, or - for stdin")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def load_served(doc: Any) -> tuple[Any, dict[str, list[list[Any]]]]:
    """(Mode, served piles as Cards) from the tally input JSON; BadInputError when malformed."""
    from companion.cards import parse_card
    from companion.rules.simulate import get_mode
    from companion.rules.state import check_player_name

    if not isinstance(doc, dict) or "mode" not in doc or "served" not in doc:
        raise BadInputError('expected a JSON object with "mode" and "served"')
    mode = get_mode(doc["mode"])
    served = doc["served"]
    if not isinstance(served, dict):
        raise BadInputError('"served" must map each player (team in 4p) to a list of piles')
    out: dict[str, list[list[Any]]] = {}
    for name, piles in served.items():
        if not isinstance(piles, list) or not all(isinstance(p, list) for p in piles):
            raise BadInputError(f"served piles of {name!r} must be a list of lists of card ids")
        out[check_player_name(name)] = [[parse_card(c) for c in pile] for pile in piles]
    return mode, out


def run(args: argparse.Namespace) -> int:
    from companion.inputs import decode_text, parse_json, read_text
    from companion.rules.scoring import critics_review, tally

    if args.file == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        text = decode_text(stdin.read(), "standard input") if stdin else sys.stdin.read()
    else:
        text = read_text(args.file, "served piles file")
    doc = parse_json(text, args.file)
    mode, served = load_served(doc)
    result = tally(mode, served)
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    width = max(len(n) for n, _ in result.scores)
    print(f"{'':{width}}  points  bowls  cards")
    for name, s in result.scores:
        mark = "  <- winner" if name in result.winners else ""
        print(f"{name:{width}}  {s.points:6}  {s.bowls:5}  {s.cards:5}{mark}")
    if len(result.winners) > 1:
        print(f"shared victory: {', '.join(result.winners)}")
    if result.stars is not None:
        points = result.scores[0][1].points
        print(f"critics: {result.stars:g} stars. {critics_review(points)}")
    return 0
