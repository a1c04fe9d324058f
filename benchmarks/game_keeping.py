"""Keeps the game whatever happens: the fault replays of issue 11, with their figures.

    python benchmarks/game_keeping.py [--frames 260] [--kills 5,20,40,60,80]

On the opening of the bundled demo game, encoded as an MJPG AVI (a container that announces its
frame count), through the real `companion run --headless` in subprocesses:
- an uninterrupted run (the reference event stream and final score);
- kill -9 after N logged events, then `--resume` on the same recording, for each N: events
  before / after, duplicates, times going back, rule warnings beyond the reference, and whether
  the combined stream equals the reference exactly;
- the recording cut off half-way: exit code, the one error line, the game left unfinished, and
  `--resume` on the whole file;
- starts whose source fails to open: games logged;
- a second companion on the same log: exit code and its line.
The pytest versions are tests/test_session_faults.py, tests/test_game_keeping.py and
tests/test_kiosk.py (which also covers the camera unplugged under the app and the kiosk).
"""

from __future__ import annotations

import argparse
import itertools
import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "companion" / "assets" / "demo" / "recording.mp4"


def encode(out: Path, frames: int) -> Path:
    cap = cv2.VideoCapture(str(DEMO))
    writer = None
    for _ in range(frames):
        ok, image = cap.read()
        if not ok:
            break
        if writer is None:
            h, w = image.shape[:2]
            writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"MJPG"), 4.0, (w, h))
        writer.write(image)
    cap.release()
    assert writer is not None
    writer.release()
    return out


def command(*args: str, events: Path, log: Path) -> list[str]:
    head = [sys.executable, "-m", "companion", "run", "--headless", "--players", "Alice,Bob"]
    return [*head, "--events", str(events), "--log", str(log), *args]


def run(*args: str, events: Path, log: Path) -> subprocess.CompletedProcess[str]:
    cmd = command(*args, events=events, log=log)
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)


def read(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def kill_after(cmd: list[str], events: Path, n: int) -> None:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    while proc.poll() is None and len(read(events)) < n:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def games(log: Path) -> list[tuple[str, float | None, str | None]]:
    with sqlite3.connect(log) as conn:
        return list(conn.execute("SELECT id, finished, final FROM games ORDER BY started"))


def judge(events: list[dict], clean: list[dict]) -> str:
    keys = Counter(json.dumps(e, sort_keys=True) for e in events)
    duplicates = sum(n - 1 for n in keys.values())
    back = sum(b["t"] < a["t"] for a, b in itertools.pairwise(events))
    warnings = sum(e["type"] == "rule_warning" for e in events)
    extra = warnings - sum(e["type"] == "rule_warning" for e in clean)
    return (
        f"{len(events):4d} events, {duplicates} duplicated, {back} times going back, "
        f"{extra:+d} rule warnings, equal to the uninterrupted run: "
        f"{'yes' if events == clean else 'NO'}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=260)
    ap.add_argument("--kills", default="5,20,40,60,80")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ramen-faults-") as tmp_name:
        tmp = Path(tmp_name)
        video = encode(tmp / "opening.avi", args.frames)
        started = time.monotonic()
        proc = run("--source", str(video), events=tmp / "clean.jsonl", log=tmp / "clean.sqlite")
        clean = read(tmp / "clean.jsonl")
        (_, _, final), *_ = games(tmp / "clean.sqlite")
        print(f"uninterrupted: exit {proc.returncode}, {len(clean)} events, final {final}")
        print(f"  ({time.monotonic() - started:.1f} s a run of {args.frames} frames)")

        for n in (int(x) for x in args.kills.split(",")):
            log, first, rest = tmp / f"k{n}.sqlite", tmp / f"k{n}a.jsonl", tmp / f"k{n}b.jsonl"
            kill_after(command("--source", str(video), events=first, log=log), first, n)
            before = read(first)
            proc = run("--resume", "--source", str(video), events=rest, log=log)
            after = read(rest)
            same_final = games(log)[-1][2] == final
            print(
                f"kill -9 after {len(before):3d} events, resume (exit {proc.returncode}, "
                f"+{len(after)}): {judge(before + after, clean)}; same final score: "
                f"{'yes' if same_final else 'NO'}"
            )

        cut, log = tmp / "cut.avi", tmp / "cut.sqlite"
        data = video.read_bytes()
        cut.write_bytes(data[: len(data) // 2])
        proc = run("--source", str(cut), events=tmp / "cut1.jsonl", log=log)
        unfinished = [g for g in games(log) if g[1] is None]
        print(f"video cut at half its bytes: exit {proc.returncode}, stderr lines ")
        print(f"  {len(proc.stderr.splitlines())}: {proc.stderr.strip()}")
        print(f"  games unfinished: {len(unfinished)} of {len(games(log))}")
        cut.write_bytes(data)
        proc = run("--resume", "--source", str(cut), events=tmp / "cut2.jsonl", log=log)
        both = read(tmp / "cut1.jsonl") + read(tmp / "cut2.jsonl")
        print(f"  --resume on the whole file: exit {proc.returncode}, {judge(both, clean)}")

        log = tmp / "failed.sqlite"
        specs = ["usb:97", str(tmp / "missing.avi"), "picamera", str(tmp)]
        codes = [run("--source", s, events=tmp / "f.jsonl", log=log).returncode for s in specs]
        print(f"failed starts {codes}: {len(games(log))} games logged")

        log, first = tmp / "two.sqlite", tmp / "two.jsonl"
        holder = subprocess.Popen(
            command("--source", str(video), events=first, log=log),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        while holder.poll() is None and not read(first):
            time.sleep(0.05)
        proc = run("--source", str(video), events=tmp / "second.jsonl", log=log)
        holder.kill()
        holder.wait()
        print(f"second companion on one log: exit {proc.returncode}: {proc.stderr.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
