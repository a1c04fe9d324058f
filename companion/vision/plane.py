"""Views of the table plane: the detector's top-down image and high-resolution patches.

The detector looks at the whole play area at RECTIFIED_PX_PER_MM (cards always the same size,
perspective removed); naming then re-samples just the found strips from the full-resolution
camera frame, so small digits keep every pixel the camera gave.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion import layout
from companion.vision.calibration import TableCalibration

RECT_SIZE = (
    round(layout.PLAY_W_MM * layout.RECTIFIED_PX_PER_MM),
    round(layout.PLAY_H_MM * layout.RECTIFIED_PX_PER_MM),
)


def scale_matrix(px_per_mm: float, x0_mm: float = 0.0, y0_mm: float = 0.0) -> np.ndarray:
    """Plane mm -> pixels of a view at px_per_mm whose origin is (x0, y0) mm."""
    return np.array(
        [[px_per_mm, 0, -x0_mm * px_per_mm], [0, px_per_mm, -y0_mm * px_per_mm], [0, 0, 1]],
        np.float64,
    )


def rectify(image: np.ndarray, cal: TableCalibration) -> np.ndarray:
    """Top-down view of the play area at layout.RECTIFIED_PX_PER_MM."""
    view_from_image = scale_matrix(layout.RECTIFIED_PX_PER_MM) @ cal.plane_from_image
    return cv2.warpPerspective(
        image, view_from_image, RECT_SIZE, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )


def plane_patch(
    image: np.ndarray,
    cal: TableCalibration,
    x0_mm: float,
    y0_mm: float,
    w_mm: float,
    h_mm: float,
    px_per_mm: float,
) -> np.ndarray:
    """A top-down patch of the table, sampled from the full camera frame."""
    view_from_image = scale_matrix(px_per_mm, x0_mm, y0_mm) @ cal.plane_from_image
    size = (max(1, round(w_mm * px_per_mm)), max(1, round(h_mm * px_per_mm)))
    return cv2.warpPerspective(
        image, view_from_image, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


def turned_patch(
    image: np.ndarray,
    cal: TableCalibration,
    centre_mm: tuple[float, float],
    angle_deg: float,
    origin_mm: tuple[float, float],
    size: tuple[int, int],
    px_per_mm: float,
    interpolation: int = cv2.INTER_LINEAR,
) -> np.ndarray:
    """A patch of the table turned with a card, sampled from the full camera frame: its frame
    is the plane's turned counter-clockwise by `angle_deg` about `centre_mm` (x right, y down),
    the patch's top-left pixel at `origin_mm` in it, `size` (w, h) px at `px_per_mm`."""
    a = math.radians(angle_deg)
    ca, sa = math.cos(a), math.sin(a)
    # counter-clockwise on screen with y down: x' = x cos + y sin, y' = -x sin + y cos
    rot = np.array([[ca, sa, centre_mm[0]], [-sa, ca, centre_mm[1]], [0, 0, 1.0]])
    to_local = np.linalg.inv(scale_matrix(px_per_mm, *origin_mm))
    return cv2.warpPerspective(
        image,
        cal.image_from_plane @ rot @ to_local,
        size,
        flags=interpolation | cv2.WARP_INVERSE_MAP,
        borderMode=cv2.BORDER_REPLICATE,
    )
