"""A glossy card's sheen over part of a band is taken off; a band evenly lit is left alone."""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.sheen import remove_sheen

PPM = 2.5
TEAL = (110.0, 80.0, 30.0)  # BGR: held-out ornate's chashu, dark and far from grey
PINK = (200.0, 150.0, 235.0)


def band(colour: tuple[float, ...]) -> np.ndarray:
    """A band 71 x 29 mm at PPM in `colour`, a dark numeral in its top-left corner."""
    img = np.empty((round(29 * PPM), round(71 * PPM), 3), np.uint8)
    img[:] = colour
    cv2.putText(img, "2", (12, 45), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (20, 20, 20), 3)
    return cv2.GaussianBlur(img.astype(np.float32), (0, 0), 0.4 * PPM)


def veiled(img: np.ndarray, veil: float, rim_mm: float = 5.0) -> np.ndarray:
    """`img` with grey light added (linear, `veil` of white) inside a rim of `rim_mm`: a glossy
    card mirroring a broad light over its middle, its curled rim not."""
    mask = np.zeros(img.shape[:2], np.float32)
    r = round(rim_mm * PPM)
    mask[r:, r:] = 1.0  # the band's top and left edges are the card's
    mask = cv2.GaussianBlur(mask, (0, 0), 0.6 * PPM)
    linear = np.power(img / 255.0, 2.2) + veil * mask[..., None]
    return (np.power(np.clip(linear, 0.0, 1.0), 1 / 2.2) * 255).astype(np.float32)


def test_a_sheen_over_the_middle_of_a_dark_band_is_taken_off():
    """Veiled by 0.3 of white, the teal's middle is 1.6-5 x lighter in its channels and a
    third as colourful (the namer read such a chashu as the light brown shiitake); taken off,
    it is the teal again within 10 of 255 in every channel, numeral and all."""
    clean = band(TEAL)
    seen = veiled(clean, 0.3)
    assert np.abs(seen[40:, 60:] - clean[40:, 60:]).mean() > 60
    out = remove_sheen(seen, PPM)
    assert out is not None
    assert np.abs(out[20:, 20:] - clean[20:, 20:]).mean(axis=(0, 1)).max() < 10


def test_a_band_evenly_lit_is_left_as_it_is():
    """No veil, or one veil over all of it (which the namer's own fit takes): nothing to do."""
    for colour in (TEAL, PINK):
        assert remove_sheen(band(colour), PPM) is None
        assert remove_sheen(veiled(band(colour), 0.3, rim_mm=0.0), PPM) is None
