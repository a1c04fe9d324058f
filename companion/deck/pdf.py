"""Printable PDFs: the deck (9 cards a page, cut marks) and the table kit (markers, layout, setup).

Every size comes from companion/layout.py, so a change of layout reprints correctly. Cards are
placed edge to edge in a 3 x 3 grid (one cut serves two cards); the cut marks sit in the margin
on every grid line. Each page says "print at 100 % / actual size" and carries a 50 mm ruler to
check the printer did not scale it.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import cv2
import numpy as np
from reportlab.lib.pagesizes import A4, landscape, letter
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

from companion import layout
from companion.cards import ALL_CARDS, INGREDIENTS
from companion.errors import BadInputError

PAPERS: Final[dict[str, tuple[float, float]]] = {"a4": A4, "letter": letter}
"""Portrait page sizes in points."""
CARDS_PER_PAGE: Final = 9
MARKER_QUIET_MM: Final = 10.0
"""White border round each printed marker (the detector needs >= 1 module = 6.7 mm)."""
CUT_MARK_GAP_MM: Final = 1.5
CUT_MARK_LEN_MM: Final = 4.0
WARNING: Final = "Print at 100 % / \u201cActual size\u201d (never \u201cFit to page\u201d)"
CORNER_NAMES: Final = ("top-left", "top-right", "bottom-right", "bottom-left")


def paper_size(paper: str) -> tuple[float, float]:
    try:
        return PAPERS[paper.lower()]
    except KeyError:
        raise BadInputError(f"unknown paper {paper!r}: use one of {', '.join(PAPERS)}") from None


def _image_reader(bgr: np.ndarray) -> ImageReader:
    """PNG bytes (lossless, flat card art compresses well) for reportlab."""
    ok, buf = cv2.imencode(".png", bgr)
    if not ok:
        raise BadInputError("could not encode a card image as PNG")
    return ImageReader(io.BytesIO(buf.tobytes()))


def _ruler(c: Canvas, x: float, y: float, vertical: bool = False) -> None:
    """A 50 mm check ruler starting at (x, y) points, ticks every 5 mm."""
    c.saveState()
    c.translate(x, y)
    if vertical:
        c.rotate(90)
    c.setLineWidth(0.5)
    c.setStrokeColorRGB(0, 0, 0)
    c.line(0, 0, 50 * mm, 0)
    for k in range(11):
        t = 3.0 if k % 2 == 0 else 1.8
        c.line(k * 5 * mm, 0, k * 5 * mm, t * mm)
    c.setFont("Helvetica", 6)
    c.drawString(51.5 * mm, 0.3 * mm, "50 mm: measure it")
    c.restoreState()


def _warning(c: Canvas, x: float, y: float, extra: str = "", vertical: bool = False) -> None:
    c.saveState()
    c.translate(x, y)
    if vertical:
        c.rotate(90)
    c.setFont("Helvetica-Bold", 7)
    c.setFillColorRGB(0, 0, 0)
    text = WARNING + (f"  \u2014  {extra}" if extra else "")
    c.drawString(0, 0, text)
    c.restoreState()


# -- deck --------------------------------------------------------------------------------------


def deck_grid(paper: str) -> tuple[float, float]:
    """Lower-left corner (points) of the 3 x 3 card grid, centred on the page."""
    pw, ph = paper_size(paper)
    gw, gh = 3 * layout.CARD_W_MM * mm, 3 * layout.CARD_H_MM * mm
    if gw > pw or gh > ph:
        raise BadInputError(f"{paper} is too small for 3 x 3 cards")
    return (pw - gw) / 2, (ph - gh) / 2


def _cut_marks(c: Canvas, x0: float, y0: float) -> None:
    """Marks in the margin on every grid line (4 vertical, 4 horizontal cut lines)."""
    w, h = layout.CARD_W_MM * mm, layout.CARD_H_MM * mm
    gap, ln = CUT_MARK_GAP_MM * mm, CUT_MARK_LEN_MM * mm
    c.setLineWidth(0.3)
    c.setStrokeColorRGB(0, 0, 0)
    for i in range(4):
        x = x0 + i * w
        c.line(x, y0 - gap - ln, x, y0 - gap)
        c.line(x, y0 + 3 * h + gap, x, y0 + 3 * h + gap + ln)
        y = y0 + i * h
        c.line(x0 - gap - ln, y, x0 - gap, y)
        c.line(x0 + 3 * w + gap, y, x0 + 3 * w + gap + ln, y)


def _deck_page(
    c: Canvas, paper: str, images: list[np.ndarray], caption: str, mirror: bool = False
) -> None:
    pw, _ = paper_size(paper)
    x0, y0 = deck_grid(paper)
    w, h = layout.CARD_W_MM * mm, layout.CARD_H_MM * mm
    for k, img in enumerate(images):
        row, col = divmod(k, 3)
        if mirror:  # backs printed on the reverse: columns swap
            col = 2 - col
        c.drawImage(_image_reader(img), x0 + col * w, y0 + (2 - row) * h, width=w, height=h)
    _cut_marks(c, x0, y0)
    side = x0  # both side margins are >= 10.5 mm on A4 and Letter
    _warning(c, side - 6.5 * mm, y0, caption, vertical=True)
    _ruler(c, pw - side + 6.0 * mm, y0, vertical=True)


def write_deck_pdf(
    path: Path,
    paper: str = "a4",
    faces: Mapping[str, np.ndarray] | None = None,
    back: np.ndarray | None = None,
    backs: bool = True,
    progress: bool = False,
) -> Path:
    """deck.pdf: 56 faces at exactly 63 x 88 mm, 9 a page (7 pages), then one page of 9 backs.

    `faces` (card id -> BGR) defaults to the generated deck at print resolution. The backs page
    is printed on the reverse of each face page (or once, if the cards go in opaque sleeves).
    """
    from tqdm import tqdm

    from companion.deck.faces import PRINT_PX_PER_MM, render_back, render_face

    paper_size(paper)
    path.parent.mkdir(parents=True, exist_ok=True)
    c = Canvas(str(path), pagesize=paper_size(paper))
    c.setTitle("Ramen! Ramen! companion: card deck")
    pages = [ALL_CARDS[i : i + CARDS_PER_PAGE] for i in range(0, len(ALL_CARDS), CARDS_PER_PAGE)]
    for n, cards in enumerate(tqdm(pages, desc="deck.pdf", unit="page", disable=not progress)):
        imgs = [
            faces[card.id] if faces is not None else render_face(card, PRINT_PX_PER_MM)
            for card in cards
        ]
        names = ", ".join(card.id for card in cards)
        _deck_page(c, paper, imgs, f"faces {n + 1}/{len(pages)}: {names}")
        c.showPage()
    if backs:
        img = back if back is not None else render_back(PRINT_PX_PER_MM)
        _deck_page(c, paper, [img] * CARDS_PER_PAGE, "backs: print on the reverse", mirror=True)
        c.showPage()
    c.save()
    return path


# -- table kit ---------------------------------------------------------------------------------


def marker_bits(marker_id: int) -> np.ndarray:
    """The marker as a (6, 6) array of 0 (black) / 1 (white) modules, border included."""
    import cv2.aruco as aruco

    dictionary = aruco.getPredefinedDictionary(getattr(aruco, layout.ARUCO_DICT))
    n = dictionary.markerSize + 2
    img = aruco.generateImageMarker(dictionary, marker_id, n, borderBits=1)
    return (img > 127).astype(np.uint8)


def _draw_marker(c: Canvas, x: float, y: float, marker_id: int) -> None:
    """Black square of exactly MARKER_MM with lower-left corner (x, y), drawn as vectors."""
    bits = marker_bits(marker_id)
    n = bits.shape[0]
    cell = layout.MARKER_MM * mm / n
    c.setFillColorRGB(1, 1, 1)
    q = MARKER_QUIET_MM * mm
    c.rect(x - q, y - q, layout.MARKER_MM * mm + 2 * q, layout.MARKER_MM * mm + 2 * q, 0, 1)
    c.setFillColorRGB(0, 0, 0)
    for r in range(n):
        for col in range(n):
            if bits[r, col] == 0:
                # slight overlap so no hairline gaps appear between black modules
                c.rect(x + col * cell, y + (n - 1 - r) * cell, cell + 0.05, cell + 0.05, 0, 1)


def _marker_tile(c: Canvas, cx: float, cy: float, index: int) -> None:
    """One tile: marker + quiet zone, dashed cut line, id, corner and which way is up."""
    marker_id = layout.MARKER_IDS[index]
    m, q = layout.MARKER_MM * mm, MARKER_QUIET_MM * mm
    x, y = cx - m / 2, cy - m / 2
    _draw_marker(c, x, y, marker_id)
    c.saveState()
    c.setDash(3, 2)
    c.setLineWidth(0.3)
    c.setStrokeColorRGB(0.5, 0.5, 0.5)
    c.rect(x - q, y - q, m + 2 * q, m + 2 * q, 1, 0)
    c.restoreState()
    c.setFillColorRGB(0, 0, 0)
    c.setFont("Helvetica-Bold", 12)
    c.drawCentredString(
        cx, y - q - 7 * mm, f"marker {marker_id}  \u2014  corner: {CORNER_NAMES[index]}"
    )
    c.setFont("Helvetica", 8)
    c.drawCentredString(
        cx, y - q - 12 * mm, "black square: exactly 40 mm; keep the white border round it"
    )
    c.drawCentredString(cx, y + m + q + 7 * mm, "\u25b2 this edge faces the far side of the table")
    c.drawCentredString(cx, y + m + q + 3 * mm, "(the top of the camera image)")


def _page_footer(c: Canvas, pw: float, extra: str) -> None:
    _warning(c, 15 * mm, 14 * mm, extra)
    _ruler(c, 15 * mm, 7 * mm)


def _markers_page(c: Canvas, paper: str) -> None:
    pw, ph = paper_size(paper)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(15 * mm, ph - 15 * mm, "Table markers (ArUco " + layout.ARUCO_DICT + ")")
    c.setFont("Helvetica", 8)
    c.drawString(
        15 * mm,
        ph - 20 * mm,
        "Cut along the dashed lines. Put each black square's outer corner on the matching corner "
        f"of the {layout.PLAY_W_MM:g} x {layout.PLAY_H_MM:g} mm play area.",
    )
    top, bottom = ph - 25 * mm, 20 * mm
    for index in range(4):
        row, col = divmod(index, 2)
        if index >= 2:  # bottom row: bottom-right under top-right, bottom-left under top-left
            col = 1 - col
        cx = pw / 4 * (1 + 2 * col)
        cy = top - (top - bottom) / 4 * (1 + 2 * row)
        _marker_tile(c, cx, cy, index)
    _page_footer(c, pw, "markers")


def _layout_scale(pw: float, ph: float) -> float:
    """Smallest round reduction (1:N) that fits the play area plus dimensions on the page."""
    avail_w, avail_h = pw - 40 * mm, ph - 60 * mm
    for n in (3, 3.5, 4, 5, 6):
        if layout.PLAY_W_MM * mm / n <= avail_w and layout.PLAY_H_MM * mm / n <= avail_h:
            return n
    raise BadInputError("paper too small for the layout diagram")


def _dim_h(c: Canvas, x0: float, x1: float, y: float, text: str) -> None:
    """Horizontal dimension line with end ticks and a centred label above."""
    c.setLineWidth(0.3)
    c.line(x0, y, x1, y)
    c.line(x0, y - 1.2 * mm, x0, y + 1.2 * mm)
    c.line(x1, y - 1.2 * mm, x1, y + 1.2 * mm)
    c.setFont("Helvetica", 5.5)
    c.drawCentredString((x0 + x1) / 2, y + 0.8 * mm, text)


def _dim_v(c: Canvas, x: float, y0: float, y1: float, text: str) -> None:
    c.setLineWidth(0.3)
    c.line(x, y0, x, y1)
    c.line(x - 1.2 * mm, y0, x + 1.2 * mm, y0)
    c.line(x - 1.2 * mm, y1, x + 1.2 * mm, y1)
    c.saveState()
    c.translate(x - 0.8 * mm, (y0 + y1) / 2)
    c.rotate(90)
    c.setFont("Helvetica", 5.5)
    c.drawCentredString(0, 0, text)
    c.restoreState()


def _layout_page(c: Canvas, paper: str) -> None:
    """The play area reduced 1:N, every region dimensioned in table-plane mm."""
    pw, ph = landscape(paper_size(paper))
    c.setPageSize((pw, ph))
    n = _layout_scale(pw, ph)
    k = mm / n  # points per table mm
    ox = (pw - layout.PLAY_W_MM * k) / 2
    oy_top = ph - 32 * mm

    def pt(x: float, y: float) -> tuple[float, float]:
        return ox + x * k, oy_top - y * k

    def rect(r: layout.Rect, fill: tuple[float, float, float] | None, dash: bool = False) -> None:
        x, y = pt(r.x0, r.y1)
        c.saveState()
        if dash:
            c.setDash(2, 1.5)
        if fill:
            c.setFillColorRGB(*fill)
        c.setLineWidth(0.5)
        c.rect(x, y, r.width * k, r.height * k, 1, 1 if fill else 0)
        c.restoreState()

    c.setFont("Helvetica-Bold", 14)
    c.drawString(15 * mm, ph - 14 * mm, f"Table layout, drawn at 1:{n:g} (all numbers in mm)")
    c.setFont("Helvetica", 8)
    c.drawString(
        15 * mm,
        ph - 19 * mm,
        "Origin: outer top-left corner of marker 0; x to the right, y towards you (the bottom of "
        "the camera image). Camera straight above the centre of the play area.",
    )
    play = layout.Rect(0, 0, layout.PLAY_W_MM, layout.PLAY_H_MM)
    rect(play, (0.96, 0.96, 0.93))
    for index, (mid, sq) in enumerate(sorted(layout.marker_squares().items())):
        rect(sq, (0, 0, 0))
        cx, cy = pt(*sq.center)
        c.setFont("Helvetica", 6)
        c.setFillColorRGB(1, 1, 1)
        c.drawCentredString(cx, cy - 1, str(mid))
        c.setFillColorRGB(0, 0, 0)
        del index
    rect(layout.DECK_SPOT, (0.75, 0.55, 0.55))
    x, y = pt(*layout.DECK_SPOT.center)
    c.setFont("Helvetica", 6)
    c.drawCentredString(x, y, "deck")
    c.drawCentredString(x, y - 7, "face down")
    for i, slot in enumerate(layout.fridge_slots()):
        rect(slot, (1, 1, 1))
        x, y = pt(*slot.center)
        c.drawCentredString(x, y, f"Fridge {i + 1}")
    for region in layout.REGIONS:
        rect(region.rect, None, dash=True)
        x, y = pt(region.rect.x0, region.rect.y0)
        c.setFont("Helvetica-Bold", 7)
        c.drawString(x + 1.2 * mm, y - 3 * mm, region.label)
        if region.id.startswith("bowl-"):
            _cascade(c, region.rect, pt, k)
    # dimensions: play area, markers, deck, fridge, bowls, scan
    c.setStrokeColorRGB(0.1, 0.1, 0.5)
    c.setFillColorRGB(0.1, 0.1, 0.5)
    top = oy_top + 6 * mm
    _dim_h(c, *(pt(0, 0)[0], pt(layout.PLAY_W_MM, 0)[0]), top, f"{layout.PLAY_W_MM:g}")
    _dim_v(c, ox - 6 * mm, pt(0, layout.PLAY_H_MM)[1], oy_top, f"{layout.PLAY_H_MM:g}")
    m = layout.marker_squares()[0]
    _dim_h(c, pt(m.x0, 0)[0], pt(m.x1, 0)[0], top - 3.5 * mm, f"marker {layout.MARKER_MM:g}")
    below = pt(0, layout.PLAY_H_MM)[1]
    xs = []
    for region in layout.REGIONS:
        if region.id == "fridge":
            continue
        xs.append((region.rect.x0, region.rect.x1, region.label))
    for j, (x0, x1, label) in enumerate(xs):
        _dim_h(c, pt(x0, 0)[0], pt(x1, 0)[0], below - (5 + 4 * (j % 2)) * mm, f"{x0:g}\u2013{x1:g}")
        del label
    rx = pt(layout.PLAY_W_MM, 0)[0]
    ys = [
        (layout.DECK_SPOT.y0, layout.DECK_SPOT.y1, "deck/Fridge"),
        (layout.region_by_id("bowl-1").rect.y0, layout.region_by_id("bowl-1").rect.y1, "bowls"),
        (layout.region_by_id("scan").rect.y0, layout.region_by_id("scan").rect.y1, "scan"),
    ]
    for j, (y0, y1, label) in enumerate(ys):
        _dim_v(c, rx + (5 + 5 * j) * mm, pt(0, y1)[1], pt(0, y0)[1], f"{label} {y0:g}\u2013{y1:g}")
    c.setStrokeColorRGB(0, 0, 0)
    c.setFillColorRGB(0, 0, 0)
    # a table of exact numbers under the drawing
    c.setFont("Helvetica", 7)
    yy = below - 15 * mm
    lines = [f"Deck spot x {_span(layout.DECK_SPOT)}"]
    lines += [f"Fridge {i + 1}: x {_span(s)}" for i, s in enumerate(layout.fridge_slots())]
    lines += [f"{r.label}: x {_span(r.rect)}" for r in layout.REGIONS]
    for j, text in enumerate(lines):
        c.drawString(15 * mm + (j % 3) * 90 * mm, yy - (j // 3) * 3.2 * mm, text)
    _page_footer(c, pw, f"diagram at 1:{n:g}; the ruler is full size")


def _span(r: layout.Rect) -> str:
    return f"{r.x0:g}\u2013{r.x1:g}, y {r.y0:g}\u2013{r.y1:g}"


def _cascade(c: Canvas, bowl: layout.Rect, pt, k: float) -> None:
    """Three cascaded cards in a bowl, each INDEX_STRIP_MM lower, with the offset arrow."""
    cw, ch, s = layout.CARD_W_MM, layout.CARD_H_MM, layout.INDEX_STRIP_MM
    x0 = bowl.center[0] - cw / 2
    for i in range(3):
        y0 = bowl.y0 + 10 + i * s
        x, y = pt(x0, y0 + ch)
        c.setFillColorRGB(1, 1, 1)
        c.setStrokeColorRGB(0.3, 0.3, 0.3)
        c.rect(x, y, cw * k, ch * k, 1, 1)
        c.setFillColorRGB(0.85, 0.85, 0.6)
        sx, sy = pt(x0, y0 + s)
        c.rect(sx, sy, cw * k, s * k, 0, 1)
    c.setFillColorRGB(0, 0, 0)
    c.setStrokeColorRGB(0.7, 0, 0)
    ax = pt(x0 + cw + 6, 0)[0]
    for i in range(2):
        ya, yb = pt(0, bowl.y0 + 10 + i * s)[1], pt(0, bowl.y0 + 10 + (i + 1) * s)[1]
        c.line(ax, ya, ax, yb)
        c.line(ax, yb, ax - 0.8 * mm, yb + 1.2 * mm)
        c.line(ax, yb, ax + 0.8 * mm, yb + 1.2 * mm)
    c.setStrokeColorRGB(0, 0, 0)
    c.setFont("Helvetica", 5.5)
    lines = ["lay each new card", f"{s:g} mm lower so the", "top strip stays visible"]
    for j, text in enumerate(lines):
        x, y = pt(x0, bowl.y0 + 10 + 2 * s + ch + 8)
        c.drawString(x, y - j * 2.3 * mm, text)


SETUP_TEXT: Final = """\
1. Print this kit and deck.pdf at 100 % ("Actual size"). Measure the 50 mm ruler on each page.
2. Cut out the four marker tiles along the dashed lines, keeping the white border.
3. On the table, mark a {w:g} x {h:g} mm rectangle: the play area. Put marker 0 at its top-left,
   1 at top-right, 2 at bottom-right, 3 at bottom-left (top = the far side, the top of the camera
   image), each black square's outer corner exactly on the rectangle's corner, "up" arrow away
   from you. Tape them flat. The white borders may overhang the rectangle.
4. Place the face-down deck, the four Fridge cards, the three bowls and the scan area as the
   layout page shows (numbers in mm from the outer top-left corner of marker 0).
5. Camera: Raspberry Pi Camera Module 3, standard lens ({fov:g} degrees horizontal), 16:9,
   looking straight down from {cam:g} mm above the centre of the play area ({cx:g}, {cy:g} mm).
   It then sees about {vw:.0f} x {vh:.0f} mm, a margin round the play area for slight tilt.
   All four markers must be in view, not covered, and not in glare.
6. Bowls: lay each new card {strip:g} mm lower than the previous one, so the top strip (value and
   ingredient) of every card stays visible. Keep the bowl's cards inside its outline.
7. End of game: each player spreads their served piles, one at a time, in the scan area, cards
   side by side with their top strips visible.

Scaling: the layout scales as a whole. For a smaller or larger table pick a factor s (e.g. 0.8
or 1.25): print the markers at s (print scale s x 100 %: the black square becomes s x {m:g} mm),
place every region at s times the numbers on the layout page, and mount the camera at
s x {cam:g} mm. Cards stay 63 x 88 mm, so with s < 1 they fill more of the image and are read
more easily; with s > 1 the camera needs more resolution (keep s <= 1.25 with the Camera
Module 3's 12 MP).
"""


def setup_text() -> str:
    import math

    cam = layout.DEFAULT_CAMERA_HEIGHT_MM
    half = math.tan(math.radians(layout.CAMERA_HFOV_DEG / 2))
    vw = 2 * cam * half
    return SETUP_TEXT.format(
        w=layout.PLAY_W_MM,
        h=layout.PLAY_H_MM,
        fov=layout.CAMERA_HFOV_DEG,
        cam=cam,
        cx=layout.PLAY_W_MM / 2,
        cy=layout.PLAY_H_MM / 2,
        vw=vw,
        vh=vw * 9 / 16,
        strip=layout.INDEX_STRIP_MM,
        m=layout.MARKER_MM,
    )


def _setup_page(c: Canvas, paper: str) -> None:
    pw, ph = paper_size(paper)
    c.setPageSize((pw, ph))
    c.setFont("Helvetica-Bold", 14)
    c.drawString(15 * mm, ph - 15 * mm, "Setting up the table")
    text = c.beginText(15 * mm, ph - 25 * mm)
    text.setFont("Helvetica", 8.5)
    text.setLeading(11.5)
    for line in setup_text().splitlines():
        text.textLine(line)
    text.textLine("")
    text.textLine(
        "Ingredients, in the order used everywhere (enrolment photos too): "
        + ", ".join(INGREDIENTS)
    )
    c.drawText(text)
    _page_footer(c, pw, "setup")


KIT_PAGES: Final = ("markers", "layout", "setup")


def write_kit_pdf(path: Path, paper: str = "a4") -> Path:
    """table-kit.pdf: markers (4 tiles), the layout diagram (landscape), setup instructions."""
    paper_size(paper)
    path.parent.mkdir(parents=True, exist_ok=True)
    c = Canvas(str(path), pagesize=paper_size(paper))
    c.setTitle("Ramen! Ramen! companion: table kit")
    _markers_page(c, paper)
    c.showPage()
    _layout_page(c, paper)
    c.showPage()
    _setup_page(c, paper)
    c.showPage()
    c.save()
    return path
