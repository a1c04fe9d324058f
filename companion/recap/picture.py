"""The recap picture: one 1600 x 900 PNG of a finished game to keep or send to the players.

Left: the result, the standings (with the tie-break when it decided), the points of each
scorer over the turns, the BG Stats QR code. Right: every served bowl under its scorer, as
the camera saw it (the crop kept beside the game log) or, when no picture was kept, as a
cascade of card strips; each with its types and points. Drawn with Pillow (already there for
ultralytics; far lighter than a plotting library on a Pi); big type so it reads on a phone.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Final

import cv2
from PIL import Image, ImageDraw, ImageFont

from companion.deck.palette import INGREDIENT_COLORS
from companion.recap.bgstats import create_play_link, qr_image
from companion.recap.crops import CropStore
from companion.recap.record import BowlRecord, GameRecord
from companion.ui.i18n import count, ingredient_name, stars_text, tr

SIZE: Final = (1600, 900)
QR_SIDE: Final = 300
"""At most this many pixels for the QR code (3 px a module for the usual link)."""
BG: Final = (23, 23, 28)
INK: Final = (240, 240, 240)
DIM: Final = (170, 174, 184)
GOLD: Final = (255, 214, 102)
PANEL: Final = (36, 38, 46)
LINE_COLOURS: Final = ((255, 214, 102), (102, 204, 255), (140, 230, 140), (255, 140, 180))
"""One per scorer, in standings order (the winner gold)."""
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@cache
def font(size: int, bold: bool = False) -> Font:
    """Kivy's own fonts (DejaVu Sans covers French and the stars), else Pillow's default."""
    spec = importlib.util.find_spec("kivy")
    if spec is not None and spec.origin:
        folder = Path(spec.origin).parent / "data" / "fonts"
        for name in (("DejaVuSans-Bold.ttf", "Roboto-Bold.ttf") if bold else ()) + (
            "DejaVuSans.ttf",
        ):
            if (folder / name).exists():
                return ImageFont.truetype(str(folder / name), size)
    return ImageFont.load_default(size)


def rgb_of(ingredient: str) -> tuple[int, int, int]:
    b, g, r = INGREDIENT_COLORS.get(ingredient, (128, 128, 128))
    return (int(r), int(g), int(b))


def ink_on(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    r, g, b = (c / 255 for c in rgb)
    return (0, 0, 0) if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else (255, 255, 255)


def render_recap(
    record: GameRecord, store: CropStore | None = None, lang: str = "en"
) -> Image.Image:
    """The recap of a finished game as a Pillow RGB image of SIZE."""
    img = Image.new("RGB", SIZE, BG)
    d = ImageDraw.Draw(img)
    _header(d, record, lang)
    y = _standings(d, record, lang, 40, 150, 520)
    _timeline(d, record, lang, (40, max(y + 20, 330), 560, 560))
    _qr(img, d, record, lang, (40, 680))
    _bowls(img, d, record, store, lang, (600, 140, 1570, 880))
    return img


def save_recap(image: Image.Image, out: Path) -> None:
    """Write the PNG (BadInputError-free: OSError says what is wrong with `out`)."""
    image.save(out, format="PNG", optimize=True)


# -- parts -----------------------------------------------------------------------------------
def result_line(record: GameRecord, lang: str) -> str:
    if record.mode == "solo" and record.standings:
        return f"{record.standings[0].name}: {count('n_points', record.standings[0].points, lang)}"
    names = [label(w, record.mode, lang) for w in record.winners]
    if len(names) == 1:
        return tr("winner", lang, name=names[0])
    return tr("winners", lang, names=", ".join(names))


def label(scorer: str, mode: str, lang: str) -> str:
    return tr("team", lang, name=scorer) if mode == "4p" else scorer


def tie_line(record: GameRecord, lang: str) -> str:
    """The tie-break that decided the game, in words; empty when points alone did."""
    s = record.standings
    if len(s) < 2 or s[0].points != s[1].points:
        return ""
    a, b = label(s[0].name, record.mode, lang), label(s[1].name, record.mode, lang)
    if s[0].bowls != s[1].bowls:
        return tr(
            "tie_decided_bowls", lang, a=a, b=b, points=s[0].points, x=s[0].bowls, y=s[1].bowls
        )
    if s[0].cards != s[1].cards:
        return tr(
            "tie_decided_cards",
            lang,
            a=a,
            b=b,
            points=s[0].points,
            bowls=s[0].bowls,
            x=s[0].cards,
            y=s[1].cards,
        )
    return tr("tie_shared", lang)


def header_line(record: GameRecord, lang: str) -> str:
    return tr(
        "recap_header",
        lang,
        mode=tr(f"mode_name_{record.mode}", lang),
        date=record.date_text(),
        minutes=max(1, round(record.duration_s / 60)),
        turns=record.turns,
    )


def _header(d: ImageDraw.ImageDraw, record: GameRecord, lang: str) -> None:
    d.text((40, 24), "Ramen! Ramen!", font=font(30, True), fill=DIM)
    d.text((40, 62), result_line(record, lang), font=font(52, True), fill=GOLD)
    d.text((1560, 34), header_line(record, lang), font=font(28), fill=DIM, anchor="ra")
    if record.stars is not None:
        d.text((1560, 72), stars_text(record.stars), font=font(44), fill=GOLD, anchor="ra")


def _standings(
    d: ImageDraw.ImageDraw, record: GameRecord, lang: str, x: int, y: int, width: int
) -> int:
    cols = (x, x + 250, x + 370, x + 470)
    heads = tuple(tr(k, lang) for k in ("col_name", "col_points", "col_bowls", "col_cards"))
    for cx, text in zip(cols, heads, strict=True):
        d.text((cx, y), text, font=font(22), fill=DIM)
    y += 36
    for s in record.standings:
        colour = GOLD if s.winner else INK
        name = _fit(d, label(s.name, record.mode, lang), font(34, True), 240)
        d.text((cols[0], y), name, font=font(34, True), fill=colour)
        for cx, v in zip(cols[1:], (s.points, s.bowls, s.cards), strict=True):
            d.text((cx, y), str(v), font=font(34, cx == cols[1]), fill=colour)
        y += 48
    tie = tie_line(record, lang)
    if tie:
        y = round(_wrap(d, tie, font(22), (x, y + 4), width, INK)) + 4
    return y


def _timeline(
    d: ImageDraw.ImageDraw, record: GameRecord, lang: str, box: tuple[int, int, int, int]
) -> None:
    x0, y0, x1, y1 = box
    d.text((x0, y0), tr("score_over_turns", lang), font=font(22), fill=DIM)
    top, bottom, left, right = y0 + 36, y1 - 30, x0 + 44, x1 - 70
    lines = dict(record.timeline())
    order = [s.name for s in record.standings] or list(lines)
    peak = max([1, *(max(v) for v in lines.values() if v)])
    turns = max([1, *(len(v) - 1 for v in lines.values())])
    d.line([(left, top), (left, bottom), (right, bottom)], fill=DIM, width=2)
    step = max(5, 5 * math.ceil(peak / 4 / 5))
    for p in range(0, peak + 1, step):
        yy = bottom - (bottom - top) * p / peak
        d.text((left - 8, yy), str(p), font=font(18), fill=DIM, anchor="rm")
        d.line([(left, yy), (right, yy)], fill=PANEL, width=1)
    d.text(
        (right, bottom + 6),
        f"{tr('turn_axis', lang)} {turns}",
        font=font(18),
        fill=DIM,
        anchor="ra",
    )
    ends: list[tuple[float, str, tuple[int, int, int]]] = []
    for i, name in enumerate(order):
        values = lines.get(name, ())
        if not values:
            continue
        colour = LINE_COLOURS[i % len(LINE_COLOURS)]
        pts: list[tuple[float, float]] = []
        for turn, v in enumerate(values):
            xx = left + (right - left) * turn / turns
            yy = bottom - (bottom - top) * v / peak
            if pts:
                pts.append((xx, pts[-1][1]))  # steps: points arrive when a bowl is served
            pts.append((xx, yy))
        d.line(pts, fill=colour, width=4)
        ends.append((pts[-1][1], _short(label(name, record.mode, lang)), colour))
    last = -1e9
    for yy, text, colour in sorted(ends):  # names at the line ends, never on top of each other
        yy = max(yy, last + 24)
        d.text((right + 8, yy), text, font=font(20, True), fill=colour, anchor="lm")
        last = yy


def _qr(
    img: Image.Image, d: ImageDraw.ImageDraw, record: GameRecord, lang: str, at: tuple[int, int]
) -> None:
    """The BG Stats code, whole pixels a module (a phone reads it off a screen or a print)."""
    if not record.finished:
        return
    qr = qr_image(create_play_link(record), module_px=1, border=3)
    module = max(2, QR_SIDE // qr.shape[0])
    side = qr.shape[0] * module
    tile = Image.fromarray(cv2.cvtColor(qr, cv2.COLOR_BGR2RGB)).resize(
        (side, side), Image.Resampling.NEAREST
    )
    img.paste(tile, (at[0], SIZE[1] - 16 - side))
    _wrap(d, tr("bg_stats", lang), font(24), (at[0] + side + 20, SIZE[1] - side), 250, INK)


def _bowls(
    img: Image.Image,
    d: ImageDraw.ImageDraw,
    record: GameRecord,
    store: CropStore | None,
    lang: str,
    box: tuple[int, int, int, int],
) -> None:
    x0, y0, x1, y1 = box
    scorers = [s.name for s in record.standings] or list(record.scorers)
    block = (y1 - y0) / max(1, len(scorers))
    for i, scorer in enumerate(scorers):
        top = y0 + i * block
        bowls = record.bowls_of(scorer)
        d.rounded_rectangle([x0, top, x1, top + block - 10], radius=12, fill=PANEL)
        total = sum(b.points for b in bowls)
        title = f"{label(scorer, record.mode, lang)} · {count('n_points', total, lang)}"
        d.text((x0 + 16, top + 10), title, font=font(28, True), fill=LINE_COLOURS[i % 4])
        area = (x0 + 16, top + 50, x1 - 16, top + block - 20)
        if not bowls:
            d.text((area[0], area[1]), tr("no_bowls", lang), font=font(24), fill=DIM)
            continue
        _tiles(img, d, record, bowls, store, lang, area)


def _tiles(
    img: Image.Image,
    d: ImageDraw.ImageDraw,
    record: GameRecord,
    bowls: Sequence[BowlRecord],
    store: CropStore | None,
    lang: str,
    area: tuple[float, float, float, float],
) -> None:
    """Bowls in rows, as large as the area allows (a crop is about 0.42 as wide as tall)."""
    ax0, ay0, ax1, ay1 = area
    gap, caption, aspect = 12, 30, 0.46
    best = (0.0, 1, 0.0)
    for rows in range(1, 5):
        per_row = math.ceil(len(bowls) / rows)
        h = (ay1 - ay0) / rows - caption - 6
        w = min(h * aspect, (ax1 - ax0 - gap * (per_row - 1)) / per_row)
        if w > best[0]:
            best = (w, rows, w / aspect)
    w, rows, h = best
    per_row = math.ceil(len(bowls) / rows)
    for k, bowl in enumerate(bowls):
        r, c = divmod(k, per_row)
        x = ax0 + c * (w + gap)
        y = ay0 + r * (h + caption + 6)
        tile = _bowl_tile(record, bowl, store, int(w), int(h), lang)
        img.paste(tile, (int(x), int(y)))
        text = count("n_points", bowl.points, lang)
        d.text(
            (x + w / 2, y + h + 2),
            text,
            font=font(22 if w > 70 else 17, True),
            fill=GOLD if bowl.points >= 5 else INK,
            anchor="ma",
        )


def _bowl_tile(
    record: GameRecord, bowl: BowlRecord, store: CropStore | None, w: int, h: int, lang: str
) -> Image.Image:
    """The camera's picture of the bowl, fitted in w x h; the card strips when there is none."""
    tile = Image.new("RGB", (max(1, w), max(1, h)), PANEL)
    path = store.find(record.id, bowl.region, bowl.t) if store is not None else None
    picture = cv2.imread(str(path)) if path is not None else None
    if picture is not None:
        ph, pw = picture.shape[:2]
        k = min(w / pw, h / ph)
        size = (max(1, round(pw * k)), max(1, round(ph * k)))
        rgb = cv2.cvtColor(
            cv2.resize(picture, size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB
        )
        tile.paste(Image.fromarray(rgb), ((w - size[0]) // 2, 0))
        return tile
    td = ImageDraw.Draw(tile)
    strip = min(h / max(1, len(bowl.cards)), 56.0)
    type_size = max(10, int(strip * 0.6))
    for i, card in enumerate(bowl.cards):
        ingredient, _, value = card.rpartition("-")
        colour = rgb_of(ingredient)
        top = i * strip
        td.rounded_rectangle([2, top + 1, w - 3, top + strip - 1], radius=4, fill=colour)
        text = f"{value} {ingredient_name(ingredient, lang)}" if w > 110 else value
        td.text(
            (8, top + strip / 2), text, font=font(type_size, True), fill=ink_on(colour), anchor="lm"
        )
    return tile


# -- text helpers ----------------------------------------------------------------------------
def _short(text: str, n: int = 9) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _fit(d: ImageDraw.ImageDraw, text: str, f: Font, width: int) -> str:
    while text and d.textlength(text, font=f) > width:
        text = text[:-2] + "…" if len(text) > 2 else text[:-1]
    return text


def _wrap(
    d: ImageDraw.ImageDraw,
    text: str,
    f: Font,
    at: tuple[float, float],
    width: int,
    fill: tuple[int, int, int],
) -> float:
    """Draw text wrapped at word boundaries; returns the y below it."""
    x, y = at
    line = ""
    size = getattr(f, "size", 20)
    for word in text.split():
        trial = f"{line} {word}".strip()
        if line and d.textlength(trial, font=f) > width:
            d.text((x, y), line, font=f, fill=fill)
            y += size * 1.3
            line = word
        else:
            line = trial
    if line:
        d.text((x, y), line, font=f, fill=fill)
        y += size * 1.3
    return y
