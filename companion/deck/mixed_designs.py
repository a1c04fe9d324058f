"""The `mixed` training family: decks composed at random from parts, drawn with TrueType fonts.

The five hand-written training families are five points in the space of card designs; a finder
and an embedding trained on them learn those five looks (a dark foil card or a numeral in a
new place was missed). Here every deck picks its background (flat, paper, gradient, pattern,
texture, dark), border, where the index sits (top-left, both top corners, top centre, a
column), what holds the numeral (nothing, disc, rounded box, banner, diamond), the numeral's
TrueType font (the fonts Kivy and matplotlib ship: other shapes than the Hershey strokes the
held-out families use), its ink and outline, and the ingredient cue (icon, short name, colour
only) independently. What stays fixed is what every real deck shares: 63 x 88 mm, one colour
scheme per ingredient, the index at the top, usually turned at the bottom.

Held-out families keep what is theirs alone: no Hershey fonts, no sine foil sheen, no half-disc
hanging from the top edge (`designs.HELD_OUT_FAMILIES`).
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from companion.cards import INGREDIENTS, Card
from companion.deck.designs import _NAMES as _NAME_OF
from companion.deck.designs import PPM, _contrast, _illustration, _px, _shade, draw_icon
from companion.deck.designs import _hsv_bgr as _hsv
from companion.layout import CARD_H_MM, CARD_W_MM

BAND_MM: Final = 26.0
"""The index layer's height; the same layer is drawn turned at the bottom."""

BGR = tuple[int, int, int]


def _package_fonts(package: str, sub: str) -> list[Path]:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return []
    folder = Path(spec.origin).parent / sub
    return sorted(folder.glob("*.ttf")) if folder.is_dir() else []


@lru_cache(maxsize=1)
def font_files() -> tuple[Path, ...]:
    """Kivy's fonts (always installed) and matplotlib's (installed with the training extra);
    symbol-only fonts left out. A deck's font is drawn from this list, so the same seed gives
    the same deck wherever the same packages are installed."""
    kivy = _package_fonts("kivy", "data/fonts")
    mpl = [
        p
        for p in _package_fonts("matplotlib", "mpl-data/fonts/ttf")
        if not p.name.startswith(("STIXSiz", "STIXNonUni", "cmex", "cmsy", "LastResort", "cmmi"))
    ]
    seen: set[str] = set()
    usable = []
    for path in kivy + mpl:
        if path.name in seen:
            continue
        seen.add(path.name)
        if all(_font(str(path), 40).getmask(d).getbbox() for d in "01234567"):
            usable.append(path)  # (matplotlib's *Display fonts hold a few glyphs only)
    return tuple(usable)


@lru_cache(maxsize=64)
def _font(path: str, px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, px)


def _lum(c: BGR) -> float:
    return 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]


def draw_text(
    img: np.ndarray,
    text: str,
    font_path: Path,
    x: float,
    y_top: float,
    height: float,
    color: BGR,
    outline: BGR | None = None,
    anchor: str = "left",
) -> tuple[float, float]:
    """`text` whose ink is `height` mm tall, its ink's top at y_top mm and its left edge (or
    centre, or right edge) at x mm; returns the ink's (width, height) in mm."""
    probe = _font(str(font_path), 200)
    x0i, t, r, b = probe.getbbox(text)
    size = max(6, round(200 * height * PPM / max(b - t, 1)))
    font = _font(str(font_path), size)
    x0i, t, r, b = (int(v) for v in font.getbbox(text))  # whole pixels (typed as float)
    stroke = max(1, size // 14) if outline is not None else 0
    w, h = r - x0i + 2 * stroke + 4, b - t + 2 * stroke + 4
    fill = Image.new("L", (w, h), 0)
    ImageDraw.Draw(fill).text((stroke + 2 - x0i, stroke + 2 - t), text, font=font, fill=255)
    layers = [(np.asarray(fill, np.float32) / 255.0, color)]
    if outline is not None:
        ring = Image.new("L", (w, h), 0)
        ImageDraw.Draw(ring).text(
            (stroke + 2 - x0i, stroke + 2 - t), text, font=font, fill=255, stroke_width=stroke
        )
        layers.insert(0, (np.asarray(ring, np.float32) / 255.0, outline))
    x0 = _px(x) - stroke - 2 - {"left": 0, "center": (r - x0i) // 2, "right": r - x0i}[anchor]
    y0 = _px(y_top) - stroke - 2
    H, W = img.shape[:2]
    ix0, iy0, ix1, iy1 = max(x0, 0), max(y0, 0), min(x0 + w, W), min(y0 + h, H)
    if ix1 > ix0 and iy1 > iy0:
        roi = img[iy0:iy1, ix0:ix1].astype(np.float32)
        for alpha, col in layers:
            a = alpha[iy0 - y0 : iy1 - y0, ix0 - x0 : ix1 - x0, None]
            roi = roi * (1 - a) + np.array(col, np.float32) * a
        img[iy0:iy1, ix0:ix1] = np.clip(roi, 0, 255).astype(np.uint8)
    return (r - x0i) / PPM, (b - t) / PPM


class _Spec:
    """Everything random about one mixed deck (drawn once from its seed)."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([seed, 4242])
        self.seed = seed
        start = rng.uniform(0, 1)
        hues = [(start + k / 7 + rng.normal(0, 0.03)) % 1 for k in range(7)]
        rng.shuffle(hues)
        sat, val = rng.uniform(0.3, 0.95), rng.uniform(0.35, 0.95)
        self.colors: list[BGR] = [
            _hsv(
                h,
                np.clip(sat + rng.normal(0, 0.1), 0.2, 1),
                np.clip(val + rng.normal(0, 0.1), 0.25, 1),
            )
            for h in hues
        ]
        looks_alike = bool(rng.random() < 0.4)
        if looks_alike:  # two near-identical browns (or any two look-alikes)
            a, b = rng.choice(7, 2, replace=False)
            base = _hsv(rng.uniform(0, 1), rng.uniform(0.4, 0.8), rng.uniform(0.35, 0.7))
            self.colors[a] = base
            self.colors[b] = _shade(base, rng.uniform(0.85, 1.15))
        self.background = str(
            rng.choice(
                ["flat", "paper", "gradient", "pattern", "texture", "dark"],
                p=[0.25, 0.2, 0.15, 0.12, 0.13, 0.15],
            )
        )
        self.border = str(
            rng.choice(["none", "white", "line", "frame"], p=[0.45, 0.25, 0.15, 0.15])
        )
        self.border_mm = float(rng.uniform(1.5, 5.0))
        self.layout = str(
            rng.choice(["left", "both", "centre", "column"], p=[0.45, 0.25, 0.15, 0.15])
        )
        self.holder = str(
            rng.choice(["none", "disc", "box", "banner", "diamond"], p=[0.35, 0.2, 0.2, 0.15, 0.1])
        )
        self.banner_mm = float(rng.uniform(9, 16))
        fonts = font_files()
        self.font = fonts[int(rng.integers(len(fonts)))]
        self.numeral_mm = float(rng.uniform(5.0, 11.0))
        self.ink_kind = str(rng.choice(["contrast", "ingredient", "light_outline", "gold", "dark"]))
        self.cue = str(rng.choice(["icon", "icon", "name", "none"]))
        if self.cue == "none" and looks_alike:  # colour alone would not tell them apart
            self.cue = "icon"
        self.cue_mm = float(rng.uniform(4.0, 8.0))
        self.icons = [int(v) for v in rng.integers(0, 1 << 30, 7)]
        self.dx = float(rng.uniform(2.5, 7.0))
        self.dy = float(rng.uniform(2.0, 5.0))
        self.turned = bool(rng.random() < 0.8)
        if self.layout == "column":  # value over cue, all within the 16 mm a cascade shows
            self.numeral_mm = min(self.numeral_mm, 6.5)
            self.cue_mm = min(self.cue_mm, 4.5)
            self.dy = min(self.dy, 2.5)
        self.ribbon = bool(rng.random() < 0.4)
        self.ribbon_y = float(rng.uniform(0.45, 0.78))
        self.paper: BGR = tuple(int(v) for v in rng.integers(215, 252, 3))  # type: ignore[assignment]
        self.pattern = int(rng.integers(3))


def _background(s: _Spec, rng: np.random.Generator, col: BGR) -> np.ndarray:
    h, w = _px(CARD_H_MM), _px(CARD_W_MM)
    out = np.empty((h, w, 3), np.float32)
    kind = s.background
    if kind == "flat":
        out[:] = col
    elif kind == "paper":
        out[:] = s.paper
    elif kind == "dark":
        out[:] = _shade(col, 0.25) if rng.random() < 0.5 else (35, 35, 40)
    elif kind == "gradient":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = (xx * rng.uniform(-1, 1) + yy) / (w + h)
        t = (t - t.min()) / max(float(np.ptp(t)), 1e-3)
        a, b = np.array(_shade(col, 1.3), np.float32), np.array(_shade(col, 0.55), np.float32)
        out[:] = a + (b - a) * t[..., None]
    elif kind == "pattern":
        out[:] = col
        alt = _shade(col, 0.8)
        step = _px(float(rng.uniform(3, 9)))
        if s.pattern == 0:
            for x in range(-h, w, step * 2):
                cv2.line(out, (x, 0), (x + h, h), alt, step // 2)
        elif s.pattern == 1:
            for y in range(0, h, step):
                for x in range((y // step % 2) * step // 2, w, step):
                    cv2.circle(out, (x, y), max(2, step // 5), alt, -1, cv2.LINE_AA)
        else:
            for y in range(0, h, step):
                cv2.line(out, (0, y), (w, y), alt, max(1, step // 6))
    else:  # texture
        out[:] = col
        for cells, amp in ((3, 45), (10, 25), (40, 12)):
            size = (cells, max(2, cells * w // h))
            light = rng.normal(0, amp, (*size, 1)) + rng.normal(0, amp * 0.3, (*size, 3))
            out += cv2.resize(light.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    return np.clip(out, 0, 255).astype(np.uint8)


def _ink(s: _Spec, col: BGR, under: BGR) -> tuple[BGR, BGR | None]:
    """(numeral colour, outline) for a numeral drawn over `under`."""
    if s.ink_kind == "ingredient" and abs(_lum(col) - _lum(under)) > 45:
        return col, None
    if s.ink_kind == "light_outline":
        return (245, 245, 245), (25, 25, 25)
    if s.ink_kind == "gold":
        return (70, 190, 230), (30, 30, 30) if _lum(under) > 120 else None
    if s.ink_kind == "dark" and _lum(under) > 110:
        return (25, 25, 25), None
    return _contrast(under), None


def _index(layer: np.ndarray, s: _Spec, card: Card) -> None:
    """Value and ingredient cue on the top band (drawn again turned at the bottom)."""
    k = INGREDIENTS.index(card.ingredient)
    col = s.colors[k]
    v = str(card.value)
    n = s.numeral_mm
    inset = s.border_mm if s.border in ("white", "frame") else 0.0
    positions: list[tuple[float, str]]
    if s.layout == "both":
        positions = [(inset + s.dx, "left"), (CARD_W_MM - inset - s.dx, "right")]
    elif s.layout == "centre":
        positions = [(CARD_W_MM / 2, "center")]
    else:
        positions = [(inset + s.dx, "left")]
    y = inset + s.dy
    if s.holder == "banner":
        banner = col if s.background not in ("flat", "gradient") else _shade(col, 0.6)
        x1 = _px(CARD_W_MM - inset) - 1
        cv2.rectangle(layer, (_px(inset), _px(inset)), (x1, _px(inset + s.banner_mm)), banner, -1)
        y = inset + max(1.0, (s.banner_mm - n) / 2)
        n = min(n, s.banner_mm - 2.0)
    for x, anchor in positions:
        on_right = anchor == "right"
        cx = {"left": x + n * 0.35, "right": x - n * 0.35, "center": x}[anchor]
        under: BGR = tuple(
            int(c)
            for c in layer[
                min(_px(y + n / 2), layer.shape[0] - 1), min(max(_px(cx), 0), layer.shape[1] - 1)
            ]
        )  # type: ignore[assignment]
        if s.holder in ("disc", "box", "diamond"):
            r = n * 0.8
            fill = col if _lum(col) != _lum(under) or s.background != "flat" else _shade(col, 0.7)
            c = (_px(cx), _px(y + n / 2))
            if s.holder == "disc":
                cv2.circle(layer, c, _px(r), fill, -1, cv2.LINE_AA)
            elif s.holder == "box":
                cv2.rectangle(
                    layer,
                    (_px(cx - r), _px(y + n / 2 - r)),
                    (_px(cx + r), _px(y + n / 2 + r)),
                    fill,
                    -1,
                )
            else:
                pts = np.array(
                    [
                        [cx, y + n / 2 - r * 1.2],
                        [cx + r, y + n / 2],
                        [cx, y + n / 2 + r * 1.2],
                        [cx - r, y + n / 2],
                    ]
                )
                cv2.fillPoly(layer, [np.round(pts * PPM).astype(np.int32)], fill, cv2.LINE_AA)
            under = fill
            if anchor != "center":
                x, anchor = cx, "center"
        ink, outline = _ink(s, col, under)
        w, _ = draw_text(layer, v, s.font, x, y, n, ink, outline, anchor)
        left = {"left": x, "right": x - w, "center": x - w / 2}[anchor]
        if s.cue == "none":
            continue
        if s.layout == "column":
            cx, cy = left + w / 2, y + n + 1.0 + s.cue_mm / 2
        elif s.holder in ("disc", "box", "diamond"):  # beside the holder, inside the band
            step = n * 0.8 + s.cue_mm / 2 + 1.0
            cx, cy = left + w / 2 + (-step if on_right else step), y + n / 2
        elif s.layout == "centre":
            cx, cy = left + w + s.cue_mm / 2 + 2.0, y + n / 2
        else:
            cx = left + w + s.cue_mm / 2 + 1.5 if anchor == "left" else left - s.cue_mm / 2 - 1.5
            cy = y + n / 2
        cue_under: BGR = tuple(
            int(c)
            for c in layer[
                min(_px(cy), layer.shape[0] - 1), min(max(_px(cx), 0), layer.shape[1] - 1)
            ]
        )  # type: ignore[assignment]
        cue_col = col if abs(_lum(col) - _lum(cue_under)) > 40 else _contrast(cue_under)
        if s.cue == "icon":
            draw_icon(layer, s.icons[k], cx, cy, s.cue_mm, cue_col)
        else:
            draw_text(
                layer,
                _NAME_OF[INGREDIENTS[k]][:3],
                s.font,
                cx,
                cy - s.cue_mm * 0.3,
                s.cue_mm * 0.6,
                cue_col,
                anchor="center",
            )


def render_mixed_face(seed: int, card: Card) -> np.ndarray:
    """One face of mixed deck `seed`, BGR, 880 x 630 px (10 px/mm)."""
    s = _Spec(seed)
    k = INGREDIENTS.index(card.ingredient)
    col = s.colors[k]
    rng = np.random.default_rng([seed, k, 17])  # the art is the same for all values
    face = _background(s, rng, col)
    h, w = face.shape[:2]
    b = _px(s.border_mm)
    if s.border == "white":
        inner = face.copy()
        face[:] = (245, 245, 242)
        face[b : h - b, b : w - b] = inner[b : h - b, b : w - b]
    elif s.border == "frame":
        cv2.rectangle(face, (b, b), (w - 1 - b, h - 1 - b), _contrast(col), max(2, b // 3))
    elif s.border == "line":
        cv2.rectangle(face, (0, 0), (w - 1, h - 1), (140, 140, 140), 3)
    art = (8.0, 24.0, CARD_W_MM - 8.0, CARD_H_MM - 24.0)
    art_col = col if s.background in ("paper", "dark") else _shade(col, rng.uniform(0.6, 1.4))
    _illustration(face, rng, art, art_col, int(rng.integers(6, 18)))
    draw_icon(
        face,
        s.icons[k],
        CARD_W_MM / 2,
        CARD_H_MM / 2,
        float(rng.uniform(18, 30)),
        _shade(col, 0.55),
    )
    if s.ribbon:
        y = CARD_H_MM * s.ribbon_y
        cv2.rectangle(face, (_px(5), _px(y)), (_px(CARD_W_MM - 5), _px(y + 8)), (228, 232, 238), -1)
        draw_text(
            face,
            _NAME_OF[INGREDIENTS[k]].title(),
            s.font,
            CARD_W_MM / 2,
            y + 2.0,
            4.0,
            (40, 40, 60),
            anchor="center",
        )
    band = _px(BAND_MM)
    top = face[:band].copy()
    _index(top, s, card)
    face[:band] = top
    if s.turned:
        turned = np.ascontiguousarray(face[h - band :][::-1, ::-1])
        _index(turned, s, card)
        face[h - band :] = turned[::-1, ::-1]
    return face


def render_mixed_back(seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, 4343])
    col: BGR = tuple(int(v) for v in rng.integers(20, 200, 3))  # type: ignore[assignment]
    h, w = _px(CARD_H_MM), _px(CARD_W_MM)
    back = np.empty((h, w, 3), np.uint8)
    back[:] = col
    for _ in range(int(rng.integers(3, 12))):
        c = (_px(rng.uniform(0, CARD_W_MM)), _px(rng.uniform(0, CARD_H_MM)))
        cv2.circle(
            back, c, _px(rng.uniform(3, 20)), _shade(col, rng.uniform(0.5, 1.5)), -1, cv2.LINE_AA
        )
    cv2.rectangle(back, (_px(4), _px(4)), (w - _px(4), h - _px(4)), _contrast(col), _px(1.0))
    return back
