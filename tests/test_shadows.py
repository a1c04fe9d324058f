"""A hand's shadow over part of a band is lifted; print, however dark, is not."""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.shadows import FLOOR, lift_shadows

PPM = 2.5
LIGHT_BROWN = (60.0, 120.0, 190.0)  # BGR
DARK_BROWN = (30.0, 60.0, 95.0)  # the same hue at half the lightness


def band(left: tuple[float, ...], right: tuple[float, ...], split_mm: float = 30.0) -> np.ndarray:
    """A band 71 x 29 mm at PPM: `left` colour up to `split_mm`, `right` beyond, a dark
    numeral in the top-left corner."""
    h, w = round(29 * PPM), round(71 * PPM)
    img = np.empty((h, w, 3), np.uint8)
    cut = round(split_mm * PPM)
    img[:, :cut] = left
    img[:, cut:] = right
    cv2.putText(img, "2", (12, 45), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (20, 20, 20), 3)
    return cv2.GaussianBlur(img.astype(np.float32), (0, 0), 0.4 * PPM)


def shaded(img: np.ndarray, from_mm: float, light: float, soft_mm: float = 3.5) -> np.ndarray:
    """`img` in a soft shadow (`light` of the light left) from `from_mm` rightwards: as soft
    as a forearm's over held-out ornate-1 frame 1 (log lightness at most 0.26 a mm)."""
    x = np.arange(img.shape[1]) / PPM
    ramp = 1.0 / (1.0 + np.exp(-(x - from_mm) / (soft_mm / 4)))
    return img * (1.0 - (1.0 - light) * ramp)[None, :, None].astype(np.float32)


def test_a_soft_shadow_over_part_of_a_flat_band_is_lifted_to_the_lit_colour():
    flat = band(LIGHT_BROWN, LIGHT_BROWN)
    lifted = lift_shadows(shaded(flat, 25.0, 0.4), PPM)
    assert lifted is not None
    # the shaded end was 2.5 x darker; lifted, it is within the lamp's gradient of the lit
    shaded_end = lifted[20:50, 120:170].mean(axis=(0, 1))
    lit_end = flat[20:50, 120:170].mean(axis=(0, 1))
    assert np.all(np.abs(np.log(shaded_end / lit_end)) < 0.15), (shaded_end, lit_end)


def lifted_by(img: np.ndarray) -> np.ndarray:
    """How much each pixel was brightened (log)."""
    lifted = lift_shadows(img, PPM)
    return np.zeros(img.shape[:2]) if lifted is None else np.log(lifted.sum(2) / img.sum(2))


def test_a_dark_brown_beside_a_light_one_is_print_not_a_shadow():
    """Two browns of one hue, edge to edge (a cascade of a design whose nori and shiitake
    differ by lightness): lifting the dark one to the light one's lightness would read a
    shiitake as a nori. Its colour stays within 3 %."""
    assert np.abs(lifted_by(band(LIGHT_BROWN, DARK_BROWN))[:, 80:]).max() < 0.03


def test_a_band_in_even_light_is_left_as_it_is():
    """A flat band, lit evenly or shaded all over (one exposure fits that): no part of it is
    brightened as a shadow would be (the print's edges may move it a little)."""
    for img in (
        band(LIGHT_BROWN, LIGHT_BROWN),
        shaded(band(LIGHT_BROWN, LIGHT_BROWN), -40.0, 0.4),
    ):
        by = lifted_by(img)
        assert by.max() < FLOOR and abs(by.mean()) < 0.01, (by.max(), by.mean())
