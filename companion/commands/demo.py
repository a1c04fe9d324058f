"""`companion demo`: the bundled recorded game through the whole pipeline."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

NAME = "demo"
DEMO_DIR = Path(__file__).resolve().parents[1] / "assets" / "demo"


def add_parser(sub: argparse._SubParsersAction) -> None:
    from companion.commands.run import add_common

    p = sub.add_parser(
        NAME,
        help="play the bundled recorded game through the whole pipeline",
        description="Replays the bundled recording of a game (rendered from a simulated game) "
        "through camera decoding, detection, tracking and the game follower, and shows the "
        "app; with --headless, prints every event and the final scoreboard, and whether it "
        "matches the recorded game's result. Uses a throw-away game log unless --log is given.",
    )
    p.add_argument(
        "--recording",
        type=Path,
        default=DEMO_DIR,
        help="recording folder (recording.mp4 + record.json); default: bundled",
    )
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.commands.run import follow
    from companion.errors import BadInputError

    folder: Path = args.recording
    video = next(
        (folder / n for n in ("recording.mp4", "recording.avi") if (folder / n).exists()), None
    )
    record_path = folder / "record.json"
    if video is None or not record_path.exists():
        raise BadInputError(f"{folder} holds no recording (recording.mp4 + record.json)")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{record_path} is not valid JSON: {exc}") from None
    if (
        not args.headless
        and sys.platform.startswith("linux")
        and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    ):
        print("demo: no display here, so running headless (events and scoreboard below)")
        args.headless = True
    with tempfile.TemporaryDirectory(prefix="ramen-demo-") as tmp:
        log = args.log or Path(tmp) / "demo-games.sqlite"
        if args.headless:
            print(
                f"demo: {record['mode']} game, players {', '.join(record['players'])}, {video.name}"
            )
        return follow(
            args,
            str(video),
            record["mode"],
            list(record["players"]),
            log_path=log,
            expected_final=record.get("final"),
        )
