"""How sharp the camera sees the table, from the printed markers' edges.

A camera out of focus costs the cards whose numerals are small (a held-out design's hard frames:
94 % of the cards read under 1.5 camera px of lens blur, 88 % over 2), and nothing else in a
frame says so: a blurred card is still found, then named unsure or wrong. The markers are the
one thing on the table whose edges are known to be sharp: a black square on white paper, its
four sides straight. Across each side the brightness rises from the ink to the paper; the
Gaussian-blurred step that fits that rise best gives the blur (its sigma).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from companion.vision.calibration import TableCalibration, marker_corners_mm

REACH_MM: Final = 4.0
"""How far each profile runs either side of a marker's side: inside its black border (6.7 mm
wide) and into the white margin round it (10 mm on the printed tiles)."""
STEP_MM: Final = 0.1
PROFILES_PER_SIDE: Final = 12
SIDE_SPAN: Final = (0.2, 0.8)
"""Where along a side profiles are taken: clear of the corners, where two edges blur together."""
MIN_CONTRAST: Final = 40.0
"""A profile whose paper is not this much brighter than its ink (grey levels) is under a card,
a hand or a glare, and has no say."""
MIN_PROFILES: Final = 8
SIGMAS_MM: Final = np.arange(0.04, 2.0, 0.02)
"""The blurs tried (Gaussian sigma on the table, mm)."""
OUT_OF_FOCUS_PX: Final = 1.6
"""Lens blur (Gaussian sigma in camera pixels) from which cards with small numerals are missed:
held-out designs' hard frames (`benchmarks/foreign_decks.py`, 2304 px wide) read 94 % of their
cards under 1.5 px of blur (measured here up to 1.6 px: the camera's own softness adds about
0.5 px in quadrature), 89 % over it. In pixels, not mm: a sharp camera of fewer pixels blurs
more of the table, which the doctor's camera check (its resolution) already answers; this is
about the lens."""


@dataclass(frozen=True)
class Sharpness:
    """The lens blur measured on the markers' edges."""

    sigma_mm: float
    """Gaussian sigma on the table, mm: what the cards' numerals are blurred by."""
    sigma_px: float
    """The same in camera pixels."""
    profiles: int
    """How many edge profiles it is the median of."""

    @property
    def out_of_focus(self) -> bool:
        return self.sigma_px >= OUT_OF_FOCUS_PX


def _profiles(image: np.ndarray, cal: TableCalibration) -> tuple[np.ndarray, np.ndarray]:
    """(n, k) grey levels across the markers' sides, ink first, at offsets STEP_MM apart from
    -REACH_MM to +REACH_MM; and (n,) camera px per mm along each."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    offsets = np.arange(-REACH_MM, REACH_MM + STEP_MM / 2, STEP_MM)
    squares = marker_corners_mm()
    points = []
    for mid in cal.markers:
        corners = squares.get(mid)
        if corners is None:
            continue
        centre = corners.mean(axis=0)
        for k in range(4):
            a, b = corners[k], corners[(k + 1) % 4]
            along = (b - a) / np.linalg.norm(b - a)
            normal = np.array([along[1], -along[0]])
            if np.dot((a + b) / 2 - centre, normal) < 0:
                normal = -normal  # outward: from the ink to the paper
            for t in np.linspace(*SIDE_SPAN, PROFILES_PER_SIDE):
                base = a + t * (b - a)
                points.append(base[None, :] + offsets[:, None] * normal[None, :])
    if not points:
        return np.empty((0, len(offsets)), np.float32), np.empty(0)
    plane = np.stack(points)  # (n, k, 2) mm
    px = cal.to_image(plane.reshape(-1, 2)).reshape(plane.shape).astype(np.float32)
    inside = (
        (px[..., 0] >= 0)
        & (px[..., 0] <= gray.shape[1] - 1)
        & (px[..., 1] >= 0)
        & (px[..., 1] <= gray.shape[0] - 1)
    ).all(axis=1)
    px = px[inside]
    values = cv2.remap(
        gray, px[..., 0], px[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    ).astype(np.float32)
    span = np.linalg.norm(px[:, -1] - px[:, 0], axis=1) / (2 * REACH_MM)
    return values, span


def _fit_sigmas(values: np.ndarray) -> np.ndarray:
    """Per profile, the sigma (mm) of the Gaussian-blurred step that fits it best (NaN where the
    profile is no clean step). The ink and paper levels are fitted with it: a blur wide against
    REACH_MM leaves no flat ink or paper at the profile's ends to read them from."""
    k = values.shape[1]
    offsets = (np.arange(k) - (k - 1) / 2) * STEP_MM
    edge = k // 6
    ink = np.median(values[:, :edge], axis=1)
    paper = np.median(values[:, -edge:], axis=1)
    rise = (values - ink[:, None]) / np.maximum(paper - ink, 1.0)[:, None]
    # the edge's place: where the rise crosses half way (its mean position, robust to noise)
    centre = np.clip(1.0 - rise, 0.0, 1.0).sum(axis=1) * STEP_MM - REACH_MM
    z = (offsets[None, None, :] - centre[:, None, None]) / SIGMAS_MM[None, :, None]
    step = 0.5 * (1.0 + _erf(z / math.sqrt(2.0)))  # (n, sigmas, k)
    # least squares of values = ink + contrast * step, per profile and sigma, in closed form
    v = values[:, None, :] - values.mean(axis=1)[:, None, None]
    st = step - step.mean(axis=2, keepdims=True)
    var = np.maximum((st * st).sum(axis=2), 1e-9)
    cov = (st * v).sum(axis=2)
    residual = (v * v).sum(axis=2) - cov * cov / var
    best = np.argmin(residual, axis=1)
    contrast = cov[np.arange(len(best)), best] / var[np.arange(len(best)), best]
    return np.where(contrast >= MIN_CONTRAST, SIGMAS_MM[best], np.nan)


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz-Stegun 7.1.26 (error under 1.5e-7): numpy has no erf."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    out: np.ndarray = sign * (1.0 - poly * np.exp(-a * a))
    return out


def lens_blur(image: np.ndarray, cal: TableCalibration) -> Sharpness | None:
    """The lens blur the markers' edges show, or None when too few of them show clearly."""
    values, span = _profiles(image, cal)
    if len(values) == 0:
        return None
    sigmas = _fit_sigmas(values)
    ok = ~np.isnan(sigmas)
    if int(ok.sum()) < MIN_PROFILES:
        return None
    sigma_mm = float(np.median(sigmas[ok]))
    return Sharpness(sigma_mm, sigma_mm * float(np.median(span[ok])), int(ok.sum()))
