"""The default deck, drawn by code at print resolution.

Recognition convention: the top 16 mm of every face (the index strip) carries all a camera needs,
because that strip is what stays visible when cards are cascaded in a bowl (layout.py). The strip
is the ingredient's colour with, left to right, a large black value numeral on white, the
ingredient's glyph, and the value again as black pips on white (redundant with the numeral, so a
blurred digit is still readable). The same strip, turned 180 degrees, closes the bottom of the
face, so a card laid upside down still shows it.

Colours are the Okabe-Ito palette (distinct for the common colour-blindnesses), and every
ingredient also has its own glyph shape so that colour is never the only cue (warm light pulls
yellow, orange and vermillion together).
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import cv2
import numpy as np

from companion.cards import ALL_CARDS, Card
from companion.deck.palette import INGREDIENT_COLORS, INGREDIENT_LABELS
from companion.layout import CARD_CORNER_MM, CARD_H_MM, CARD_W_MM, INDEX_STRIP_MM

PRINT_PX_PER_MM: Final = 12.0
"""305 dpi: above the 300 dpi print shops ask for."""

PAPER: Final = (232, 241, 246)  # warm white, BGR
INK: Final = (25, 25, 25)
WHITE: Final = (255, 255, 255)
_FONT: Final = cv2.FONT_HERSHEY_DUPLEX


def _pt(x_mm: float, y_mm: float, ppm: float) -> tuple[int, int]:
    return (round(x_mm * ppm), round(y_mm * ppm))


def _rounded_rect(
    img: np.ndarray,
    x0: float,
    y0: float,
    x1: float,
    y1: float,
    r: float,
    color: tuple[int, int, int] | int,
    ppm: float,
) -> None:
    """Filled rounded rectangle, corners in mm (color a BGR triple, or a grey level)."""
    rr = max(1, round(r * ppm))
    a, b = _pt(x0, y0, ppm), _pt(x1, y1, ppm)
    cv2.rectangle(img, (a[0] + rr, a[1]), (b[0] - rr, b[1]), color, -1, cv2.LINE_AA)
    cv2.rectangle(img, (a[0], a[1] + rr), (b[0], b[1] - rr), color, -1, cv2.LINE_AA)
    for cx, cy in (
        (a[0] + rr, a[1] + rr),
        (b[0] - rr, a[1] + rr),
        (a[0] + rr, b[1] - rr),
        (b[0] - rr, b[1] - rr),
    ):
        cv2.circle(img, (cx, cy), rr, color, -1, cv2.LINE_AA)


def draw_glyph(
    img: np.ndarray, ingredient: str, cx: float, cy: float, size: float, color, ppm: float
) -> None:
    """The ingredient's shape, centred at (cx, cy) mm, about `size` mm across."""
    c = _pt(cx, cy, ppm)
    r = size / 2
    rp = max(1, round(r * ppm))
    thick = max(1, round(size * 0.16 * ppm))
    if ingredient == "ajitama":  # egg: disc with a dark yolk (never a hollow ring like negi)
        cv2.circle(img, c, rp, color, -1, cv2.LINE_AA)
        cv2.circle(img, c, max(1, round(rp * 0.45)), INK, -1, cv2.LINE_AA)
    elif ingredient == "chashu":  # square slice
        h = r * 0.85
        cv2.rectangle(img, _pt(cx - h, cy - h, ppm), _pt(cx + h, cy + h, ppm), color, -1)
    elif ingredient == "kamaboko":  # half disc
        cv2.ellipse(img, _pt(cx, cy + r * 0.45, ppm), (rp, rp), 0, 180, 360, color, -1, cv2.LINE_AA)
    elif ingredient == "menma":  # three bamboo bars
        w = size * 0.18
        for dx in (-0.34 * size, 0.0, 0.34 * size):
            cv2.rectangle(
                img, _pt(cx + dx - w / 2, cy - r, ppm), _pt(cx + dx + w / 2, cy + r, ppm), color, -1
            )
    elif ingredient == "negi":  # ring (a slice of green onion)
        cv2.circle(img, c, rp - thick // 2, color, thick, cv2.LINE_AA)
    elif ingredient == "nori":  # diamond
        pts = np.array(
            [
                _pt(cx, cy - r, ppm),
                _pt(cx + r, cy, ppm),
                _pt(cx, cy + r, ppm),
                _pt(cx - r, cy, ppm),
            ],
            np.int32,
        )
        cv2.fillPoly(img, [pts], color, cv2.LINE_AA)
    elif ingredient == "shiitake":  # triangle (mushroom cap)
        pts = np.array(
            [_pt(cx, cy - r, ppm), _pt(cx + r, cy + r * 0.8, ppm), _pt(cx - r, cy + r * 0.8, ppm)],
            np.int32,
        )
        cv2.fillPoly(img, [pts], color, cv2.LINE_AA)
    else:
        raise ValueError(ingredient)


def _put_text_fit(
    img: np.ndarray,
    text: str,
    x0: float,
    y0: float,
    x1: float,
    y1: float,
    color,
    ppm: float,
    weight: float = 0.13,
) -> None:
    """Text centred in a mm box, as large as fits."""
    box_w, box_h = (x1 - x0) * ppm, (y1 - y0) * ppm
    (w, h), _ = cv2.getTextSize(text, _FONT, 1.0, 1)
    scale = min(box_w / w, box_h / h)
    thick = max(1, round(h * scale * weight))
    (w, h), _ = cv2.getTextSize(text, _FONT, scale, thick)
    org = (round(x0 * ppm + (box_w - w) / 2), round(y0 * ppm + (box_h + h) / 2))
    cv2.putText(img, text, org, _FONT, scale, color, thick, cv2.LINE_AA)


def _pip_centres(
    value: int, x0: float, y0: float, x1: float, y1: float
) -> list[tuple[float, float]]:
    """Up to 7 pips in two rows of four; the top row fills first."""
    cols, rows = 4, 2
    dx, dy = (x1 - x0) / cols, (y1 - y0) / rows
    cells = [(x0 + dx * (i % cols + 0.5), y0 + dy * (i // cols + 0.5)) for i in range(cols * rows)]
    return cells[:value]


def render_strip(card: Card, px_per_mm: float = PRINT_PX_PER_MM) -> np.ndarray:
    """The index strip alone (63 x 16 mm), upright."""
    ppm = px_per_mm
    w, h = round(CARD_W_MM * ppm), round(INDEX_STRIP_MM * ppm)
    strip = np.empty((h, w, 3), np.uint8)
    strip[:] = INGREDIENT_COLORS[card.ingredient]
    # numeral panel
    _rounded_rect(strip, 2.0, 1.8, 15.5, 14.2, 1.5, WHITE, ppm)
    _put_text_fit(strip, str(card.value), 3.2, 2.6, 14.3, 13.4, INK, ppm, weight=0.16)
    # glyph on a white disc
    cv2.circle(strip, _pt(23.0, 8.0, ppm), round(6.3 * ppm), WHITE, -1, cv2.LINE_AA)
    draw_glyph(strip, card.ingredient, 23.0, 8.0, 9.0, INGREDIENT_COLORS[card.ingredient], ppm)
    if card.ingredient == "ajitama":  # yellow on white needs an outline
        cv2.circle(
            strip, _pt(23.0, 8.0, ppm), round(4.6 * ppm), INK, max(1, round(0.5 * ppm)), cv2.LINE_AA
        )
    # pips panel
    _rounded_rect(strip, 31.5, 1.8, 61.0, 14.2, 1.5, WHITE, ppm)
    # both pip rows sit in the top 12 mm, which even the tightest cascade (12 mm) leaves showing
    for px, py in _pip_centres(card.value, 32.5, 2.1, 60.0, 12.1):
        cv2.circle(strip, _pt(px, py, ppm), round(1.9 * ppm), INK, -1, cv2.LINE_AA)
    if card.value == 0:  # an empty panel reads as "nothing": say zero plainly
        cv2.line(
            strip, _pt(36, 8, ppm), _pt(56.5, 8, ppm), INK, max(1, round(1.2 * ppm)), cv2.LINE_AA
        )
    return strip


def render_face(card: Card, px_per_mm: float = PRINT_PX_PER_MM) -> np.ndarray:
    """The whole face, BGR, (round(88 ppm), round(63 ppm), 3)."""
    ppm = px_per_mm
    w, h = round(CARD_W_MM * ppm), round(CARD_H_MM * ppm)
    face = np.empty((h, w, 3), np.uint8)
    face[:] = PAPER
    color = INGREDIENT_COLORS[card.ingredient]
    strip = render_strip(card, ppm)
    sh = strip.shape[0]
    face[:sh] = strip
    face[h - sh :] = strip[::-1, ::-1]
    # centre: big glyph, value, name
    draw_glyph(face, card.ingredient, CARD_W_MM / 2, 34.0, 22.0, color, ppm)
    if card.ingredient == "ajitama":
        cv2.circle(
            face,
            _pt(CARD_W_MM / 2, 34.0, ppm),
            round(11.0 * ppm),
            INK,
            max(1, round(0.5 * ppm)),
            cv2.LINE_AA,
        )
    _put_text_fit(
        face, INGREDIENT_LABELS[card.ingredient], 6, 48.5, CARD_W_MM - 6, 55.5, INK, ppm, weight=0.1
    )
    _put_text_fit(face, str(card.value), 24, 57.0, CARD_W_MM - 24, 69.0, INK, ppm)
    # thin border so a cut card has a visible edge on a white table
    cv2.rectangle(face, (0, 0), (w - 1, h - 1), (150, 150, 150), max(1, round(0.3 * ppm)))
    return _round_corners(face, ppm)


def _round_corners(img: np.ndarray, ppm: float, background=(255, 255, 255)) -> np.ndarray:
    """Paint outside the card's rounded corners (print background)."""
    h, w = img.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    _rounded_rect(mask, 0, 0, w / ppm, h / ppm, CARD_CORNER_MM, 255, ppm)
    img[mask == 0] = background
    return img


def render_back(px_per_mm: float = PRINT_PX_PER_MM) -> np.ndarray:
    """Card back: a dark red field with a noodle-wave pattern, the same for every card."""
    ppm = px_per_mm
    w, h = round(CARD_W_MM * ppm), round(CARD_H_MM * ppm)
    back = np.empty((h, w, 3), np.uint8)
    back[:] = (40, 40, 150)
    xs = np.arange(w)
    for k in range(9):
        y0 = (8 + k * 9) * ppm
        ys = (y0 + 2.0 * ppm * np.sin(xs / (4.0 * ppm) + k)).astype(np.int32)
        pts = np.stack([xs, ys], axis=1).reshape(-1, 1, 2)
        cv2.polylines(back, [pts], False, (120, 200, 240), max(1, round(0.8 * ppm)), cv2.LINE_AA)
    _rounded_rect(back, 18, 30, 45, 58, 4, (30, 30, 110), ppm)
    _put_text_fit(back, "RAMEN", 19, 38, 44, 50, (120, 200, 240), ppm)
    return _round_corners(back, ppm)


def write_faces(out_dir: Path, px_per_mm: float = PRINT_PX_PER_MM) -> list[Path]:
    """`<card>.png` for all 56 cards (and `back.png`), at print resolution."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for card in ALL_CARDS:
        path = out_dir / f"{card.id}.png"
        cv2.imwrite(str(path), render_face(card, px_per_mm))
        paths.append(path)
    cv2.imwrite(str(out_dir / "back.png"), render_back(px_per_mm))
    return paths
