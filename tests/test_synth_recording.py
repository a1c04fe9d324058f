"""A simulated game rendered as video: readable, timed, and its true events match the pictures."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion import layout
from companion.cli import main


@pytest.fixture(scope="module")
def short_game(tmp_path_factory):
    """The first two turns of a 2-player game, rendered."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["simulate", "--mode", "2p", "--seed", "3", "--json"]) == 0
    record = json.loads(buf.getvalue())
    record["turns"] = record["turns"][:2]
    folder = tmp_path_factory.mktemp("rec")
    (folder / "game.json").write_text(json.dumps(record))
    out = folder / "out"
    assert main(["render", "recording", str(folder / "game.json"), str(out), "--no-scoring"]) == 0
    return record, out


def _frames(out):
    meta = json.loads((out / "meta.json").read_text())
    cap = cv2.VideoCapture(str(out / meta["video"]))
    frames = []
    while True:
        ok, f = cap.read()
        if not ok:
            break
        frames.append(f)
    return meta, frames


def test_video_and_events_follow_the_record(short_game):
    record, out = short_game
    meta, frames = _frames(out)
    assert len(frames) == meta["frames"] > 10
    assert frames[0].shape == (720, 1280, 3)
    events = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    assert [e["t"] for e in events] == sorted(e["t"] for e in events)
    added = [(e["card"], e["region"]) for e in events if e["type"] == "card_added"]
    plays = [(p["card"], p["bowl"]) for t in record["turns"] for p in t["plays"]]
    assert [a for a in added if a[1].startswith("bowl")] == plays
    fridge = [e["card"] for e in events if e["type"] == "card_added" and e["region"] == "fridge"]
    assert fridge[:4] == record["setup"]["fridge"]
    assert json.loads((out / "record.json").read_text()) == record


def test_each_play_changes_its_bowl_only(short_game):
    _, out = short_game
    meta, frames = _frames(out)
    cam = meta["camera"]
    h = np.asarray(cam["image_from_plane"])
    events = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    plays = [e for e in events if e["type"] == "card_added" and e["region"].startswith("bowl")]

    def bowl_patch(frame, bowl):
        r = layout.region_by_id(bowl).rect
        pts = np.float64([[r.x0, r.y0], [r.x1, r.y1]]).reshape(-1, 1, 2)
        (x0, y0), (x1, y1) = cv2.perspectiveTransform(pts, h).reshape(2, 2).astype(int)
        return frame[y0:y1, x0:x1].astype(np.float32)

    checked = 0
    for e in plays:
        k = round(e["t"] * meta["fps"])
        before, after = frames[k - 3], frames[k]  # before the hand came in, then settled
        if np.abs(before.astype(np.float32) - frames[k - 4]).mean() > 1.0:
            continue  # the frame before was itself a motion (a draw): no settled reference
        checked += 1
        for bowl in ("bowl-1", "bowl-2", "bowl-3"):
            change = np.abs(bowl_patch(after, bowl) - bowl_patch(before, bowl)).mean()
            if bowl == e["region"]:
                assert change > 3.0
            else:
                assert change < 1.0
    assert checked >= 2


def test_bad_record_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"mode": "2p"}')
    assert main(["render", "recording", str(bad), str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "record" in err and "Traceback" not in err
    assert main(["render", "recording", str(tmp_path / "none.json"), str(tmp_path / "o")]) == 2


@pytest.mark.parametrize(
    "option",
    [
        ["--hand-rest", "3,1"],
        ["--hand-rest", "nan,1"],
        ["--hand-rest", "1"],
        ["--hand-rest", "0,31"],
        ["--cascade-mm", "5,9"],
        ["--cascade-mm", "22,12"],
    ],
)
def test_bad_hand_rest_or_cascade_is_one_line_error(tmp_path, capsys, option):
    record = tmp_path / "game.json"
    record.write_text("{}")
    assert main(["render", "recording", str(record), str(tmp_path / "o"), *option]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option[0] in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_resting_hands_are_still_frames_over_the_table(tmp_path):
    """--hand-rest: after about half the actions the hand stays, perfectly still, for the
    drawn time; meta.json says where (rest_frames) and every frame with a hand (hand_frames)."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["simulate", "--mode", "solo", "--seed", "62", "--json"]) == 0
    record = json.loads(buf.getvalue())
    record["turns"] = record["turns"][:2]
    (tmp_path / "g.json").write_text(json.dumps(record))
    out = tmp_path / "out"
    args = ["render", "recording", str(tmp_path / "g.json"), str(out), "--no-scoring"]
    args += ["--width", "640", "--fps", "5", "--hand-rest", "1,2", "--warm"]
    assert main(args) == 0
    meta, frames = _frames(out)
    assert meta["warm"] and meta["kelvin"] <= 3200
    assert meta["rest_frames"]
    for a, b in meta["rest_frames"]:
        assert 5 <= b - a <= 10  # 1-2 s at 5 frames/s
        assert any(h0 <= a and b <= h1 for h0, h1 in meta["hand_frames"])
        for k in range(a + 1, b):  # perfectly still (up to the video codec)
            assert np.abs(frames[k].astype(np.float32) - frames[a]).mean() < 0.5
        assert np.abs(frames[b].astype(np.float32) - frames[a]).mean() > 1.0  # then it leaves
