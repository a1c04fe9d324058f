"""Real-window scenario: play a scripted game through the Kivy app, write a JSON result.

Run in its own process (Kivy does not restart cleanly inside one pytest process):
    python -m tests.ui_scenario --scenario 2p --lang en --out result.json --shots DIR
It starts `run_app` on a ScriptedController, then a step list drives it with real touches
(UnitTestTouch on widget centres): new game -> a bowl gets ready -> a card correction -> a
served bowl reassigned -> end-game scan -> scoreboard. After each step it records widget state,
checks that every visible label's text fits its widget, and saves a screenshot.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_HOME", str(ROOT / ".kivy"))
os.environ.setdefault("KIVY_LOG_MODE", "PYTHON")
os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
os.environ.setdefault("KIVY_CLIPBOARD", "dummy")
sys.path.insert(0, str(ROOT))

from tests.ui_scripted import (  # noqa: E402
    ScriptedController,
    bowl,
    make_view,
    sample_frame,
    seen_for,
)

SERVED = (
    ("Alice", "bowl-1", ("nori-1", "nori-4", "chashu-3", "shiitake-0", "negi-6")),
    ("Bob", "bowl-3", ("menma-7", "menma-6", "ajitama-2")),
)


def with_seen(view: Any) -> Any:
    from dataclasses import replace

    return replace(view, seen=seen_for(view))


def script_2p() -> ScriptedController:
    players = ("Alice", "Bob")
    setup = make_view(phase="setup", turn=0, camera="markers not found")
    setup_ok = make_view(phase="setup", turn=0)
    playing = make_view(
        turn=3,
        current_player="Bob",
        fridge=("kamaboko-2", "negi-3", "ajitama-5", "shiitake-1"),
        bowls=(
            bowl("bowl-1", "nori-1", "chashu-3", "negi-5", "menma-0"),
            bowl("bowl-2", "nori-7", "kamaboko-4"),
            bowl("bowl-3"),
        ),
    )
    ready = make_view(
        turn=4,
        current_player="Alice",
        fridge=("kamaboko-2", "negi-3", "ajitama-5", "shiitake-1"),
        bowls=(
            bowl("bowl-1", "nori-1", "chashu-3", "negi-5", "menma-0"),
            bowl("bowl-2", "nori-7", "kamaboko-4", "shiitake-5"),
            bowl("bowl-3", "menma-2"),
        ),
        served=SERVED[:1],
    )
    warned = make_view(
        turn=5,
        current_player="Bob",
        bowls=ready.bowls,
        served=SERVED,
        warnings=("Two cards went into the same bowl",),
    )
    scoring_a = make_view(phase="scoring", served=SERVED, scan=SERVED[0][2], turn=20)
    scoring_b = make_view(
        phase="scoring",
        served=SERVED,
        scan=("menma-7", "menma-5", "ajitama-2"),  # menma-6 misread
        turn=20,
    )
    final = make_view(
        phase="over",
        served=SERVED,
        turn=20,
        final={
            "scores": {
                "Alice": {"points": 3, "bowls": 1, "cards": 5},
                "Bob": {"points": 1, "bowls": 1, "cards": 3},
            },
            "winners": ["Alice"],
        },
    )
    views = [setup, setup_ok, playing, ready, warned, scoring_a, scoring_b, final]
    ctl = ScriptedController([with_seen(v) for v in views], frame=sample_frame())
    ctl.on_call["finish"] = final
    del players
    return ctl


def script_solo() -> ScriptedController:
    served = [
        ("Me", "bowl-1", ("nori-0", "chashu-0", "shiitake-0", "ajitama-2", "kamaboko-5")),
        ("Me", "bowl-2", ("menma-7", "negi-7", "nori-3", "chashu-1")),
    ]
    playing = make_view(
        "solo",
        ("Me",),
        turn=7,
        current_player="Me",
        bowls=(bowl("bowl-1", "negi-2"), bowl("bowl-2"), bowl("bowl-3", "ajitama-6")),
        served=served,
    )
    scoring = make_view("solo", ("Me",), phase="scoring", served=served, scan=served[0][2])
    final = make_view(
        "solo",
        ("Me",),
        phase="over",
        served=served,
        final={
            "scores": {"Me": {"points": 54, "bowls": 11, "cards": 48}},
            "winners": ["Me"],
            "stars": 3.0,
        },
    )
    ctl = ScriptedController([playing, scoring, final], frame=sample_frame())
    ctl.on_call["finish"] = final
    return ctl


def script_4p() -> ScriptedController:
    players = ("Player 1", "Player 2", "Player 3", "Player 4")
    served = [
        ("A", "bowl-1", ("nori-0", "chashu-0", "negi-7", "menma-7")),
        ("B", "bowl-3", ("shiitake-7", "ajitama-7", "kamaboko-1")),
    ]
    playing = make_view(
        "4p",
        players,
        turn=9,
        current_player="Player 2",
        fridge=("kamaboko-6", "kamaboko-5", "shiitake-6", "shiitake-5"),
        bowls=(
            bowl("bowl-1", "nori-6", "chashu-5", "menma-3"),
            bowl("bowl-2", "negi-1", "kamaboko-2", "shiitake-3", owner="A"),
            bowl("bowl-3", "ajitama-4", "chashu-6", "menma-6", owner="B"),
        ),
        served=served,
    )
    scoring = make_view("4p", players, phase="scoring", served=served, scan=served[0][2])
    final = make_view(
        "4p",
        players,
        phase="over",
        served=served,
        final={
            "scores": {
                "A": {"points": 3, "bowls": 1, "cards": 4},
                "B": {"points": 2, "bowls": 1, "cards": 3},
            },
            "winners": ["A"],
        },
    )
    ctl = ScriptedController([with_seen(playing), scoring, final], frame=sample_frame())
    ctl.on_call["finish"] = final
    return ctl


class Driver:
    """Runs steps one after another on the Kivy clock, letting each frame settle."""

    def __init__(self, app: Any, ctl: ScriptedController, lang: str, shots: Path) -> None:
        self.app = app
        self.ctl = ctl
        self.lang = lang
        self.shots = shots
        self.suffix = ""
        self.result: dict[str, Any] = {"steps": {}, "overflow": [], "small": [], "errors": []}
        self.steps: list[tuple[str, Callable[[], None], Callable[[], dict[str, Any]]]] = []

    # helpers
    def ids(self, screen: str) -> Any:
        return self.app.screen(screen).ids

    def tap(self, widget: Any) -> None:
        from kivy.tests.common import UnitTestTouch

        x, y = widget.to_window(*widget.center)
        touch = UnitTestTouch(x, y)
        touch.touch_down()
        touch.touch_up()

    def find(self, root: Any, cls_name: str, **attrs: Any) -> Any:
        for w in root.walk():
            if type(w).__name__ == cls_name and all(
                getattr(w, k, None) == v for k, v in attrs.items()
            ):
                return w
        raise LookupError(f"no {cls_name} with {attrs}")

    def buttons(self, root: Any) -> list[Any]:
        from kivy.uix.button import Button

        return [w for w in root.walk() if isinstance(w, Button)]

    def overflow(self, step: str) -> None:
        """Every visible label's text must fit its widget: no word wider than the label (Kivy
        would break it mid-word), and the wrapped lines no taller than the label."""
        from kivy.core.text import Label as CoreLabel
        from kivy.uix.label import Label

        def extent(w: Any, text: str, width: float | None) -> tuple[float, float]:
            core = CoreLabel(
                text=text,
                font_size=w.font_size,
                font_name=w.font_name,
                bold=w.bold,
                italic=w.italic,
                padding=w.padding,
                text_size=(width, None),
                halign=w.halign,
            )
            core.refresh()
            return core.texture.size if core.texture else (0.0, 0.0)

        screen = self.app.sm.current_screen
        for w in screen.walk():
            touchable = hasattr(w, "on_press") and not w.disabled and w.opacity > 0
            if touchable and min(w.width, w.height) < 47:  # 48 px, rounding allowed
                self.result["small"].append(
                    {"step": step, "text": w.text, "size": [round(w.width), round(w.height)]}
                )
            if not isinstance(w, Label) or not w.text or w.opacity == 0 or w.width <= 1:
                continue
            if type(w).__name__ == "Toast" or w.height <= 1:
                continue
            pad_x = w.padding[0] + w.padding[2]
            if w.text_size[0] is None:
                tw, th = extent(w, w.text, None)
                fits = tw <= w.width + 1 and th <= w.height + 1
            else:
                widest = max(extent(w, word, None)[0] for word in w.text.split())
                _, th = extent(w, w.text, w.text_size[0])
                fits = widest <= w.text_size[0] + pad_x + 1 and th <= w.height + 1
                tw = widest
            if not fits:
                self.result["overflow"].append(
                    {
                        "step": step,
                        "text": w.text,
                        "need": [round(tw), round(th)],
                        "size": [round(w.width), round(w.height)],
                    }
                )

    def shot(self, name: str) -> str:
        from kivy.core.window import Window

        self.shots.mkdir(parents=True, exist_ok=True)
        target = self.shots / f"{name}.png"
        made = Window.screenshot(name=str(self.shots / f"{name}-.png"))
        if made:
            Path(made).replace(target)
        return str(target)

    # running
    def add(self, name: str, act: Callable[[], None], record: Callable[[], dict[str, Any]]) -> None:
        self.steps.append((name, act, record))

    def start(self) -> None:
        from kivy.clock import Clock

        self._i = 0
        Clock.schedule_once(self._act, 0.5)

    def _act(self, _dt: float) -> None:
        from kivy.clock import Clock

        if self._i >= len(self.steps):
            self.result["calls"] = [[n, _jsonable(a)] for n, a in self.ctl.calls]
            self.app.stop()
            return
        name, act, _ = self.steps[self._i]
        try:
            act()
        except Exception:
            self.result["errors"].append(f"{name}: {traceback.format_exc()}")
        self._frames = 0
        self._since = Clock.get_time()
        Clock.schedule_once(self._settle, 0)

    def _settle(self, _dt: float) -> None:
        """Wait some frames and a little time: polls, layout and textures settle."""
        from kivy.clock import Clock

        self._frames += 1
        if self._frames < 10 or Clock.get_time() - self._since < 0.4:
            Clock.schedule_once(self._settle, 0)
            return
        self._record()

    def _record(self) -> None:
        from kivy.clock import Clock

        name, _, record = self.steps[self._i]
        try:
            state = record()
            state["screen"] = self.app.sm.current
            self.overflow(name)
            state["screenshot"] = self.shot(f"{name}-{self.lang}{self.suffix}")
            self.result["steps"][name] = state
        except Exception:
            self.result["errors"].append(f"{name}: {traceback.format_exc()}")
        self._i += 1
        Clock.schedule_once(self._act, 0.05)


def _jsonable(x: Any) -> Any:
    if isinstance(x, tuple | list):
        return [_jsonable(i) for i in x]
    if isinstance(x, str | int | float | bool) or x is None:
        return x
    return repr(x)


def steps_2p(d: Driver) -> None:
    ctl = d.ctl
    app = d.app

    def table_state() -> dict[str, Any]:
        table = app.screen("table")
        panels = list(reversed(table.ids.bowls.children))
        return {
            "turn": table.ids.turn.text,
            "banner": table.ids.banner.text,
            "banner_visible": table.ids.banner.opacity > 0,
            "bowls": [
                {
                    "title": p.ids.title.text,
                    "sum": p.sum_text,
                    "types": p.types_text,
                    "chips": [c.text for c in reversed(p.ids.chips.children)],
                }
                for p in panels
            ],
            "served": [b.text for b in reversed(table.ids.served.children)],
            "chimes": app.speaker.chimes,
            "toasts": [w.text for w in table.ids.toast_area.children],
        }

    d.add(
        "newgame",
        lambda: None,
        lambda: {
            "check": d.ids("new").check_status.text,
            "names": len(d.ids("new").names.children),
        },
    )

    def fill_and_start() -> None:
        ctl.advance()  # camera now ok
        app.poll(0)
        fields = list(reversed(d.ids("new").names.children))
        fields[0].text = "Alice"
        fields[1].text = "Bob"

    d.add("newgame-ok", fill_and_start, lambda: {"check": d.ids("new").check_status.text})

    def start() -> None:
        d.tap(d.ids("new").start)
        ctl.advance()  # the follower now plays

    d.add("table", start, table_state)

    def ready() -> None:
        ctl.advance()
        for _ in range(5):  # several polls of the same ready view: one chime only
            app.poll(0)

    d.add("table-ready", ready, table_state)

    def dismiss() -> None:
        d.tap(d.ids("table").banner)  # a tap on the banner puts it away

    d.add("banner-dismissed", dismiss, table_state)

    def fix_card() -> None:
        chip = d.find(app.screen("table"), "CardChip", card="nori-1")
        d.tap(chip)

    d.add("fix-ingredient", fix_card, lambda: {"title": d.ids("fix").title.text})

    def pick_negi() -> None:
        label = __import__("companion.ui.i18n", fromlist=["ingredient_name"]).ingredient_name
        button = next(b for b in d.buttons(app.screen("fix")) if b.text == label("negi", d.lang))
        d.tap(button)

    d.add("fix-value", pick_negi, lambda: {"prompt": d.ids("fix").prompt.text})

    def pick_value() -> None:
        button = next(b for b in d.buttons(app.screen("fix")) if b.text == "2")
        d.tap(button)

    d.add("after-fix", pick_value, lambda: {"calls": _jsonable(ctl.called("correct_card"))})

    def open_served() -> None:
        d.tap(d.ids("table").served.children[-1])

    d.add(
        "fix-served",
        open_served,
        lambda: {"items": [b.text for b in reversed(d.ids("fix").choices.children)]},
    )

    def pick_item() -> None:
        d.tap(d.ids("fix").choices.children[-1])

    d.add(
        "fix-served-to",
        pick_item,
        lambda: {"targets": [b.text for b in reversed(d.ids("fix").targets.children)]},
    )

    def give_to_bob() -> None:
        d.tap(list(reversed(d.ids("fix").targets.children))[1])
        ctl.advance()  # a warning arrives
        app.poll(0)

    d.add("table-warning", give_to_bob, table_state)

    def to_scoring() -> None:
        d.tap(d.ids("table").score)  # "Score?"
        d.result["score_armed"] = d.ids("table").score.text
        d.result["calls_after_first_tap"] = len(ctl.called("begin_scoring"))
        d.tap(d.ids("table").score)
        ctl.advance()
        app.poll(0)

    def end_state() -> dict[str, Any]:
        s = app.screen("end")
        return {
            "guide": s.ids.guide.text,
            "progress": s.ids.progress.text,
            "pile": s.ids.pile_line.text,
            "check": s.ids.check.text,
            "confirm": s.ids.confirm.text,
            "confirm_enabled": not s.ids.confirm.disabled,
            "use_seen_enabled": not s.ids.use_seen.disabled,
        }

    d.add("endgame-match", to_scoring, end_state)

    def confirm_then_next() -> None:
        d.tap(d.ids("end").confirm)
        d.tap(d.ids("end").next_player)
        ctl.advance()
        app.poll(0)

    d.add("endgame-differs", confirm_then_next, end_state)

    def use_seen_and_finish() -> None:
        d.tap(d.ids("end").use_seen)
        d.tap(d.ids("end").next_player)

    def scores_state() -> dict[str, Any]:
        s = app.screen("scores")
        return {
            "result": s.ids.result.text,
            "rows": [w.text for w in reversed(s.ids.rows.children)],
            "stars": s.ids.stars.text,
        }

    d.add("scores", use_seen_and_finish, scores_state)

    def open_settings() -> None:
        app.go("settings")

    d.add("settings", open_settings, lambda: {"apply": d.ids("settings").apply.text})


def steps_solo(d: Driver) -> None:
    app = d.app

    def start() -> None:
        d.tap(d.ids("new").mode_solo)
        d.tap(d.ids("new").start)

    d.add("solo-table", start, lambda: {"served": [b.text for b in d.ids("table").served.children]})

    def peek() -> None:
        d.tap(d.ids("table").served.children[0])

    d.add(
        "solo-peek",
        peek,
        lambda: {"toasts": [w.text for w in d.ids("table").toast_area.children]},
    )

    def scoring() -> None:
        d.tap(d.ids("table").score)
        d.tap(d.ids("table").score)
        d.ctl.advance()
        app.poll(0)

    d.add("solo-endgame", scoring, lambda: {"pile": d.ids("end").pile_line.text})

    def finish() -> None:
        d.tap(d.ids("end").confirm)
        d.tap(d.ids("end").next_player)

    d.add(
        "solo-scores",
        finish,
        lambda: {
            "result": d.ids("scores").result.text,
            "stars": d.ids("scores").stars.text,
            "review": d.ids("scores").review.text,
        },
    )


def steps_4p(d: Driver) -> None:
    app = d.app

    def start() -> None:
        d.tap(d.ids("new").mode_4p)

    d.add("4p-newgame", start, lambda: {"names": len(d.ids("new").names.children)})

    def play() -> None:
        d.tap(d.ids("new").start)

    d.add(
        "4p-table",
        play,
        lambda: {
            "titles": [p.ids.title.text for p in reversed(d.ids("table").bowls.children)],
            "served": [b.text for b in reversed(d.ids("table").served.children)],
        },
    )

    def served() -> None:
        d.tap(d.ids("table").served.children[-1])

    d.add(
        "4p-fix-served",
        served,
        lambda: {"items": [b.text for b in reversed(d.ids("fix").choices.children)]},
    )

    def scoring() -> None:
        d.tap(d.ids("fix").cancel)

    d.add("4p-back", scoring, lambda: {})

    def to_end() -> None:
        d.tap(d.ids("table").score)
        d.tap(d.ids("table").score)
        d.ctl.advance()
        app.poll(0)

    d.add("4p-endgame", to_end, lambda: {"guide": d.ids("end").guide.text})

    def finish() -> None:
        d.tap(d.ids("end").confirm)
        d.tap(d.ids("end").next_player)
        d.tap(d.ids("end").next_player)

    d.add(
        "4p-scores",
        finish,
        lambda: {
            "result": d.ids("scores").result.text,
            "rows": [w.text for w in reversed(d.ids("scores").rows.children)],
            "notes": d.ids("scores").notes.text,
        },
    )


class CountingSpeaker:
    """Stands in for the Speaker: counts chimes and spoken lines, plays nothing."""

    def __init__(self) -> None:
        self.chimes = 0
        self.spoken: list[str] = []
        self.sound = True
        self.voice = True

    def chime(self) -> bool:
        self.chimes += 1
        return True

    def say(self, text: str, lang: str) -> bool:
        self.spoken.append(text)
        return True


SCENARIOS: dict[str, tuple[Callable[[], ScriptedController], Callable[[Driver], None]]] = {
    "2p": (script_2p, steps_2p),
    "solo": (script_solo, steps_solo),
    "4p": (script_4p, steps_4p),
}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", choices=tuple(SCENARIOS), default="2p")
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

    make_ctl, add_steps = SCENARIOS[args.scenario]
    ctl = make_ctl()
    driver_box: dict[str, Driver] = {}
    speaker = CountingSpeaker()

    class ScenarioApp(ui_app.CompanionApp):
        def on_start(self) -> None:
            self.speaker = speaker  # type: ignore[assignment]
            d = Driver(self, ctl, args.lang, Path(args.shots))
            d.suffix = "" if args.size == "800x480" else f"-{args.size}"
            add_steps(d)
            driver_box["d"] = d
            d.start()

    settings = ui_app.Settings(language=args.lang, source="usb:0")
    ui_app.Window.size = (w, h)
    ScenarioApp(ctl, settings).run()
    d = driver_box["d"]
    d.result["spoken"] = speaker.spoken
    d.result["window"] = list(ui_app.Window.size)
    Path(args.out).write_text(json.dumps(d.result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
