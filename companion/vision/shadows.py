"""Lift a hand's shadow off part of a band, so the band reads as in the light.

A hand or an arm over the table casts a soft shadow that often falls over part of a band: the
lit part shows the card's colour, the shaded part the same hue up to three times darker. One
exposure for the whole band (`band_naming._colour_distance`) fits neither part, and the
shadow's edge outweighs the band's own outlines, so a light brown half in shadow reads as the
dark brown (held-out ornate-1 plain frame 1: a nori-2 whose band is 80 % in a forearm's shadow
read as shiitake-0 at a fit of 0.09, upside down).

Print changes lightness at once, at an ink's edge; a shadow's edge is soft. So the light over
the patch is what its gentle changes of (log) lightness add up to (Retinex): the lightness's
gradient where it is under EDGE_SLOPE_MM, integrated (a Poisson equation, solved by the cosine
transform). Where that light is more than FLOOR under the patch's brightest light, the pixel is
lifted to it. Colour alone cannot tell a shadow: the two browns of a design often share a hue
and differ in lightness, and a dark brown lifted to its light neighbour's lightness reads as
the light brown.
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

EDGE_SLOPE_MM: Final = 0.3
"""Change of log lightness per mm above which it is print or a card's edge, not light: the
forearm's shadow over held-out ornate-1 frame 1's nori-2 changes it by at most 0.26 a mm, the
edge between that design's two browns (tests/test_shadowed_bands.py) by 0.35, a numeral's by
1.2-1.5 (measured on the namer's patches, 2.5 px a mm). A narrow gap: tests/test_shadows.py
holds for bounds of 0.27-0.33 only (the two shadowed scenes read alike for 0.22-0.37)."""
FLOOR: Final = 0.12
"""Light this far (log) under the brightest in the patch is left as it is: a lamp's gradient,
which one exposure already fits."""
LIGHT_TOP: Final = 99.0
"""The patch's brightest light: this percentile of it (a noisy pixel is not the light)."""
DARK: Final = 20.0
"""Lightness (of 255) below which a pixel's log is noise: floored there."""


def lift_shadows(patch: np.ndarray, ppm: float) -> np.ndarray | None:
    """`patch` (BGR float32, white-balanced, `ppm` pixels a mm) with the shadows over part of
    it lifted; None when no part of it is more than FLOOR under the light of the rest."""
    lum = patch.astype(np.float32).mean(axis=2)
    light = _light(np.log(np.maximum(lum, DARK)), EDGE_SLOPE_MM / ppm)
    shade = light - float(np.percentile(light, LIGHT_TOP))
    if float(shade.min()) > -FLOOR:
        return None
    shade = np.minimum(shade + FLOOR, 0.0)  # what the light's own gradient accounts for stays
    return (patch * np.exp(-shade)[..., None]).astype(np.float32)


def _light(log_lum: np.ndarray, edge: float) -> np.ndarray:
    """The smooth part of `log_lum`: its gradients under `edge` a pixel integrated, with no
    flow through the patch's sides (up to a constant)."""
    h, w = log_lum.shape
    # the cosine transform wants even sides: the last row / column repeated
    f = np.asarray(cv2.copyMakeBorder(log_lum, 0, h % 2, 0, w % 2, cv2.BORDER_REPLICATE))
    gx = np.zeros(f.shape, np.float32)
    gy = np.zeros(f.shape, np.float32)
    gx[:, :-1] = np.diff(f, axis=1)
    gy[:-1, :] = np.diff(f, axis=0)
    gx[np.abs(gx) > edge] = 0.0
    gy[np.abs(gy) > edge] = 0.0
    # the divergence of what is left (backward differences of the forward ones)
    div = gx - np.pad(gx[:, :-1], ((0, 0), (1, 0))) + gy - np.pad(gy[:-1, :], ((1, 0), (0, 0)))
    hh, ww = f.shape
    u = np.cos(np.pi * np.arange(ww) / ww)
    v = np.cos(np.pi * np.arange(hh) / hh)
    eig = (2 * u[None, :] - 2) + (2 * v[:, None] - 2)
    eig[0, 0] = 1.0
    spectrum = cv2.dct(div.astype(np.float32)) / eig.astype(np.float32)
    spectrum[0, 0] = 0.0
    return cv2.idct(spectrum)[:h, :w]
