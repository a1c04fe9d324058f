"""Procedurally generated deck designs: many ways a 56-card deck can look.

The published deck's art is unknown to us, so the strip finder is trained on (and every naming
figure is measured across) decks drawn here from a design family and a seed. A family fixes the
*kind* of design (where the index sits, what the background is); the seed picks colours, fonts,
icons, illustrations. Training uses TRAIN_FAMILIES only; HELD_OUT_FAMILIES are never seen by any
model and exist to measure what a deck of an unknown design gets.

Every design keeps what real card decks share: 63 x 88 mm, the value and an ingredient cue in the
top-left corner (so a cascade's visible top band identifies the card), the same index turned
180 degrees at the bottom right, one colour (or colour scheme) per ingredient.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Final

import cv2
import numpy as np

from companion.cards import ALL_CARDS, INGREDIENTS, Card
from companion.deck.deckdir import Deck
from companion.layout import CARD_H_MM, CARD_W_MM

PPM: Final = 10.0
"""Faces are drawn at 10 px/mm (630 x 880), the enrolled faces' resolution."""

_HAND_FAMILIES: Final[tuple[str, ...]] = ("band", "corner", "bordered", "photo", "badge")
TRAIN_FAMILIES: Final[tuple[str, ...]] = (*_HAND_FAMILIES, "mixed")
"""`mixed` composes a deck at random from parts (`mixed_designs.py`): every seed another look."""
HELD_OUT_FAMILIES: Final[tuple[str, ...]] = ("ornate", "foil", "minimal", "tarot")
FAMILIES: Final[tuple[str, ...]] = (*_HAND_FAMILIES, *HELD_OUT_FAMILIES, "mixed")
"""In this order for good: a family's position seeds its decks (the held-out decks never change)."""

_FONTS: Final = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_SIMPLEX | cv2.FONT_ITALIC,
    cv2.FONT_HERSHEY_COMPLEX | cv2.FONT_ITALIC,
)
_SCRIPT_FONTS: Final = (cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_COMPLEX)
_NAMES: Final = {
    "ajitama": "AJITAMA",
    "chashu": "CHASHU",
    "kamaboko": "KAMABOKO",
    "menma": "MENMA",
    "negi": "NEGI",
    "nori": "NORI",
    "shiitake": "SHIITAKE",
}


@dataclass(frozen=True)
class Design:
    """Everything random about one deck, drawn once from (family, seed)."""

    family: str
    seed: int
    colors: tuple[tuple[int, int, int], ...]
    """One BGR colour per ingredient (rulebook order)."""
    font: int
    numeral_scale: float
    """Numeral height in mm."""
    numeral_dark: bool
    icons: tuple[int, ...]
    """Icon shape per ingredient (seeds of `_icon_points`)."""
    dark: bool = False
    """Dark cards with light print (training families only: a finder that has only seen light
    cards misses dark ones)."""
    index_dx: float = 0.0
    """The index drawn this far right of its family's place, mm (training families only)."""


def _hsv_bgr(h: float, s: float, v: float) -> tuple[int, int, int]:
    px = np.array([[[round(h * 179) % 180, round(s * 255), round(v * 255)]]], np.uint8)
    b, g, r = cv2.cvtColor(px, cv2.COLOR_HSV2BGR)[0, 0]
    return (int(b), int(g), int(r))


def _palette(rng: np.random.Generator, similar_pair: bool) -> tuple[tuple[int, int, int], ...]:
    """Seven colours spread round the hue circle; optionally two in near-identical browns
    (what published decks do: chashu and menma are both brown)."""
    start = rng.uniform(0, 1)
    hues = [(start + k / 7 + rng.normal(0, 0.02)) % 1 for k in range(7)]
    rng.shuffle(hues)
    cols = [_hsv_bgr(h, rng.uniform(0.45, 0.95), rng.uniform(0.45, 0.95)) for h in hues]
    if similar_pair:
        a, b = rng.choice(7, 2, replace=False)
        base = rng.uniform(0.05, 0.1)
        cols[a] = _hsv_bgr(base, rng.uniform(0.55, 0.75), rng.uniform(0.45, 0.6))
        cols[b] = _hsv_bgr(
            base + rng.uniform(0.0, 0.03), rng.uniform(0.5, 0.7), rng.uniform(0.4, 0.6)
        )
    return tuple(cols)


def make_design(family: str, seed: int) -> Design:
    if family not in FAMILIES:
        raise ValueError(f"unknown deck design family {family!r}")
    rng = np.random.default_rng([FAMILIES.index(family), seed, 77])
    script = family in ("ornate",)
    font = int(rng.choice(_SCRIPT_FONTS)) if script else int(rng.choice(_FONTS))
    d = Design(
        family=family,
        seed=seed,
        colors=_palette(rng, similar_pair=family == "ornate" or rng.random() < 0.35),
        font=font,
        numeral_scale=float(rng.uniform(6.5, 9.0)),
        numeral_dark=bool(rng.random() < 0.6),
        icons=tuple(int(v) for v in rng.integers(0, 1 << 30, 7)),
    )
    if family == "mixed":
        from companion.deck.mixed_designs import _Spec

        return replace(d, colors=tuple(_Spec(seed).colors))
    if family in TRAIN_FAMILIES:  # drawn last, so the held-out designs never change
        dark = bool(rng.random() < 0.3) and family in ("corner", "badge", "photo")
        dx = float(rng.choice([0.0, 0.0, rng.uniform(2, 8), rng.uniform(14, 24)]))
        colors = tuple(_shade(c, 0.35) for c in d.colors) if dark else d.colors
        d = replace(
            d, dark=dark, index_dx=dx, colors=colors, numeral_dark=d.numeral_dark and not dark
        )
    return d


# ------------------------------------------------------------------ drawing primitives


def _px(v: float) -> int:
    return round(v * PPM)


def _icon_points(icon_seed: int) -> list[np.ndarray]:
    """An ingredient's icon: one to three random shapes in a unit box (-1..1)."""
    r = np.random.default_rng(icon_seed)
    shapes = []
    for _ in range(int(r.integers(1, 3))):
        kind = int(r.integers(4))
        n = int(r.integers(3, 9))
        t = np.linspace(0, 2 * math.pi, 48 if kind == 0 else n, endpoint=False) + r.uniform(0, 1)
        if kind == 0:  # blob
            rad = 0.75 + 0.25 * np.sin(t * int(r.integers(2, 5)) + r.uniform(0, 6))
        elif kind == 1:  # star
            t = np.linspace(0, 2 * math.pi, 2 * n, endpoint=False)
            rad = np.where(np.arange(2 * n) % 2 == 0, 1.0, r.uniform(0.35, 0.6))
        else:  # polygon
            rad = r.uniform(0.7, 1.0, len(t))
        sx, sy = r.uniform(0.6, 1.0), r.uniform(0.6, 1.0)
        ox, oy = r.uniform(-0.2, 0.2, 2)
        shapes.append(np.stack([ox + sx * rad * np.cos(t), oy + sy * rad * np.sin(t)], axis=1))
    return shapes


def draw_icon(img: np.ndarray, icon_seed: int, cx: float, cy: float, size: float, color) -> None:
    """The icon centred at (cx, cy) mm, `size` mm across."""
    for pts in _icon_points(icon_seed):
        p = np.round((pts * size / 2 + [cx, cy]) * PPM * 8).astype(np.int32)
        cv2.fillPoly(img, [p], color, cv2.LINE_AA, shift=3)


@lru_cache(maxsize=512)
def _ink_box(text: str, font: int, thick_per_scale: float) -> tuple[float, float, float, float]:
    """(left, top, width, height) of the ink of `text` at scale 1, relative to its origin:
    Hershey sizes from getTextSize include blank space, so a numeral would come out small."""
    scale = 4.0
    thick = max(1, round(scale * thick_per_scale))
    (w, h), base = cv2.getTextSize(text, font, scale, thick)
    canvas = np.zeros((h + base + 40, w + 40), np.uint8)
    org = (20, 20 + h)
    cv2.putText(canvas, text, org, font, scale, 255, thick, cv2.LINE_AA)
    ys, xs = np.nonzero(canvas)
    if len(xs) == 0:
        return (0.0, -float(h) / scale, float(w) / scale, float(h) / scale)
    return (
        (xs.min() - org[0]) / scale,
        (ys.min() - org[1]) / scale,
        (xs.max() - xs.min() + 1) / scale,
        (ys.max() - ys.min() + 1) / scale,
    )


def _text(
    img: np.ndarray,
    text: str,
    x: float,
    y_top: float,
    height: float,
    color,
    font: int,
    weight: float = 0.12,
    outline=None,
    center: bool = False,
) -> float:
    """Text whose ink is `height` mm tall with its top-left (or top-centre) at (x, y_top) mm;
    returns its width in mm."""
    tps = 25.0 * weight / 2.0
    left, top, w1, h1 = _ink_box(text, font, round(tps, 2))
    scale = height * PPM / max(h1, 1e-3)
    thick = max(1, round(scale * tps))
    w_px = w1 * scale
    x0 = x * PPM - (w_px / 2 if center else 0) - left * scale
    org = (round(x0), round(y_top * PPM - top * scale))
    if outline is not None:
        cv2.putText(img, text, org, font, scale, outline, thick + max(2, thick), cv2.LINE_AA)
    cv2.putText(img, text, org, font, scale, color, thick, cv2.LINE_AA)
    return w_px / PPM


def _contrast(color) -> tuple[int, int, int]:
    lum = 0.114 * color[0] + 0.587 * color[1] + 0.299 * color[2]
    return (25, 25, 25) if lum > 140 else (245, 245, 245)


def _shade(color, k: float) -> tuple[int, int, int]:
    return tuple(int(np.clip(c * k, 0, 255)) for c in color)  # type: ignore[return-value]


def _illustration(img: np.ndarray, rng: np.random.Generator, box, color, n: int) -> None:
    """A stand-in for painted art: overlapping soft blobs, strokes and highlights in a box."""
    x0, y0, x1, y1 = box
    for _ in range(n):
        c: tuple[int, ...] = _shade(color, rng.uniform(0.4, 1.6))
        if rng.random() < 0.3:
            c = tuple(int(v) for v in rng.integers(0, 256, 3))
        kind = rng.integers(3)
        cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
        if kind == 0:
            ax = (_px(rng.uniform(3, (x1 - x0) / 2.5)), _px(rng.uniform(3, (y1 - y0) / 2.5)))
            cv2.ellipse(
                img, (_px(cx), _px(cy)), ax, rng.uniform(0, 180), 0, 360, c, -1, cv2.LINE_AA
            )
        elif kind == 1:
            p2 = (_px(rng.uniform(x0, x1)), _px(rng.uniform(y0, y1)))
            cv2.line(img, (_px(cx), _px(cy)), p2, c, _px(rng.uniform(0.8, 4)), cv2.LINE_AA)
        else:
            cv2.circle(img, (_px(cx), _px(cy)), _px(rng.uniform(1, 6)), c, -1, cv2.LINE_AA)


def _texture(rng: np.random.Generator, h: int, w: int, color, strength: float) -> np.ndarray:
    """Photo-like: a colour field with smooth multi-scale variation."""
    out = np.empty((h, w, 3), np.float32)
    out[:] = color
    for cells, amp in ((3, 50), (9, 30), (30, 15)):
        noise = rng.normal(0, amp * strength, (cells, max(2, cells * w // h), 3)).astype(np.float32)
        out += cv2.resize(noise, (w, h), interpolation=cv2.INTER_CUBIC)
    return out


def _foil(rng: np.random.Generator, h: int, w: int, color) -> np.ndarray:
    """Metallic: diagonal bands of sheen over a dark base tinted by the ingredient."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    f = rng.uniform(0.01, 0.03)
    sheen = 0.5 + 0.5 * np.sin((xx + yy * rng.uniform(0.5, 1.5)) * f + rng.uniform(0, 6))
    base = np.array(color, np.float32) * 0.35
    hi = np.array(color, np.float32) * 0.5 + 120
    return base + (hi - base) * sheen[..., None] ** 3


# ------------------------------------------------------------------ the index (corner)


def _corner_index(img: np.ndarray, d: Design, card: Card, ink, bg) -> None:
    """Value and icon in the top-left corner, by family."""
    k = INGREDIENTS.index(card.ingredient)
    col = d.colors[k]
    v = str(card.value)
    f = d.family
    hgt = d.numeral_scale
    if f == "band":
        cv2.rectangle(img, (0, 0), (_px(CARD_W_MM), _px(14.5)), col, -1)
        cv2.rectangle(img, (_px(2), _px(1.5)), (_px(15), _px(13)), (250, 250, 250), -1)
        _text(img, v, 8.5, 7.25 - hgt * 0.45, hgt * 0.9, (20, 20, 20), d.font, center=True)
        cv2.circle(img, (_px(24), _px(7.25)), _px(5.5), (250, 250, 250), -1, cv2.LINE_AA)
        draw_icon(img, d.icons[k], 24, 7.25, 8.0, _shade(col, 0.7))
        _text(img, _NAMES[card.ingredient], 32, 4.5, 5.0, _contrast(col), cv2.FONT_HERSHEY_SIMPLEX)
    elif f in ("corner", "ornate", "photo"):
        _text(img, v, 4.0, 2.5, hgt, ink, d.font, outline=bg if f == "ornate" else None)
        draw_icon(img, d.icons[k], 4.0 + hgt * 0.35, 5.0 + hgt, 6.0, ink)
    elif f == "bordered":
        _text(img, v, 5.0, 3.5, hgt * 0.85, col, d.font)
        draw_icon(img, d.icons[k], 5.0 + hgt * 0.3, 5.5 + hgt * 0.85, 5.0, col)
        w = _text(img, v, 0, -100, hgt * 0.85, col, d.font)  # measure only (off the face)
        _text(img, v, CARD_W_MM - 5.0 - w, 3.5, hgt * 0.85, col, d.font)
    elif f == "badge":
        r = 5.5
        cv2.circle(img, (_px(8), _px(7)), _px(r), col, -1, cv2.LINE_AA)
        cv2.circle(img, (_px(8), _px(7)), _px(r), ink, _px(0.6), cv2.LINE_AA)
        _text(img, v, 8, 7 - hgt * 0.35, hgt * 0.7, ink, d.font, center=True)
        draw_icon(img, d.icons[k], 20, 7, 6.5, _shade(col, 0.5))
    elif f == "foil":
        gold = (90, 200, 235)
        _text(img, v, 4.5, 3.0, hgt, gold, d.font, outline=(20, 20, 20))
        w = _text(img, v, 0, -100, hgt, gold, d.font)
        _text(img, v, CARD_W_MM - 4.5 - w, 3.0, hgt, gold, d.font, outline=(20, 20, 20))
        draw_icon(img, d.icons[k], CARD_W_MM / 2, 7.5, 8.0, _shade(col, 1.6))
    elif f == "minimal":
        cv2.rectangle(img, (0, 0), (_px(CARD_W_MM), _px(2.5)), col, -1)
        _text(img, v, 4.0, 4.0, hgt * 0.8, (30, 30, 30), d.font)
        draw_icon(img, d.icons[k], 8.0 + hgt * 0.6, 4.0 + hgt * 0.4, 6.0, col)
    elif f == "tarot":
        cv2.ellipse(
            img, (_px(CARD_W_MM / 2), _px(0)), (_px(14), _px(14)), 0, 0, 180, col, -1, cv2.LINE_AA
        )
        cv2.ellipse(
            img,
            (_px(CARD_W_MM / 2), _px(0)),
            (_px(14), _px(14)),
            0,
            0,
            180,
            ink,
            _px(0.5),
            cv2.LINE_AA,
        )
        _text(img, v, CARD_W_MM / 2, 1.5, hgt * 0.85, _contrast(col), d.font, center=True)
        draw_icon(img, d.icons[k], 6.0, 6.0, 6.0, col)
        draw_icon(img, d.icons[k], CARD_W_MM - 6.0, 6.0, 6.0, col)
    else:  # pragma: no cover - FAMILIES is closed
        raise ValueError(f)


def _indexed(band: np.ndarray, d: Design, card: Card, ink, bg) -> np.ndarray:
    """The band with the index drawn on it (shifted right by d.index_dx)."""
    out = band.copy()
    _corner_index(out, d, card, ink, bg)
    dx = _px(d.index_dx)
    if dx:
        drawn = np.any(out != band, axis=2)
        moved = np.zeros_like(drawn)
        moved[:, dx:] = drawn[:, :-dx]
        shifted = np.zeros_like(out)
        shifted[:, dx:] = out[:, :-dx]
        out = band.copy()
        out[moved] = shifted[moved]
    return out


def render_design_face(d: Design, card: Card) -> np.ndarray:
    """One face, BGR, 880 x 630 px (10 px/mm)."""
    if d.family == "mixed":
        from companion.deck.mixed_designs import render_mixed_face

        return render_mixed_face(d.seed, card)
    k = INGREDIENTS.index(card.ingredient)
    col = d.colors[k]
    w, h = _px(CARD_W_MM), _px(CARD_H_MM)
    # the art is the same for all values of one ingredient (as in most published decks)
    rng = np.random.default_rng([d.seed, FAMILIES.index(d.family), k, 5])
    f = d.family
    bg: tuple[int, ...]
    if f in ("corner", "ornate", "badge"):
        face = np.empty((h, w, 3), np.float32)
        face[:] = col
        bg = col
    elif f == "photo":
        face = _texture(rng, h, w, col, 1.0)
        bg = col
    elif f == "foil":
        face = _foil(rng, h, w, col)
        bg = (40, 40, 40)
    elif f == "bordered":
        face = np.empty((h, w, 3), np.float32)
        face[:] = (40, 40, 45) if d.dark else (245, 245, 240)
        bg = tuple(int(v) for v in face[0, 0])
    else:  # band, minimal, tarot: paper
        face = np.empty((h, w, 3), np.float32)
        face[:] = tuple(int(v) for v in rng.integers(225, 250, 3))
        if d.dark:
            face *= 0.15
        bg = tuple(int(v) for v in face[0, 0])
    face_u8 = np.clip(face, 0, 255).astype(np.uint8)
    ink = (20, 20, 20) if d.numeral_dark or f in ("minimal", "bordered") else (245, 245, 245)
    if f not in ("minimal", "bordered", "band", "tarot") and not d.numeral_dark:
        ink = _contrast(col) if f != "photo" else (250, 250, 250)
    # central art (never into the corners' index area)
    art = (8.0, 24.0, CARD_W_MM - 8.0, CARD_H_MM - 24.0)
    if f == "bordered":
        cv2.rectangle(
            face_u8, (_px(4), _px(22)), (_px(CARD_W_MM - 4), _px(CARD_H_MM - 22)), col, -1
        )
    _illustration(face_u8, rng, art, col if f != "bordered" else _shade(col, 1.3), 14)
    draw_icon(
        face_u8,
        d.icons[k],
        CARD_W_MM / 2,
        CARD_H_MM / 2,
        26.0,
        _shade(col, 0.55) if f not in ("foil",) else _shade(col, 1.8),
    )
    if f in ("ornate", "tarot", "photo"):  # a name ribbon across the art
        y = CARD_H_MM * 0.66
        cv2.rectangle(
            face_u8, (_px(5), _px(y)), (_px(CARD_W_MM - 5), _px(y + 8)), (225, 235, 240), -1
        )
        _text(
            face_u8,
            _NAMES[card.ingredient],
            CARD_W_MM / 2,
            y + 1.5,
            5.0,
            (40, 40, 60),
            d.font if f == "ornate" else cv2.FONT_HERSHEY_COMPLEX,
            center=True,
        )
    if f == "minimal":
        _text(
            face_u8,
            _NAMES[card.ingredient].title(),
            CARD_W_MM / 2,
            CARD_H_MM * 0.7,
            4.5,
            (60, 60, 60),
            cv2.FONT_HERSHEY_SIMPLEX,
            center=True,
        )
    # the index layer, then the same layer turned 180 degrees at the bottom
    if d.dark:
        ink = (235, 235, 235)
    band_h = _px(26.0)
    face_u8[:band_h] = _indexed(face_u8[:band_h], d, card, ink, bg)
    turned = np.ascontiguousarray(face_u8[h - band_h :][::-1, ::-1])
    face_u8[h - band_h :] = _indexed(turned, d, card, ink, bg)[::-1, ::-1]
    if f in ("bordered", "minimal", "band", "tarot"):
        cv2.rectangle(face_u8, (0, 0), (w - 1, h - 1), (150, 150, 150), max(1, _px(0.3)))
    return face_u8


def render_design_back(d: Design) -> np.ndarray:
    if d.family == "mixed":
        from companion.deck.mixed_designs import render_mixed_back

        return render_mixed_back(d.seed)
    rng = np.random.default_rng([d.seed, FAMILIES.index(d.family), 99])
    col = tuple(int(v) for v in rng.integers(20, 200, 3))
    back = _texture(rng, _px(CARD_H_MM), _px(CARD_W_MM), col, 0.5)
    back = np.clip(back, 0, 255).astype(np.uint8)
    cv2.rectangle(
        back, (_px(4), _px(4)), (_px(CARD_W_MM - 4), _px(CARD_H_MM - 4)), _contrast(col), _px(1.0)
    )
    return back


@lru_cache(maxsize=24)
def design_deck(family: str, seed: int) -> Deck:
    """The deck of one design (cached: a training set reuses a small pool of decks)."""
    d = make_design(family, seed)
    return Deck(
        name=f"{family}-{seed}",
        faces={c.id: render_design_face(d, c) for c in ALL_CARDS},
        back=render_design_back(d),
        px_per_mm=PPM,
        meta={"source": "companion.deck.designs", "family": family, "seed": seed},
    )


def parse_deck_spec(spec: str) -> tuple[str, int]:
    """`design:FAMILY:SEED` -> (family, seed)."""
    parts = spec.split(":")
    if len(parts) != 3 or parts[0] != "design" or parts[1] not in FAMILIES:
        raise ValueError(
            f"{spec!r} is not a design deck: expected design:FAMILY:SEED, FAMILY one of "
            f"{', '.join(FAMILIES)}"
        )
    return parts[1], int(parts[2])
