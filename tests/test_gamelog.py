"""The durable game log: reopen, crash in the middle of appends, resume, bad files."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from companion.errors import BadInputError, CompanionError
from companion.tracking.gamelog import (
    GameInfo,
    GameLog,
    GameLogError,
    default_log_path,
)

ROOT = Path(__file__).resolve().parents[1]

EVENTS = [
    {"t": 1.5, "type": "card_added", "card": "nori-4", "region": "bowl-1"},
    {"t": 2.0, "type": "bowl_ready", "region": "bowl-1", "sum": 14, "types": 3, "reason": "sum"},
    {"t": 3.25, "type": "bowl_served", "region": "bowl-1", "player": "Alice",
     "cards": ["nori-4", "negi-7", "menma-3"]},
    {"t": 4.0, "type": "rule_warning", "message": "two cards into one bowl"},
]  # fmt: skip


def test_events_survive_close_and_reopen(tmp_path):
    path = tmp_path / "deep" / "games.sqlite"  # folders are created
    with GameLog.open(path) as log:
        gid = log.new_game("2p", ["Alice", "Bob"], "usb:0")
        seqs = [log.append(gid, e) for e in EVENTS]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    with GameLog.open(path) as log:
        assert log.events(gid) == EVENTS
        assert [e.seq for e in log.entries(gid)] == seqs
        info = log.game(gid)
    assert (info.mode, info.players, info.source, info.events) == ("2p", ("Alice", "Bob"),
                                                                   "usb:0", 4)  # fmt: skip
    assert info.finished is None


def test_log_file_is_wal_with_full_sync(tmp_path):
    path = tmp_path / "games.sqlite"
    with GameLog.open(path) as log:
        log.append(log.new_game("solo", ["Ann"], "picamera"), EVENTS[0])
        conn = log._conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_games_are_kept_apart_and_corrections_are_events(tmp_path):
    with GameLog.open(tmp_path / "g.sqlite") as log:
        a = log.new_game("2p", ["A1", "A2"], "x.mp4")
        b = log.new_game("3p", ["B1", "B2", "B3"], "x.mp4")
        log.append(a, EVENTS[0])
        log.append(b, EVENTS[1])
        seq = log.append(a, EVENTS[2])
        log.append_correction(a, "served_player", 5.0, seq=seq, player="A2")
        assert log.events(b) == [EVENTS[1]]
        assert log.events(a)[-1] == {
            "t": 5.0,
            "type": "correction_served_player",
            "seq": seq,
            "player": "A2",
        }


def test_resume_finds_the_last_unfinished_game(tmp_path):
    path = tmp_path / "g.sqlite"
    with GameLog.open(path) as log:
        assert log.last_unfinished_game() is None
        old = log.new_game("2p", ["A", "B"], "usb:0")
        log.finish(old, {"scores": {"A": {"points": 9}}})
        current = log.new_game("4p", ["A", "B", "C", "D"], "picamera")
        log.append(current, EVENTS[0])
    with GameLog.open(path) as log:
        game = log.last_unfinished_game()
        assert isinstance(game, GameInfo)
        assert (game.id, game.mode, game.source, game.events) == (current, "4p", "picamera", 1)
        assert log.game(old).final == {"scores": {"A": {"points": 9}}}
        log.finish(current, {})
        assert log.last_unfinished_game() is None


@pytest.mark.parametrize(
    "event",
    [
        {"type": "card_added"},
        {"t": "soon", "type": "card_added"},
        {"t": float("nan"), "type": "card_added"},
        {"t": 1.0},
        {"t": 1.0, "type": ""},
        {"t": 1.0, "type": "card_added", "card": object()},
        "card_added",
    ],
)
def test_malformed_event_is_refused_and_nothing_is_written(tmp_path, event):
    with GameLog.open(tmp_path / "g.sqlite") as log:
        gid = log.new_game("2p", ["A", "B"], "usb:0")
        with pytest.raises(BadInputError):
            log.append(gid, event)
        assert log.events(gid) == []


def test_unknown_game_is_refused(tmp_path):
    with GameLog.open(tmp_path / "g.sqlite") as log, pytest.raises(BadInputError, match="nope"):
        log.append("nope", EVENTS[0])


def _valid_log_then_truncated(path: Path) -> None:
    with GameLog.open(path) as log:
        gid = log.new_game("2p", ["A", "B"], "usb:0")
        for i in range(400):
            log.append(gid, {"t": i, "type": "card_added", "pad": "x" * 200})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _other_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "spoil",
    [
        lambda p: p.write_bytes(b"this is not a database at all\n" * 100),
        lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000),
        _valid_log_then_truncated,
        _other_sqlite,
    ],
    ids=["garbage", "bad-header", "truncated", "other-sqlite"],
)
def test_unreadable_file_is_one_line_game_log_error(tmp_path, spoil):
    path = tmp_path / "games.sqlite"
    spoil(path)
    with pytest.raises(GameLogError) as info:
        GameLog.open(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert isinstance(info.value, CompanionError)


def test_folder_instead_of_file_is_game_log_error(tmp_path):
    with pytest.raises(GameLogError, match="is a folder"):
        GameLog.open(tmp_path)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"RAMEN_COMPANION_LOG": "/data/my.sqlite"}, Path("/data/my.sqlite")),
        ({"XDG_DATA_HOME": "/xdg"}, Path("/xdg/ramen-companion/games.sqlite")),
        ({}, Path.home() / ".local/share/ramen-companion/games.sqlite"),
    ],
)
def test_default_log_path(env, expected):
    assert default_log_path(env) == expected


# -- a process killed while it appends ---------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    from companion.tracking.gamelog import GameLog

    log = GameLog.open(sys.argv[1])
    gid = log.new_game("2p", ["Alice", "Bob"], "usb:0")
    print(gid, flush=True)
    for i in range(1_000_000):
        pad = "x" * (i % 3000)
        log.append(gid, {"t": i / 10, "type": "card_added", "card": "nori-4", "i": i, "pad": pad})
        print(i, flush=True)  # acknowledged: append() returned
    """
)


@pytest.mark.parametrize("kill_after", [0, 1, 40])
def test_sigkill_mid_stream_keeps_every_acknowledged_event(tmp_path, kill_after):
    path = tmp_path / "games.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    gid = child.stdout.readline().strip()
    acked = -1
    while acked < kill_after - 1:
        acked = int(child.stdout.readline())
    child.send_signal(signal.SIGKILL)  # mid-stream: the child is busy appending
    rest = child.stdout.read()  # acknowledgements printed before the kill
    child.wait()
    assert child.returncode == -signal.SIGKILL
    acked = max([acked, *(int(line) for line in rest.split())])

    with GameLog.open(path) as log:
        events = log.events(gid)
        resumed = log.last_unfinished_game()
    numbers = [e["i"] for e in events]
    assert numbers == list(range(len(numbers)))  # in order, no gaps, no duplicates
    assert len(numbers) >= acked + 1  # nothing acknowledged is lost
    assert all(e["pad"] == "x" * (e["i"] % 3000) for e in events)  # no partial rows
    assert resumed is not None and resumed.id == gid and resumed.events == len(events)
