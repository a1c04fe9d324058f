"""The kiosk as systemd starts it, in a real window: `companion run ...` through the CLI's own
`main()`, with whatever Kivy config and game log the environment names.

Run in its own process (Kivy does not restart inside one pytest process), under Xvfb:
    python -m tests.kiosk_scenario --out result.json --shots DIR -- run --source X ...
After `--wait` seconds of the app running, it records the window (fullscreen, cursor, size),
the screen shown and the followed game, saves a screenshot, switches the language to French
through the Settings screen's Apply (as a person would), and closes the app.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_LOG_MODE", "PYTHON")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_CLIPBOARD", "dummy")
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--shots", type=Path, default=ROOT / "test-artifacts" / "screenshots")
    ap.add_argument("--name", default="kiosk")
    ap.add_argument("--wait", type=float, default=4.0)
    ap.add_argument(
        "--until-error",
        action="store_true",
        help="record the screen once the pipeline has stopped on an error, then let the app "
        "close by itself",
    )
    ap.add_argument("argv", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    result: dict = {"ok": False}
    try:
        from kivy.app import App
        from kivy.clock import Clock
        from kivy.core.window import Window

        import companion.ui.app as ui_app
        from companion.cli import main as companion_main

        ui_app.ERROR_EXIT_S = 3.0  # the kiosk shows the error 20 s; a test need not wait

        state: dict = {"since": None}

        def probe(_dt: float) -> bool | None:
            app = App.get_running_app()
            if app is None or getattr(app, "sm", None) is None:
                return None
            if state["since"] is None:
                state["since"] = time.monotonic()
            if time.monotonic() - state["since"] < args.wait:
                return None
            view = app.controller.view()
            if args.until_error:
                if view.error is None:
                    return None
                app.poll(0)
                shown = app.sm.current_screen
                if app.sm.current == "new":  # the camera line of the table check
                    text, fine = shown.check_text, shown.check_ok
                else:
                    text, fine = shown.camera_text, shown.camera_ok
                result.update(
                    error=view.error,
                    screen=app.sm.current,
                    camera_text=text,
                    camera_ok=fine,
                    shown_at=time.monotonic(),
                )
                result["ok"] = True
                return False
            result.update(
                fullscreen=Window.fullscreen,
                show_cursor=bool(Window.show_cursor),
                size=list(Window.size),
                screen=app.sm.current,
                turn=view.turn,
                phase=view.phase,
                t=view.t,
                camera=view.camera,
                error=view.error,
            )
            args.shots.mkdir(parents=True, exist_ok=True)
            made = Window.screenshot(name=str(args.shots / f"{args.name}-.png"))
            if made:
                Path(made).replace(args.shots / f"{args.name}.png")
                result["screenshot"] = str(args.shots / f"{args.name}.png")
            app.go("settings")
            settings = app.screen("settings")
            settings.language = "fr"
            settings.on_apply()
            result["after_apply"] = {
                "fullscreen": Window.fullscreen,
                "show_cursor": bool(Window.show_cursor),
            }
            result["ok"] = True
            app.stop()
            return False

        Clock.schedule_interval(probe, 0.25)
        result["rc"] = companion_main(argv)
        if "shown_at" in result:
            result["closed_after"] = time.monotonic() - result.pop("shown_at")
    except Exception:  # the test reads the reason from the JSON
        result["ok"] = False
        result["error"] = traceback.format_exc()
    args.out.write_text(json.dumps(result, indent=2))
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
