"""The table plane from the printed ArUco markers, or from a manual calibration file.

Markers are looked for in every frame the tracker calibrates on, so a bumped camera
re-calibrates by itself; the manual file is the fallback when markers are covered.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import cv2
import numpy as np

from companion import layout
from companion.errors import BadInputError
from companion.vision.marker_recovery import recover_markers

MIN_MARKERS = 3
STILL_MIN_MARKERS = 2
"""A still image with nothing better to go on: two markers (8 corners) still place the regions
far better than a guessed camera. 19 of 200 held-out frames had exactly two markers showing."""
"""Two markers along one edge fit their own corners but extrapolate badly across the table
(7 px off at the far edge, measured in tests); three keep it within ~4.5 px near the hidden
marker under strong keystone. The tracker keeps the last 4-marker calibration while a marker
is covered."""


@dataclass(frozen=True)
class TableCalibration:
    """Homography between the camera image (px) and the table plane (mm)."""

    image_from_plane: np.ndarray
    """3x3, maps plane mm -> image px."""
    image_size: tuple[int, int]
    """(width, height) of the frames it was measured on."""
    markers: tuple[int, ...]
    """Marker ids seen (empty for a manual calibration)."""
    error_px: float
    """RMS reprojection error of the marker corners."""
    regions_known: bool = True
    """The plane is the kit's (markers, a manual file), so layout's regions lie where it says.
    False when only the table's scale is known (taken from the cards, or the kit camera
    guessed): cards are found and named, but no region is given."""

    @cached_property
    def plane_from_image(self) -> np.ndarray:
        return np.linalg.inv(self.image_from_plane)

    def to_image(self, points_mm: np.ndarray) -> np.ndarray:
        pts = np.asarray(points_mm, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.image_from_plane).reshape(-1, 2)

    def to_plane(self, points_px: np.ndarray) -> np.ndarray:
        pts = np.asarray(points_px, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, self.plane_from_image).reshape(-1, 2)

    def moved_from(self, other: TableCalibration, tolerance_px: float = 4.0) -> bool:
        """True when the play-area corners moved more than `tolerance_px` (camera bumped)."""
        corners = np.array(
            [
                [0, 0],
                [layout.PLAY_W_MM, 0],
                [layout.PLAY_W_MM, layout.PLAY_H_MM],
                [0, layout.PLAY_H_MM],
            ]
        )
        shift = np.linalg.norm(self.to_image(corners) - other.to_image(corners), axis=1)
        return bool(shift.max() > tolerance_px)


def marker_corners_mm() -> dict[int, np.ndarray]:
    """Each marker's four corners in ArUco order (TL, TR, BR, BL of the printed square)."""
    out = {}
    for mid, r in layout.marker_squares().items():
        out[mid] = np.array([[r.x0, r.y0], [r.x1, r.y0], [r.x1, r.y1], [r.x0, r.y1]], np.float64)
    return out


_DETECTOR: cv2.aruco.ArucoDetector | None = None


def _detector() -> cv2.aruco.ArucoDetector:
    global _DETECTOR
    if _DETECTOR is None:
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.ARUCO_DICT))
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        # A marker touching the frame's edge is still whole enough to fit: the default 3 px
        # margin dropped one in a golden frame (1.3 px corner error with it, 2 markers without).
        params.minDistanceToBorder = 0
        _DETECTOR = cv2.aruco.ArucoDetector(dictionary, params)
    return _DETECTOR


def find_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """Marker id -> its 4 image corners, for the kit's marker ids only."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _ = _detector().detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    if ids is None:
        return found
    for c, i in zip(corners, ids.ravel(), strict=True):
        if int(i) in layout.MARKER_IDS:
            found[int(i)] = c.reshape(4, 2).astype(np.float64)
    return found


def calibrate(
    image: np.ndarray, min_markers: int = MIN_MARKERS, recover: bool = False
) -> TableCalibration | None:
    """Calibration from the markers in one frame, or None when fewer than `min_markers` show.
    `recover`: with fewer than MIN_MARKERS found, the missed ones are looked for where the found
    ones place them (a card touching a tile); for a still, or a game's first view, where no
    better calibration is known. (Three found fit the plane well; a fourth recovered under a
    card was up to 4.6 px off on the benchmark's frames.)"""
    gray = _gray(image)
    found = find_markers(gray)
    mm = marker_corners_mm()
    if recover and len(found) < MIN_MARKERS:
        found = recover_markers(gray, found, mm)
    if len(found) < max(min_markers, 2):
        return None
    src = np.concatenate([mm[i] for i in sorted(found)])
    dst = np.concatenate([found[i] for i in sorted(found)])
    h, _ = cv2.findHomography(src, dst, 0)
    if h is None:
        return None
    proj = cv2.perspectiveTransform(src.reshape(-1, 1, 2), h).reshape(-1, 2)
    err = float(np.sqrt(np.mean(np.sum((proj - dst) ** 2, axis=1))))
    return TableCalibration(h, (image.shape[1], image.shape[0]), tuple(sorted(found)), err)


MARKER_MARGIN_MM = 10.0
"""Around each marker: its white border and a little table, where a hand or a bump shows."""
UNCHANGED_MARKER_LEVEL = 24
"""Largest 3 x 3 mean grey change that still counts as the same picture (camera noise)."""


class MarkerWatch:
    """Have the markers stayed exactly where a calibration saw them? Finding markers costs a
    fifth of a detection; comparing the pixels around them with the frame the calibration was
    measured on costs almost nothing. `same(image)` is True when none of the four changed;
    the caller then reuses the calibration (a bumped camera, a hand or a cup over a marker,
    or new light changes them, and the markers are looked for again)."""

    def __init__(self) -> None:
        self._cal: TableCalibration | None = None
        self._crops: list[tuple[tuple[int, int, int, int], np.ndarray]] = []

    def reset(self) -> None:
        self._cal = None
        self._crops = []

    def watch(self, cal: TableCalibration, image: np.ndarray) -> None:
        """Remember the markers' surroundings in `image`, the frame `cal` was measured on."""
        h, w = image.shape[:2]
        m = MARKER_MARGIN_MM
        self._crops = []
        for r in layout.marker_squares().values():
            pts = cal.to_image(
                np.array(
                    [
                        [r.x0 - m, r.y0 - m],
                        [r.x1 + m, r.y1 + m],
                        [r.x0 - m, r.y1 + m],
                        [r.x1 + m, r.y0 - m],
                    ]
                )
            )
            x0, y0 = np.floor(pts.min(axis=0)).astype(int)
            x1, y1 = np.ceil(pts.max(axis=0)).astype(int)
            box = (max(0, int(x0)), max(0, int(y0)), min(w, int(x1)), min(h, int(y1)))
            if box[2] - box[0] < 4 or box[3] - box[1] < 4:
                continue  # this marker lies outside the frame
            self._crops.append((box, _gray(image[box[1] : box[3], box[0] : box[2]])))
        self._cal = cal

    def same(self, image: np.ndarray, cal: TableCalibration | None) -> bool:
        """`cal` is the watched calibration and no marker's surroundings changed in `image`."""
        if cal is None or cal is not self._cal or not self._crops:
            return False
        for (x0, y0, x1, y1), before in self._crops:
            now = _gray(image[y0:y1, x0:x1])
            if now.shape != before.shape:
                return False
            if float(cv2.blur(cv2.absdiff(now, before), (3, 3)).max()) > UNCHANGED_MARKER_LEVEL:
                return False
        return True


def _gray(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def load_calibration(path: Path) -> TableCalibration:
    """Manual calibration: JSON {"image_size": [w, h], "corners_px": [[x, y] x4]}.

    `corners_px` are the image positions of the play area's corners (outer corners of markers
    0, 1, 2, 3: top-left, top-right, bottom-right, bottom-left), e.g. clicked on a photo.
    """
    from companion.inputs import read_json

    data = read_json(path, "calibration file")  # UTF-8, size and nesting limited
    try:
        size = tuple(int(v) for v in data["image_size"])
        corners = np.array(data["corners_px"], np.float64)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise BadInputError(
            f"calibration file {path} needs image_size [w, h] and corners_px [[x, y] x4]: {exc}"
        ) from None
    if (
        corners.shape != (4, 2)
        or len(size) != 2
        or min(size) <= 0
        or not np.isfinite(corners).all()
    ):
        raise BadInputError(
            f"calibration file {path}: corners_px must be 4 [x, y] pairs, image_size [w, h] > 0"
        )
    plane = np.array(
        [
            [0, 0],
            [layout.PLAY_W_MM, 0],
            [layout.PLAY_W_MM, layout.PLAY_H_MM],
            [0, layout.PLAY_H_MM],
        ],
        np.float64,
    )
    if abs(cv2.contourArea(corners.astype(np.float32))) < 100 or not cv2.isContourConvex(
        corners.astype(np.float32)
    ):
        raise BadInputError(f"calibration file {path}: the 4 corners do not form a convex area")
    h = cv2.getPerspectiveTransform(plane.astype(np.float32), corners.astype(np.float32))
    return TableCalibration(h.astype(np.float64), (size[0], size[1]), (), 0.0)
