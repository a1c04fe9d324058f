"""The kiosk after a power cut, in a real window under Xvfb with the Pi's Kivy config and the
systemd unit's own command line (its camera swapped for a recording of the same game): it comes
back fullscreen without a cursor, straight into the unfinished game, and keeps its settings."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_hardware_pi import KIVY_INI, one, parse_unit, render_unit
from tests.test_session_faults import DEMO, all_events, encode_avi, kill_after, run_cmd

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.gui]


@pytest.fixture(scope="module")
def power_cut(tmp_path_factory):
    """A game followed from a recording and killed (-9) mid-game: an unfinished game."""
    tmp = tmp_path_factory.mktemp("kiosk")
    video = encode_avi(DEMO / "recording.mp4", tmp / "table.avi", 200)
    log = tmp / "games.sqlite"
    events = tmp / "before.jsonl"
    kill_after(run_cmd("--source", str(video), events=events, log=log), events, 40)
    before = all_events(events)
    turns = [e["turn"] for e in before if e["type"] == "turn"]
    assert turns, "the killed game had started its turns"
    return video, log, max(turns), max(e["t"] for e in before)


def kiosk(tmp: Path, argv: list[str], log: Path, name: str, *options: str) -> dict:
    kivy_home = tmp / "kivy"
    kivy_home.mkdir()
    shutil.copy(KIVY_INI, kivy_home / "config.ini")  # as install.sh installs it
    out = tmp / "result.json"
    cmd = [sys.executable, "-m", "tests.kiosk_scenario", "--out", str(out), "--name", name]
    cmd += options
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 800x480x24", *cmd, "--", *argv]
    env = {
        **os.environ,
        "KIVY_HOME": str(kivy_home),
        "RAMEN_COMPANION_LOG": str(log),
        "RAMEN_COMPANION_SETTINGS": str(tmp / "settings.json"),
    }
    env.pop("DISPLAY", None)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert out.exists(), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["ok"], result.get("error") or proc.stderr[-3000:]
    settings = tmp / "settings.json"
    result["settings"] = json.loads(settings.read_text()) if settings.exists() else None
    result["stderr"] = proc.stderr
    return result


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no xvfb-run (CI installs xvfb)")
@pytest.mark.parametrize("flags", ["unit", "kivy-config-only"])
def test_a_killed_kiosk_restarts_fullscreen_into_the_unfinished_game(power_cut, tmp_path, flags):
    video, log, turn, t = power_cut
    from companion.tracking.gamelog import GameLog

    with GameLog.open(log) as games:
        (game,) = games.games()
    argv = shlex.split(one(parse_unit(render_unit()), "Service", "ExecStart"))[1:]
    argv[argv.index("picamera")] = str(video)  # no Pi camera here: the same game, recorded
    if flags == "kivy-config-only":
        argv.remove("--fullscreen")  # the installed Kivy config alone makes the kiosk
    result = kiosk(tmp_path, argv, log, f"kiosk-{flags}")
    assert result["rc"] == 0
    assert result["fullscreen"] in ("auto", True)
    assert result["show_cursor"] is False
    assert result["size"] == [800, 480]
    assert result["screen"] == "table", "straight back into the game, not a New game screen"
    assert result["phase"] == "playing" and result["turn"] >= turn and result["t"] >= t
    assert result["error"] is None
    assert Path(result["screenshot"]).exists()
    assert result["settings"]["language"] == "fr"
    # an Apply on the Settings screen keeps the kiosk as it is
    assert result["after_apply"]["fullscreen"] in ("auto", True)
    assert result["after_apply"]["show_cursor"] is False
    with GameLog.open(log) as games:
        after = games.games()
    assert [g.id for g in after] == [game.id], "resumed, not a new game"
    assert after[0].finished is None, "closing the app mid-game leaves it resumable"
    assert after[0].events >= game.events


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no xvfb-run (CI installs xvfb)")
def test_when_following_stops_the_screen_says_why_and_the_kiosk_exits_for_a_restart(tmp_path):
    """The pipeline stops (here a recording cut off half-way): the Table screen says why, the
    app closes by itself a little later, `companion run` exits non-zero (systemd restarts
    it, and --resume-if-any brings the game back) and the game stays unfinished."""
    video = encode_avi(DEMO / "recording.mp4", tmp_path / "table.avi", 48)
    data = video.read_bytes()
    video.write_bytes(data[: len(data) // 2])
    log = tmp_path / "games.sqlite"
    argv = ["run", "--source", str(video), "--fullscreen", "--resume-if-any"]
    result = kiosk(tmp_path, argv, log, "kiosk-stopped", "--until-error", "--wait", "0")
    assert "ended at frame" in result["error"]
    assert result["screen"] == "new"
    assert result["camera_text"] == f"Stopped: {result['error']}"
    assert result["camera_ok"] is False
    assert result["rc"] == 1
    assert 2.0 < result["closed_after"] < 15.0
    lines = [ln for ln in result["stderr"].splitlines() if ln.startswith("companion run: error:")]
    assert len(lines) == 1 and "ended at frame" in lines[0]
