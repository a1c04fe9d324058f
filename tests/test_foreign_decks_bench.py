"""Smoke test of benchmarks/foreign_decks.py: its scoring on a hand-made frame (no models)."""

from __future__ import annotations

from benchmarks.foreign_decks import SliceScore, parse_args, score_frame


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
