"""A card's tilt on the table plane, from its edges: both namers deskew a strip before reading it.

Two measures: the dominant edge direction (modulo 90 degrees: every straight edge in the patch
votes, a turned card's too) and the longest straight edge near horizontal (one line: the card's
own top edge, 63 mm of it, which in a cascade outvotes the next card lying across the band's
lower part at its own angle).
"""

from __future__ import annotations

import math
from typing import Final

import cv2
import numpy as np

from companion.layout import CARD_W_MM, INDEX_STRIP_MM
from companion.vision.calibration import TableCalibration
from companion.vision.plane import scale_matrix


def parabola_offset(a: float, b: float, c: float) -> float:
    """Sub-pixel offset of a peak b between neighbours a and c."""
    den = a - 2 * b + c
    return float(np.clip(0.5 * (a - c) / den, -0.5, 0.5)) if den < 0 else 0.0


def edge_skew_deg(gray: np.ndarray) -> float:
    """Dominant edge direction modulo 90 degrees, in -45..45, counter-clockwise as in cv2."""
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    mag2 = gx * gx + gy * gy
    theta = np.arctan2(gy, gx)
    c = float(np.sum(mag2 * np.cos(4 * theta)))
    s = float(np.sum(mag2 * np.sin(4 * theta)))
    # image y points down, so atan2 gives the clockwise angle: negate for cv2's convention
    return -math.degrees(math.atan2(s, c) / 4)


SKEW_RANGE_DEG: Final = 14.0


def line_skew_deg(bgr: np.ndarray) -> float:
    """Angle (degrees, counter-clockwise) of the longest straight edge within SKEW_RANGE_DEG
    of horizontal: a Hough vote of edge pixels over (angle, offset). Edges are taken in colour
    (a purple card on a brown one differs little in grey), and each pixel's vote is capped so
    a long card edge outvotes the short, high-contrast strokes of a numeral."""
    return line_skews_deg(bgr, 1)[0]


LINES_APART_DEG: Final = 3.0
"""Two lines are two edges when their angles differ this much."""


def line_skews_deg(bgr: np.ndarray, count: int) -> list[float]:
    """The angles of the `count` longest straight edges at angles LINES_APART_DEG apart (as
    `line_skew_deg`), longest first: where two cards cross, each one's edge."""
    g = cv2.GaussianBlur(bgr.astype(np.float32), (0, 0), 1.0)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    gx2 = (gx * gx).sum(axis=2)
    gy2 = (gy * gy).sum(axis=2)
    mag = np.sqrt(gx2 + gy2)
    thr = max(float(np.percentile(mag, 80)), 12.0)
    ys, xs = np.nonzero((mag >= thr) & (gy2 > gx2))
    if len(xs) < 20:
        return [0.0]
    wts = np.minimum(mag[ys, xs], 2 * thr)
    h, w = bgr.shape[:2]
    angles = np.deg2rad(np.arange(-SKEW_RANGE_DEG, SKEW_RANGE_DEG + 0.01, 0.5))
    # image y points down: a line turned counter-clockwise by a has y = y0 - x tan(a)
    offs = ys[None, :] * np.cos(angles)[:, None] + xs[None, :] * np.sin(angles)[:, None]
    n_bins = 2 * (h + w + 2)
    # one histogram per angle, all in one bincount (each angle's bins after the previous
    # angle's): the same sums in the same order as one call per angle, 57 calls fewer
    bins = np.clip(np.round(offs).astype(np.int64) + w, 0, n_bins - 1)
    bins += (np.arange(len(angles)) * n_bins)[:, None]
    hist = np.bincount(
        bins.ravel(),
        weights=np.broadcast_to(wts, offs.shape).ravel(),
        minlength=n_bins * len(angles),
    )
    votes = hist.reshape(len(angles), n_bins).max(axis=1)
    out: list[float] = []
    degrees = np.rad2deg(angles)
    for k in np.argsort(-votes, kind="stable"):  # ties: the first, as np.argmax
        a = float(degrees[k])
        if any(abs(a - b) < LINES_APART_DEG for b in out):
            continue
        if 0 < k < len(votes) - 1:
            a += 0.5 * parabola_offset(float(votes[k - 1]), float(votes[k]), float(votes[k + 1]))
        out.append(a)
        if len(out) == count:
            break
    return out


BAND_PATCH_PX_PER_MM: Final = 2.0


def band_edge_skew(
    image: np.ndarray, cal: TableCalibration, cx: float, cy: float, flipped: bool = False
) -> float:
    """The tilt of the band whose box is centred at (cx, cy) mm: the longest straight edge in
    the part of a patch round it where the band's own top edge lies (its upper 55 %, or its
    lower part for a band read turned), not the next card of a cascade lying over the band's
    lower part."""
    return band_edge_skews(image, cal, cx, cy, 1, flipped)[0]


def band_edge_skews(
    image: np.ndarray,
    cal: TableCalibration,
    cx: float,
    cy: float,
    count: int,
    flipped: bool = False,
) -> list[float]:
    """`band_edge_skew`'s `count` longest edges (`line_skews_deg`): in a loosely laid cascade
    the card above's lower panel or the next card's edge may outvote the band's own."""
    ppm = BAND_PATCH_PX_PER_MM
    w, h = CARD_W_MM + 8, INDEX_STRIP_MM + 12
    view = scale_matrix(ppm, cx - w / 2, cy - h / 2) @ cal.plane_from_image
    size = (max(8, round(w * ppm)), max(8, round(h * ppm)))
    patch = cv2.warpPerspective(image, view, size, flags=cv2.INTER_LINEAR)
    half = round(patch.shape[0] * 0.55)
    return line_skews_deg(patch[patch.shape[0] - half :] if flipped else patch[:half], count)
