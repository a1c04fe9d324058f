"""`companion demo`: the bundled recorded game through the whole pipeline."""

from __future__ import annotations

import argparse
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
    from companion.inputs import read_json
    from companion.rules.simulate import get_mode
    from companion.rules.state import check_player_name

    folder: Path = args.recording
    video = next(
        (folder / n for n in ("recording.mp4", "recording.avi") if (folder / n).is_file()), None
    )
    record_path = folder / "record.json"
    if video is None or not record_path.is_file():
        raise BadInputError(f"{folder} holds no recording (recording.mp4 + record.json)")
    record = read_json(record_path, "recording description")
    if not isinstance(record, dict) or not isinstance(record.get("players"), list):
        raise BadInputError(f'{record_path}: expected an object with "mode" and "players"')
    players = [check_player_name(p) for p in record["players"]]
    get_mode(record.get("mode", "missing"))  # an unknown mode: one line
    final = record.get("final")
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
            print(f"demo: {record['mode']} game, players {', '.join(players)}, {video.name}")
        return follow(
            args,
            str(video),
            record["mode"],
            players,
            log_path=log,
            expected_final=final if isinstance(final, dict) else None,
        )
