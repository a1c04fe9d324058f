"""Views of a card's top band as the camera gives them, drawn from a deck's faces.

The band embedding learns to match what the namer crops out of a table frame with what
enrolment gives it, on decks of many generated designs. Rendering whole table scenes for every
training view would cost ~0.3 s a frame; a band seen by the camera is one card edge, whatever
lies above and below it, light, blur and the camera's resampling, so it is drawn here directly
and randomised well beyond the kit's renderer (casts, glare, hands, sloppy cascades, other
camera resolutions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from companion.cards import CARD_IDS
from companion.deck.deckdir import Deck
from companion.layout import CARD_W_MM
from companion.vision.band_embedding import EMBED_H, EMBED_W, TOP_MM
from companion.vision.band_naming import face_ends

SRC_PPM: Final = 5.0
"""Resolution the pool keeps bands at: twice the embedding's, so resampling is simulated."""
SRC_MM: Final = 24.0
"""How much of each end of a face the pool keeps (the top 12 mm, jitter and the card below)."""
MARGIN_MM: Final = 4.0
"""Context drawn around the card on every side."""


@dataclass(frozen=True)
class DeckBands:
    """One deck's ends, (112, SRC_MM*SRC_PPM, 63*SRC_PPM, 3) uint8: [end * 56 + card], end 0
    the top of the face, end 1 the bottom turned."""

    name: str
    ends: np.ndarray


def deck_bands(deck: Deck) -> DeckBands:
    size = (round(CARD_W_MM * SRC_PPM), round(SRC_MM * SRC_PPM))
    ends = [face_ends(deck.face(cid), SRC_MM, size) for cid in CARD_IDS]
    return DeckBands(deck.name, np.stack([t for t, _ in ends] + [b for _, b in ends]))


def _px(mm: float) -> int:
    return round(mm * SRC_PPM)


def _cloth(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    colour = rng.uniform(20, 200, 3)
    img = np.empty((h, w, 3), np.float32)
    img[:] = colour
    noise = rng.normal(0, rng.uniform(2, 12), (h // 4 + 1, w // 4 + 1, 1)).astype(np.float32)
    img += cv2.resize(noise, (w, h))[..., None]
    return img


def _soft_blob(rng: np.random.Generator, h: int, w: int, max_frac: float) -> np.ndarray:
    """A soft elliptical mask 0..1 covering at most about max_frac of the area."""
    mask = np.zeros((h, w), np.float32)
    cx, cy = rng.uniform(0, w), rng.uniform(-0.2 * h, 1.2 * h)
    ax = rng.uniform(0.1, math.sqrt(max_frac)) * w
    ay = rng.uniform(0.3, 1.2) * h
    cv2.ellipse(mask, (int(cx), int(cy)), (int(ax), int(ay)), rng.uniform(0, 180), 0, 360, 1.0, -1)
    return cv2.GaussianBlur(mask, (0, 0), max(1.0, rng.uniform(0.05, 0.3) * h))


def camera_view(
    bands: DeckBands, index: int, rng: np.random.Generator, hard: float = 0.5
) -> np.ndarray:
    """The top TOP_MM of end `index` as the namer crops it from a frame: (EMBED_H, EMBED_W, 3)
    float32 BGR 0..255 (white balanced the way the frame's markers allow, so a residual cast)."""
    src = bands.ends
    m = _px(MARGIN_MM)
    bh, bw = src.shape[1:3]
    canvas_h, canvas_w = bh + 2 * m, bw + 2 * m
    # above and beside the card: the card under it in a cascade, or the cloth
    if rng.random() < 0.5:
        canvas = _cloth(rng, canvas_h, canvas_w)
    else:
        other = src[rng.integers(len(src))].astype(np.float32)
        canvas = cv2.resize(other, (canvas_w, canvas_h))
        if rng.random() < 0.5:
            canvas = canvas[::-1].copy()
    canvas[m : m + bh, m : m + bw] = src[index]
    # the next card of a cascade lies over the lower part, with its shadow
    if rng.random() < 0.6:
        y = m + _px(rng.uniform(TOP_MM, SRC_MM))
        over = src[rng.integers(len(src))].astype(np.float32)
        dx = _px(rng.uniform(-3, 3))
        shade = np.ones((canvas_h, 1, 1), np.float32)
        sh = _px(rng.uniform(0.5, 2.5))
        shade[max(0, y - sh) : y] = rng.uniform(0.6, 0.95)
        canvas *= shade
        x0 = max(0, m + dx)
        x1 = min(canvas_w, m + dx + bw)
        rows = canvas_h - y
        if rows > 0:
            canvas[y:, x0:x1] = over[:rows, x0 - (m + dx) : x1 - (m + dx)]
    # light: exposure, a gradient across the band, a residual colour cast
    exposure = rng.uniform(0.6, 1.3) if rng.random() < hard else rng.uniform(0.85, 1.1)
    cast = rng.uniform(0.82, 1.18, 3) if rng.random() < hard else rng.uniform(0.95, 1.05, 3)
    gx = np.linspace(-1, 1, canvas_w, dtype=np.float32)[None, :, None] * rng.uniform(-0.25, 0.25)
    gy = np.linspace(-1, 1, canvas_h, dtype=np.float32)[:, None, None] * rng.uniform(-0.15, 0.15)
    canvas *= exposure * (1 + gx + gy) * cast.astype(np.float32)
    if rng.random() < 0.3 * hard * 2:  # glare: washes a patch towards white
        mask = _soft_blob(rng, canvas_h, canvas_w, 0.35)[..., None] * rng.uniform(0.3, 0.8)
        canvas = canvas * (1 - mask) + 255.0 * mask
    if rng.random() < 0.2 * hard * 2:  # a hand or a sleeve over part of it
        mask = _soft_blob(rng, canvas_h, canvas_w, 0.2)[..., None]
        skin = np.array(rng.uniform([60, 90, 140], [150, 170, 230]), np.float32)
        if rng.random() < 0.3:
            skin = rng.uniform(20, 220, 3).astype(np.float32)
        mask = np.minimum(mask * 3.0, 1.0)
        canvas = canvas * (1 - mask) + skin * mask
    if rng.random() < 0.2 * hard * 2:  # a shadow
        mask = _soft_blob(rng, canvas_h, canvas_w, 0.5)[..., None] * rng.uniform(0.2, 0.6)
        canvas = canvas * (1 - mask)
    # where the namer thinks the band is: a little off in place, angle and scale
    ang = rng.normal(0, 1.0)
    scale = rng.uniform(0.97, 1.03)
    off_x = rng.uniform(-1.2, 1.2) * SRC_PPM
    off_y = rng.uniform(-1.0, 1.0) * SRC_PPM
    cx, cy = m + bw / 2, m + _px(TOP_MM) / 2
    rot = cv2.getRotationMatrix2D((cx, cy), ang, scale)
    rot[0, 2] += bw / 2 - cx + off_x
    rot[1, 2] += _px(TOP_MM) / 2 - cy + off_y
    view = cv2.warpAffine(
        canvas, rot, (bw, _px(TOP_MM)), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    # the camera: its resolution on the table, lens blur, noise, JPEG, then the namer's warp
    cam_ppm = rng.uniform(2.2, 5.0)
    cw, ch = max(8, round(bw * cam_ppm / SRC_PPM)), max(4, round(view.shape[0] * cam_ppm / SRC_PPM))
    cam = cv2.resize(view, (cw, ch), interpolation=cv2.INTER_AREA)
    sigma = rng.uniform(0.2, 1.3) if rng.random() < hard else rng.uniform(0.2, 0.7)
    cam = cv2.GaussianBlur(cam, (0, 0), sigma)
    cam += np.asarray(rng.normal(0, rng.uniform(0, 6), cam.shape), np.float32)
    cam8: np.ndarray = np.clip(cam, 0, 255).astype(np.uint8)
    ok, jpg = cv2.imencode(".jpg", cam8, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(55, 96))])
    decoded = cv2.imdecode(jpg, cv2.IMREAD_COLOR) if ok else None
    if decoded is not None:
        cam8 = decoded
    out = cv2.resize(cam8, (EMBED_W, EMBED_H), interpolation=cv2.INTER_LINEAR)
    return out.astype(np.float32)


def enrolled_view(bands: DeckBands, index: int, rng: np.random.Generator) -> np.ndarray:
    """The reference for end `index` as enrolment gives it: the face itself or a phone photo of
    it (paper-white balanced), top TOP_MM at the embedding's resolution."""
    src: np.ndarray = bands.ends[index, : _px(TOP_MM)].astype(np.float32)
    if rng.random() < 0.5:
        h, w = src.shape[:2]
        cast = rng.uniform(0.94, 1.06, 3).astype(np.float32)
        g = np.linspace(-1, 1, w, dtype=np.float32)[None, :, None] * rng.uniform(-0.1, 0.1)
        src = src * cast * (1 + g) * rng.uniform(0.9, 1.05)
        ppm = rng.uniform(3.0, 5.0)
        small = cv2.resize(src, (round(w * ppm / SRC_PPM), round(h * ppm / SRC_PPM)))
        small = cv2.GaussianBlur(small, (0, 0), rng.uniform(0.3, 0.8))
        src = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    out = cv2.resize(np.clip(src, 0, 255), (EMBED_W, EMBED_H), interpolation=cv2.INTER_AREA)
    return out.astype(np.float32)


def reference_views(bands: DeckBands) -> np.ndarray:
    """The 112 references exactly as the namer builds them from a deck (no randomness)."""
    out = []
    for end in bands.ends:
        src = end[: _px(TOP_MM)]
        out.append(
            cv2.resize(src, (EMBED_W, EMBED_H), interpolation=cv2.INTER_AREA).astype(np.float32)
        )
    return np.stack(out)
