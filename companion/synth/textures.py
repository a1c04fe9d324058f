"""Procedural table tops: the detector must not learn one table.

Each family is a small vectorised recipe driven by its own seed; low-frequency noise is drawn
small and resized, so a 4-megapixel table costs tens of milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np


def smooth_noise(rng: np.random.Generator, h: int, w: int, cell_px: float) -> np.ndarray:
    """Value noise in 0..1 with features about `cell_px` across, float32 (h, w)."""
    gh = max(2, int(h / max(cell_px, 1.0)) + 2)
    gw = max(2, int(w / max(cell_px, 1.0)) + 2)
    small = rng.random((gh, gw), dtype=np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _coords(h: int, w: int, ppm: float) -> tuple[np.ndarray, np.ndarray]:
    y = (np.arange(h, dtype=np.float32) / ppm)[:, None]
    x = (np.arange(w, dtype=np.float32) / ppm)[None, :]
    return x, y


def _mix(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Per-pixel blend of two BGR colours by t (h, w) -> float32 (h, w, 3)."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    return a + (b - a) * t[..., None]


def _rand_color(rng: np.random.Generator, lo: int = 30, hi: int = 230) -> np.ndarray:
    return rng.integers(lo, hi, 3).astype(np.float32)


def _wood(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    x, y = _coords(h, w, ppm)
    base = np.array(
        [[40, 75, 120], [60, 105, 160], [30, 55, 90], [90, 140, 185], [25, 40, 60]], np.float32
    )[rng.integers(5)]
    base = base * rng.uniform(0.85, 1.15)
    dark = base * rng.uniform(0.55, 0.8)
    warp = smooth_noise(rng, h, w, 60 * ppm) * rng.uniform(8, 25)
    freq = rng.uniform(0.5, 1.4)
    vertical = rng.random() < 0.3
    along = x if vertical else y
    grain = 0.5 + 0.5 * np.sin((along + warp) * freq)
    grain = grain**3
    fine = cv2.resize(
        rng.random((h, max(2, w // 40)), dtype=np.float32), (w, h), interpolation=cv2.INTER_LINEAR
    )
    if vertical:
        fine = cv2.resize(
            rng.random((max(2, h // 40), w), dtype=np.float32),
            (w, h),
            interpolation=cv2.INTER_LINEAR,
        )
    t = np.clip(0.6 * grain + 0.4 * fine, 0, 1)
    img = _mix(base, dark, t)
    # planks
    plank = rng.uniform(90, 200)
    idx = np.floor((x if vertical else y) / plank).astype(np.int32)
    shade = (1.0 + 0.12 * np.sin(idx * 12.9898 + rng.uniform(0, 6)))[..., None]
    img = img * shade
    seam = (np.abs((x if vertical else y) % plank) < 0.8).astype(np.float32)
    img = img * (1 - 0.5 * seam[..., None])
    return img


def _cloth(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    x, y = _coords(h, w, ppm)
    c = _rand_color(rng)
    period = rng.uniform(1.2, 3.0)
    weave = 0.5 + 0.25 * (np.sin(x * 2 * np.pi / period) * np.sign(np.sin(y * np.pi / period)))
    weave = weave + 0.25 * np.sin(y * 2 * np.pi / period)
    t = 0.85 + 0.15 * weave + 0.1 * (smooth_noise(rng, h, w, 40 * ppm) - 0.5)
    img = c * t[..., None]
    # soft folds
    folds = smooth_noise(rng, h, w, 150 * ppm)
    return img * (0.85 + 0.3 * folds)[..., None]


def _felt(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    c = np.array(
        [[40, 100, 30], [90, 60, 20], [30, 30, 120], [60, 60, 60], [100, 40, 70]], np.float32
    )[rng.integers(5)]
    c = c * rng.uniform(0.7, 1.4)
    t = (
        0.9
        + 0.15 * smooth_noise(rng, h, w, 80 * ppm)
        + 0.12 * (rng.random((h, w), dtype=np.float32) - 0.5)
    )
    return c * t[..., None]


def _stone(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    x, y = _coords(h, w, ppm)
    light = rng.random() < 0.6
    base = rng.uniform(170, 235, 3) if light else rng.uniform(30, 90, 3)
    base = base.astype(np.float32)
    vein = base * (0.45 if light else 1.8)
    turb = smooth_noise(rng, h, w, 120 * ppm) * 30 + smooth_noise(rng, h, w, 25 * ppm) * 6
    a = rng.uniform(0, np.pi)
    u = x * np.cos(a) + y * np.sin(a)
    v = np.abs(np.sin((u + turb) * rng.uniform(0.03, 0.08))) ** rng.uniform(6, 20)
    speck = rng.random((h, w), dtype=np.float32)
    t = np.clip(v + 0.15 * (speck > 0.97), 0, 1)
    img = _mix(np.clip(base, 0, 255), np.clip(vein, 0, 255), t)
    return img * (0.92 + 0.16 * smooth_noise(rng, h, w, 60 * ppm))[..., None]


def _checker(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    x, y = _coords(h, w, ppm)
    a, b = _rand_color(rng), _rand_color(rng, 150, 255)
    sq = rng.uniform(12, 45)
    if rng.random() < 0.5:  # gingham: stripes both ways, crossings darker
        sx = (np.floor(x / sq) % 2).astype(np.float32)
        sy = (np.floor(y / sq) % 2).astype(np.float32)
        t = (sx + sy) / 2
    else:
        t = ((np.floor(x / sq) + np.floor(y / sq)) % 2).astype(np.float32)
        t = np.broadcast_to(t, (h, w))
    img = _mix(b, a, np.ascontiguousarray(t))
    return img * (0.9 + 0.2 * smooth_noise(rng, h, w, 100 * ppm))[..., None]


def _plain(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    c = _rand_color(rng, 20, 240)
    img: np.ndarray = np.empty((h, w, 3), np.float32)
    img[:] = c
    img *= (0.93 + 0.14 * smooth_noise(rng, h, w, 200 * ppm))[..., None]
    x, y = _coords(h, w, ppm)
    for _ in range(int(rng.integers(0, 6))):  # stains: rings of cups, spills
        cx, cy = rng.uniform(0, w / ppm), rng.uniform(0, h / ppm)
        r = rng.uniform(20, 60)
        d = np.sqrt((x - cx) ** 2 + (y - cy) ** 2)
        if rng.random() < 0.5:
            m = np.exp(-(((d - r) / rng.uniform(1, 3)) ** 2))
        else:
            m = (d < r * (0.8 + 0.4 * smooth_noise(rng, h, w, 30 * ppm))).astype(np.float32) * 0.6
        img *= (1 - rng.uniform(0.1, 0.3) * m)[..., None]
    return img


def _tiles(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    x, y = _coords(h, w, ppm)
    size = rng.uniform(80, 160)
    grout = rng.uniform(2, 5)
    c = _rand_color(rng, 60, 240)
    ix = np.floor(x / size)
    iy = np.floor(y / size)
    var = 0.85 + 0.15 * np.sin(ix * 12.99 + iy * 78.23 + rng.uniform(0, 6)) ** 2
    img = c * var[..., None] * (0.95 + 0.1 * smooth_noise(rng, h, w, 20 * ppm))[..., None]
    line = ((x % size) < grout) | ((y % size) < grout)
    gc = _rand_color(rng, 40, 200)
    return np.where(line[..., None], gc, img)


def _plaid(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    x, y = _coords(h, w, ppm)
    base = _rand_color(rng)
    img: np.ndarray = np.empty((h, w, 3), np.float32)
    img[:] = base
    period = rng.uniform(40, 90)
    for _ in range(3):
        c = _rand_color(rng)
        off, width = rng.uniform(0, period), rng.uniform(3, 14)
        sx = (((x - off) % period) < width).astype(np.float32)
        sy = (((y - off) % period) < width).astype(np.float32)
        img = img * (1 - 0.5 * sx[..., None]) + c * 0.5 * sx[..., None]
        img = img * (1 - 0.5 * sy[..., None]) + c * 0.5 * sy[..., None]
    return img


def _flat(rng: np.random.Generator, h: int, w: int, ppm: float) -> np.ndarray:
    """One uniform colour (tests: a card alone on a flat background)."""
    img: np.ndarray = np.empty((h, w, 3), np.float32)
    img[:] = _rand_color(rng, 20, 60)
    return img


TEXTURES: dict[str, Callable[[np.random.Generator, int, int, float], np.ndarray]] = {
    "wood": _wood,
    "cloth": _cloth,
    "felt": _felt,
    "stone": _stone,
    "checker": _checker,
    "plain": _plain,
    "tiles": _tiles,
    "plaid": _plaid,
    "flat": _flat,
}


def table_texture(family: str, seed: int, w: int, h: int, ppm: float) -> np.ndarray:
    """A (h, w, 3) uint8 BGR table top at ppm px/mm."""
    rng = np.random.default_rng(seed)
    img = TEXTURES[family](rng, h, w, ppm)
    return np.clip(np.broadcast_to(img, (h, w, 3)), 0, 255).astype(np.uint8)
