"""Ground truth of the path-traced benchmark (benchmarks/pathtraced/scenes.py), without Blender:
what a cascade leaves showing, what must be read, and that scenes are reproducible."""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.pathtraced import scenes
from benchmarks.pathtraced.eval_pathtraced import PlacedScore, placed_right, score
from companion import layout


def _scene(cards: list[dict[str, Any]]) -> dict[str, Any]:
    scenes._stack(cards)
    return {
        "seed": [0, "plain", 0],
        "slice": "plain",
        "cloth": "felt",
        "camera": scenes.make_camera(700.0, (0.0, 0.0), 0.0, (390.0, 220.0)),
        "light": {"kelvin": 5000, "white_balance_k": 5000, "lamp": None},
        "cards": cards,
    }


def _cascade(ids: list[str], x: float = 200.0, y: float = 200.0) -> list[dict[str, Any]]:
    step = scenes.CASCADE_MM
    return [scenes._card(cid, (x, y + k * step), 0.0, "bowl-1") for k, cid in enumerate(ids)]


def _strip(truth: dict[str, Any], cid: str, end: str) -> float:
    card = next(c for c in truth["cards"] if c["card"] == cid)
    return next(s["visible_fraction"] for s in card["strips"] if s["end"] == end)


def test_a_cascade_shows_every_top_band_and_only_the_last_bottom_band() -> None:
    truth = scenes.ground_truth(_scene(_cascade(["nori-1", "negi-2", "menma-3"])))
    for cid in ("nori-1", "negi-2", "menma-3"):
        assert _strip(truth, cid, "top") > 0.95
    assert _strip(truth, "nori-1", "bottom") == 0.0
    assert _strip(truth, "negi-2", "bottom") == 0.0
    assert _strip(truth, "menma-3", "bottom") > 0.95
    assert all(c["required"] for c in truth["cards"])


def test_covered_and_face_down_cards_are_not_required() -> None:
    cards = _cascade(["nori-1", "negi-2"])
    # a card laid 6 mm lower than the last: 10 of its 16 mm band covered... by nothing; the one
    # under it loses most of its band
    cards.append(scenes._card("menma-3", (200.0, 200.0 + 16 + 6), 0.0, "bowl-1"))
    cards.append(scenes._card("chashu-4", (400.0, 250.0), 0.0, "scan", face_up=False))
    truth = scenes.ground_truth(_scene(cards))
    assert 0.3 < _strip(truth, "negi-2", "top") < 0.5
    required = {c["card"]: c["required"] for c in truth["cards"]}
    assert required == {"nori-1": True, "negi-2": False, "menma-3": True, "chashu-4": False}
    # stacking: each later overlapping card lies higher
    zs = [c["z_mm"] for c in cards[:3]]
    assert zs[0] < zs[1] < zs[2]


def test_camera_sees_the_kit_and_projects_the_markers() -> None:
    cam = scenes.make_camera(700.0, (0.0, 0.0), 0.0, (390.0, 220.0))
    uv = scenes.project(cam, scenes.to_world(np.array([[0.0, 0.0], [780.0, 440.0]])))
    # the kit: 66 degree lens 700 mm up sees about 2.53 px/mm at 2304 px
    ppm = (uv[1, 0] - uv[0, 0]) / layout.PLAY_W_MM
    assert abs(ppm - 2304 / (2 * 700 * np.tan(np.radians(33)))) < 1e-6
    assert abs((uv[0, 0] + uv[1, 0]) / 2 - (2304 / 2 - 0.5)) < 1e-6
    assert uv[0, 1] < uv[1, 1]  # plane y grows down the image
    hom = np.asarray(scenes.image_from_plane(cam))
    p = hom @ np.array([780.0, 440.0, 1.0])
    assert np.allclose(p[:2] / p[2], uv[1], atol=1e-3)


def test_random_scenes_are_reproducible_and_kit_like() -> None:
    a = scenes.random_scene(7, "hard", 3)
    assert a == scenes.random_scene(7, "hard", 3)
    assert a != scenes.random_scene(7, "hard", 4)
    ids = [c["card"] for c in a["cards"] if c["card"]]
    assert len(ids) == len(set(ids))
    assert {c["region"] for c in a["cards"]} >= {"fridge", "bowl-1", "bowl-2", "bowl-3"}
    assert 2700 <= a["light"]["kelvin"] <= 6500
    assert scenes._in_view(a["camera"], 12)


def test_placement_and_scoring_use_the_true_homography() -> None:
    sc = _scene(_cascade(["nori-1", "negi-2"]))
    truth = scenes.ground_truth(sc)
    top = next(c for c in truth["cards"] if c["card"] == "nori-1")["strips"][0]["polygon_px"]
    xs, ys = [p[0] for p in top], [p[1] for p in top]
    right = {"card": "nori-1", "confidence": 0.9, "box": [min(xs), min(ys), max(xs), max(ys)]}
    far = {**right, "box": [b + 300 for b in right["box"]]}
    assert placed_right(truth, right)
    assert not placed_right(truth, far)
    s = PlacedScore("default", "plain")
    score(truth, [right], s)
    assert (s.tp, s.fn, s.fp, s.placed) == (1, 1, 0, 1)
