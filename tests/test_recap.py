"""After a real followed game (the bundled recording through the whole pipeline, `demo --log`):
the bowls' camera crops kept beside the log, `recap --out/--link`, `history --json`, and the
Scores / Past games / recap screens in a real window (Xvfb) in English and French at 800x480
and 1280x800, with what a player checks: each bowl under the right player with its points,
totals equal to `companion tally`, a QR code that decodes to the game's BG Stats link."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import pytest

from companion.recap.bgstats import create_play_link, decode_link
from companion.recap.crops import CropStore
from companion.recap.history import load_history
from companion.recap.record import GameRecord
from companion.tracking.gamelog import GameLog
from companion.ui.i18n import count
from tests.recap_helpers import log_game
from tests.test_history import decode_qr

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "companion" / "assets" / "demo"
SHOTS = ROOT / "test-artifacts" / "screenshots"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo game followed by the real pipeline into a game log (its crops beside it)."""
    log = tmp_path_factory.mktemp("recap") / "games.sqlite"
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "demo", "--headless", "--log", str(log)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return log


@pytest.fixture(scope="module")
def demo_game(demo_log: Path) -> GameRecord:
    return load_history(demo_log).last_finished()


def record_json() -> dict[str, Any]:
    return dict(json.loads((DEMO / "record.json").read_text()))


def served_in_record() -> list[tuple[str, tuple[str, ...]]]:
    return [(s["to"], tuple(s["cards"])) for t in record_json()["turns"] for s in t["served"]]


def test_each_served_bowl_is_kept_as_the_camera_saw_it(
    demo_log: Path, demo_game: GameRecord
) -> None:
    store = CropStore.beside(demo_log)
    crops = store.crops(demo_game.id)
    assert len(crops) == len(demo_game.bowls) == len(served_in_record())
    for bowl in demo_game.bowls:
        path = store.find(demo_game.id, bowl.region, bowl.t)
        assert path is not None, bowl
        picture = cv2.imread(str(path))
        assert picture is not None and max(picture.shape[:2]) <= 360
    size = store.size(demo_game.id)
    assert size < 200_000, f"{size} bytes of crops for one game"


def test_the_record_is_the_game_that_was_played(demo_game: GameRecord) -> None:
    assert [(b.scorer, tuple(sorted(b.cards))) for b in demo_game.bowls] == [
        (who, tuple(sorted(cards))) for who, cards in served_in_record()
    ]
    assert demo_game.final == record_json()["final"]
    assert demo_game.turns >= 20


def test_recap_command_and_history(demo_log: Path, demo_game: GameRecord, tmp_path: Path) -> None:
    out = tmp_path / "recap.png"
    argv = ["recap", "--log", str(demo_log), "--out", str(out), "--link"]
    proc = subprocess.run(
        [sys.executable, "-m", "companion", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    link = proc.stdout.splitlines()[-1]
    assert link == create_play_link(demo_game)
    play = decode_link(link)
    final = record_json()["final"]
    assert {p["name"]: p["score"] for p in play["players"]} == {
        n: s["points"] for n, s in final["scores"].items()
    }
    assert [p["name"] for p in play["players"] if p["winner"]] == final["winners"]
    picture = cv2.imread(str(out))
    assert picture.shape == (900, 1600, 3)
    assert decode_qr(picture[540:, :600]) == link
    SHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copy(out, SHOTS / "recap-demo.png")
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "history", "--log", str(demo_log), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    games = json.loads(proc.stdout)["games"]
    assert games[-1]["id"] == demo_game.id and games[-1]["finished"]
    assert games[-1]["scores"] == final["scores"]


@pytest.fixture(scope="module")
def screen_log(demo_log: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo game's log plus a solo game, an unfinished game and a damaged one, as the
    Past games screen meets them in a household's log."""
    folder = tmp_path_factory.mktemp("screens")
    log = folder / "games.sqlite"
    src, dst = sqlite3.connect(demo_log), sqlite3.connect(log)
    src.backup(dst)
    src.close()
    dst.close()
    shutil.copytree(CropStore.beside(demo_log).folder, CropStore.beside(log).folder)
    with GameLog.open(log) as gl:
        log_game(gl, "solo", 2, ["Alice"])
        log_game(gl, "2p", 7, ["Alice", "Bob"], finish=False, steps=20)
        broken, _, _ = log_game(gl, "2p", 8, ["Alice", "Bob"])
    with sqlite3.connect(log) as conn:
        conn.execute("UPDATE games SET players = '[broken' WHERE id = ?", (broken,))
    return log


@cache
def screens(log: str, game: str, lang: str, size: str) -> dict[str, Any]:
    out = ROOT / "test-artifacts" / f"ui-recap-{lang}-{size}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "tests.ui_recap_scenario", "--log", log, "--game", game]
    cmd += ["--lang", lang, "--size", size, "--out", str(out), "--shots", str(SHOTS)]
    w, h = size.split("x")
    if not os.environ.get("DISPLAY"):
        if not shutil.which("xvfb-run"):
            pytest.skip("no display and no xvfb-run (CI installs xvfb)")
        cmd = ["xvfb-run", "-a", "-s", f"-screen 0 {w}x{h}x24", *cmd]
    env = {**os.environ, "KIVY_NO_ARGS": "1", "KIVY_HOME": str(ROOT / ".kivy")}
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.exists(), f"scenario crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    result: dict[str, Any] = json.loads(out.read_text())
    assert result["errors"] == [], result["errors"]
    return result


SIZES = [("en", "800x480"), ("fr", "800x480"), ("en", "1280x800"), ("fr", "1280x800")]


@pytest.mark.gui
@pytest.mark.parametrize(("lang", "size"), SIZES)
def test_scores_screen_explains_the_game(
    screen_log: Path, demo_game: GameRecord, lang: str, size: str, tmp_path: Path
) -> None:
    r = screens(str(screen_log), demo_game.id, lang, size)
    assert r["window"] == [int(v) for v in size.split("x")]
    assert r["overflow"] == [] and r["small"] == []
    fr = lang == "fr"
    scores = r["steps"]["recap-scores"]
    assert scores["result"] == ("Alice gagne !" if fr else "Alice wins!")
    # each served bowl under the right player, with its values and its points
    for block, standing in zip(scores["blocks"], demo_game.standings, strict=True):
        assert block["head"].startswith(f"{standing.name} · {standing.points} pts")
        mine = demo_game.bowls_of(standing.name)
        assert [b["chips"] for b in block["bowls"]] == [
            [c.rpartition("-")[2] for c in bowl.cards] for bowl in mine
        ]
        assert [b["text"].split(" · ")[1] for b in block["bowls"]] == [
            count("n_points", bowl.points, lang) for bowl in mine
        ]
    # the totals equal `companion tally` of those very bowls
    served = {
        s.name: [list(b.cards) for b in demo_game.bowls_of(s.name)] for s in demo_game.standings
    }
    doc = tmp_path / "served.json"
    doc.write_text(json.dumps({"mode": demo_game.mode, "served": served}))
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "tally", str(doc), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    tally = json.loads(proc.stdout)
    rows = scores["rows"][4:]
    shown = {rows[i]: [int(v) for v in rows[i + 1 : i + 4]] for i in range(0, len(rows), 4)}
    assert shown == {n: [s["points"], s["bowls"], s["cards"]] for n, s in tally["scores"].items()}
    # the QR code on the screen decodes to the game's link
    link = scores["qr_link"]
    assert link == create_play_link(demo_game)
    shot = cv2.imread(scores["screenshot"])
    assert decode_qr(shot) == link
    assert scores["recap_enabled"]


@pytest.mark.gui
@pytest.mark.parametrize(("lang", "size"), SIZES)
def test_past_games_and_recaps_on_screen(
    screen_log: Path, demo_game: GameRecord, lang: str, size: str
) -> None:
    r = screens(str(screen_log), demo_game.id, lang, size)
    fr = lang == "fr"
    picture = r["steps"]["recap-picture"]
    assert picture["screen"] == "recap" and Path(picture["source"]).exists()
    assert decode_qr(cv2.imread(picture["source"])[540:, :600]) == create_play_link(demo_game)
    history = r["steps"]["recap-history"]
    assert history["screen"] == "history"
    games = history["games"]
    assert len(games) == 4  # newest first: damaged, unfinished, solo, the demo game
    assert games[0]["text"].endswith("Endommagée" if fr else "Damaged") and not games[0]["enabled"]
    assert games[1]["text"].endswith("Non terminée" if fr else "Unfinished")
    assert games[2]["enabled"] and games[3]["enabled"]
    assert games[3]["text"].endswith("Alice 20, Bob 19")
    assert history["players"][:5] == (
        ["Nom", "Parties", "Victoires", "Moyenne", "Meilleur bol"]
        if fr
        else ["Name", "Games", "Wins", "Mean", "Best bowl"]
    )
    assert "★" in history["solo"]
    opened = r["steps"]["recap-history-open"]
    assert opened["screen"] == "recap" and Path(opened["source"]).exists()
