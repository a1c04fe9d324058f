"""Fault replays through the real pipeline: corrupt frames, a camera bump, a killed process
resumed from the game log. Nothing may be lost or invented."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import cv2
import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "companion" / "assets" / "demo"
FIRST_FRAMES = 260
"""The opening of the demo game: setup, several turns and the first served bowl."""

FOLDER_FPS = 1.0
"""ImageFolderSource's default timing."""

pytestmark = pytest.mark.slow


def extract(video: Path, folder: Path, start: int, stop: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cap = cv2.VideoCapture(str(video))
    i = 0
    while i < stop:
        ok, frame = cap.read()
        if not ok:
            break
        if i >= start:
            cv2.imwrite(str(folder / f"frame-{i:05d}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
        i += 1
    cap.release()
    return folder


def run(*args: str, events: Path, log: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "run",
            "--headless",
            "--mode",
            "2p",
            "--players",
            "Alice,Bob",
            "--events",
            str(events),
            "--log",
            str(log),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def game_events(path: Path) -> list[tuple]:
    """What a player would notice, without timestamps (frame gaps shift them)."""
    keep = []
    for line in path.read_text().splitlines():
        e = json.loads(line)
        if e["type"] in ("card_added", "card_removed"):
            keep.append((e["type"], e["card"], e["region"]))
        elif e["type"] in ("bowl_ready", "bowl_served"):
            keep.append((e["type"], e["region"], tuple(e.get("cards", ())), e.get("player")))
        elif e["type"] in ("turn", "rule_warning"):
            keep.append((e["type"], e.get("player"), e.get("message")))
    return keep


@pytest.fixture(scope="module")
def opening(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("opening")
    frames = extract(DEMO / "recording.mp4", tmp / "frames", 0, FIRST_FRAMES)
    events = tmp / "clean.jsonl"
    proc = run("--source", str(frames), events=events, log=tmp / "clean.sqlite")
    assert proc.returncode == 0, proc.stderr[-2000:]
    clean = game_events(events)
    assert any(e[0] == "bowl_served" for e in clean), "the opening serves a bowl"
    return frames, clean


def test_a_burst_of_corrupt_frames_changes_nothing(opening, tmp_path):
    frames, clean = opening
    broken = tmp_path / "frames"
    broken.mkdir()
    names = sorted(p.name for p in frames.iterdir())
    for k, name in enumerate(names):
        data = (frames / name).read_bytes()
        if 100 <= k < 106:  # six frames in a row arrive corrupt
            data = data[:200] + os.urandom(300)
        (broken / name).write_bytes(data)
    events = tmp_path / "events.jsonl"
    proc = run("--source", str(broken), events=events, log=tmp_path / "log.sqlite")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert game_events(events) == clean


def test_killed_mid_game_then_resumed_loses_and_invents_nothing(opening, tmp_path):
    frames, clean = opening
    log = tmp_path / "log.sqlite"
    events = tmp_path / "first.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "companion",
        "run",
        "--headless",
        "--mode",
        "2p",
        "--players",
        "Alice,Bob",
        "--events",
        str(events),
        "--log",
        str(log),
        "--source",
        str(frames),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if events.exists() and len(events.read_text().splitlines()) >= 20:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run was still going when it was killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    last_t = max(e["t"] for e in lines)
    # the camera keeps watching the same table: resume on the frames after the kill (a folder
    # is timed at one image per second, so an event's t is its frame's position)
    rest = tmp_path / "rest"
    rest.mkdir()
    for p in sorted(frames.iterdir()):
        if int(p.stem.split("-")[1]) >= round(last_t * FOLDER_FPS):
            (rest / p.name).write_bytes(p.read_bytes())
    resumed = tmp_path / "resumed.jsonl"
    proc2 = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "run",
            "--headless",
            "--resume",
            "--source",
            str(rest),
            "--events",
            str(resumed),
            "--log",
            str(log),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc2.returncode == 0, proc2.stderr[-2000:]
    assert "resuming game" in proc2.stderr
    combined = tmp_path / "combined.jsonl"
    combined.write_text(events.read_text() + resumed.read_text())
    assert game_events(combined) == clean


def test_a_bumped_camera_recalibrates_and_the_game_goes_on(tmp_path):
    record = json.loads((DEMO / "record.json").read_text())
    short = dict(record, turns=record["turns"][:6])
    (tmp_path / "record.json").write_text(json.dumps(short))
    out = tmp_path / "bumped"
    render = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "render",
            "recording",
            str(tmp_path / "record.json"),
            str(out),
            "--bump",
            "--no-scoring",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert render.returncode == 0, render.stderr[-2000:]
    video = next(out.glob("recording.*"))
    events = tmp_path / "events.jsonl"
    proc = run("--source", str(video), events=events, log=tmp_path / "log.sqlite")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1 re-calibrations" in proc.stdout or "2 re-calibrations" in proc.stdout
    served = [e for e in game_events(events) if e[0] == "bowl_served"]
    expected = [
        ("bowl_served", s["bowl"], tuple(s["cards"]), s["to"])
        for t in short["turns"]
        for s in t["served"]
    ]
    assert served == expected
    assert not [e for e in game_events(events) if e[0] == "rule_warning"]
