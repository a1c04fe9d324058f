"""Real window after a real followed game: the explained Scores screen, the recap picture, the
Past games screen and a past game's recap, driven by touches, screenshots saved.

Run in its own process (Kivy does not restart cleanly inside one pytest process):
    python -m tests.ui_recap_scenario --log GAMES.sqlite --game ID --lang en --size 800x480 \
        --out result.json --shots DIR
The controller plays the game's own final view, rebuilt from the game log by the follower
(the same replay `run --resume` does), and knows the log like a Session does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_HOME", str(ROOT / ".kivy"))
os.environ.setdefault("KIVY_LOG_MODE", "PYTHON")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_CLIPBOARD", "dummy")
sys.path.insert(0, str(ROOT))

from tests.ui_scenario import CountingSpeaker, Driver  # noqa: E402
from tests.ui_scripted import ScriptedController  # noqa: E402


def final_view(log: Path, game_id: str) -> Any:
    from companion.tracking.follower import GameFollower
    from companion.tracking.gamelog import GameLog

    with GameLog.open(log) as gl:
        info = gl.game(game_id)
        events = gl.events(game_id)
    return GameFollower.from_events(info.mode, list(info.players), events).view()


def steps(d: Driver, log: Path) -> None:
    from companion.ui import viewmodels as vm

    app = d.app

    def show_scores() -> None:
        flow = vm.EndGame(d.ctl.view())
        flow.confirmed = {s: list(flow.seen.get(s, [])) for s in flow.scorers}
        flow.position = len(flow.scorers)  # every pile spread and confirmed
        app.show_scores(flow)

    def scores_state() -> dict[str, Any]:
        s = app.screen("scores")
        blocks: list[dict[str, Any]] = []
        for w in reversed(s.ids.explained.children):
            if type(w).__name__ == "BowlRow":
                chips = [c.text for c in reversed(w.ids.chips.children)]
                blocks[-1]["bowls"].append({"chips": chips, "text": w.text})
            else:
                blocks.append({"head": w.text, "bowls": []})
        return {
            "result": s.ids.result.text,
            "rows": [w.text for w in reversed(s.ids.rows.children)],
            "tie": s.ids.tie.text,
            "blocks": blocks,
            "qr_link": s.qr_link,
            "qr_caption": s.ids.qr_caption.text,
            "recap_enabled": not s.ids.recap.disabled,
        }

    d.add("recap-scores", show_scores, scores_state)

    def open_recap() -> None:
        d.tap(d.ids("scores").recap)

    def recap_state() -> dict[str, Any]:
        r = app.screen("recap")
        return {"source": r.source, "caption": r.caption}

    d.add("recap-picture", open_recap, recap_state)

    d.add("recap-back", lambda: d.tap(d.ids("recap").back), lambda: {})

    def to_history() -> None:
        d.tap(d.ids("scores").history)

    def history_state() -> dict[str, Any]:
        h = app.screen("history")
        return {
            "message": h.message,
            "games": [
                {"text": b.text, "enabled": not b.disabled} for b in reversed(h.ids.games.children)
            ],
            "players": [w.text for w in reversed(h.ids.players.children)],
            "solo": h.solo_text,
        }

    d.add("recap-history", to_history, history_state)

    def open_past() -> None:
        first = next(b for b in reversed(d.ids("history").games.children) if not b.disabled)
        d.tap(first)

    d.add("recap-history-open", open_past, recap_state)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--log", type=Path, required=True)
    p.add_argument("--game", required=True)
    p.add_argument("--lang", choices=("en", "fr"), default="en")
    p.add_argument("--size", default="800x480")
    p.add_argument("--out", required=True)
    p.add_argument("--shots", default=str(ROOT / "test-artifacts" / "screenshots"))
    args = p.parse_args()
    w, h = (int(v) for v in args.size.split("x"))

    from kivy.config import Config

    Config.set("graphics", "width", str(w))
    Config.set("graphics", "height", str(h))
    Config.set("graphics", "resizable", "0")
    Config.set("input", "mouse", "mouse,disable_multitouch")

    from companion.ui import app as ui_app

    ctl = ScriptedController([final_view(args.log, args.game)])
    ctl.log_path = args.log  # type: ignore[attr-defined]
    ctl.game_id = args.game  # type: ignore[attr-defined]
    box: dict[str, Driver] = {}

    class ScenarioApp(ui_app.CompanionApp):
        def on_start(self) -> None:
            self.speaker = CountingSpeaker()  # type: ignore[assignment]
            d = Driver(self, ctl, args.lang, Path(args.shots))
            d.suffix = "" if args.size == "800x480" else f"-{args.size}"
            steps(d, args.log)
            box["d"] = d
            d.start()

    ui_app.Window.size = (w, h)
    ScenarioApp(ctl, ui_app.Settings(language=args.lang, source="usb:0")).run()
    d = box["d"]
    d.result["window"] = list(ui_app.Window.size)
    Path(args.out).write_text(json.dumps(d.result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
