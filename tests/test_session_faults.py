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


# -- a recording resumed where it was, a recording cut short, two companions on one log -------


def encode_avi(video: Path, out: Path, frames: int) -> Path:
    """The first `frames` frames of the demo game as an MJPG AVI (a container that announces
    its frame count, as a camera's own recordings do)."""
    cap = cv2.VideoCapture(str(video))
    writer = None
    for _ in range(frames):
        ok, image = cap.read()
        assert ok
        if writer is None:
            h, w = image.shape[:2]
            writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"MJPG"), 4.0, (w, h))
        writer.write(image)
    cap.release()
    assert writer is not None
    writer.release()
    return out


def all_events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def final_of(log: Path) -> tuple[list, dict | None]:
    """(unfinished game ids, the last finished game's final) of a game log."""
    from companion.tracking.gamelog import GameLog

    with GameLog.open(log) as games:
        rows = games.games()
    finished = [g for g in rows if g.finished is not None]
    return [g.id for g in rows if g.finished is None], finished[-1].final if finished else None


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The opening as a video file, followed once without interruption."""
    tmp = tmp_path_factory.mktemp("recorded")
    video = encode_avi(DEMO / "recording.mp4", tmp / "opening.avi", FIRST_FRAMES)
    events = tmp / "clean.jsonl"
    proc = run("--source", str(video), events=events, log=tmp / "clean.sqlite")
    assert proc.returncode == 0, proc.stderr[-2000:]
    clean = all_events(events)
    assert clean[-1]["type"] == "game_over" and any(e["type"] == "bowl_served" for e in clean)
    unfinished, final = final_of(tmp / "clean.sqlite")
    assert unfinished == [] and final is not None
    return video, clean, final


def kill_after(cmd: list[str], events: Path, n: int) -> None:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if events.exists() and len(events.read_text().splitlines()) >= n:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run was still going when it was killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def run_cmd(*args: str, events: Path, log: Path) -> list[str]:
    head = [sys.executable, "-m", "companion", "run", "--headless"]
    return [*head, "--events", str(events), "--log", str(log), *args]


@pytest.mark.parametrize("after", [5, 30, 70])
def test_a_recording_killed_then_resumed_gives_the_uninterrupted_events_exactly(
    recorded, tmp_path, after
):
    """kill -9 mid-game, `--resume` on the same recording: it continues after the frame it had
    reached, so the event stream (times included) is the uninterrupted one: no event twice,
    no time going back, no bogus warning, the same final score."""
    video, clean, final = recorded
    log = tmp_path / "log.sqlite"
    first = tmp_path / "first.jsonl"
    kill_after(
        run_cmd("--source", str(video), "--players", "Alice,Bob", events=first, log=log),
        first,
        after,
    )
    killed = all_events(first)
    resumed = tmp_path / "resumed.jsonl"
    proc = subprocess.run(
        run_cmd("--resume", "--source", str(video), events=resumed, log=log),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{len(killed)} events) from" in proc.stderr
    rest = all_events(resumed)
    assert rest and rest[0]["t"] >= killed[-1]["t"], "time never goes back"
    assert killed + rest == clean
    assert final_of(log) == ([], final)


@pytest.mark.xfail(
    strict=True,
    reason="measured 2026-11-24 after HandWatch (issue 14) landed: every assert but the last "
    "holds; the resumed stream equals the uninterrupted one except one Fridge removal committed "
    "one frame later (t 35.25 v 35.0): HandWatch takes its empty-table reference from the first "
    "still frame after the resume point, not from the table before it (issue 11 follow-up)",
)
def test_a_video_cut_off_half_way_keeps_the_game_unfinished_and_resumable(recorded, tmp_path):
    video, clean, final = recorded
    cut = tmp_path / "game.avi"
    data = video.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    log = tmp_path / "log.sqlite"
    first = tmp_path / "first.jsonl"
    proc = run("--source", str(cut), events=first, log=log)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "ended at frame" in line and f"of {FIRST_FRAMES}" in line
    assert "kept unfinished" in line and "--resume" in line
    logged = all_events(first)
    assert logged and not [e for e in logged if e["type"] == "game_over"]
    unfinished, finished_final = final_of(log)
    assert len(unfinished) == 1 and finished_final is None
    # the whole file back in its place: --resume continues where the cut one stopped
    cut.write_bytes(data)
    rest = tmp_path / "rest.jsonl"
    proc = subprocess.run(
        run_cmd("--resume", "--source", str(cut), events=rest, log=log),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert logged + all_events(rest) == clean
    assert final_of(log) == ([], final)


def test_a_second_companion_on_the_same_log_refuses_in_one_line(recorded, tmp_path):
    video, _clean, _final = recorded
    log = tmp_path / "log.sqlite"
    first = tmp_path / "first.jsonl"
    holder = subprocess.Popen(
        run_cmd("--source", str(video), events=first, log=log),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not first.exists() or not first.read_text():
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.05)
        second = tmp_path / "second.jsonl"
        proc = run("--source", str(video), events=second, log=log)
        assert proc.returncode == 2
        (line,) = proc.stderr.strip().splitlines()
        assert f"is in use by another companion (pid {holder.pid}, `companion run" in line
        assert not second.exists() or not second.read_text()
    finally:
        holder.kill()
        holder.wait()
    from companion.tracking.gamelog import GameLog

    with GameLog.open(log) as games:
        assert len(games.games()) == 1, "the refused run logged nothing"
