"""Smoke test of benchmarks/foreign_decks.py: its scoring on hand-made frames (no models)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.foreign_decks import SliceScore, _row, parse_args, score_frame
from benchmarks.index_shown import cards_shown, index_masks, shown_share


def _card(cid: str, x: float, visible: float = 1.0, face_up: bool = True) -> dict:
    """A card whose top strip is the box (x, 0, x + 60, 20) in px."""
    strip = [[x, 0], [x + 60, 0], [x + 60, 20], [x, 20]]
    return {
        "card": cid,
        "face_up": face_up,
        "polygon_px": [[x, 0], [x + 60, 0], [x + 60, 90], [x, 90]],
        "strips": [
            {"polygon_px": strip, "visible_fraction": visible, "hand_fraction": 0.0},
            {"polygon_px": strip, "visible_fraction": 0.0, "hand_fraction": 0.0},
        ],
    }


def _read(cid: str, x: float, conf: float = 0.9) -> dict:
    return {"card": cid, "confidence": conf, "box": [x, 0, x + 60, 20], "region": None}


def test_scoring_follows_the_eval_detector_rule() -> None:
    truth = {
        "cards": [
            _card("nori-1", 0),
            _card("negi-2", 100),
            _card("menma-3", 200, visible=0.3),  # may be read, need not be
            _card("ajitama-4", 300),
            _card("chashu-5", 400, face_up=False),
        ]
    }
    readings = [
        _read("nori-1", 0),
        _read("nori-1", 5, 0.5),  # read twice: counts once
        _read("menma-3", 200),  # visible a little: not a false positive
        _read("negi-7", 100),  # negi-2 misread
        _read("shiitake-0", 900),  # nothing there
    ]
    s = SliceScore("x", "plain")
    score_frame(truth, readings, s)
    assert (s.frames, s.must, s.tp, s.fp, s.fn, s.misnamed) == (1, 3, 1, 2, 2, 1)
    assert s.frames_ok == 0
    assert s.confusions == {("negi-2", "negi-7"): 1, ("(nothing)", "shiitake-0"): 1}
    assert s.missed_targets() == ["precision", "recall", "all_right"]

    ok = SliceScore("x", "plain")
    score_frame(truth, [_read("nori-1", 0), _read("negi-2", 100), _read("ajitama-4", 300)], ok)
    assert (ok.precision, ok.recall, ok.all_right) == (1.0, 1.0, 1.0)


def test_arguments() -> None:
    args = parse_args(["--frames", "2", "--families", "ornate,foil", "--seeds", "1,2"])
    assert args.families == ["ornate", "foil"] and args.seeds == [1, 2] and args.frames == 2


def test_skew_slice_is_asked_for_and_cached_apart() -> None:
    assert parse_args([]).skew is None
    assert parse_args(["--skew", "10"]).skew == 10.0


def _corner_faces() -> dict[str, np.ndarray]:
    """A deck of 2 ingredients whose cards differ only in a 10 x 16 mm top-left corner index
    (and the same turned at the bottom right), at 10 px/mm."""
    faces = {}
    for ingredient in ("nori", "negi"):
        for v in range(8):
            face = np.full((880, 630, 3), 200, np.uint8)
            face[20:180, 20:120] = 30 * v  # the "numeral": a patch whose shade is the value
            face[700:860, 510:610] = 30 * v
            faces[f"{ingredient}-{v}"] = face
    return faces


def _laid(cid: str, visible: list[list[list[float]]]) -> dict:
    """A card laid upright at 1 px/mm with its face's corners at (0, 0) .. (63, 88) px."""
    return {
        "card": cid,
        "face_up": True,
        "polygon_px": [[0, 0], [63, 0], [63, 88], [0, 88]],
        "visible_polygons_px": visible,
    }


def test_a_card_whose_corner_index_is_covered_does_not_show_it() -> None:
    masks = index_masks(_corner_faces())
    top, bottom = masks["nori"]
    assert top[: top.shape[0] // 2].any() and not top[top.shape[0] // 2 :].any()
    assert bottom[bottom.shape[0] // 2 :].any()
    whole = [[[0, 0], [63, 0], [63, 88], [0, 88]]]
    right_part = [[[15, 0], [63, 0], [63, 88], [15, 88]]]  # a hand over the left 15 mm
    top_band_only = [[[0, 0], [63, 0], [63, 20], [0, 20]]]  # the next card from 20 mm down
    top_band_right = [[[15, 0], [63, 0], [63, 20], [15, 20]]]
    assert shown_share(_laid("nori-3", whole), masks) == 1.0
    # the left 15 mm hidden: the top index is, the bottom-right one still shows
    assert shown_share(_laid("nori-3", right_part), masks) == 1.0
    assert shown_share(_laid("nori-3", top_band_only), masks) > 0.75
    assert shown_share(_laid("nori-3", top_band_right), masks) < 0.1
    truth = {
        "cards": [
            _laid("nori-1", top_band_only),
            _laid("negi-2", top_band_right),
            {**_laid("negi-5", whole), "face_up": False},
        ]
    }
    assert cards_shown(truth, masks) == {"nori-1"}


def test_recall_where_the_index_shows_is_counted_beside_recall() -> None:
    truth = {"cards": [_card("nori-1", 0), _card("negi-2", 100), _card("ajitama-4", 300)]}
    s = SliceScore("x", "plain")
    score_frame(truth, [_read("nori-1", 0)], s, shown={"nori-1", "negi-2"})
    assert (s.must, s.tp, s.must_shown, s.tp_shown) == (3, 1, 2, 1)
    assert s.recall == 1 / 3 and s.recall_shown == 0.5
    assert s.to_json()["recall_shown"] == 0.5
    unsaid = SliceScore("x", "plain")  # scenes that do not say what shows (path-traced)
    score_frame(truth, [_read("nori-1", 0)], unsaid)
    assert unsaid.recall_shown is None and "n/a" in _row(unsaid, None)


def test_recall_in_sharp_frames_is_counted_beside_recall() -> None:
    s = SliceScore("x", "hard")
    sharp = {"cards": [_card("nori-1", 0), _card("negi-2", 100)], "light": {"blur_px": 1.5}}
    blurred = {"cards": [_card("menma-6", 0), _card("shiitake-5", 100)], "light": {"blur_px": 2.7}}
    score_frame(sharp, [_read("nori-1", 0), _read("negi-2", 100)], s)
    score_frame(blurred, [_read("menma-6", 0)], s)
    assert (s.must, s.tp, s.must_sharp, s.tp_sharp) == (4, 3, 2, 2)
    assert s.recall == 0.75 and s.recall_sharp == 1.0
    assert s.to_json()["recall_sharp"] == 1.0
    total = SliceScore("total", "hard")
    total.add(s)
    assert total.recall_sharp == 1.0
    unsaid = SliceScore("x", "plain")  # truth without the light's blur
    score_frame({"cards": sharp["cards"]}, [_read("nori-1", 0)], unsaid)
    assert unsaid.recall_sharp is None and "n/a" in _row(unsaid, None)


def test_cached_decks_refuses_a_deck_the_cache_does_not_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.cached_decks import main

    (tmp_path / "decks" / "ornate-1").mkdir(parents=True)
    (tmp_path / "decks" / "ornate-1" / "deck.json").write_text("{}")
    with pytest.raises(SystemExit):
        main(["ornate-1", "--out", str(tmp_path)])
    assert "no cached frames of ornate-1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["foil-2", "--out", str(tmp_path)])
    assert "no enrolled deck foil-2" in capsys.readouterr().err


def test_miss_causes_lists_each_miss_with_what_was_read_there() -> None:
    """`miss_causes.py --list`: one line a miss, saying why, whether a person could read its
    index, and what the detector and the namer made of its band."""
    from types import SimpleNamespace

    from benchmarks.miss_causes import _miss_line

    on = [SimpleNamespace(card="menma-0", confidence=0.13)]
    named = [SimpleNamespace(card="menma-0", confidence=0.16)]
    line = _miss_line("ornate-1 hard 00000", "menma-7", "read as another", True, on, named)
    assert line.startswith("miss ornate-1 hard 00000 menma-7: read as another; index shown")
    assert "read there: menma-0 0.13" in line and "named there: menma-0 0.16" in line
    bare = _miss_line("foil-1 plain 00004", "nori-6", "not boxed", False, [], [])
    assert "index hidden" in bare and bare.endswith("read there: -; named there: -")
