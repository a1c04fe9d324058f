"""Markers ArUco could not find because something touches them, found again where the others
say they must be.

ArUco finds a marker from the closed outline of its black square inside its white border: a
card's corner over the border, or a dark card against the square, opens that outline and the
marker is lost although nearly all of it shows. In a still photo a table with one marker
left fell back to a guessed plane (default-deck benchmark frame 18: 3 of 4 markers at least
96 % visible, 1 found, 5 legible cards lost). The markers found place the missing ones to within
a few millimetres; there the printed pattern is matched, refined to sub-pixel by ECC, and kept
only when its 6 x 6 cells read the right id.
"""

from __future__ import annotations

from functools import cache

import cv2
import numpy as np

from companion import layout

PX_PER_MM = 3.0
"""Scale the marker is matched at: finer than the Pi camera's ~2.3 px/mm at 700 mm."""
SEARCH_MM = 30.0
"""How far the missing marker may lie from where the found ones put it (one marker found
extrapolates its own square's tilt across the table)."""
BORDER_MM = 1.5
"""White paper matched around the black square (the kit's tile leaves 10 mm, a tile cut
tight less; a card near the tile covers its outer part first)."""
MIN_MATCH = 0.5
"""Normalised correlation of the pattern at its best place, before refinement."""
MIN_ECC = 0.75
"""Correlation after refinement: the pattern is really there, not a dark corner of a card."""
MAX_WRONG_CELLS = 2
"""Cells of the 6 x 6 grid allowed to read wrong (a fingertip over one); two of the
dictionary's ids differ in at least 4 of them."""
CELLS = 6
OUTLIER = 0.35
"""A pixel whose grey is further than this share of the pattern's contrast from it shows
something else (a card, a finger)."""
MAX_OUTLIERS = 0.35
OUTLIER_ROUNDS = 3
MIN_CONTRAST = 0.05
"""Black to white of the pattern where it is placed, on a 0..1 grey scale."""


@cache
def _pattern(marker_id: int) -> np.ndarray:
    """The marker's 6 x 6 cells, 1 = black, as printed (border included)."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.ARUCO_DICT))
    img = cv2.aruco.generateImageMarker(dictionary, marker_id, CELLS, borderBits=1)
    return (img < 128).astype(np.uint8)


@cache
def _template(marker_id: int) -> np.ndarray:
    """Grey image of the square and BORDER_MM of paper at PX_PER_MM, float32 0..1."""
    side = round(layout.MARKER_MM * PX_PER_MM)
    pad = round(BORDER_MM * PX_PER_MM)
    cells = _pattern(marker_id)
    square = cv2.resize(
        1.0 - cells.astype(np.float32), (side, side), interpolation=cv2.INTER_NEAREST
    )
    out = np.ones((side + 2 * pad, side + 2 * pad), np.float32)
    out[pad : pad + side, pad : pad + side] = square
    return cv2.GaussianBlur(out, (0, 0), 0.6 * PX_PER_MM)


def _cells_wrong(patch: np.ndarray, marker_id: int) -> int:
    """How many of the 6 x 6 cells read other than the id's pattern; `patch` is the square
    alone, warped to the template's scale."""
    side = patch.shape[0]
    cell = side / CELLS
    means = np.empty((CELLS, CELLS), np.float32)
    for r in range(CELLS):
        for c in range(CELLS):
            y0, y1 = int((r + 0.3) * cell), int((r + 0.7) * cell)
            x0, x1 = int((c + 0.3) * cell), int((c + 0.7) * cell)
            means[r, c] = float(patch[y0:y1, x0:x1].mean())
    want = _pattern(marker_id).astype(bool)
    if want.all() or not want.any():
        return CELLS * CELLS
    # the dark and light levels from the cells the id says are black and white
    dark, light = float(np.median(means[want])), float(np.median(means[~want]))
    if light - dark < 0.1:
        return CELLS * CELLS
    black = means < (dark + light) / 2
    return int(np.count_nonzero(black != want))


def _refine(templ: np.ndarray, patch: np.ndarray, start: np.ndarray) -> np.ndarray | None:
    """ECC from `start` without the pixels that disagree with the pattern (a card or a finger
    over part of the tile pulls a plain fit millimetres off), or None when too much of the
    pattern is not there."""
    mask = _agreeing(templ, patch, start)
    if mask is None:
        return None
    for _ in range(OUTLIER_ROUNDS):
        try:
            ecc, warp = cv2.findTransformECC(
                templ,
                patch,
                start.copy(),
                cv2.MOTION_HOMOGRAPHY,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 60, 1e-5),
                mask,
                1,
            )
        except cv2.error:
            return None
        again = _agreeing(templ, patch, warp)
        if again is None:
            return None
        if ecc >= MIN_ECC and np.array_equal(again, mask):
            return warp
        mask = again
    return warp if ecc >= MIN_ECC else None


def _agreeing(templ: np.ndarray, patch: np.ndarray, warp: np.ndarray) -> np.ndarray | None:
    """Mask of the patch pixels that show the pattern placed by `warp` (its light and dark
    levels fitted), or None when more than MAX_OUTLIERS of it shows something else."""
    size = (patch.shape[1], patch.shape[0])
    seen = cv2.warpPerspective(templ, warp, size, flags=cv2.INTER_LINEAR)
    inside = cv2.warpPerspective(np.ones_like(templ, np.uint8), warp, size) > 0
    if inside.sum() < templ.size // 2:
        return None
    # compared a millimetre blurred: a soft camera's edges are not something else
    sigma = PX_PER_MM
    seen_b, patch_b = cv2.GaussianBlur(seen, (0, 0), sigma), cv2.GaussianBlur(patch, (0, 0), sigma)
    t, p = seen_b[inside], patch_b[inside]
    a, b = np.polyfit(t, p, 1)
    if a <= MIN_CONTRAST:
        return None
    off = np.zeros(patch.shape, np.uint8)
    off[inside] = np.abs(p - (a * t + b)) > OUTLIER * a
    bad: np.ndarray = cv2.dilate(off, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    if float(bad[inside].mean()) > MAX_OUTLIERS:
        return None
    return (inside & (bad == 0)).astype(np.uint8)


def _find_one(gray: np.ndarray, marker_id: int, image_from_plane: np.ndarray) -> np.ndarray | None:
    """The marker's 4 image corners (ArUco order), or None when it is not there."""
    sq = layout.marker_squares()[marker_id]
    templ = _template(marker_id)
    pad = round(BORDER_MM * PX_PER_MM)
    reach = BORDER_MM + SEARCH_MM
    x0, y0 = sq.x0 - reach, sq.y0 - reach
    size_mm = layout.MARKER_MM + 2 * reach
    size = round(size_mm * PX_PER_MM)
    # patch px -> plane mm -> image px
    patch_to_plane = np.array(
        [[1 / PX_PER_MM, 0, x0], [0, 1 / PX_PER_MM, y0], [0, 0, 1]], np.float64
    )
    h = image_from_plane @ patch_to_plane
    patch = (
        cv2.warpPerspective(
            gray,
            h,
            (size, size),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=0,
        ).astype(np.float32)
        / 255.0
    )
    scores = cv2.matchTemplate(patch, templ, cv2.TM_CCOEFF_NORMED)
    _, best, _, (bx, by) = cv2.minMaxLoc(scores)
    if best < MIN_MATCH:
        return None
    start = np.array([[1, 0, bx], [0, 1, by], [0, 0, 1]], np.float32)
    warp = _refine(templ, patch, start)
    if warp is None:
        return None
    side = templ.shape[0] - 2 * pad
    a, b = pad - 0.5, pad + side - 0.5  # the square's edges, in pixel-centre coordinates
    square_in_templ = np.array([[a, a], [b, a], [b, b], [a, b]], np.float64)
    inner = cv2.warpPerspective(
        patch,
        warp.astype(np.float64) @ np.array([[1, 0, pad], [0, 1, pad], [0, 0, 1]]),
        (side, side),
        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
    )
    if _cells_wrong(inner, marker_id) > MAX_WRONG_CELLS:
        return None
    in_patch = cv2.perspectiveTransform(square_in_templ.reshape(-1, 1, 2), warp.astype(np.float64))
    return cv2.perspectiveTransform(in_patch, h).reshape(4, 2)


def recover_markers(
    gray: np.ndarray, found: dict[int, np.ndarray], corners_mm: dict[int, np.ndarray]
) -> dict[int, np.ndarray]:
    """`found` and the kit's markers missing from it that show where the found ones place
    them. Each marker recovered joins the fit that places the next."""
    out = dict(found)
    while 0 < len(out) < len(layout.MARKER_IDS):
        new: dict[int, np.ndarray] = {}
        for guess in _placements(out, corners_mm):
            for mid in layout.MARKER_IDS:
                if mid not in out and mid not in new:
                    corners = _find_one(gray, mid, guess)
                    if corners is not None:
                        new[mid] = corners
        if not new:
            break
        out.update(new)
    return out


def _placements(
    found: dict[int, np.ndarray], corners_mm: dict[int, np.ndarray]
) -> list[np.ndarray]:
    """Plane -> image maps to look by: the homography of the found corners, and while few
    markers are found, their affine map too. One small square fixes the table's tilt badly: on
    a soft 720p view its homography put the far markers 100+ mm off, the affine map 5-8 mm."""
    src = np.concatenate([corners_mm[i] for i in sorted(found)])
    dst = np.concatenate([found[i] for i in sorted(found)])
    out = []
    h, _ = cv2.findHomography(src, dst, 0)
    if h is not None:
        out.append(h)
    if len(found) <= 2:
        a, _ = cv2.estimateAffine2D(src, dst, method=cv2.LMEDS)
        if a is not None:
            out.append(np.vstack([a, [0.0, 0.0, 1.0]]))
    return out
