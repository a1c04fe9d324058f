"""Real window on the real pipeline: the app over a Session replaying frames of the demo game.

Run in its own process (Kivy does not restart cleanly inside one pytest process):
    python -m tests.ui_live_scenario FRAMES_DIR --out result.json --shots DIR
The pipeline thread reads the frames (OpenCV decoding, markers, the shipped model, settling,
the game follower); the app polls the Session like any Controller. When the frames are used
up, the scenario opens the Table screen, records every label there and the follower's view,
saves a screenshot, taps a card chip to open the correction picker, and quits.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_HOME", str(ROOT / ".kivy"))
os.environ.setdefault("KIVY_LOG_MODE", "PYTHON")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_CLIPBOARD", "dummy")
sys.path.insert(0, str(ROOT))


def labels(widget) -> list[str]:
    from kivy.uix.label import Label

    out = []
    for w in widget.walk():
        if isinstance(w, Label) and w.text:
            out.append(w.text)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("frames", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--shots", type=Path, default=ROOT / "test-artifacts" / "screenshots")
    args = ap.parse_args()
    result: dict = {"ok": False}
    try:
        from kivy.base import stopTouchApp
        from kivy.clock import Clock
        from kivy.core.window import Window
        from kivy.tests.common import UnitTestTouch

        from companion.camera import open_source
        from companion.deck.deckdir import load_deck
        from companion.session import Session, TablePipeline
        from companion.tracking.follower import GameFollower
        from companion.ui.app import CompanionApp, Settings
        from companion.vision.backends import load_model
        from companion.vision.detector import CardDetector

        follower = GameFollower("2p", ["Alice", "Bob"])
        pipeline = TablePipeline(CardDetector(load_model(), load_deck(None)), follower)
        source = open_source(str(args.frames), fps=4.0)
        source.open()
        session = Session(source, pipeline)
        app = CompanionApp(session, Settings(sound=False))
        Window.size = (800, 480)
        state = {"phase": "wait", "ticks": 0}

        def tick(_dt: float) -> None:
            state["ticks"] += 1
            if state["phase"] == "wait" and session.ended.is_set():
                app.go("table")
                state["phase"] = "table"
            elif state["phase"] == "table":
                view = session.view()
                table = app.screen("table")
                result["view"] = {
                    "turn": view.turn,
                    "current_player": view.current_player,
                    "bowls": {b.region: [list(b.cards), b.value_sum, b.types] for b in view.bowls},
                    "fridge": list(view.fridge),
                    "served_counts": view.served_counts,
                }
                result["table_labels"] = labels(table)
                args.shots.mkdir(parents=True, exist_ok=True)
                made = Window.screenshot(name=str(args.shots / "live-table-.png"))
                if made:
                    Path(made).replace(args.shots / "live-table.png")
                    result["screenshot"] = str(args.shots / "live-table.png")
                chips = [w for w in table.walk() if type(w).__name__ == "CardChip"]
                result["chips"] = len(chips)
                if chips:
                    chip = chips[0]
                    touch = UnitTestTouch(*chip.to_window(*chip.center))
                    touch.touch_down()
                    touch.touch_up()
                state["phase"] = "tapped"
            elif state["phase"] == "tapped":
                result["screen_after_tap"] = app.sm.current
                result["ok"] = True
                stopTouchApp()
            elif state["ticks"] > 2400:
                result["error"] = "timed out waiting for the pipeline"
                stopTouchApp()

        Clock.schedule_interval(tick, 0.25)
        session.start()
        app.run()
        session.stop()
        source.close()
    except Exception:  # the test reads the reason from the JSON
        result["error"] = traceback.format_exc()
    args.out.write_text(json.dumps(result, indent=2))
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
