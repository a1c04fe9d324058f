"""`companion score`, `tally` and `simulate`: JSON contracts, readable output, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from companion.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_score_json(capsys) -> None:
    code, out, _ = run(
        capsys, "score", "nori-1", "nori-4", "chashu-3", "shiitake-0", "negi-6", "--json"
    )
    assert code == 0 and json.loads(out) == {"types": 4, "points": 3}


def test_score_text(capsys) -> None:
    code, out, _ = run(
        capsys,
        "score",
        "nori-0",
        "chashu-0",
        "shiitake-0",
        "ajitama-0",
        "kamaboko-2",
        "menma-3",
        "negi-0",
    )
    assert code == 0 and "7 ingredient types: 10 points" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "nori-8"], "unknown card id 'nori-8'"),
        (["score", "nori-1", "NORI-1"], "named twice"),
        (["simulate", "--mode", "5p", "--seed", "1"], "unknown mode '5p'"),
        (["simulate", "--mode", "2p", "--seed", "x"], "--seed must be an integer"),
        (["simulate", "--mode", "3p", "--seed", "1", "--players", "A,B"], "needs 3 player"),
        (["simulate", "--mode", "2p", "--seed", "1", "--players", "A,A"], "distinct"),
        (["simulate", "--mode", "2p", "--seed", "1", "--bot", "smart"], "unknown bot"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def write(tmp_path: Path, doc: object) -> str:
    path = tmp_path / "served.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def test_tally_json(tmp_path, capsys) -> None:
    doc = {
        "mode": "2p",
        "served": {"Alice": [["nori-7", "negi-7"]], "Bob": [["chashu-7", "menma-7"]]},
    }
    code, out, _ = run(capsys, "tally", write(tmp_path, doc), "--json")
    assert code == 0
    assert json.loads(out) == {
        "scores": {
            "Alice": {"points": 1, "bowls": 1, "cards": 2},
            "Bob": {"points": 1, "bowls": 1, "cards": 2},
        },
        "winners": ["Alice", "Bob"],
    }


def test_tally_solo_text_shows_the_review(tmp_path, capsys) -> None:
    doc = {"mode": "solo", "served": {"Me": [["nori-7", "negi-7"]]}}
    code, out, _ = run(capsys, "tally", write(tmp_path, doc))
    assert code == 0 and "Was that meant to be food?" in out and "0 stars" in out


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"served": {}}, '"mode"'),
        ({"mode": "2p", "served": {"A": [["nori-9"]], "B": []}}, "nori-9"),
        ({"mode": "2p", "served": {"A": [["nori-1"]], "B": [["nori-1", "negi-7"]]}}, "twice"),
        ({"mode": "2p", "served": {"A": []}}, "mode 2p expects 2 player names"),
        ({"mode": "4p", "served": {"A": [], "C": []}}, "teams A and B"),
        ({"mode": "2p", "served": {"A": "nori-1", "B": []}}, "list of lists"),
    ],
)
def test_tally_bad_input(tmp_path, capsys, doc: object, message: str) -> None:
    code, out, err = run(capsys, "tally", write(tmp_path, doc), "--json")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_tally_missing_file(tmp_path, capsys) -> None:
    code, _, err = run(capsys, "tally", str(tmp_path / "nope.json"))
    assert code == 2 and "cannot read" in err


def test_tally_reads_stdin_and_simulate_json_round_trips() -> None:
    """Subprocess, as a user runs it: simulate's record feeds tally through stdin."""
    exe = [sys.executable, "-m", "companion"]
    sim = subprocess.run(
        [*exe, "simulate", "--mode", "4p", "--seed", "9", "--players", "a1,b1,a2,b2", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rec = json.loads(sim.stdout)
    assert set(rec) == {"mode", "seed", "players", "setup", "turns", "final"}
    assert set(rec["setup"]) == {"deck", "hands", "fridge", "discarded"}
    assert set(rec["turns"][0]) == {"player", "plays", "served", "took", "refilled", "drew"}
    served: dict[str, list] = {"A": [], "B": []}
    for turn in rec["turns"]:
        for s in turn["served"]:
            served[s["to"]].append(s["cards"])
    tal = subprocess.run(
        [*exe, "tally", "-", "--json"],
        input=json.dumps({"mode": "4p", "served": served}),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(tal.stdout) == rec["final"]
    bad = subprocess.run([*exe, "tally", "-"], input="[", capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1


@pytest.mark.parametrize("mode", ["solo", "2p", "3p", "4p"])
def test_simulate_log_is_readable(capsys, mode: str) -> None:
    code, out, _ = run(capsys, "simulate", "--mode", mode, "--seed", "2", "--bot", "random")
    assert code == 0
    assert "turn  1 Player 1: plays" in out and "final scoreboard:" in out
    assert "served to" in out and "from the Fridge" in out
    if mode == "solo":
        assert "critics:" in out
