"""Decks drawn by code the product never learned from or was tuned on (a probe, figures only).

The held-out families (`companion/deck/designs.py`) are never trained on, but they are drawn by
the same module as the training families, with the same icon generator and palette rules, and
every constant of the namer was chosen looking at decks of that module. A deck a player owns
shares none of that. These styles are drawn here, independently: numerals of their own (seven
segments; brush strokes), ingredient silhouettes of their own (an egg, a mushroom, a roll...),
their own backgrounds, and in each style two ingredients in near-identical colours.

- `segment`: full-bleed watercolour-like gradient per ingredient, a white plate in the top-left
  corner holding a slanted seven-segment numeral with the ingredient's silhouette under it,
  the same turned in the bottom-right corner, a large silhouette in the middle;
- `lettered`: one cream paper for every card, the ingredient told by a coloured frame, a
  coloured banner across the top holding a brush-stroke numeral between two silhouettes, and
  the banner turned at the bottom: colour is a thin part of the band, the icons matter;
- `kanji`: washi paper, the value as a kanji numeral (a ring for 0) in a red seal in the
  top-left corner, the same red on every card, the ingredient's silhouette in its colour
  beside it: one, two and three differ by a stroke;
- `pips`: one charcoal card for all, a top band in the ingredient's colour holding the value
  as white dots (two rows of up to four, a ring for 0) and the ingredient's silhouette.

Use them like any design by name with the foreign-deck benchmarks (`segment-1`,
`lettered-2`, ...):

    .venv/bin/python benchmarks/foreign_decks.py --families segment,lettered --seeds 1 \
        --no-default --backend ncnn --frames 15 --hard-frames 5
    .venv/bin/python benchmarks/outsider_decks.py --out runs/outsider-faces   # the faces, PNG
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.cards import ALL_CARDS, INGREDIENTS, Card  # noqa: E402
from companion.deck.deckdir import Deck  # noqa: E402

STYLES: Final[tuple[str, ...]] = ("segment", "lettered", "kanji", "pips")
PPM: Final = 10.0
W_MM, H_MM = 63.0, 88.0
BGR = tuple[int, int, int]

# seven segments: a top, b top-right, c bottom-right, d bottom, e bottom-left, f top-left, g middle
_SEGMENTS: Final = {
    0: "abcdef",
    1: "bc",
    2: "abged",
    3: "abgcd",
    4: "fgbc",
    5: "afgcd",
    6: "afgedc",
    7: "abc",
}
# brush strokes in a unit box (x 0..1 right, y 0..1 down), one list of points a stroke
_STROKES: Final[dict[int, list[list[tuple[float, float]]]]] = {
    0: [
        [
            (0.5, 0.0),
            (0.15, 0.2),
            (0.1, 0.55),
            (0.25, 0.95),
            (0.6, 1.0),
            (0.88, 0.7),
            (0.9, 0.3),
            (0.7, 0.05),
            (0.5, 0.0),
        ]
    ],
    1: [[(0.25, 0.2), (0.55, 0.0), (0.55, 1.0)], [(0.25, 1.0), (0.85, 1.0)]],
    2: [
        [
            (0.12, 0.22),
            (0.35, 0.02),
            (0.7, 0.02),
            (0.88, 0.25),
            (0.75, 0.5),
            (0.1, 1.0),
            (0.92, 1.0),
        ]
    ],
    3: [
        [
            (0.12, 0.08),
            (0.85, 0.05),
            (0.45, 0.42),
            (0.8, 0.55),
            (0.85, 0.85),
            (0.55, 1.0),
            (0.1, 0.9),
        ]
    ],
    4: [[(0.65, 1.0), (0.65, 0.0), (0.08, 0.7), (0.95, 0.7)]],
    5: [
        [
            (0.85, 0.02),
            (0.2, 0.02),
            (0.15, 0.45),
            (0.6, 0.4),
            (0.88, 0.65),
            (0.75, 0.95),
            (0.15, 0.95),
        ]
    ],
    6: [
        [
            (0.8, 0.05),
            (0.35, 0.25),
            (0.12, 0.7),
            (0.35, 1.0),
            (0.75, 0.95),
            (0.85, 0.65),
            (0.55, 0.45),
            (0.18, 0.6),
        ]
    ],
    7: [[(0.08, 0.05), (0.92, 0.05), (0.4, 1.0)], [(0.3, 0.5), (0.8, 0.5)]],
}


def _px(v: float) -> int:
    return round(v * PPM)


def _pt(x: float, y: float) -> tuple[int, int]:
    """A point in mm, as fixed-point pixels (shift 4) for anti-aliased drawing."""
    return round(x * PPM * 16), round(y * PPM * 16)


def _fill(img: np.ndarray, pts: np.ndarray, color: BGR | int) -> None:
    cv2.fillPoly(img, [np.round(pts * PPM * 16).astype(np.int32)], color, cv2.LINE_AA, shift=4)


def _ellipse(
    img: np.ndarray,
    cx: float,
    cy: float,
    rx: float,
    ry: float,
    color: BGR | int,
    angle: float = 0.0,
    start: int = 0,
    end: int = 360,
    thick: float = -1,
) -> None:
    t = -1 if thick < 0 else max(1, _px(thick))
    cv2.ellipse(img, _pt(cx, cy), _pt(rx, ry), angle, start, end, color, t, cv2.LINE_AA, shift=4)


def silhouette(
    img: np.ndarray,
    ingredient: str,
    cx: float,
    cy: float,
    s: float,
    ink: BGR | int,
    paper: BGR | int,
) -> None:
    """The ingredient drawn as a small picture `s` mm across, centred at (cx, cy) mm."""
    r = s / 2
    if ingredient == "ajitama":  # a halved egg: white rim, yolk
        _ellipse(img, cx, cy, 0.72 * r, r, ink)
        _ellipse(img, cx, cy + 0.1 * r, 0.4 * r, 0.45 * r, paper)
        _ellipse(img, cx, cy + 0.1 * r, 0.25 * r, 0.28 * r, ink)
    elif ingredient == "chashu":  # a rolled slice: rings
        _ellipse(img, cx, cy, r, 0.85 * r, ink)
        _ellipse(img, cx, cy, 0.62 * r, 0.52 * r, paper, thick=0.12 * s)
        _ellipse(img, cx, cy, 0.2 * r, 0.18 * r, paper)
    elif ingredient == "kamaboko":  # a dome with a swirl
        _ellipse(img, cx, cy + 0.35 * r, r, 1.1 * r, ink, start=180, end=360)
        _fill(
            img,
            np.array(
                [
                    [cx - r, cy + 0.35 * r],
                    [cx + r, cy + 0.35 * r],
                    [cx + r, cy + 0.6 * r],
                    [cx - r, cy + 0.6 * r],
                ]
            ),
            ink,
        )
        t = np.linspace(0, 3.5 * math.pi, 40)
        rad = 0.08 * r + 0.12 * r * t / math.pi
        pts = np.stack([cx + rad * np.cos(t), cy - 0.05 * r + 0.8 * rad * np.sin(t)], axis=1)
        cv2.polylines(
            img,
            [np.round(pts * PPM * 16).astype(np.int32)],
            False,
            paper,
            max(1, _px(0.06 * s)),
            cv2.LINE_AA,
            shift=4,
        )
    elif ingredient == "menma":  # three bamboo sticks, slanted
        for k in (-1, 0, 1):
            x = cx + k * 0.55 * r
            _fill(
                img,
                np.array(
                    [
                        [x - 0.18 * r, cy + r],
                        [x + 0.05 * r, cy - r],
                        [x + 0.3 * r, cy - r],
                        [x + 0.07 * r, cy + r],
                    ]
                ),
                ink,
            )
    elif ingredient == "negi":  # three onion rings
        for k, (dx, dy) in enumerate(((-0.45, 0.3), (0.45, 0.3), (0.0, -0.4))):
            rr = (0.5 - 0.05 * k) * r
            _ellipse(img, cx + dx * r, cy + dy * r, rr, rr, ink, thick=0.09 * s)
    elif ingredient == "nori":  # a sheet with a fold
        _fill(
            img,
            np.array(
                [
                    [cx - 0.75 * r, cy - r],
                    [cx + 0.75 * r, cy - r],
                    [cx + 0.75 * r, cy + r],
                    [cx - 0.75 * r, cy + r],
                ]
            ),
            ink,
        )
        cv2.line(
            img,
            _pt(cx - 0.75 * r, cy + 0.2 * r),
            _pt(cx + 0.75 * r, cy - 0.4 * r),
            paper,
            max(1, _px(0.05 * s)),
            cv2.LINE_AA,
            shift=4,
        )
    elif ingredient == "shiitake":  # a cap on a stem
        _ellipse(img, cx, cy, r, 0.85 * r, ink, start=180, end=360)
        _fill(
            img,
            np.array(
                [
                    [cx - 0.2 * r, cy],
                    [cx + 0.2 * r, cy],
                    [cx + 0.28 * r, cy + r],
                    [cx - 0.28 * r, cy + r],
                ]
            ),
            ink,
        )
        for dx in (-0.45, 0.0, 0.45):
            _ellipse(img, cx + dx * r, cy - 0.45 * r, 0.12 * r, 0.1 * r, paper)
    else:  # pragma: no cover - INGREDIENTS is closed
        raise ValueError(ingredient)


def seven_segment(
    img: np.ndarray, value: int, x: float, y: float, w: float, h: float, ink: BGR, slant: float
) -> None:
    """`value` as seven slanted bars in the box (x, y, w, h) mm."""
    t = 0.2 * w
    half = h / 2
    bars = {
        "a": (x, y, x + w, y),
        "d": (x, y + h, x + w, y + h),
        "g": (x, y + half, x + w, y + half),
        "f": (x, y, x, y + half),
        "b": (x + w, y, x + w, y + half),
        "e": (x, y + half, x, y + h),
        "c": (x + w, y + half, x + w, y + h),
    }
    for seg in _SEGMENTS[value]:
        x0, y0, x1, y1 = bars[seg]
        # shear: the higher, the further right
        x0 += slant * (y + h - y0)
        x1 += slant * (y + h - y1)
        v = np.array([x1 - x0, y1 - y0])
        v /= np.linalg.norm(v)
        n = np.array([-v[1], v[0]]) * t / 2
        a = np.array([x0, y0]) + v * t * 0.6
        b = np.array([x1, y1]) - v * t * 0.6
        _fill(img, np.array([a - v * t / 2, a + n, b + n, b + v * t / 2, b - n, a - n]), ink)


# kanji numerals as strokes in a unit box: 〇 一 二 三 四 五 六 七 (0 drawn as a ring)
_KANJI: Final[dict[int, list[list[tuple[float, float]]]]] = {
    1: [[(0.05, 0.5), (0.95, 0.5)]],
    2: [[(0.2, 0.25), (0.8, 0.25)], [(0.05, 0.8), (0.95, 0.8)]],
    3: [[(0.15, 0.15), (0.85, 0.15)], [(0.25, 0.5), (0.75, 0.5)], [(0.05, 0.88), (0.95, 0.88)]],
    4: [
        [(0.1, 0.1), (0.1, 0.95)],
        [(0.1, 0.1), (0.9, 0.1), (0.9, 0.95)],
        [(0.1, 0.92), (0.9, 0.92)],
        [(0.4, 0.12), (0.3, 0.62)],
        [(0.6, 0.12), (0.6, 0.55), (0.75, 0.62)],
    ],
    5: [
        [(0.15, 0.08), (0.85, 0.08)],
        [(0.45, 0.08), (0.32, 0.92)],
        [(0.2, 0.45), (0.75, 0.45), (0.72, 0.92)],
        [(0.05, 0.92), (0.95, 0.92)],
    ],
    6: [
        [(0.5, 0.02), (0.55, 0.18)],
        [(0.05, 0.3), (0.95, 0.3)],
        [(0.38, 0.5), (0.15, 0.92)],
        [(0.62, 0.5), (0.85, 0.92)],
    ],
    7: [[(0.05, 0.45), (0.95, 0.32)], [(0.42, 0.05), (0.42, 0.8), (0.55, 0.92), (0.92, 0.9)]],
}


def kanji_numeral(
    img: np.ndarray, value: int, x: float, y: float, w: float, h: float, ink: BGR, thick: float
) -> None:
    """`value` as a kanji numeral (0 as a ring) in the box (x, y, w, h) mm."""
    if value == 0:
        _ellipse(img, x + w / 2, y + h / 2, w * 0.4, h * 0.4, ink, thick=thick)
        return
    _strokes(img, _KANJI[value], x, y, w, h, ink, thick)


def pip_count(img: np.ndarray, value: int, x: float, y: float, pitch: float, ink: BGR) -> None:
    """`value` as dots, two rows of up to four from (x, y) mm; 0 as an empty ring."""
    r = pitch * 0.32
    if value == 0:
        _ellipse(img, x + r, y + r, r, r, ink, thick=0.5)
        return
    for k in range(value):
        row, col = divmod(k, 4)
        _ellipse(img, x + r + col * pitch, y + r + row * pitch, r, r, ink)


def brush_numeral(
    img: np.ndarray, value: int, x: float, y: float, w: float, h: float, ink: BGR, thick: float
) -> None:
    """`value` as brush strokes in the box (x, y, w, h) mm."""
    _strokes(img, _STROKES[value], x, y, w, h, ink, thick)


def _strokes(
    img: np.ndarray,
    strokes: list[list[tuple[float, float]]],
    x: float,
    y: float,
    w: float,
    h: float,
    ink: BGR,
    thick: float,
) -> None:
    """Unit-box strokes drawn in the box (x, y, w, h) mm, `thick` mm wide."""
    for stroke in strokes:
        pts = np.array([[x + u * w, y + v * h] for u, v in stroke])
        cv2.polylines(
            img,
            [np.round(pts * PPM * 16).astype(np.int32)],
            False,
            ink,
            max(1, _px(thick)),
            cv2.LINE_AA,
            shift=4,
        )


def _palette(
    rng: np.random.Generator, s_range: tuple[float, float], v_range: tuple[float, float]
) -> dict[str, BGR]:
    """One colour per ingredient, hues spread round the wheel, and two of them near-identical."""
    hues = (rng.uniform(0, 180) + np.arange(7) * 180 / 7 + rng.uniform(-6, 6, 7)) % 180
    rng.shuffle(hues)
    a, b = rng.choice(7, 2, replace=False)
    hues[b] = (hues[a] + rng.uniform(5, 9)) % 180
    out: dict[str, BGR] = {}
    for ing, h in zip(INGREDIENTS, hues, strict=True):
        hsv = np.array([[[h, rng.uniform(*s_range) * 255, rng.uniform(*v_range) * 255]]], np.uint8)
        b_, g_, r_ = (int(c) for c in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])
        out[ing] = (b_, g_, r_)
    return out


def _shade(c: BGR, k: float) -> BGR:
    return tuple(int(np.clip(v * k, 0, 255)) for v in c)  # type: ignore[return-value]


def _watercolour(rng: np.random.Generator, color: BGR) -> np.ndarray:
    """A light-to-dark gradient of `color` with soft blotches, the whole face."""
    h, w = _px(H_MM), _px(W_MM)
    ramp = np.linspace(1.15, 0.85, h, dtype=np.float32)[:, None, None]
    noise = cv2.resize(
        rng.normal(0, 1, (6, 5)).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC
    )[..., None]
    img = np.array(color, np.float32)[None, None] * ramp * (1 + 0.06 * noise)
    return np.clip(img, 0, 255).astype(np.uint8)


def _corner_turned(img: np.ndarray, draw: Callable[[np.ndarray, np.ndarray], None]) -> None:
    """What `draw(layer, mask)` draws, laid on `img` at the top left and again turned half
    round at the bottom right."""
    layer = np.zeros_like(img)
    mask = np.zeros(img.shape[:2], np.uint8)
    draw(layer, mask)
    turned, tmask = cv2.rotate(layer, cv2.ROTATE_180), cv2.rotate(mask, cv2.ROTATE_180)
    for lay, m in ((layer, mask), (turned, tmask)):
        a = (m.astype(np.float32) / 255)[..., None]
        img[:] = np.clip(img * (1 - a) + lay * a, 0, 255).astype(np.uint8)


def _segment_face(
    rng: np.random.Generator, card: Card, colors: dict[str, BGR], slant: float
) -> np.ndarray:
    col = colors[card.ingredient]
    img = _watercolour(rng, col)
    ink = _shade(col, 0.45)
    white: BGR = (245, 248, 250)

    def index(layer: np.ndarray, mask: np.ndarray) -> None:
        for target, c_plate in ((layer, white), (mask, 255)):
            cv2.rectangle(target, _pt(3, 3), _pt(18, 28), c_plate, -1, cv2.LINE_AA, shift=4)
        seven_segment(layer, card.value, 6.0, 5.5, 7.5, 12.0, ink, slant)
        silhouette(layer, card.ingredient, 10.5, 23.0, 7.0, ink, white)

    _corner_turned(img, index)
    # the middle: the ingredient large, in white with a dark halo
    silhouette(img, card.ingredient, W_MM / 2 + 1, H_MM / 2, 30.0, _shade(col, 0.6), col)
    silhouette(img, card.ingredient, W_MM / 2, H_MM / 2 - 1, 30.0, white, col)
    return img


def _lettered_face(
    rng: np.random.Generator, card: Card, colors: dict[str, BGR], paper: BGR, thick: float
) -> np.ndarray:
    col = colors[card.ingredient]
    img = np.empty((_px(H_MM), _px(W_MM), 3), np.uint8)
    img[:] = paper
    grain = rng.normal(0, 3, img.shape[:2]).astype(np.float32)[..., None]
    img[:] = np.clip(img + grain, 0, 255).astype(np.uint8)
    cv2.rectangle(
        img, _pt(1.5, 1.5), _pt(W_MM - 1.5, H_MM - 1.5), col, _px(1.6), cv2.LINE_AA, shift=4
    )
    light: BGR = (250, 250, 250)

    def banner(layer: np.ndarray, mask: np.ndarray) -> None:
        for target, c in ((layer, col), (mask, 255)):
            cv2.rectangle(target, _pt(5, 4), _pt(W_MM - 5, 20), c, -1, cv2.LINE_AA, shift=4)
        brush_numeral(layer, card.value, W_MM / 2 - 4.5, 6.0, 9.0, 12.0, light, thick)
        for cx in (13.0, W_MM - 13.0):
            silhouette(layer, card.ingredient, cx, 12.0, 10.0, light, col)

    _corner_turned(img, banner)
    silhouette(img, card.ingredient, W_MM / 2, H_MM / 2, 24.0, col, paper)
    return img


def _kanji_face(
    rng: np.random.Generator, card: Card, colors: dict[str, BGR], paper: BGR, thick: float
) -> np.ndarray:
    """Washi paper, a red seal-like square at the top left holding the kanji numeral in
    paper colour, the ingredient's silhouette in its colour beside it, a brushed band of the
    ingredient's colour down the middle; turned at the bottom right."""
    col = colors[card.ingredient]
    img = np.empty((_px(H_MM), _px(W_MM), 3), np.uint8)
    img[:] = paper
    fibres = cv2.GaussianBlur(rng.normal(0, 6, img.shape[:2]).astype(np.float32), (0, 0), 2)
    img[:] = np.clip(img + fibres[..., None], 0, 255).astype(np.uint8)
    seal: BGR = (40, 40, 180)

    def index(layer: np.ndarray, mask: np.ndarray) -> None:
        for target, c in ((layer, seal), (mask, 255)):
            cv2.rectangle(target, _pt(3, 3), _pt(15, 15), c, -1, cv2.LINE_AA, shift=4)
        kanji_numeral(layer, card.value, 4.5, 4.5, 9.0, 9.0, paper, thick)
        for target, c in ((layer, col), (mask, 255)):
            silhouette(target, card.ingredient, 22.0, 9.0, 10.0, c, c)

    _corner_turned(img, index)
    cv2.rectangle(
        img, _pt(W_MM / 2 - 9, 20), _pt(W_MM / 2 + 9, H_MM - 20), col, -1, cv2.LINE_AA, shift=4
    )
    silhouette(img, card.ingredient, W_MM / 2, H_MM / 2, 14.0, paper, col)
    return img


def _pips_face(rng: np.random.Generator, card: Card, colors: dict[str, BGR]) -> np.ndarray:
    """A charcoal card for every ingredient: its colour as a wide top band holding the value
    as white pips and the ingredient's silhouette at the right; turned at the bottom."""
    col = colors[card.ingredient]
    img = np.empty((_px(H_MM), _px(W_MM), 3), np.uint8)
    img[:] = (48, 44, 40)
    white: BGR = (240, 240, 240)

    def band(layer: np.ndarray, mask: np.ndarray) -> None:
        for target, c in ((layer, col), (mask, 255)):
            cv2.rectangle(target, _pt(2.5, 2.5), _pt(W_MM - 2.5, 16), c, -1, cv2.LINE_AA, shift=4)
        pip_count(layer, card.value, 6.0, 4.5, 5.0, white)
        silhouette(layer, card.ingredient, W_MM - 12.0, 9.2, 10.0, white, col)

    _corner_turned(img, band)
    silhouette(img, card.ingredient, W_MM / 2, H_MM / 2, 26.0, col, (48, 44, 40))
    return img


@lru_cache(maxsize=8)
def outsider_deck(style: str, seed: int) -> Deck:
    """The deck of one outsider style and seed."""
    if style not in STYLES:
        raise ValueError(f"unknown outsider style {style!r}: one of {', '.join(STYLES)}")
    rng = np.random.default_rng([STYLES.index(style), seed, 4242])
    faces: dict[str, np.ndarray] = {}
    if style == "segment":
        colors = _palette(rng, (0.35, 0.75), (0.6, 0.95))
        slant = float(rng.uniform(0.05, 0.18))
        for c in ALL_CARDS:
            faces[c.id] = _segment_face(rng, c, colors, slant)
    elif style == "kanji":
        colors = _palette(rng, (0.45, 0.8), (0.45, 0.8))
        paper = tuple(int(v) for v in rng.uniform(215, 240, 3))
        thick = float(rng.uniform(1.0, 1.4))
        for c in ALL_CARDS:
            faces[c.id] = _kanji_face(rng, c, colors, paper, thick)  # type: ignore[arg-type]
    elif style == "pips":
        colors = _palette(rng, (0.5, 0.85), (0.5, 0.9))
        for c in ALL_CARDS:
            faces[c.id] = _pips_face(rng, c, colors)
    else:
        colors = _palette(rng, (0.55, 0.9), (0.45, 0.8))
        paper = tuple(int(v) for v in rng.uniform(225, 245, 3))
        thick = float(rng.uniform(1.4, 2.0))
        for c in ALL_CARDS:
            faces[c.id] = _lettered_face(rng, c, colors, paper, thick)  # type: ignore[arg-type]
    back = np.full((_px(H_MM), _px(W_MM), 3), (60, 40, 90), np.uint8)
    cv2.rectangle(back, (_px(4), _px(4)), (_px(W_MM - 4), _px(H_MM - 4)), (200, 200, 220), 3)
    return Deck(
        name=f"{style}-{seed}",
        faces=faces,
        back=back,
        px_per_mm=PPM,
        meta={"source": "benchmarks.outsider_decks", "family": style, "seed": seed},
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--styles", default=",".join(STYLES), help="comma-separated styles")
    ap.add_argument("--seeds", default="1", help="comma-separated seeds")
    ap.add_argument("--out", type=Path, required=True, help="folder for the faces (PNG)")
    args = ap.parse_args(argv)
    for style in args.styles.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            deck = outsider_deck(style, seed)
            folder = args.out / deck.name
            folder.mkdir(parents=True, exist_ok=True)
            for cid, face in deck.faces.items():
                cv2.imwrite(str(folder / f"{cid}.png"), face)
            sheet = np.vstack(
                [np.hstack([deck.faces[Card(i, v).id] for v in range(8)]) for i in INGREDIENTS]
            )
            cv2.imwrite(
                str(args.out / f"{deck.name}-sheet.jpg"), cv2.resize(sheet, None, fx=0.25, fy=0.25)
            )
            print(f"{deck.name}: {len(deck.faces)} faces in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
