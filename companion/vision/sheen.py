"""Take a glossy card's sheen off part of a band, so the band reads in its own colour.

A glossy card mirrors a broad light over most of its face, while its curled rim mirrors the
darker room: the middle of the card is veiled in grey light, its rim is not. A band crossing
that edge fits one veil (`band_naming._sheen`) nowhere, and a veiled dark colour looks like a
lighter one (path-traced ornate-1 plain frame 1: a chashu-0 whose teal band is veiled inside
a rim of about 5 mm read shiitake-0 at a score of 0.33; the same sheen cost all 9 of that
deck's misses on plain path-traced frames).

Mirrored light adds to what the print reflects, in every channel alike and in linear light.
So the veil over a pixel is what its darkest channel gains over the band's unveiled parts:
the darkest channel (linear), closed over CLOSE_MM so a numeral's strokes do not count as
unveiled paper, less its value where the patch is least veiled (LOW_PERCENTILE). This trusts
the print's darkest channel to be even over the band, as it is on a full-bleed colour; where
it is not (a white ribbon on a dark band), the veil found is wrong, and the namer keeps a
band read so only when it fits far better (`band_naming.LIFT_GAIN`).
"""

from __future__ import annotations

from typing import Final

import cv2
import numpy as np

GAMMA: Final = 2.2
"""The camera's encoding: the veil adds in linear light."""
CLOSE_MM: Final = 2.0
"""Dark marks narrower than this (a numeral's 1-1.5 mm strokes, an icon's lines) are print on
the paper around them, not a part of the band the sheen left out. Not wider: a rim of 3-4 mm
between a veiled middle and the card laid above was closed over at 3 mm, taken off as if
veiled, and the numeral's top lost with it (tests/test_glossy_bands.py with a 4 mm rim: 2 of
12 read with the wrong value at 3 mm, none at 2)."""
LOW_PERCENTILE: Final = 5.0
"""The patch's least veiled light: this percentile of the closed darkest channel."""
FLOOR: Final = 0.04
"""A veil under this (linear, of 1) anywhere in the patch is none: the namer's own fit of one
veil over the band takes it."""


def remove_sheen(patch: np.ndarray, ppm: float) -> np.ndarray | None:
    """`patch` (BGR float32 0..255, white-balanced, `ppm` pixels a mm) with the sheen over part
    of it taken off; None when no part of it is veiled more than FLOOR over the rest."""
    linear = np.power(np.clip(patch, 0.0, 255.0) * np.float32(1 / 255), GAMMA).astype(np.float32)
    size = max(3, round(CLOSE_MM * ppm) | 1)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    paper = cv2.medianBlur(cv2.morphologyEx(linear.min(axis=2), cv2.MORPH_CLOSE, kernel), 3)
    veil = np.maximum(paper - np.float32(np.percentile(paper, LOW_PERCENTILE)), 0.0)
    if float(veil.max()) < FLOOR:
        return None
    unveiled = np.clip(linear - veil[..., None], 0.0, 1.0)
    return (np.power(unveiled, 1 / GAMMA) * 255).astype(np.float32)
