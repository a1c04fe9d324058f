"""The `companion` command: one sub-command per module in companion/commands/.

Each module exposes `add_parser(subparsers)` (cheap: no heavy imports at module level) and
`run(args) -> int`. Any CompanionError becomes one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

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


class UsageError(SystemExit):
    """A command line argparse refused (exit code 2); main() returns 2 for it."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2): the usage block is one --help away."""

    def error(self, message: str) -> NoReturn:
        # "argument --dpi: must be ..." reads better as "--dpi must be ..."
        message = re.sub(r"^argument ([^:/ ]+)(?:/\S+)?: (must be)", r"\1 \2", message)
        print(f"{self.prog}: error: {_one_line(message)} (see {self.prog} --help)", file=sys.stderr)
        raise UsageError(2)


def _one_line(text: str) -> str:
    """Text made printable on one line: control characters shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(text.splitlines()))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
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
    try:
        args = parser.parse_args(argv)
    except UsageError:
        return 2
    where = " ".join(
        str(w) for w in ("companion", args.command, getattr(args, "deck_command", None)) if w
    )
    try:
        return int(args.func(args) or 0)
    except CompanionError as exc:
        print(f"{where}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if not exc.strerror:
            raise
        # a file or folder that cannot be read or written: the system says why
        name = f"{exc.filename}: " if exc.filename else ""
        print(f"{where}: error: {_one_line(name + exc.strerror)}", file=sys.stderr)
        return 2
    except MemoryError:
        print(f"{where}: error: out of memory", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"companion {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
