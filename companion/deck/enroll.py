"""Deck enrolment: seven photos of the published game's cards -> a deck folder of 56 faces.

The player lays the 8 cards of one ingredient in a row (values 0..7 from left to right, face up,
upright) on a plain surface that contrasts with the cards, and photographs them from above; one
photo per ingredient, in the rulebook order. Each card is labelled by its place, so nothing has
to be recognised: the cards are only found, measured and rectified.

Finding cards: a card is told from the cloth by its outline, a step in colour (Lab, hue weighted
as much as lightness), not by a colour threshold, so a cloudy cloth, uneven shading, a light
gradient or a soft glare spot (all smooth) do not matter, and a card as light as the cloth but
of another hue, a dark card on a dark cloth or a white one on a light cloth are found as long
as their edges show. On a working copy (1000 px), colour edges (hysteresis thresholds set by the
photo's own noise) enclose the cards: what the cloth at the photo's border cannot reach without
crossing an edge is card. Each blob's rough quadrilateral is then refined on the full photo:
along normals to each side the colour steps are found, the side is the outermost straight line
of them (a card's art is inside it), the four lines are intersected into exact corners. An
outline is refused, naming the card, when its sides or a corner are not seen, it is not card
shaped, it touches the border or another card, or it lies sideways.

Orientation: a card's long side is its height. Which end is up cannot be known for a published
card whose art is not symmetric, so the photo's orientation is used as given: the end nearer the
top of the photo becomes the top of the face. That is why the guide says "upright".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np

from companion.cards import INGREDIENTS, Card
from companion.deck.guide import MIN_CARD_WIDTH_PX
from companion.errors import BadInputError
from companion.layout import CARD_H_MM, CARD_W_MM

ENROL_PX_PER_MM: Final = 10.0
CARDS_PER_PHOTO: Final = 8
ASPECT: Final = CARD_W_MM / CARD_H_MM
ASPECT_TOLERANCE: Final = 0.4
"""Relative error allowed on a card's width/height: a phone held 10 degrees off vertical
already makes the card at one end of the row 25 % wider than at the other (ROW_ASPECT_TOLERANCE
then holds each card to the others' trend)."""
ROW_ASPECT_TOLERANCE: Final = 0.08
"""Relative error allowed on a card's width/height against the trend of the others: cards on
one plane change shape smoothly across the photo, a half-found card does not."""
MIN_CORNER_SUPPORT: Final = 0.6
"""Fewest of the normals next to a corner (the side ends, see _Sides) that must see the edge:
fewer, and the corner is covered or folded."""
SIDE_FROM: Final = 0.06
"""Sides are sampled from this fraction of their length to 1 - it: the rounded corners (3 mm
on a 63 mm side) are left out."""
MIN_SHARPNESS: Final = 0.02
"""Variance of the Laplacian over the cards' grey variance (contrast-normalised, so warm or dim
light does not change it); sharp photos give 0.1..1, a visibly blurred one < 0.01."""
MAX_SPILL: Final = 0.05
"""Blob area outside the fitted quadrilateral / its area above this: something lies on or
against the card (or two cards touch), so the outline cannot be trusted."""
MIN_SUPPORT: Final = 0.6
"""Fewest of a side's normals on which its edge must be seen (a step on its line, or on the
parallel line of the inner step of a thin frame printed round the card)."""
LINE_MIN: Final = 0.3
"""A straight line of steps on this fraction of a side's normals, spread over half its length,
parallel to and outside the strongest line, is the card's edge (art is inside, the cloth has
none): a card's edge can be fainter than its art."""
MIN_STEP: Final = 10.0
"""Weakest colour step (weighted Lab units, see _lab) taken for a card's edge or for a card
differing from the cloth."""
EDGE_WIDTH: Final = 4.0
"""px: a stronger line parallel to a side and at most this far inside is the inner step of a
frame printed round the card; its steps count as the side's."""
WORK_PX: Final = 1000
"""Long side of the working copy in which cards are found; outlines are refined on the photo."""
CHROMA_WEIGHT: Final = 2.0
"""a and b count twice as much as 8-bit L (about equal steps of CIE Lab), so a card as bright
as the cloth but of another hue stands out as much as a lighter one."""
EDGE_MIN: Final = 3.0
"""Weakest edge strength (Lab units per working px) that can start a card outline."""
_SLOPES: Final = np.linspace(-0.05, 0.05, 21)
"""Side directions tried against the rough quad's (radians, about +-3 degrees)."""


class EnrolmentError(BadInputError):
    """A photo that cannot be enrolled; the message says what to fix."""


@dataclass(frozen=True)
class CardOutline:
    """One card found in a photo."""

    corners: np.ndarray
    """(4, 2) float32 image px: top-left, top-right, bottom-right, bottom-left of the face."""
    fill: float
    """Fraction of the outline that is card, not cloth (1.0 = clean; see _fill)."""
    aspect_error: float
    """|measured width/height / (63/88) - 1|."""

    @property
    def center(self) -> np.ndarray:
        return self.corners.mean(axis=0)

    @property
    def width_px(self) -> float:
        c = self.corners
        return float((np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2)

    @property
    def height_px(self) -> float:
        c = self.corners
        return float((np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2)


@dataclass(frozen=True)
class PhotoReading:
    """The 8 faces of one ingredient, left to right, and how well the photo read."""

    source: str
    ingredient: str
    faces: tuple[np.ndarray, ...]
    outlines: tuple[CardOutline, ...]
    sharpness: float
    seconds: float
    cloth_bgr: tuple[float, float, float] | None = None
    """Median colour of the cloth around the cards (None: too little of it shows)."""


CLOTH_MARGIN: Final = 0.06
"""Cloth nearer a card than this share of the photo's width is left out (shadows, the card's
own edge)."""


def cloth_colour(
    image: np.ndarray, outlines: Sequence[CardOutline]
) -> tuple[float, float, float] | None:
    """Median BGR of the cloth the cards lie on: the same cloth in all 7 photos is the one
    colour they share, so it tells a photo's light and white balance from the cards' own
    tints (a pale pink and a pale yellow background are both "white" to a per-photo white
    balance)."""
    h, w = image.shape[:2]
    scale = min(1.0, 400 / max(h, w))
    small = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))))
    mask = np.full(small.shape[:2], 255, np.uint8)
    for o in outlines:
        cv2.fillConvexPoly(mask, np.round(o.corners * scale).astype(np.int32), 0)
    grow = max(1, round(CLOTH_MARGIN * small.shape[1]))
    mask = cv2.erode(mask, np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
    cloth = small[mask > 0]
    if len(cloth) < 0.05 * mask.size:
        return None
    b, g, r = np.median(cloth.reshape(-1, 3).astype(np.float32), axis=0)
    return float(b), float(g), float(r)


def _ordinal(i: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(i, f"{i}th")


def _lab(image: np.ndarray) -> np.ndarray:
    """float32 Lab with the chroma weighted (see CHROMA_WEIGHT)."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    lab[..., 1:] = (lab[..., 1:] - 128.0) * CHROMA_WEIGHT
    return lab


def _gradient(lab: np.ndarray) -> np.ndarray:
    """Colour gradient magnitude (Lab units per px)."""
    gx = cv2.Sobel(lab, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(lab, cv2.CV_32F, 0, 1, ksize=3) / 8
    return np.sqrt((gx * gx + gy * gy).sum(axis=2))


def _edges(lab: np.ndarray) -> np.ndarray:
    """bool map of colour edges (hysteresis, like Canny without thinning).

    Thresholds scale with the median gradient, i.e. with the cloth's own texture and noise; a
    cloudy cloth, a gradient, shading or a glare spot vary smoothly and give no edges at all,
    while a card's outline is a step however close its colour is to the cloth's.
    """
    mag = _gradient(lab) - _gradient(cv2.GaussianBlur(lab, (0, 0), 3.0))
    noise = float(np.median(mag))
    weak = (mag > max(EDGE_MIN / 2, 2.5 * noise)).astype(np.uint8)
    n, labels = cv2.connectedComponents(weak, connectivity=8)
    keep = np.zeros(n, bool)
    keep[np.unique(labels[mag > max(EDGE_MIN, 5.0 * noise)])] = True
    keep[0] = False
    return keep[labels]


def _enclosed(edges: np.ndarray) -> np.ndarray:
    """uint8 mask of what the edges enclose: everything the cloth cannot reach without crossing
    an edge (a card's art inside its outline does not matter).

    The cloth is what touches the photo's border in a big piece; a small piece touching the
    border is a card cut off by it (or cloth boxed in by one), so it counts as enclosed and is
    then reported as cut off.
    """
    barrier = cv2.dilate(edges.astype(np.uint8), np.ones((3, 3), np.uint8))
    n, comp, stats, _ = cv2.connectedComponentsWithStats(
        (barrier == 0).astype(np.uint8), connectivity=4
    )
    rim = np.unique(np.concatenate([comp[0], comp[-1], comp[:, 0], comp[:, -1]]))
    rim = rim[rim > 0]
    if len(rim) == 0:
        return np.full(edges.shape, 255, np.uint8)
    areas = stats[rim, cv2.CC_STAT_AREA]
    cloth = rim[areas >= min(0.05 * edges.size, 0.5 * areas.max())]
    is_cloth = np.zeros(n, bool)
    is_cloth[cloth] = True
    return (~is_cloth[comp]).astype(np.uint8) * 255


def _quad_priors(contour: np.ndarray) -> list[np.ndarray]:
    """Rough corners of a blob, the likelier first: its hull's longest edge facing each way
    (up, right, down, left) extended and intersected (right also for a card with a corner
    covered), its polygon if that has four sides, its min-area rectangle."""
    hull = cv2.convexHull(contour).reshape(-1, 2).astype(np.float64)
    priors = []
    sides = _hull_sides(hull)
    if sides is not None:
        priors.append(sides)
    peri = cv2.arcLength(hull.astype(np.float32), True)
    for eps in (0.01, 0.02, 0.03, 0.05):
        approx = cv2.approxPolyDP(hull.astype(np.float32), eps * peri, True)
        if len(approx) == 4:
            priors.append(approx.reshape(4, 2).astype(np.float32))
            break
    priors.append(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float32))
    return priors


def _hull_sides(hull: np.ndarray) -> np.ndarray | None:
    """TL, TR, BR, BL where the longest hull edges facing up, right, down and left meet."""
    centre = hull.mean(axis=0)
    best: dict[int, tuple[float, np.ndarray, np.ndarray]] = {}
    for p, q in zip(hull, np.roll(hull, -1, axis=0), strict=True):
        length = float(np.linalg.norm(q - p))
        if length < 1e-6:
            continue
        normal = np.array([q[1] - p[1], p[0] - q[0]]) / length
        if np.dot(normal, (p + q) / 2 - centre) < 0:
            normal = -normal
        # 0 up, 1 right, 2 down, 3 left (image y grows downwards)
        facing = int(np.argmax([-normal[1], normal[0], normal[1], -normal[0]]))
        if facing not in best or length > best[facing][0]:
            best[facing] = (length, p, q)
    if len(best) < 4:
        return None
    corners = []
    for k in range(4):  # corner k joins the side facing k - 1 and the side facing k
        _, p1, q1 = best[(k - 1) % 4]
        _, p2, q2 = best[k]
        d1, d2 = q1 - p1, q2 - p2
        mat = np.array([d1, -d2]).T
        if abs(np.linalg.det(mat)) < 1e-6:
            return None
        corners.append(p1 + np.linalg.solve(mat, p2 - p1)[0] * d1)
    return np.array(corners, np.float32)


@dataclass(frozen=True)
class _Sides:
    """A card's four sides as found on the photo."""

    corners: np.ndarray
    """(4, 2) TL, TR, BR, BL: the sides' lines intersected."""
    support: float
    """Smallest fraction, over the four sides, of normals whose step lies on the side."""
    corner_support: tuple[float, ...]
    """Per corner, the same fraction over each side's end next to it (the lower of the two): a
    covered or folded corner hides both ends, a faint stretch of edge elsewhere neither."""


def _refine_sides(image: np.ndarray, quad: np.ndarray, reach: float) -> _Sides | None:
    """Each side's edge found along its normals on the full photo, near the rough `quad`.

    Along each normal the colour steps clearly above the noise are candidates; the strongest
    straight line through them, or a fainter one parallel to it and further out (see
    LINE_MIN), is the side. Lines are fitted away from the rounded corners and intersected.
    None only when the rough quad is degenerate.
    """
    h, w = image.shape[:2]
    lo = np.floor(quad.min(axis=0) - reach - 3).astype(int)
    hi = np.ceil(quad.max(axis=0) + reach + 3).astype(int)
    x0, y0 = max(0, lo[0]), max(0, lo[1])
    x1, y1 = min(w, hi[0]), min(h, hi[1])
    lab = cv2.GaussianBlur(_lab(image[y0:y1, x0:x1]), (0, 0), 1.0)
    centre = quad.mean(axis=0)
    s = np.arange(-reach, reach + 1, 1.0, dtype=np.float32)
    lines, on_side = [], []
    for i in range(4):
        a, b = quad[i].astype(np.float64), quad[(i + 1) % 4].astype(np.float64)
        length = float(np.linalg.norm(b - a))
        if length < 10:
            return None
        u = (b - a) / length
        n = np.array([-u[1], u[0]])
        if np.dot(n, (a + b) / 2 - centre) < 0:
            n = -n
        m = int(np.clip(length / 3, 16, 120))
        t = np.linspace(SIDE_FROM, 1 - SIDE_FROM, m) * length
        pts = a + t[:, None, None] * u + s[None, :, None] * n  # (m, S, 2)
        mx = (pts[..., 0] - x0).astype(np.float32)
        my = (pts[..., 1] - y0).astype(np.float32)
        prof = cv2.remap(lab, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        side = _side_line(np.linalg.norm(prof[:, 2:] - prof[:, :-2], axis=2), s[1:-1], t)
        # a side not found at all stays where the rough quad had it, seen nowhere
        intercept, slope, on = side if side is not None else (0.0, 0.0, np.zeros(m))
        on_side.append(on)
        mid = float(t.mean())
        p0 = a + mid * u + intercept * n
        dvec = u + slope * n
        lines.append((p0, dvec / np.linalg.norm(dvec)))
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        mat = np.array([d1, -d2]).T
        if abs(np.linalg.det(mat)) < 1e-6:
            return None
        k = np.linalg.solve(mat, p2 - p1)
        out.append(p1 + k[0] * d1)
    ends = [(_seen(on[: len(on) // 8]), _seen(on[-(len(on) // 8) :])) for on in on_side]
    return _Sides(
        np.array(out, np.float32),
        min(_seen(on) for on in on_side),
        tuple(min(ends[k - 1][1], ends[k][0]) for k in range(4)),
    )


def _rank(sides: _Sides) -> tuple[bool, bool, float]:
    """Which of two outlines of one blob is the better: sides seen, then corners seen, then
    how well."""
    return (
        sides.support >= MIN_SUPPORT,
        min(sides.corner_support) >= MIN_CORNER_SUPPORT,
        sides.support + sum(sides.corner_support),
    )


def _seen(on: np.ndarray) -> float:
    """Fraction of normals that see an edge, of those that can (see _side_line); 0 when
    fewer than LINE_MIN of them can."""
    known = on[~np.isnan(on)]
    return float(known.mean()) if len(known) >= max(1.0, LINE_MIN * len(on)) else 0.0


def _side_line(
    d: np.ndarray, s: np.ndarray, t: np.ndarray
) -> tuple[float, float, np.ndarray] | None:
    """(offset at the middle, slope, which normals see it) of a side in the step profiles `d`
    (normals x positions `s`, outward = increasing s) sampled at `t` along the side; a normal
    sees it (1), does not (0), or shows no step at all, blown out by glare (nan)."""
    m, n_s = d.shape
    noise = float(np.percentile(d, 25))  # flat cloth and flat card: most of the window
    floor = max(4.0, 3.0 * noise)
    left = np.pad(d, ((0, 0), (1, 0)), constant_values=-1)[:, :-1]
    right = np.pad(d, ((0, 0), (0, 1)), constant_values=-1)[:, 1:]
    peaks_any = (d >= left) & (d > right)
    peaks_any[:, [0, -1]] = False  # a step cut by the window's end is not located
    rows, cols = np.nonzero(peaks_any & (d >= floor))
    if len(rows) < 5:
        return None
    # sub-pixel position of each step (parabola through the peak and its neighbours)
    dl, dc = d[rows, np.maximum(cols - 1, 0)], d[rows, cols]
    dr = d[rows, np.minimum(cols + 1, n_s - 1)]
    den = dl - 2 * dc + dr
    frac = np.where(np.abs(den) > 1e-6, 0.5 * (dl - dr) / np.where(den == 0, 1, den), 0)
    off = s[cols] + np.clip(frac, -0.5, 0.5)
    tc = t[rows] - t.mean()
    votes, offsets = _line_votes(off, rows, tc, m)
    span = float(t[-1] - t[0])
    k, j = np.unravel_index(int(np.argmax(votes)), votes.shape)
    chosen = _fit_steps(off, rows, tc, float(offsets[j]), float(_SLOPES[k]))
    if chosen is None or np.ptp(tc[chosen[2]]) < span / 2:
        return None
    tn = (t - t.mean()).astype(np.float32)
    intercept, slope = chosen[0], chosen[1]
    seen_on: list[tuple[float, float]] = [
        (float(intercept), float(slope))
    ]  # lines whose steps show the side
    outer = _fainter_outer_line(d, s, tn, peaks_any, (intercept, slope))
    if outer is not None:
        if outer[0] - intercept > EDGE_WIDTH:  # the strongest line was art, not the edge
            seen_on = []
        intercept, slope, strength = outer
        seen_on.append((intercept, slope))
        floor = min(floor, 0.5 * strength)
    # a normal sees the side if it steps where the line crosses it (a peak or, next to a
    # stronger step of the art, a shoulder)
    on = np.zeros(m)
    for line_b, line_k in seen_on:
        for shift in (-0.5, 0.0, 0.5):
            at = np.interp(line_b + line_k * tn + shift, s, np.arange(n_s, dtype=np.float64))
            lo = np.clip(np.floor(at).astype(int), 0, n_s - 2)
            frac = at - lo
            step = d[np.arange(m), lo] * (1 - frac) + d[np.arange(m), lo + 1] * frac
            on[step >= floor] = 1.0
    on[d.max(axis=1) < 1.0] = np.nan  # blown out (glare): no evidence either way
    return float(intercept), float(slope), on


def _fainter_outer_line(
    d: np.ndarray, s: np.ndarray, tn: np.ndarray, peaks: np.ndarray, strongest: tuple[float, float]
) -> tuple[float, float, float] | None:
    """(offset, slope, mean step) of a fainter line parallel to the strongest and further out,
    if there is one: the card's own edge, the strongest being its art or the inner step of a
    printed frame. Found on the steps averaged along candidate lines, where a faint but
    straight edge stands well above the cloth's noise."""
    m, n_s = d.shape
    span = float(tn[-1] - tn[0])
    grid_y = np.repeat(np.arange(m, dtype=np.float32)[:, None], n_s, axis=1)
    best: tuple[float, float, float] | None = None
    for slope in strongest[1] + np.array([-0.01, -0.005, 0.0, 0.005, 0.01]):
        grid_x = np.arange(n_s, dtype=np.float32)[None, :] + np.float32(slope) * tn[:, None]
        mean = cv2.remap(
            d.astype(np.float32), grid_x, grid_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).mean(axis=0)
        for j in range(n_s - 2, 0, -1):  # the outermost first
            if s[j] <= strongest[0] + 1.5 + abs(slope - strongest[1]) * span / 2:
                break
            cloth = float(mean[j + 1 :].min())  # beyond the card's edge: cloth
            if not (mean[j] >= mean[j - 1] and mean[j] > mean[j + 1]) or mean[j] < max(
                MIN_STEP / 2, 2.5 * cloth, cloth + 4
            ):
                continue
            rr, cc = np.nonzero(peaks & (d >= max(0.5 * mean[j], 2 * cloth)))
            line = _fit_steps(s[cc], rr, tn[rr], float(s[j]), float(slope))
            if line is None or abs(line[1] - strongest[1]) > 0.012:
                continue
            gap = line[0] - strongest[0] + (line[1] - strongest[1]) * np.array([-span, span]) / 2
            if gap.min() <= 1.5:  # not outside the strongest all along
                continue
            if len(line[2]) >= LINE_MIN * m and np.ptp(tn[rr[line[2]]]) >= span / 2:
                if best is None or line[0] > best[0]:
                    best = (line[0], line[1], float(mean[j]))
                break
    return best


def _fit_steps(
    off: np.ndarray, rows: np.ndarray, tc: np.ndarray, intercept: float, slope: float
) -> tuple[float, float, np.ndarray] | None:
    """(intercept, slope, indices of the steps on it): a least-squares line through the steps
    within 1.5 px of the given one, fitted twice, one step per normal: the outermost (a thin
    frame printed round a card gives two steps 1 to 2 px apart; the card ends at the outer)."""
    on = np.zeros(0, int)
    for _ in range(2):
        near = np.nonzero(np.abs(off - (intercept + slope * tc)) < 1.5)[0]
        if len(near) < 5:
            return None
        near = near[np.lexsort((-off[near], rows[near]))]
        on = near[np.r_[True, rows[near][1:] != rows[near][:-1]]]
        slope, intercept = np.polyfit(tc[on], off[on], 1)
    return float(intercept), float(slope), on


def _line_votes(
    off: np.ndarray, rows: np.ndarray, tc: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """(votes, offsets): votes[k, j] is how many normals have a step within 0.75 px of the line
    of slope _SLOPES[k] and offset offsets[j] at the middle of the side (a small Hough
    transform in half-pixel bins; tight, so a line slanting between the two parallel steps of
    a printed frame does not collect both)."""
    c = np.round((off[None, :] - _SLOPES[:, None] * tc[None, :]) / 0.5).astype(int)
    base = int(c.min()) - 1
    votes = np.zeros((len(_SLOPES), int(c.max()) - base + 2), np.int32)
    for k in range(len(_SLOPES)):
        hits = np.zeros((m, votes.shape[1]), bool)
        for db in (-1, 0, 1):
            hits[rows, c[k] - base + db] = True
        votes[k] = hits.sum(axis=0)
    return votes, (np.arange(votes.shape[1]) + base) * 0.5


def _order_upright(quad: np.ndarray) -> np.ndarray | None:
    """Corners as TL, TR, BR, BL of an upright card; None if the card lies sideways."""
    q = quad.astype(np.float32)
    centre = q.mean(axis=0)
    ang = np.arctan2(q[:, 1] - centre[1], q[:, 0] - centre[0])
    q = q[np.argsort(ang)]  # clockwise on screen (y down), starting anywhere
    edges = [np.linalg.norm(q[(i + 1) % 4] - q[i]) for i in range(4)]
    short = 0 if edges[0] + edges[2] < edges[1] + edges[3] else 1
    # of the two short edges, the top one has the smaller mid y
    mids = [(q[i] + q[(i + 1) % 4]) / 2 for i in (short, short + 2)]
    start = short if mids[0][1] < mids[1][1] else short + 2
    q = np.roll(q, -start, axis=0)
    up = (q[0] + q[1]) / 2 - (q[3] + q[2]) / 2
    if abs(up[1]) < abs(up[0]):  # long axis nearer horizontal than vertical
        return None
    return q


def _at_border(contour: np.ndarray, w: int, h: int) -> str | None:
    """Which edge of a w x h photo the blob touches (left, right, top, bottom), if any."""
    x, y, bw, bh = cv2.boundingRect(contour)
    for where, touches in (
        ("left", x <= 1),
        ("right", x + bw >= w - 1),
        ("top", y <= 1),
        ("bottom", y + bh >= h - 1),
    ):
        if touches:
            return where
    return None


def _ordinals(first: int, count: int) -> str:
    """'3rd' or '3rd and 4th' or '3rd to 5th' (cards from the left)."""
    if count <= 1:
        return _ordinal(first)
    last = first + count - 1
    return f"{_ordinal(first)} {'and' if count == 2 else 'to'} {_ordinal(last)}"


def _single_card_size(rects: Sequence[tuple]) -> float | None:
    """Median long side (photo px) of the blobs that look like one upright card."""
    longs = []
    for (_, (rw, rh), _), upright in rects:
        long, short = max(rw, rh), min(rw, rh)
        if long > 0 and upright and abs(short / long / ASPECT - 1) <= ASPECT_TOLERANCE:
            longs.append(long)
    return float(np.median(longs)) if longs else None


def _is_upright(contour: np.ndarray) -> bool:
    """The blob's long axis is nearer vertical than horizontal."""
    pts = contour.reshape(-1, 2).astype(np.float64)
    cov = np.cov((pts - pts.mean(axis=0)).T)
    evals, evecs = np.linalg.eigh(cov)
    major = evecs[:, int(np.argmax(evals))]
    return abs(major[1]) >= abs(major[0])


def _odd_shape(xs: np.ndarray, ratios: np.ndarray) -> int | None:
    """The card whose width/height is off the others' trend over x, if any (a parabola: seen
    in perspective, the cards' shape changes smoothly but not linearly across the photo)."""
    worst, worst_err = None, ROW_ASPECT_TOLERANCE
    for i in range(len(xs)):
        others = np.arange(len(xs)) != i
        if others.sum() < 4:
            return None
        trend = np.polyval(np.polyfit(xs[others], ratios[others], 2), xs[i])
        err = abs(ratios[i] / trend - 1)
        if err > worst_err:
            worst, worst_err = i, err
    return worst


def _fill(lab: np.ndarray, blob: np.ndarray, quad: np.ndarray, cloth: np.ndarray) -> float:
    """Fraction of the quadrilateral `quad` that is card (working px, uint8 masks).

    Inside the outline, what the cloth flood reached (not in `blob`) is still card unless it
    looks like the cloth round the card, and more so than like the card next to it: the flood
    leaks in where a stretch of the outline is faint (white card on a light cloth), while a
    covered or folded corner shows the cloth itself.
    """
    missing = (quad > 0) & (blob == 0)
    area = max(1, int(np.count_nonzero(quad)))
    if not missing.any():
        return 1.0
    x, y, bw, bh = cv2.boundingRect(quad)
    r = max(6, round(0.3 * min(bw, bh)))
    x0, y0 = max(0, x - r), max(0, y - r)
    x1, y1 = min(quad.shape[1], x + bw + r), min(quad.shape[0], y + bh + r)
    roi = lab[y0:y1, x0:x1]
    grown = cv2.dilate(quad[y0:y1, x0:x1], np.ones((5, 5), np.uint8)) > 0
    ring = (cloth[y0:y1, x0:x1] > 0) & ~grown
    card = cv2.erode(quad[y0:y1, x0:x1] & blob[y0:y1, x0:x1], np.ones((5, 5), np.uint8)) > 0
    if ring.sum() < 20:
        return float(1 - missing.sum() / area)
    d_cloth = _local_distance(roi, ring, max(3.0, 0.25 * min(bw, bh)))
    d_card = _local_distance(roi, card, max(3.0, 0.15 * min(bw, bh)))
    tau = max(MIN_STEP, 2.5 * float(np.percentile(d_cloth[ring], 90)))
    like_cloth = missing[y0:y1, x0:x1] & (d_cloth < tau) & (d_cloth < d_card)
    return float(1 - like_cloth.sum() / area)


def _local_distance(lab: np.ndarray, where: np.ndarray, sigma: float) -> np.ndarray:
    """Colour distance of every pixel to the nearby pixels of `where` (their Gaussian-weighted
    mean); infinite where none is near."""
    w = where.astype(np.float32)
    weight = cv2.GaussianBlur(w, (0, 0), sigma)
    local: np.ndarray = cv2.GaussianBlur(lab * w[..., None], (0, 0), sigma)
    local /= np.maximum(weight, 1e-6)[..., None]
    dist = np.linalg.norm(lab - local, axis=2)
    return np.where(weight > 1e-3, dist, np.inf)


def _blobs(image: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, float]:
    """(blobs left to right, working Lab, cloth mask, working scale): what the edges enclose."""
    h, w = image.shape[:2]
    scale = min(1.0, WORK_PX / max(h, w))
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(image, (sw, sh), interpolation=cv2.INTER_AREA) if scale < 1 else image
    lab = cv2.GaussianBlur(_lab(small), (0, 0), 1.0)
    mask = _enclosed(_edges(lab))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    min_area = 0.0015 * sh * sw
    blobs = sorted(
        (c for c in contours if cv2.contourArea(c) >= min_area),
        key=lambda c: cv2.boundingRect(c)[0],
    )
    return blobs, lab, 255 - mask, scale


def _outline(
    image: np.ndarray,
    lab: np.ndarray,
    cloth: np.ndarray,
    blob: np.ndarray,
    scale: float,
    ordinal: str,
) -> CardOutline:
    """The exact outline of one card's blob; EnrolmentError names the card and the fix."""
    bad_shape = (
        f"the {ordinal} card from the left is not card-shaped (covered, bent, or touching its "
        "neighbour): keep cards flat, apart and uncovered"
    )
    best: _Sides | None = None
    reach = round(4 / scale) + 2
    for prior in _quad_priors(blob.astype(np.float32) / scale):
        ordered = _order_upright(prior)
        if ordered is None:  # (a card lying sideways was told apart by its blob already)
            continue
        sides = _refine_sides(image, ordered, reach)
        if sides is not None and np.abs(sides.corners - ordered).max() > reach / 4:
            # again from what it found: near a corner the edge may have been out of reach
            again = _refine_sides(image, sides.corners, reach)
            sides = again if again is not None and _rank(again) >= _rank(sides) else sides
        if sides is not None and (best is None or _rank(sides) > _rank(best)):
            best = sides
        if best is not None and best.support >= MIN_SUPPORT:
            break  # (a later, rougher prior must not explain a hidden corner away)
    hard_to_see = EnrolmentError(
        f"the edges of the {ordinal} card from the left are hard to see: use a plain surface "
        "that contrasts with the cards' edges, and even light"
    )
    if best is None:
        raise hard_to_see
    hidden = int(np.argmin(best.corner_support))
    # one corner unseen (both sides' ends next to it) while others are plain to see: covered
    # (a faint side instead leaves its two corners half seen, by the other sides)
    covered = (
        best.corner_support[hidden] < MIN_CORNER_SUPPORT and sorted(best.corner_support)[2] >= 0.8
    )
    if best.support < MIN_SUPPORT and not covered:
        raise hard_to_see
    if best.corner_support[hidden] < MIN_CORNER_SUPPORT:
        where = ("top-left", "top-right", "bottom-right", "bottom-left")[hidden]
        raise EnrolmentError(
            f"the {where} corner of the {ordinal} card from the left is hidden (covered or "
            "folded): uncover it and lay the card flat"
        )
    corners = best.corners
    inside: np.ndarray = np.zeros(lab.shape[:2], np.uint8)
    cv2.drawContours(inside, [blob], -1, 255, -1)
    quad: np.ndarray = np.zeros_like(inside)
    cv2.fillConvexPoly(quad, np.round(corners * scale).astype(np.int32), 255)
    area = max(1, int(np.count_nonzero(quad)))
    grown: np.ndarray = cv2.dilate(quad, np.ones((9, 9), np.uint8))
    spill = np.count_nonzero(inside & ~grown) / area
    fill = _fill(lab, inside, quad, cloth)
    outline = CardOutline(corners, fill, 0.0)
    ratio = outline.width_px / max(1.0, outline.height_px)
    outline = CardOutline(corners, fill, float(abs(ratio / ASPECT - 1)))
    if outline.aspect_error > ASPECT_TOLERANCE or spill > MAX_SPILL:
        raise EnrolmentError(bad_shape)
    return outline


def find_cards(image: np.ndarray, expected: int = CARDS_PER_PHOTO) -> list[CardOutline]:
    """The cards of a row photo, left to right; EnrolmentError names the card and the fix."""
    if image is None or image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 50:
        raise EnrolmentError("not a usable colour photo")
    blobs, lab, cloth, scale = _blobs(image)
    sh, sw = lab.shape[:2]
    if not blobs:
        raise EnrolmentError(
            f"found 0 cards, expected {expected}: lay the cards on a plain surface that "
            "contrasts with them and fill the photo with the row"
        )
    rects = [(cv2.minAreaRect(c.astype(np.float32) / scale), _is_upright(c)) for c in blobs]
    card_long = _single_card_size(rects)
    if card_long is not None:  # crumbs and threads on the cloth are not cards
        keep = [
            i
            for i, c in enumerate(blobs)
            if cv2.contourArea(c) / scale**2 >= 0.2 * card_long**2 * ASPECT
            or _at_border(c, sw, sh) is not None
        ]
        blobs, rects = [blobs[i] for i in keep], [rects[i] for i in keep]
    outlines: list[CardOutline] = []
    for c, ((_, (rw, rh), _), upright) in zip(blobs, rects, strict=True):
        place = len(outlines) + 1  # this card's place from the left
        where = _at_border(c, sw, sh)
        if where is not None:
            raise EnrolmentError(
                f"the {_ordinal(place)} card from the left is cut off by the {where} edge of "
                f"the photo: step back or re-centre so all {expected} cards are fully in view "
                "with a margin round them"
            )
        long, short = max(rw, rh), min(rw, rh)
        solid = cv2.contourArea(c) / scale**2 / max(1.0, rw * rh) >= 0.8  # a full rectangle
        # lying across the row: as tall as a card and two or more wide, or a card sideways
        across = solid and not upright
        if across and card_long is not None and abs(short / card_long - 1) < 0.2:
            wide = long / (card_long * ASPECT)  # in card widths
            n = max(2, round(wide))
            if wide >= 1.7:
                raise EnrolmentError(
                    f"the {_ordinals(place, n)} cards from the left touch: lay them a finger's "
                    "width apart"
                )
        if across and abs(short / max(long, 1.0) / ASPECT - 1) <= ASPECT_TOLERANCE:
            raise EnrolmentError(
                f"the {_ordinal(place)} card from the left lies sideways: turn it upright "
                "(taller than wide, its top towards the top of the photo)"
            )
        outlines.append(_outline(image, lab, cloth, c, scale, _ordinal(place)))
    if len(outlines) != expected:
        raise EnrolmentError(
            f"found {len(outlines)} cards, expected {expected}: make sure all {expected} cards "
            "are fully in view and do not touch"
        )
    smallest = min(o.width_px for o in outlines)
    if smallest < MIN_CARD_WIDTH_PX:
        raise EnrolmentError(
            f"cards are too small in the photo ({smallest:.0f} px wide): move the camera closer "
            f"so each card is at least {MIN_CARD_WIDTH_PX} px wide"
        )
    centres = np.array([o.center for o in outlines])
    heights = np.array([o.height_px for o in outlines])
    odd = _odd_shape(centres[:, 0], np.array([o.width_px / o.height_px for o in outlines]))
    if odd is not None:
        raise EnrolmentError(
            f"the {_ordinal(odd + 1)} card from the left is not card-shaped (covered, bent, or "
            "touching its neighbour): keep cards flat, apart and uncovered"
        )
    fit = np.polyfit(centres[:, 0], centres[:, 1], 1)
    off = np.abs(centres[:, 1] - np.polyval(fit, centres[:, 0]))
    if off.max() > 0.35 * np.median(heights):
        raise EnrolmentError(
            f"the {_ordinal(int(np.argmax(off)) + 1)} card from the left is out of the row: lay "
            "the cards side by side in a straight horizontal row"
        )
    if abs(fit[0]) > 0.35:
        raise EnrolmentError(
            "the cards are not in one horizontal row: lay them side by side across the photo"
        )
    return outlines


def rectify(
    image: np.ndarray, corners: np.ndarray, px_per_mm: float = ENROL_PX_PER_MM
) -> np.ndarray:
    """The face seen through `corners` (TL, TR, BR, BL) as an upright 63 x 88 mm image."""
    w, h = round(CARD_W_MM * px_per_mm), round(CARD_H_MM * px_per_mm)
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
    return cv2.warpPerspective(
        image, m, (w, h), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE
    )


def sharpness(image: np.ndarray, outlines: Sequence[CardOutline]) -> float:
    """Contrast-normalised variance of the Laplacian inside the cards."""
    mask = np.zeros(image.shape[:2], np.uint8)
    for o in outlines:
        cv2.fillConvexPoly(mask, o.corners.astype(np.int32), 255)
    return _sharpness_in(image, mask)


def _sharpness_in(image: np.ndarray, mask: np.ndarray) -> float:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    inside = cv2.erode(mask, np.ones((9, 9), np.uint8)) > 0
    if not inside.any():
        return 0.0
    lap = cv2.Laplacian(grey, cv2.CV_32F, ksize=3)
    return float(lap[inside].var() / max(1e-6, grey[inside].var()))


def _blurred(sharp: float) -> EnrolmentError:
    return EnrolmentError(
        f"the photo is blurred (sharpness {sharp:.3f} < {MIN_SHARPNESS}): hold the camera "
        "still, focus on the cards, use more light"
    )


def read_photo(
    image: np.ndarray, ingredient: str, source: str = "", px_per_mm: float = ENROL_PX_PER_MM
) -> PhotoReading:
    """Find, check and rectify the 8 cards of one ingredient's photo."""
    t0 = time.perf_counter()
    try:
        outlines = find_cards(image)
    except EnrolmentError:
        # a blurred photo also blurs the cards' edges: say what is wrong with the photo, not
        # with the card whose edges went first
        blobs, lab, _, _ = _blobs(image)
        if blobs:
            mask: np.ndarray = np.zeros(lab.shape[:2], np.uint8)
            cv2.drawContours(mask, blobs, -1, 255, -1)
            mask = cv2.resize(mask, image.shape[1::-1], interpolation=cv2.INTER_NEAREST)
            sharp = _sharpness_in(image, mask)
            if sharp < MIN_SHARPNESS:
                raise _blurred(sharp) from None
        raise
    sharp = sharpness(image, outlines)
    if sharp < MIN_SHARPNESS:
        raise _blurred(sharp)
    faces = tuple(rectify(image, o.corners, px_per_mm) for o in outlines)
    return PhotoReading(
        source,
        ingredient,
        faces,
        tuple(outlines),
        sharp,
        time.perf_counter() - t0,
        cloth_colour(image, outlines),
    )


def photo_paths(inputs: Sequence[Path]) -> list[Path]:
    """The 7 photos: given one by one, or a single folder whose images sort in guide order."""
    if len(inputs) == 1 and inputs[0].is_dir():
        exts = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"}
        found = sorted(p for p in inputs[0].iterdir() if p.suffix.lower() in exts)
        if len(found) != len(INGREDIENTS):
            raise BadInputError(
                f"{inputs[0]} holds {len(found)} photos, expected {len(INGREDIENTS)} "
                "(one per ingredient, names in guide order)"
            )
        return found
    for p in inputs:
        if not p.exists():
            raise BadInputError(f"{p}: no such photo or folder")
    if len(inputs) != len(INGREDIENTS):
        raise BadInputError(
            f"got {len(inputs)} photos, expected {len(INGREDIENTS)}: one per ingredient in the "
            f"order {', '.join(INGREDIENTS)}"
        )
    for p in inputs:
        if not p.is_file():
            raise BadInputError(f"{p}: no such photo")
    return list(inputs)


def read_image(path: Path) -> np.ndarray:
    """The photo, refused when missing, past the size limit, damaged or not an image."""
    from companion import images

    if not path.is_file():
        raise BadInputError(f"{path}: no such photo")
    return images.read_image(path, "photo")


ORDER_MARGIN = 0.2
"""How much better (mean |NCC| of value marks) a photo's row must match the other photos
read right to left before it is refused: a wrong row scores 0.55..0.77 better reversed, a right
one at most 0.0 (the default deck and 27 generated designs of 9 families, faces as enrolled)."""

_LAYOUTS: Final = {
    "as laid": (False, False),
    "each card upside down": (False, True),
    "laid 7 to 0": (True, False),
    "upside down": (True, True),
}
"""What a photo's row may be, as (order reversed, faces turned 180 degrees): an upside-down
photo shows the cards turned and right to left. Many designs look the same turned, so only the
order is judged: the first two keep it, the last two reverse it."""


def _value_marks(faces: Sequence[np.ndarray]) -> np.ndarray:
    """What tells one ingredient's 8 cards apart: each face's band-passed grey minus the
    row's mean, at 63 x 88 (the numerals and pips; the shared art cancels)."""
    g = np.stack([_bandpassed(f) for f in faces])
    return g - g.mean(axis=0)


def _bandpassed(img: np.ndarray, size: tuple[int, int] = (63, 88)) -> np.ndarray:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    g = cv2.resize(g, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    return cv2.GaussianBlur(g, (0, 0), 1.0) - cv2.GaussianBlur(g, (0, 0), 6.0)


def _abs_ncc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|normalised correlation| of matching pairs along the first axis: a mark printed light
    on one ingredient and dark on another still matches."""
    a = a.reshape(len(a), -1)
    b = b.reshape(len(b), -1)
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    return np.abs((a * b).sum(axis=1)) / np.maximum(den, 1e-9)


def layout_scores(rows: Sequence[Sequence[np.ndarray]]) -> list[dict[str, float]]:
    """For each photo's row of 8 faces: how well its value marks match the other photos'
    (same value, same place) if it was laid as read, 7 to 0, upside down or card by card
    upside down. The enrolled deck is self-consistent when every row scores best as laid."""
    marks = [_value_marks(r) for r in rows]
    out = []
    for p, m in enumerate(marks):
        scores = {}
        for name, (reverse, turn) in _LAYOUTS.items():
            mine = m[::-1] if reverse else m
            if turn:
                mine = mine[:, ::-1, ::-1]
            scores[name] = float(
                np.mean([_abs_ncc(mine, other).mean() for q, other in enumerate(marks) if q != p])
            )
        out.append(scores)
    return out


def check_consistency(readings: Sequence[PhotoReading]) -> None:
    """EnrolmentError when a photo's row reads better right to left than as laid, compared
    with the other photos (a value's mark looks alike in every ingredient): a photo taken
    upside down or a row laid 7..0 would give its 8 faces the wrong values. A mistake made in
    every photo cannot be seen this way; the guide asks for 0 to 7, upright."""
    if len(readings) < 3:
        return
    wrong = []
    for i, sc in enumerate(layout_scores([r.faces for r in readings])):
        kept = max(sc["as laid"], sc["each card upside down"])
        flipped = max(sc["laid 7 to 0"], sc["upside down"])
        if flipped - kept > ORDER_MARGIN:
            wrong.append(i)
    if not wrong:
        return
    if len(wrong) > 1:  # which side is right is then unsure: name both
        rest = [i for i in range(len(readings)) if i not in wrong]
        raise EnrolmentError(
            "the photos disagree on the cards' order (photos "
            f"{', '.join(str(i + 1) for i in wrong)} against "
            f"{', '.join(str(i + 1) for i in rest)}): lay every row upright, values 0 to 7 "
            "from left to right, and take the wrong ones again"
        )
    r = readings[wrong[0]]
    raise EnrolmentError(
        f"photo {wrong[0] + 1} ({r.ingredient}, {r.source}): its cards read 7 to 0 next to the "
        "other photos' (the photo upside down, or the cards laid right to left): lay them 0 to "
        "7 from left to right with their tops toward the top of the photo, and take it again"
    )


def enroll(
    photos: Sequence[Path],
    name: str,
    px_per_mm: float = ENROL_PX_PER_MM,
    progress: bool = False,
) -> tuple[Any, list[PhotoReading]]:
    """(Deck, readings) from the 7 guided photos; the first bad photo raises EnrolmentError."""
    from tqdm import tqdm

    from companion.deck.deckdir import Deck

    paths = photo_paths(photos)
    readings = []
    for ingredient, path in tqdm(
        list(zip(INGREDIENTS, paths, strict=True)), desc="enrol", unit="photo", disable=not progress
    ):
        image = read_image(path)
        try:
            readings.append(read_photo(image, ingredient, str(path), px_per_mm))
        except EnrolmentError as exc:
            raise EnrolmentError(
                f"photo {len(readings) + 1} ({ingredient}, {path}): {exc}"
            ) from None
    check_consistency(readings)
    faces = {}
    cards_meta = {}
    for r in readings:
        for value, (face, outline) in enumerate(zip(r.faces, r.outlines, strict=True)):
            cid = Card(r.ingredient, value).id
            faces[cid] = face
            cards_meta[cid] = {
                "photo": r.source,
                "corners_px": [
                    [round(float(x), 1), round(float(y), 1)] for x, y in outline.corners
                ],
                "fill": round(outline.fill, 4),
                "aspect_error": round(outline.aspect_error, 4),
                "width_px": round(outline.width_px, 1),
            }
    meta = {
        "source": "companion deck enroll",
        "photos": [
            {
                "ingredient": r.ingredient,
                "path": r.source,
                "sharpness": round(r.sharpness, 4),
                "cloth_bgr": None if r.cloth_bgr is None else [round(c, 2) for c in r.cloth_bgr],
            }
            for r in readings
        ],
        "outlines": cards_meta,
        "orientation": "as photographed: the end nearer the top of the photo is the face's top",
    }
    deck = Deck(name=name, faces=faces, back=None, px_per_mm=px_per_mm, meta=meta)
    return deck, readings


def face_similarity(a: np.ndarray, b: np.ndarray, size: tuple[int, int] = (63, 88)) -> float:
    """How alike two faces look, 1 = same: normalised cross-correlation of band-passed grey.

    Downscaled to `size` (w, h) and band-passed (detail between ~1 and ~6 px), so the light,
    a colour cast, noise and sub-millimetre misalignment barely count while numerals and pips do.
    """

    def prep(img: np.ndarray) -> np.ndarray:
        g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        g = cv2.resize(g, size, interpolation=cv2.INTER_AREA).astype(np.float32)
        g = cv2.GaussianBlur(g, (0, 0), 1.0) - cv2.GaussianBlur(g, (0, 0), 6.0)
        return g - g.mean()

    fa, fb = prep(a), prep(b)
    denom = float(np.sqrt((fa * fa).sum() * (fb * fb).sum()))
    return float((fa * fb).sum() / denom) if denom > 0 else 0.0
