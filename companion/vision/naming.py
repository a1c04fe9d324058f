"""Naming a found index strip by matching it against the deck's own reference strips.

No training: the reference is the deck itself (default or enrolled), so a newly enrolled deck
is named correctly at once. For each strip the detector boxed: sample a small top-down patch from
the full-resolution camera frame, measure its skew from edge directions, find the strip inside
the patch with the deck's mean strip (upright and turned 180 degrees), re-sample exactly that
strip, and score it against all 56 references by normalised cross-correlation. The margin between
the best and second-best card becomes the naming confidence, so doubt is flagged, not announced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

import cv2
import numpy as np

from companion.cards import CARD_IDS
from companion.deck.deckdir import Deck
from companion.layout import CARD_W_MM, INDEX_STRIP_MM
from companion.vision.calibration import TableCalibration
from companion.vision.plane import plane_patch, scale_matrix

LOCATE_PX_PER_MM: Final = 1.5
"""The strip is found and deskewed on a coarse patch (cheap) ..."""
DESC_PX_PER_MM: Final = 2.0
"""... then read at this resolution: the 11 mm numeral keeps 22 px, a pip 9 px."""
DESC_TOP_MM: Final = 12.0
"""Only the top 12 mm of the strip are compared: the tightest cascade (12 mm) still shows them."""
SEARCH_X_MM: Final = 5.0
SEARCH_Y_MM: Final = 4.0
"""How far the strip may sit from the box centre: vertically less than the tightest cascade
offset, so the neighbouring card's strip is never taken for this one."""
BLUR_SIGMA_MM: Final = 0.5
"""Both sides are blurred alike so a soft camera image still correlates with sharp art."""
MIN_SCORE: Final = 0.2


@dataclass(frozen=True, slots=True)
class Naming:
    card: str
    score: float
    """Normalised cross-correlation with the best reference, -1..1."""
    margin: float
    """Best minus second-best score; small margins mean doubt."""
    runner_up: str
    flipped: bool
    """The strip was read turned 180 degrees (a bottom strip, or a card laid upside down)."""
    angle_deg: float
    """Counter-clockwise skew of the strip on the table plane."""
    center_mm: tuple[float, float]
    """Centre of the strip on the table plane."""

    @property
    def confidence(self) -> float:
        """0..1 from score and margin; 0.5 at a margin of 0.04."""
        if self.score <= MIN_SCORE:
            return 0.0
        return float(1.0 / (1.0 + math.exp(-(self.margin - 0.04) / 0.012)))


def _desc_size() -> tuple[int, int]:
    return round(CARD_W_MM * DESC_PX_PER_MM), round(DESC_TOP_MM * DESC_PX_PER_MM)


def _descriptor(strip_top: np.ndarray) -> np.ndarray:
    """Per-channel zero-mean, unit-variance, then unit norm: blind to exposure and white balance."""
    img = cv2.GaussianBlur(strip_top.astype(np.float32), (0, 0), BLUR_SIGMA_MM * DESC_PX_PER_MM)
    mean, std = cv2.meanStdDev(img)
    img -= mean.ravel().astype(np.float32)
    img /= np.maximum(std.ravel(), 4.0).astype(np.float32)
    vec = img.ravel()
    return vec / max(float(np.linalg.norm(vec)), 1e-6)


def _whiteness(bgr: np.ndarray) -> np.ndarray:
    """Darkest channel after white balance: the strip's white panels stand out on every
    ingredient colour (yellow is bright in grey but dark in blue), whatever the light."""
    sample = bgr.reshape(-1, 3)
    k = int(len(sample) * 0.97)
    white = np.partition(sample, k, axis=0)[k].astype(np.float32)
    b, g, r = cv2.split(bgr.astype(np.float32))
    b *= 1.0 / max(float(white[0]), 8.0)
    g *= 1.0 / max(float(white[1]), 8.0)
    r *= 1.0 / max(float(white[2]), 8.0)
    return cv2.min(cv2.min(b, g), r)


def _skew_deg(gray: np.ndarray) -> float:
    """Dominant edge direction modulo 90 degrees, in -45..45, counter-clockwise as in cv2."""
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    mag2 = gx * gx + gy * gy
    theta = np.arctan2(gy, gx)
    c = float(np.sum(mag2 * np.cos(4 * theta)))
    s = float(np.sum(mag2 * np.sin(4 * theta)))
    # image y points down, so atan2 gives the clockwise angle: negate for cv2's convention
    return -math.degrees(math.atan2(s, c) / 4)


@cache
def _search_mask(res_shape: tuple[int, int], cx: float, cy: float) -> np.ndarray:
    ys, xs = np.mgrid[0 : res_shape[0], 0 : res_shape[1]]
    sx, sy = SEARCH_X_MM * LOCATE_PX_PER_MM, SEARCH_Y_MM * LOCATE_PX_PER_MM
    return (np.abs(xs - cx) <= sx) & (np.abs(ys - cy) <= sy)


def _parabola(a: float, b: float, c: float) -> float:
    """Sub-pixel offset of a peak b between neighbours a and c."""
    den = a - 2 * b + c
    return float(np.clip(0.5 * (a - c) / den, -0.5, 0.5)) if den < 0 else 0.0


@dataclass(frozen=True, slots=True)
class _Located:
    center_mm: tuple[float, float]
    angle_deg: float
    flipped: bool


class StripNamer:
    """Names index strips for one deck."""

    def __init__(self, deck: Deck) -> None:
        self.deck = deck
        w, h = _desc_size()
        full_h = round(INDEX_STRIP_MM * DESC_PX_PER_MM)
        refs = [
            cv2.resize(deck.strip(cid), (w, full_h), interpolation=cv2.INTER_AREA)
            for cid in CARD_IDS
        ]
        self._refs = np.stack([_descriptor(s[:h]) for s in refs])  # (56, D)
        lw, lh = round(CARD_W_MM * LOCATE_PX_PER_MM), round(INDEX_STRIP_MM * LOCATE_PX_PER_MM)
        small = [cv2.resize(s, (lw, lh), interpolation=cv2.INTER_AREA) for s in refs]
        up = np.mean(np.stack([_whiteness(s) for s in small]), axis=0).astype(np.float32)
        self._locators = ((False, up), (True, np.ascontiguousarray(up[::-1, ::-1])))

    def name_boxes(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes_mm: Sequence[tuple[float, float, float, float]],
    ) -> list[Naming | None]:
        """Name the strips the detector boxed (x0, y0, x1, y1 on the table plane, mm)."""
        located = [self._locate(image, cal, box) for box in boxes_mm]
        crops = [self._sample(image, cal, loc) for loc in located if loc is not None]
        if not crops:
            return [None] * len(located)
        scores = np.stack([_descriptor(c) for c in crops]) @ self._refs.T  # (n, 56)
        out: list[Naming | None] = []
        k = 0
        for loc in located:
            if loc is None:
                out.append(None)
                continue
            row = scores[k]
            k += 1
            i2, i1 = np.argpartition(row, -2)[-2:]
            if row[i2] > row[i1]:
                i1, i2 = i2, i1
            out.append(
                Naming(
                    card=CARD_IDS[i1],
                    score=float(row[i1]),
                    margin=float(row[i1] - row[i2]),
                    runner_up=CARD_IDS[i2],
                    flipped=loc.flipped,
                    angle_deg=loc.angle_deg,
                    center_mm=loc.center_mm,
                )
            )
        return out

    def _locate(
        self, image: np.ndarray, cal: TableCalibration, box: tuple[float, float, float, float]
    ) -> _Located | None:
        ppm = LOCATE_PX_PER_MM
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        pw, ph = CARD_W_MM + 2 * SEARCH_X_MM + 4, INDEX_STRIP_MM + 2 * SEARCH_Y_MM + 4
        patch = plane_patch(image, cal, cx - pw / 2, cy - ph / 2, pw, ph, ppm)
        white = _whiteness(patch)
        angle = _skew_deg(white)
        h, w = white.shape
        rot = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)
        white = cv2.warpAffine(white, rot, (w, h), borderMode=cv2.BORDER_REPLICATE)
        best = (-2.0, 0.0, 0.0, False)
        for flipped, loc in self._locators:
            th, tw = loc.shape
            if h < th or w < tw:
                return None
            res = cv2.matchTemplate(white, loc, cv2.TM_CCOEFF_NORMED)
            masked = np.where(_search_mask(res.shape, (w - tw) / 2, (h - th) / 2), res, -2.0)
            iy, ix = np.unravel_index(int(np.argmax(masked)), masked.shape)
            if masked[iy, ix] > best[0]:
                fx = _parabola(*res[iy, ix - 1 : ix + 2]) if 0 < ix < res.shape[1] - 1 else 0.0
                fy = _parabola(*res[iy - 1 : iy + 2, ix]) if 0 < iy < res.shape[0] - 1 else 0.0
                best = (float(masked[iy, ix]), ix + fx + tw / 2, iy + fy + th / 2, flipped)
        _, sx, sy, flipped = best
        px, py = cv2.invertAffineTransform(rot) @ np.array([sx, sy, 1.0])
        center = (cx - pw / 2 + px / ppm, cy - ph / 2 + py / ppm)
        return _Located(center, angle, flipped)

    def _sample(self, image: np.ndarray, cal: TableCalibration, loc: _Located) -> np.ndarray:
        """The strip's top DESC_TOP_MM, upright, at DESC_PX_PER_MM, straight from the frame."""
        w, h = _desc_size()
        ppm = DESC_PX_PER_MM
        # crop pixel -> strip frame (mm, origin at strip centre, upright) -> plane mm
        to_strip = np.linalg.inv(scale_matrix(ppm, -CARD_W_MM / 2, -INDEX_STRIP_MM / 2))
        a = math.radians(loc.angle_deg)
        ca, sa = math.cos(a), math.sin(a)
        if loc.flipped:
            ca, sa = -ca, -sa
        # counter-clockwise on screen with y down: x' = x cos + y sin, y' = -x sin + y cos
        rot = np.array([[ca, sa, loc.center_mm[0]], [-sa, ca, loc.center_mm[1]], [0, 0, 1.0]])
        image_from_crop = cal.image_from_plane @ rot @ to_strip
        return cv2.warpPerspective(
            image,
            image_from_crop,
            (w, h),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
            borderMode=cv2.BORDER_REPLICATE,
        )
