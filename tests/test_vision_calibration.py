"""The table plane from printed markers, and the manual calibration fallback."""

from __future__ import annotations

import json
import re
from typing import Any, cast

import numpy as np
import pytest

from companion import layout
from companion.camera import Frame
from companion.errors import BadInputError
from companion.session import TablePipeline
from companion.tracking.follower import GameFollower
from companion.vision.calibration import calibrate, load_calibration
from tests.plane_helpers import NoCards, camera_view, marker_plane

PPM = 3.0


def _reprojection_px(cal, truth) -> float:
    pts = np.array([[100, 100], [400, 220], [700, 400], [50, 430]], float)
    ours = cal.to_image(pts)
    ref = (truth @ np.c_[pts, np.ones(len(pts))].T).T
    ref = ref[:, :2] / ref[:, 2:]
    return float(np.abs(ours - ref).max())


@pytest.mark.parametrize("tilt", [0.0, 60.0])
def test_markers_give_the_table_plane(tilt):
    image, truth = camera_view(marker_plane(PPM), PPM, tilt_px=tilt)
    cal = calibrate(image)
    assert cal is not None
    assert cal.markers == (0, 1, 2, 3)
    assert _reprojection_px(cal, truth) < 1.5


def _cover(plane, r) -> None:
    """A hand-coloured patch over one marker."""
    y0, x0 = max(0, round(r.y0 * PPM) - 8), max(0, round(r.x0 * PPM) - 8)
    plane[y0 : round(r.y1 * PPM) + 8, x0 : round(r.x1 * PPM) + 8] = (80, 120, 200)


def test_three_markers_are_enough_and_two_are_not():
    plane = marker_plane(PPM)
    squares = layout.marker_squares()
    _cover(plane, squares[3])
    image, truth = camera_view(plane, PPM)
    cal = calibrate(image)
    assert cal is not None and cal.markers == (0, 1, 2)
    assert _reprojection_px(cal, truth) < 5.0
    _cover(plane, squares[2])
    assert calibrate(camera_view(plane, PPM)[0]) is None


def _touch(plane, r, corner: tuple[int, int], colour=(40, 30, 35)) -> None:
    """A dark card over one corner of a tile: across its white border and 6 mm into the black
    square, so the square's outline is no longer closed."""
    cx, cy = (r.x0, r.y0) if corner == (0, 0) else (r.x1, r.y1)
    sx, sy = (-1, -1) if corner == (0, 0) else (1, 1)
    x0, x1 = sorted((cx - sx * 6, cx + sx * 60))
    y0, y1 = sorted((cy - sy * 6, cy + sy * 60))
    h, w = plane.shape[:2]
    plane[
        max(0, round(y0 * PPM)) : min(h, round(y1 * PPM)),
        max(0, round(x0 * PPM)) : min(w, round(x1 * PPM)),
    ] = colour


@pytest.mark.parametrize("tilt", [0.0, 60.0])
def test_markers_a_card_touches_are_found_where_the_others_place_them(tilt):
    plane = marker_plane(PPM)
    squares = layout.marker_squares()
    _touch(plane, squares[1], (0, 0))
    _touch(plane, squares[2], (0, 0), colour=(180, 200, 90))
    _touch(plane, squares[3], (1, 1))
    image, truth = camera_view(plane, PPM, tilt_px=tilt)
    plain = calibrate(image, 2)
    assert plain is None or len(plain.markers) < 2  # ArUco alone: the regions were guessed
    cal = calibrate(image, 2, recover=True)
    assert cal is not None and cal.markers == (0, 1, 2, 3)
    assert _reprojection_px(cal, truth) < 1.5


def test_a_game_whose_first_view_has_touched_markers_is_calibrated():
    plane = marker_plane(PPM)
    squares = layout.marker_squares()
    _touch(plane, squares[1], (0, 0))
    _touch(plane, squares[3], (1, 1))
    image, truth = camera_view(plane, PPM, tilt_px=60.0)
    pipeline = TablePipeline(cast(Any, NoCards()), GameFollower("2p", ["Alice", "Bob"]))
    for i in range(4):
        pipeline.process(Frame(image, i / 4, i))
    assert pipeline.calibration is not None
    assert pipeline.calibration.markers == (0, 1, 2, 3)
    assert _reprojection_px(pipeline.calibration, truth) < 1.5


def test_a_covered_marker_is_not_made_up():
    plane = marker_plane(PPM)
    squares = layout.marker_squares()
    _cover(plane, squares[3])
    _touch(plane, squares[1], (0, 0))
    image, truth = camera_view(plane, PPM)
    cal = calibrate(image, 2, recover=True)
    assert cal is not None and cal.markers == (0, 1, 2)
    assert _reprojection_px(cal, truth) < 5.0


def test_a_bumped_camera_is_noticed():
    plane = marker_plane(PPM)
    a = calibrate(camera_view(plane, PPM, tilt_px=0)[0])
    b = calibrate(camera_view(plane, PPM, tilt_px=25)[0])
    assert a is not None and b is not None
    assert b.moved_from(a)
    assert not a.moved_from(a)


def test_manual_calibration_file(tmp_path):
    path = tmp_path / "cal.json"
    corners = [[100, 50], [1180, 60], [1170, 670], [110, 660]]
    path.write_text(json.dumps({"image_size": [1280, 720], "corners_px": corners}))
    cal = load_calibration(path)
    np.testing.assert_allclose(
        cal.to_image([[0, 0], [layout.PLAY_W_MM, layout.PLAY_H_MM]]),
        [[100, 50], [1170, 670]],
        atol=1e-6,
    )


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"image_size": [1280, 720]}', "needs image_size"),
        ('{"image_size": [1280, 720], "corners_px": [[0, 0], [1, 1]]}', "4 [x, y] pairs"),
        ('{"image_size": [1280, 720], "corners_px": [[0,0],[100,100],[100,0],[0,100]]}', "convex"),
    ],
)
def test_bad_calibration_files_say_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "cal.json"
    path.write_text(content)
    with pytest.raises(BadInputError, match=re.escape(message)):
        load_calibration(path)


def test_missing_calibration_file(tmp_path):
    with pytest.raises(BadInputError, match="not found"):
        load_calibration(tmp_path / "nope.json")
