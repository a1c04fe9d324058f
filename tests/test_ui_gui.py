"""Real-window tests: the Kivy app on a ScriptedController, driven by touches.

Each scenario runs `tests/ui_scenario.py` in its own process (Kivy does not restart cleanly in
one process) under the current display, or under `xvfb-run` when there is none. Screenshots go
to test-artifacts/screenshots/<step>-<lang>.png for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-artifacts" / "screenshots"

pytestmark = [pytest.mark.gui, pytest.mark.slow]


@cache
def scenario(name: str, lang: str, size: str = "800x480") -> dict[str, Any]:
    out = ROOT / "test-artifacts" / f"ui-{name}-{lang}-{size}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "tests.ui_scenario", "--scenario", name, "--lang", lang]
    cmd += ["--size", size, "--out", str(out), "--shots", str(SHOTS)]
    w, h = size.split("x")
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        cmd = ["xvfb-run", "-a", "-s", f"-screen 0 {w}x{h}x24", *cmd]
    env = {**os.environ, "KIVY_NO_ARGS": "1", "KIVY_HOME": str(ROOT / ".kivy")}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.exists(), f"scenario crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["errors"] == [], result["errors"]
    return result


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_two_player_game_through_the_screens(lang: str) -> None:
    r = scenario("2p", lang)
    steps = r["steps"]
    fr = lang == "fr"
    assert steps["newgame"]["check"] == ("Repères introuvables" if fr else "Markers not found")
    assert steps["newgame-ok"]["check"] == ("Caméra prête" if fr else "Camera ready")
    # The table: bowl panels with sums and types, served counts only.
    bowls = steps["table"]["bowls"]
    assert [(b["title"], b["sum"], b["types"]) for b in bowls][:2] == [
        ("Bol 1" if fr else "Bowl 1", "9/14", "4/7"),
        ("Bol 2" if fr else "Bowl 2", "11/14", "2/7"),
    ]
    assert bowls[0]["chips"] == ["1 Nori", "3 Chashu", "5 Negi", "0 Menma"]
    assert not steps["table"]["banner_visible"]
    # A bowl gets ready: the banner shows, one chime and one spoken line despite many polls.
    ready = steps["table-ready"]
    assert ready["banner_visible"]
    assert ready["banner"] == ("Bol 2 — prêt à servir !" if fr else "Bowl 2 — ready to serve!")
    assert ready["chimes"] == 1
    assert r["spoken"] == ["Le bol 2 est prêt à servir" if fr else "Bowl 2 is ready to serve"]
    assert ready["served"] == (["Alice : 1", "Bob : 0"] if fr else ["Alice: 1", "Bob: 0"])
    assert not steps["banner-dismissed"]["banner_visible"]
    # A card correction in two taps, a served bowl given to Bob.
    assert steps["fix-ingredient"]["screen"] == "fix"
    assert steps["fix-value"]["prompt"] == (
        "Negi : quelle valeur ?" if fr else "Negi: which value?"
    )
    assert steps["after-fix"]["screen"] == "table"
    assert steps["fix-served-to"]["targets"] == ["Alice", "Bob"]
    assert steps["table-warning"]["toasts"] == ["Two cards went into the same bowl"]
    assert steps["table-warning"]["chimes"] == 1  # the same ready bowl is not announced again
    # Score asks once more before ending play.
    assert r["score_armed"] == ("Compter ?" if fr else "Score?")
    assert r["calls_after_first_tap"] == 0
    # End game: a matching pile, then a misread one resolved with what was served.
    match = steps["endgame-match"]
    assert match["pile"] == "4 types · 3 pts" and match["confirm_enabled"]
    assert not match["use_seen_enabled"]
    differs = steps["endgame-differs"]
    assert differs["check"].splitlines()[1:] == (
        ["Manque : 6 Menma", "En trop : 5 Menma"] if fr else ["Missing: 6 Menma", "Extra: 5 Menma"]
    )
    assert differs["use_seen_enabled"]
    scores = steps["scores"]
    assert scores["screen"] == "scores"
    assert scores["result"] == ("Alice gagne !" if fr else "Alice wins!")
    assert scores["rows"][4:] == ["Alice", "3", "1", "5", "Bob", "1", "1", "3"]
    assert r["calls"] == [
        ["new_game", ["2p", ["Alice", "Bob"], lang, "usb:0"]],
        ["correct_card", ["nori-1", "negi-2"]],
        ["reassign_served", [0, "Bob"]],
        ["begin_scoring", []],
        ["resolve_scan", ["Alice", ["nori-1", "nori-4", "chashu-3", "shiitake-0", "negi-6"]]],
        ["resolve_scan", ["Bob", ["menma-7", "menma-6", "ajitama-2"]]],
        ["finish", []],
    ]


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_solo_game_peeks_and_shows_the_critics(lang: str) -> None:
    r = scenario("solo", lang)
    steps = r["steps"]
    assert "0 Nori · 0 Chashu" in steps["solo-peek"]["toasts"][0]
    assert steps["solo-scores"]["stars"] == "★★★☆☆"
    assert steps["solo-scores"]["review"].startswith(
        "Les nouilles" if lang == "fr" else "Lovely noodles"
    )


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_four_players_play_in_teams(lang: str) -> None:
    steps = scenario("4p", lang)["steps"]
    fr = lang == "fr"
    assert steps["4p-newgame"]["names"] == 4
    team = "Équipe" if fr else "Team"
    bowl = "Bol" if fr else "Bowl"
    assert steps["4p-table"]["titles"] == [
        f"{bowl} 1",
        f"{bowl} 2 · {team} A",
        f"{bowl} 3 · {team} B",
    ]
    sep = " : " if fr else ": "
    assert steps["4p-table"]["served"] == [f"{team} A{sep}1", f"{team} B{sep}1"]
    assert steps["4p-fix-served"]["items"][0].endswith(f"{team} A")
    assert steps["4p-endgame"]["guide"].startswith(f"{team} A")
    assert steps["4p-scores"]["result"] == (f"{team} A gagne !" if fr else f"{team} A wins!")
    # Team B's pile was never spread: the scoreboard says so.
    assert steps["4p-scores"]["notes"] == (
        f"{team} B : 0 lus, 1 servis" if fr else f"{team} B: 0 read, 1 served"
    )


@pytest.mark.parametrize(
    ("name", "lang", "size"),
    [
        ("2p", "en", "800x480"),
        ("2p", "fr", "800x480"),
        ("solo", "en", "800x480"),
        ("solo", "fr", "800x480"),
        ("4p", "en", "800x480"),
        ("4p", "fr", "800x480"),
        ("2p", "fr", "1280x800"),
    ],
)
def test_text_fits_on_every_screen(name: str, lang: str, size: str) -> None:
    r = scenario(name, lang, size)
    assert r["window"] == [int(v) for v in size.split("x")]
    assert r["overflow"] == []
    assert r["small"] == []  # every button and card chip is a >= 48 px touch target


def test_screenshots_are_saved_for_people_to_look_at() -> None:
    scenario("2p", "en")
    for step in ("newgame", "table-ready", "fix-ingredient", "endgame-differs", "scores"):
        shot = SHOTS / f"{step}-en.png"
        assert shot.exists() and shot.stat().st_size > 5000, shot


RUN_APP = """
import json, sys
from kivy.app import App
from kivy.clock import Clock
from kivy.core.window import Window
from companion.ui.app import run_app
from tests.ui_scripted import ScriptedController, make_view, sample_frame

ctl = ScriptedController([make_view(phase="setup", turn=0)], frame=sample_frame())
seen = {}

def done(_dt):
    app = App.get_running_app()
    seen.update(
        title=app.title,
        screen=app.sm.current,
        check=app.screen("new").ids.check_status.text,
        window=list(Window.size),
    )
    app.stop()

Clock.schedule_once(done, 1.5)
run_app(ctl, language="fr", size=(800, 480))
print("RESULT " + json.dumps(seen, ensure_ascii=False))
"""


def test_run_app_opens_the_new_game_screen_and_closes() -> None:
    """The entry point `companion run`/`demo` call, on its own: window, language, first screen."""
    cmd = [sys.executable, "-c", RUN_APP]
    if not os.environ.get("DISPLAY") and shutil.which("xvfb-run"):
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 800x480x24", *cmd]
    env = {**os.environ, "KIVY_NO_ARGS": "1", "KIVY_HOME": str(ROOT / ".kivy")}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, proc.stderr[-3000:]
    seen = json.loads(lines[-1].removeprefix("RESULT "))
    assert seen == {
        "title": "Ramen! Ramen!",
        "screen": "new",
        "check": "Caméra prête",
        "window": [800, 480],
    }
