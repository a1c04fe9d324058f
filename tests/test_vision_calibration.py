"""The table plane from printed markers, and the manual calibration fallback."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from companion import layout
from companion.errors import BadInputError
from companion.vision.calibration import calibrate, load_calibration
from tests.plane_helpers import camera_view, marker_plane

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
