"""`companion run --source SOURCE`: follow a live game (or a recording) at the table."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

NAME = "run"


def add_common(p: argparse.ArgumentParser) -> None:
    """Options shared by `run` and `demo`."""
    p.add_argument(
        "--headless",
        action="store_true",
        help="print the events and the final scoreboard instead of opening the app",
    )
    p.add_argument(
        "--events",
        type=Path,
        metavar="FILE.jsonl",
        help="also append every event to this JSON-lines file",
    )
    p.add_argument(
        "--log",
        type=Path,
        metavar="PATH",
        help="game log (SQLite); default $RAMEN_COMPANION_LOG or "
        "~/.local/share/ramen-companion/games.sqlite",
    )
    p.add_argument(
        "--backend",
        choices=("ncnn", "onnx", "torch"),
        help="detector backend (default: best available)",
    )
    p.add_argument("--deck", type=Path, help="deck folder of an enrolled deck")
    p.add_argument(
        "--calibration",
        type=Path,
        metavar="FILE",
        help="manual calibration JSON, used while the markers are hidden",
    )
    p.add_argument("--fullscreen", action="store_true", help="kiosk: fullscreen, no cursor")
    p.add_argument("--language", choices=("en", "fr"), default="en")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="follow a game from a camera, a video or a folder of images",
        description="Watch the table through SOURCE, follow the game, announce ready bowls and "
        "score the end. Every event is written to the game log as it happens; --resume "
        "continues the last unfinished game after a crash or power cut.",
    )
    p.add_argument(
        "--source",
        required=True,
        help="picamera, usb:N, a video file, or a folder of images (name order)",
    )
    p.add_argument("--mode", choices=("solo", "2p", "3p", "4p"), default="2p")
    p.add_argument("--players", help="comma-separated names in seat order (default Player 1..N)")
    p.add_argument(
        "--resume", action="store_true", help="continue the last unfinished game in the log"
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    players = [s.strip() for s in args.players.split(",")] if args.players else None
    return follow(args, args.source, args.mode, players, resume=args.resume)


def follow(
    args: argparse.Namespace,
    source_spec: str,
    mode: str,
    players: list[str] | None,
    resume: bool = False,
    log_path: Path | None = None,
    expected_final: dict[str, Any] | None = None,
) -> int:
    """Shared by `run` and `demo`: build the pipeline, follow the game, report."""
    from companion.camera import WatchedSource, open_source
    from companion.deck.deckdir import load_deck
    from companion.errors import BadInputError
    from companion.recap.crops import BowlCropper, CropStore
    from companion.session import EventSinks, Session, TablePipeline, describe, scoreboard
    from companion.tracking.follower import GameFollower
    from companion.tracking.gamelog import GameLog
    from companion.vision.backends import load_model
    from companion.vision.calibration import load_calibration
    from companion.vision.detector import CardDetector, finder_name

    calibration = load_calibration(args.calibration) if args.calibration else None
    deck = load_deck(args.deck)
    detector = CardDetector(load_model(args.backend, name=finder_name(deck)), deck)
    log = GameLog.open(log_path or args.log)
    jsonl = None
    try:
        if args.events:
            args.events.parent.mkdir(parents=True, exist_ok=True)
            jsonl = args.events.open("a", encoding="utf-8")
        echo = (lambda e: print(describe(e), flush=True)) if args.headless else None
        games: list[str] = []

        def make_follower(mode: str, players: list[str] | None) -> GameFollower:
            """A new game: its own entry in the log, every event written as it happens."""
            follower = GameFollower(mode, players)
            games.append(log.new_game(mode, list(follower.players), source_spec))
            follower.sink = EventSinks(log, games[-1], jsonl, echo)
            return follower

        if resume:
            info = log.last_unfinished_game()
            if info is None:
                raise BadInputError("no unfinished game in the log to resume")
            games.append(info.id)
            events = log.events(info.id)
            follower = GameFollower.from_events(
                info.mode, list(info.players), events, EventSinks(log, info.id, jsonl, echo)
            )
            print(f"resuming game {info.id} ({info.mode}, {len(events)} events)", file=sys.stderr)
        else:
            follower = make_follower(mode, players)
        pipeline = TablePipeline(detector, follower, manual_calibration=calibration)
        # each served bowl's picture, kept beside the game log for the recap
        pipeline.on_frame = BowlCropper(CropStore.beside(log.path), lambda: games[-1])
        if source_spec == "picamera" or source_spec.startswith("usb:"):
            source = WatchedSource(lambda: open_source(source_spec))
        elif Path(source_spec).is_file() and not args.headless:
            source = open_source(source_spec, realtime=True)  # play at the recorded pace
        else:
            source = open_source(source_spec)
        with source:
            if args.headless:
                for frame in source:
                    pipeline.process(frame)
            else:
                session = Session(source, pipeline, new_follower=make_follower)
                session.start()
                from companion.ui.app import run_app

                run_app(session, fullscreen=args.fullscreen, language=args.language)
                session.stop()
        follower = pipeline.follower  # the app may have started a new game
        game_id = games[-1]
        if follower.view().final is None and follower.view().phase != "setup":
            follower.finish()
        final = follower.view().final
        if final is not None:
            log.finish(game_id, final)
        if args.headless:
            if final is not None:
                print(scoreboard(final))
            print(
                f"{pipeline.frames} frames, {pipeline.detections} detections, "
                f"{pipeline.recalibrations} re-calibrations; game log {log.path} ({game_id})"
            )
        if expected_final is not None and final is not None:
            same = final.get("scores") == expected_final.get("scores")
            print(f"matches the recorded game's result: {'yes' if same else 'NO'}")
    finally:
        if jsonl is not None:
            jsonl.close()
        log.close()
    return 0
