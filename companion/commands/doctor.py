"""`companion doctor`: is the table ready? Camera, model, markers, light, glare, focus, disk."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from companion.inputs import real

NAME = "doctor"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="check camera, model, markers, light, focus and disk before a game",
        description="Runs every check once and prints one line per check: OK, WARN or FAIL "
        "(SKIP when an earlier failure left nothing to look at), with what to do. The camera "
        "is read for about 2 s; a camera that sends nothing within --timeout fails instead of "
        "hanging. Exit code 0 when nothing failed, 1 when a check failed, 2 for bad arguments.",
    )
    p.add_argument(
        "--source",
        default="picamera",
        help="picamera (default), usb:N, a video file or a folder of images",
    )
    p.add_argument(
        "--timeout",
        type=real(0, 600, above=True),
        default=5.0,
        metavar="SECONDS",
        help="longest wait for a camera frame, up to 600 (default 5)",
    )
    p.add_argument(
        "--backend",
        choices=("ncnn", "onnx", "torch"),
        help="check this detector backend (default: the best available)",
    )
    p.add_argument(
        "--log",
        type=Path,
        metavar="PATH",
        help="game log whose disk is checked; default $RAMEN_COMPANION_LOG or "
        "~/.local/share/ramen-companion/games.sqlite",
    )
    p.add_argument("--json", action="store_true", help="one JSON object with every check")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import cv2

    # The doctor reports a camera that does not open itself; OpenCV's own log would bury it.
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    from companion.camera import open_source
    from companion.doctor import exit_code, run_checks
    from companion.tracking.gamelog import default_log_path

    spec = args.source
    # A recording plays at its own pace, so the fps measured is the one a game would see.
    opts = {"realtime": True} if Path(spec).is_file() else {}
    source = open_source(spec, **opts)  # an unknown spec or missing path: exit 2
    log_path = args.log.expanduser() if args.log else default_log_path()
    checks = run_checks(source, log_path, timeout=args.timeout, backend=args.backend)
    code = exit_code(checks)
    if args.json:
        print(json.dumps({"ok": code == 0, "checks": [c.as_dict() for c in checks]}))
        return code
    width = max(len(c.name) for c in checks)
    for c in checks:
        print(f"{c.status:<4}  {c.name:<{width}}  {c.message}", flush=True)
        if c.advice:
            print(f"{'':<4}  {'':<{width}}  -> {c.advice}", flush=True)
    failed = sum(c.status == "FAIL" for c in checks)
    warned = sum(c.status == "WARN" for c in checks)
    if failed:
        print(f"{failed} check(s) failed: fix them before a game.")
    elif warned:
        print(f"ready, with {warned} warning(s).")
    else:
        print("ready.")
    return code
