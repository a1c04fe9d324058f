"""Golden end-to-end: the bundled recording through the real pipeline (OpenCV video decoding,
markers, the shipped model, settling, the game follower) must give back the simulated game."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "companion" / "assets" / "demo"

pytestmark = pytest.mark.slow


def served_in_record(record: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (s["bowl"], s["to"], tuple(s["cards"])) for turn in record["turns"] for s in turn["served"]
    ]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[dict], dict]:
    if not (DEMO / "record.json").exists():
        pytest.fail("the bundled demo recording is missing from companion/assets/demo")
    tmp = tmp_path_factory.mktemp("demo")
    events = tmp / "events.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "demo",
            "--headless",
            "--events",
            str(events),
            "--log",
            str(tmp / "games.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    record = json.loads((DEMO / "record.json").read_text())
    lines = (
        [json.loads(line) for line in events.read_text().splitlines()] if events.exists() else []
    )
    return proc, lines, record


def test_demo_runs_and_prints_the_scoreboard(demo_run):
    proc, _, record = demo_run
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Final scoreboard" in proc.stdout
    for name in record["final"]["scores"]:
        assert name in proc.stdout
    assert "matches the recorded game's result: yes" in proc.stdout


def test_served_bowls_equal_the_simulated_game(demo_run):
    _, events, record = demo_run
    served = [
        (e["region"], e["player"], tuple(e["cards"])) for e in events if e["type"] == "bowl_served"
    ]
    assert served == served_in_record(record)


def test_every_served_bowl_was_announced_once(demo_run):
    _, events, record = demo_run
    ready = [e for e in events if e["type"] == "bowl_ready"]
    assert len(ready) == len(served_in_record(record))
    for e in ready:
        assert e["reason"] in ("sum", "all_types")
        assert e["sum"] >= 14 or e["types"] == 7


def test_final_tally_equals_the_simulator(demo_run):
    _, events, record = demo_run
    over = [e for e in events if e["type"] == "game_over"]
    assert over, "game_over was emitted"
    assert over[-1]["scores"] == record["final"]["scores"]
    assert over[-1]["winners"] == record["final"]["winners"]


def test_no_invented_events(demo_run):
    _, events, _ = demo_run
    warnings = [e["message"] for e in events if e["type"] == "rule_warning"]
    assert warnings == []
