"""How the camera sees the table's light: exposure and glare on the play area, and the camera
state the game screen shows from the exposure and the focus (`focus`).

The doctor prints these before a game; the game pipeline looks now and then during one, so a
lamp switched off or a lens knocked out of focus is said on the screen while the cards are
still read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from companion import layout
from companion.vision.calibration import TableCalibration
from companion.vision.focus import lens_blur

DARK_FAIL: Final = 30.0
DARK_WARN: Final = 50.0
"""Mean grey of the play area below which digits drown in sensor noise."""
CLIPPED_LEVEL: Final = 250
CLIPPED_WARN: Final = 0.05
"""Fraction of play-area pixels at >= CLIPPED_LEVEL above which the picture is overexposed."""
GLARE_MIN_BLOB_MM2: Final = 30
"""A saturated white blob at least this big (mm^2 on the table) counts as a reflection."""
GLARE_WARN: Final = 0.02
"""Fraction of the play area covered by glare blobs above which a card will be misread.
Printed white card faces under even light stay under ~0.7 % on the golden frames."""


@dataclass(frozen=True)
class Exposure:
    mean: float
    p5: float
    p50: float
    p95: float
    clipped: float
    """Share of pixels at CLIPPED_LEVEL or more."""


@dataclass(frozen=True)
class Glare:
    fraction: float
    """Share of the view under saturated, colourless blobs of GLARE_MIN_BLOB_MM2 or more."""
    blobs: int
    largest_px: int


def play_view(image: np.ndarray, cal: TableCalibration | None) -> tuple[np.ndarray, str]:
    """The rectified play area when calibrated, else the whole frame; and which it is."""
    if cal is None:
        return image, "whole frame (markers not found)"
    from companion.vision.plane import rectify

    return rectify(image, cal), "play area"


def exposure(view: np.ndarray) -> Exposure:
    grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    p5, p50, p95 = (float(v) for v in np.percentile(grey, [5, 50, 95]))
    return Exposure(float(grey.mean()), p5, p50, p95, float((grey >= CLIPPED_LEVEL).mean()))


def glare(view: np.ndarray, rectified: bool) -> Glare:
    """Reflections: saturated, colourless blobs (a lamp mirrored in glossy cards). `rectified`:
    `view` is the play area at RECTIFIED_PX_PER_MM (the markers' white margins are left out);
    else a whole frame of unknown scale."""
    hsv = cv2.cvtColor(view, cv2.COLOR_BGR2HSV)
    mask = ((hsv[..., 2] >= CLIPPED_LEVEL) & (hsv[..., 1] < 40)).astype(np.uint8)
    if rectified:
        ppm = layout.RECTIFIED_PX_PER_MM
        for r in layout.marker_squares().values():
            mask[int(r.y0 * ppm) : int(r.y1 * ppm) + 1, int(r.x0 * ppm) : int(r.x1 * ppm) + 1] = 0
        min_blob = GLARE_MIN_BLOB_MM2 * ppm * ppm
    else:
        min_blob = GLARE_MIN_BLOB_MM2  # unknown scale: roughly 1 px per mm at 1080p
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    areas = [int(a) for a in stats[1:, cv2.CC_STAT_AREA] if a >= min_blob] if n > 1 else []
    return Glare(sum(areas) / mask.size, len(areas), max(areas, default=0))


def camera_state(image: np.ndarray, cal: TableCalibration) -> str:
    """`too dark`, `out of focus` or `ok` (tracking.view.CAMERA_STATES), the first that holds,
    as the doctor's checks would WARN: what the screen says while cards are read. Not `glare`:
    mid-game the white faces of a table full of cards clip as a reflection does (the demo
    recording: 56 of 72 looks over GLARE_WARN, against 1.6 % on its first, emptier frame), so
    glare is the doctor's to judge, before a game."""
    view, _ = play_view(image, cal)
    if exposure(view).mean < DARK_WARN:
        return "too dark"
    sharp = lens_blur(image, cal)
    if sharp is not None and sharp.out_of_focus:
        return "out of focus"
    return "ok"
