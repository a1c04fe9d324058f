"""`companion run --source SOURCE`: follow a live game (or a recording) at the table."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from companion.camera import FrameSource

NAME = "run"

log = logging.getLogger(__name__)


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
    p.add_argument(
        "--language", choices=("en", "fr"), help="screen language (default: as last set, else en)"
    )


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
    resume = p.add_mutually_exclusive_group()
    resume.add_argument(
        "--resume",
        action="store_true",
        help="continue the last unfinished game in the log (a recording from the frame it had "
        "reached, a camera from now)",
    )
    resume.add_argument(
        "--resume-if-any",
        action="store_true",
        help="continue the last unfinished game if there is one, else start a new game (the "
        "kiosk's way back after a power cut)",
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    players = [s.strip() for s in args.players.split(",")] if args.players else None
    resume = "always" if args.resume else "if-any" if args.resume_if_any else None
    return follow(args, args.source, args.mode, players, resume=resume)


STALL_SECONDS: Final = 2.5
"""A live camera silent this long is reported lost (on screen within 3 s) and reopened."""


def is_live(source_spec: str) -> bool:
    return source_spec.strip() == "picamera" or source_spec.strip().startswith("usb:")


def same_path(a: str, b: str) -> bool:
    try:
        return Path(a).expanduser().resolve() == Path(b).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False


def make_source(source_spec: str, headless: bool, start_after: float | None = None) -> FrameSource:
    """The unopened source: a live camera under the watchdog; a recording played at its own
    pace in the app, as fast as possible headless, from `start_after` seconds on if given."""
    from companion.camera import WatchedSource, open_source

    if is_live(source_spec):
        return WatchedSource(lambda: open_source(source_spec), stall_seconds=STALL_SECONDS)
    opts: dict[str, Any] = {}
    if start_after is not None:
        opts["start_after"] = start_after
    if Path(source_spec).is_file() and not headless:
        opts["realtime"] = True  # play at the recorded pace
    return open_source(source_spec, **opts)


def follow(
    args: argparse.Namespace,
    source_spec: str,
    mode: str,
    players: list[str] | None,
    resume: str | None = None,
    log_path: Path | None = None,
    expected_final: dict[str, Any] | None = None,
) -> int:
    """Shared by `run` and `demo`: build the pipeline, follow the game, report.

    `resume`: None (a new game), `always` (the last unfinished game, or exit 2) or `if-any`
    (the last unfinished game if there is one). Order matters for what is left in the log: the
    log is locked (one companion per log), then the source is opened, and the game's entry is
    made at its first event, so a source that fails to open leaves no empty game behind."""
    from companion import logs
    from companion.camera import CameraError
    from companion.deck.deckdir import load_deck
    from companion.errors import BadInputError
    from companion.recap.crops import BowlCropper, CropStore
    from companion.session import (
        EventSinks,
        Session,
        TablePipeline,
        atomic,
        describe,
        scoreboard,
    )
    from companion.tracking.follower import GameFollower
    from companion.tracking.gamelog import GameLog, LogLock
    from companion.vision.backends import load_model
    from companion.vision.calibration import load_calibration
    from companion.vision.detector import CardDetector, finder_name

    logs.configure()
    calibration = load_calibration(args.calibration) if args.calibration else None
    # None: the default deck's strips only. An enrolled deck's faces (~100 MB) are read one
    # ingredient at a time by the namer, which keeps only its bands (a few MB)
    deck = load_deck(args.deck, lazy=True) if args.deck else None
    detector = CardDetector(load_model(args.backend, name=finder_name(deck)), deck)
    detector.prepare()
    del deck
    log = GameLog.open(log_path or args.log)
    lock: LogLock | None = None
    jsonl = None
    try:
        lock = LogLock.acquire(log.path, f"companion {args.command} --source {source_spec}")
        info = log.last_unfinished_game() if resume else None
        if resume == "always" and info is None:
            raise BadInputError("no unfinished game in the log to resume")
        events = log.events(info.id) if info is not None else []
        resumed_t = max((float(e["t"]) for e in events), default=0.0)
        # The same recording again continues after the last frame that gave an event (the
        # frames after it gave none, so the settler finds the table as the log left it); any
        # other source (a camera, whose clock starts at 0) goes on from that time.
        same_recording = (
            info is not None and not is_live(source_spec) and same_path(info.source, source_spec)
        )
        source = make_source(source_spec, args.headless, resumed_t if same_recording else None)
        source.open()  # before anything is logged: a camera that fails leaves no game behind
        source_ended = False
        games: list[str] = []
        pipeline: TablePipeline | None = None
        try:
            if args.events:
                args.events.parent.mkdir(parents=True, exist_ok=True)
                jsonl = args.events.open("a", encoding="utf-8")
            echo = (lambda e: print(describe(e), flush=True)) if args.headless else None

            def make_follower(mode: str, players: Sequence[str] | None) -> GameFollower:
                """A new game: its entry in the log is made at its first event, and every event
                is written as it happens."""
                follower = GameFollower(mode, players)

                def start() -> str:
                    games.append(log.new_game(mode, list(follower.players), source_spec))
                    return games[-1]

                follower.sink = EventSinks(log, None, jsonl, echo, start=start)
                return follower

            follower = None
            if info is not None:
                follower = GameFollower.from_events(
                    info.mode, list(info.players), events, EventSinks(log, info.id, jsonl, echo)
                )
                final = follower.view().final
                if final is not None:  # over, but the power went before it was marked so
                    log.finish(info.id, final)
                    if resume == "always":
                        raise BadInputError(f"game {info.id} was over: no unfinished game left")
                    follower = None
                else:
                    games.append(info.id)
                    where = (
                        f"from {resumed_t:.1f} s of the recording"
                        if same_recording
                        else f"at {resumed_t:.1f} s, watching {source_spec} from now"
                    )
                    print(
                        f"resuming game {info.id} ({info.mode}, {len(events)} events) {where}",
                        file=sys.stderr,
                    )
            resumed = follower is not None
            if follower is None:
                follower = make_follower(mode, players)
            pipeline = TablePipeline(detector, follower, manual_calibration=calibration)
            if resumed and not same_recording:
                pipeline.t_offset = resumed_t
            # each served bowl's picture, kept beside the game log for the recap
            pipeline.on_frame = BowlCropper(
                CropStore.beside(log.path), lambda: games[-1] if games else ""
            )
            if args.headless:
                for frame in source:
                    with atomic(pipeline.follower):  # a step is logged whole or not at all
                        pipeline.process(frame)
                source_ended = True
            else:
                session = Session(source, pipeline, new_follower=make_follower)
                # the Scores and Past games screens read the log and name the game by these
                session.log_path = log.path  # type: ignore[attr-defined]
                session.game_id = lambda: games[-1]  # type: ignore[attr-defined]
                session.start()
                from companion.ui.app import run_app
                from companion.ui.controller import Settings
                from companion.ui.settings_store import SettingsStore

                store = SettingsStore()
                run_app(
                    session,
                    fullscreen=args.fullscreen,
                    language=args.language,
                    settings=store.load(Settings(source=source_spec)),
                    store=store,
                    start="table" if resumed else "new",
                )
                session.stop()
                source_ended = session.source_ended
                if session.error is not None:
                    kept = f"; game {games[-1]} is kept unfinished" if games else ""
                    print(
                        f"companion {args.command}: error: {session.error}{kept}", file=sys.stderr
                    )
                    return 1
        except CameraError as exc:
            if not games or pipeline is None or pipeline.follower.view().final is not None:
                raise
            raise CameraError(
                f"{exc}; game {games[-1]} is kept unfinished: `companion run --resume "
                f"--source {source_spec}` continues it from there (the whole file, or the camera)"
            ) from exc
        finally:
            source.close()
        follower = pipeline.follower  # the app may have started a new game
        game_id = games[-1] if games else None
        view = follower.view()
        if source_ended and view.final is None and view.phase != "setup":
            with atomic(follower):
                follower.finish()  # a recording played to its end is the whole game
        final = follower.view().final
        if final is not None and game_id is not None:
            log.finish(game_id, final)
        if args.headless:
            if final is not None:
                print(scoreboard(final))
            print(
                f"{pipeline.frames} frames, {pipeline.detections} detections, "
                f"{pipeline.recalibrations} re-calibrations; game log {log.path} "
                f"({game_id or 'no game logged'})"
            )
        if expected_final is not None and final is not None:
            same = final.get("scores") == expected_final.get("scores")
            print(f"matches the recorded game's result: {'yes' if same else 'NO'}")
    finally:
        if jsonl is not None:
            jsonl.close()
        if lock is not None:
            lock.release()
        log.close()
    return 0
