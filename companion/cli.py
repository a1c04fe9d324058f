"""The `companion` command: one sub-command per module in companion/commands/.

Each module exposes `add_parser(subparsers)` (cheap: no heavy imports at module level) and
`run(args) -> int`. Any CompanionError becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from companion import __version__
from companion.errors import CompanionError

COMMANDS: tuple[str, ...] = (
    "demo",
    "run",
    "detect",
    "score",
    "tally",
    "simulate",
    "deck",
    "render",
    "train",
    "doctor",
    "history",
    "recap",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Ramen! Ramen! table companion: watches the cards, follows the game, scores.",
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"companion.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"companion.commands.{name}":
                raise
            continue  # not built yet
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CompanionError as exc:
        print(f"companion {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"companion {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
