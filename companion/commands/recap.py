"""`companion recap [GAME_ID] [--log PATH] (--out FILE.png | --link)`: a finished game's recap
picture, and the link that logs it in BG Stats."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from companion.recap.history import History
    from companion.recap.record import GameRecord

NAME = "recap"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="the recap picture of a game, and its BG Stats link",
        description="Draws the recap of a finished game (default: the last one in the log) as "
        "one 1600x900 PNG: the standings and the tie-break that decided, every served bowl as "
        "the camera saw it, the points of each player over the turns, and the QR code that "
        "logs the play in BG Stats. --link prints BG Stats' createPlay link alone on the last "
        "line. GAME_ID may be any unique start of an id shown by `companion history`.",
    )
    p.add_argument("game", nargs="?", metavar="GAME_ID", help="game id (default: last finished)")
    p.add_argument(
        "--log",
        type=Path,
        metavar="PATH",
        help="game log (SQLite); default $RAMEN_COMPANION_LOG or "
        "~/.local/share/ramen-companion/games.sqlite",
    )
    p.add_argument("--out", type=Path, metavar="FILE.png", help="write the recap picture here")
    p.add_argument("--link", action="store_true", help="print the BG Stats createPlay link")
    p.add_argument("--language", choices=("en", "fr"), default="en", help="picture language")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.errors import BadInputError
    from companion.recap.history import load_history
    from companion.recap.record import FINISHED

    if args.out is None and not args.link:
        raise BadInputError("say what to make: --out FILE.png and/or --link")
    if args.out is not None:
        check_writable(args.out)
    history = load_history(args.log)
    game = find_game(history, args.game) if args.game else history.last_finished()
    if game.status != FINISHED:
        why = f": {game.problem}" if game.problem else ""
        raise BadInputError(
            f"game {game.id} is {game.status}{why}; only a finished one has a recap"
        )
    if args.out is not None:
        from companion.recap.crops import CropStore
        from companion.recap.picture import render_recap, save_recap
        from companion.tracking.gamelog import default_log_path

        log_path = args.log if args.log is not None else default_log_path()
        image = render_recap(game, CropStore.beside(log_path), args.language)
        try:
            save_recap(image, args.out)
        except OSError as exc:
            raise BadInputError(f"cannot write {args.out}: {exc.strerror or exc}") from None
        print(f"recap of game {game.id} written to {args.out}")
    if args.link:
        from companion.recap.bgstats import create_play_link

        print(create_play_link(game))
    return 0


def find_game(history: History, key: str) -> GameRecord:
    """The game whose id is key, or the only one starting with it."""
    from companion.errors import BadInputError

    games = history.games
    exact = [g for g in games if g.id == key]
    if exact:
        return exact[0]
    starts = [g for g in games if g.id.startswith(key)]
    if len(starts) == 1:
        return starts[0]
    if starts:
        raise BadInputError(f"game id {key!r} is ambiguous: {', '.join(g.id for g in starts[:4])}")
    raise BadInputError(f"no game {key!r} in the log (see `companion history`)")


def check_writable(out: Path) -> None:
    """Fail before the work when the picture could not be written."""
    import os

    from companion.errors import BadInputError

    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise BadInputError(f"--out {out} is a folder: give a file name such as recap.png")
    if not folder.is_dir():
        raise BadInputError(f"cannot write {out}: no folder {folder}")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise BadInputError(f"cannot write {out}: permission denied")
