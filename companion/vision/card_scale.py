"""The table plane from the cards themselves, for a still photo without markers.

Every card is CARD_W_MM x CARD_H_MM and lies flat on the table, so the four corners of one
whole card in the image fix the plane's homography, perspective included. One card alone can
be anything card-shaped (a plaid square, the middle of a card between its two index strips),
so a card's homography is only believed when the other card-shaped outlines in the photo come
out as 63 x 88 mm rectangles under it too; the agreeing cards then refine it together.

What the cards cannot tell is where the kit's regions are: the plane is placed so the photo's
cards land inside the play area, upright, and the calibration says `regions_known=False`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from companion import layout
from companion.vision.calibration import TableCalibration

WORK_WIDTH: Final = 1280
"""Outlines are looked for at this width (a phone's 4000 px photo only adds texture edges)."""
MIN_AREA: Final = 0.0015
MAX_AREA: Final = 0.25
"""A card covers this share of the photo at least / at most: seen from 2 m / 15 cm through
a 66 degree lens (a phone's main camera is 65..75 degrees)."""
PRINT_STD: Final = 20.0
"""Grey-level spread inside a card's face (5 mm in from its edge), 0..255: print on paper."""
MIN_SIDE_RATIO: Final = 0.4
"""Short over long side in the image: 63/88 = 0.72 straight down, less when seen obliquely."""
AGREE_MM: Final = 3.5
"""A card-shaped outline agrees with a plane when a 63 x 88 mm rectangle fits its corners on
that plane this closely (RMS): a two-card cascade (63 x 100) or a strip's box does not."""
MIN_CARDS: Final = 2
"""Cards that must agree: one alone could be any rectangle."""
MAX_MISFIT: Final = 0.15
"""Largest _camera_misfit of a believable plane (cosine of the axes' angle + their length
ratio's departure from 1; a card read the wrong way round gives ~0.4)."""
REFINE_ROUNDS: Final = 8
CARD_MM: Final = np.array(
    [[0, 0], [layout.CARD_W_MM, 0], [layout.CARD_W_MM, layout.CARD_H_MM], [0, layout.CARD_H_MM]],
    np.float64,
)
"""A card's corners, portrait, clockwise on the plane (y down) from the top-left."""


@dataclass(frozen=True)
class CardScale:
    """What the cards gave: the calibration and the cards it rests on."""

    calibration: TableCalibration
    cards: tuple[np.ndarray, ...]
    """Image corners (4 x 2 px) of the whole cards that agreed on the plane."""
    residual_mm: float
    """RMS distance of their corners from true 63 x 88 mm rectangles on the plane."""


def calibration_from_cards(image: np.ndarray) -> TableCalibration | None:
    """The table plane measured on the whole cards in `image` (regions unknown), or None when
    fewer than MIN_CARDS card outlines agree on one plane."""
    found = card_scale(image)
    return None if found is None else found.calibration


def card_scale(image: np.ndarray) -> CardScale | None:
    """As calibration_from_cards, with the cards it used (for drawing and tests)."""
    if image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 32:
        return None
    work = _work(image)
    paper = paper_mask(work[0])
    grey = cv2.cvtColor(work[0], cv2.COLOR_BGR2GRAY)
    quads = [
        q
        for q in _outlines(image, work)
        if _paper_sides(paper, work[1], q) >= 2 and _printed(grey, work[1], q)
    ]
    quads = _distinct(quads)
    if len(quads) < MIN_CARDS:
        return None
    sizes = [math.sqrt(cv2.contourArea(q.astype(np.float32))) for q in quads]
    best: tuple[float, np.ndarray, list[int]] | None = None
    for q in quads:
        for corners in _portraits(q):
            h = cv2.getPerspectiveTransform(CARD_MM.astype(np.float32), corners.astype(np.float32))
            if not np.isfinite(h).all() or abs(np.linalg.det(h)) < 1e-12:
                continue
            if _camera_misfit(h, image.shape[1], image.shape[0]) > MAX_MISFIT:
                continue
            agree = [j for j, other in enumerate(quads) if _rect_fit(h, other)[0] <= AGREE_MM]
            # bigger outlines weigh more: a card's small printed boxes agree with each other
            weight = sum(sizes[j] for j in agree)
            if len(agree) >= MIN_CARDS and (best is None or weight > best[0]):
                best = (weight, h, agree)
    if best is None:
        return None
    refined, cards = _refine(best[1], [quads[j] for j in best[2]])
    if refined is None or len(cards) < MIN_CARDS:
        return None
    h = refined
    fits = [_rect_fit(h, q) for q in cards]
    poses = [fit[1] for fit in fits]
    residual = float(np.sqrt(np.mean([fit[0] ** 2 for fit in fits])))
    error_px = _reprojection_px(h, cards)
    image_from_plane = _placed(h, poses, image.shape[1], image.shape[0])
    cal = TableCalibration(
        image_from_plane, (image.shape[1], image.shape[0]), (), error_px, regions_known=False
    )
    return CardScale(cal, tuple(cards), residual)


def card_outlines(image: np.ndarray) -> list[np.ndarray]:
    """Convex four-cornered outlines of card size (image px, clockwise), from edges and from
    the paper's brightness: either alone misses cards (a table's own lines cut an edge hole
    open; paper merges with the cards it lies on)."""
    return _outlines(image, _work(image))


def _work(image: np.ndarray) -> tuple[np.ndarray, float]:
    s = min(1.0, WORK_WIDTH / image.shape[1])
    small = cv2.resize(image, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1 else image
    return cv2.GaussianBlur(small, (3, 3), 0), s


def paper_mask(small: np.ndarray) -> np.ndarray:
    """Bright, grey-ish pixels (the cards' paper) against the rest: Otsu on the darkest
    channel, which a coloured table keeps low."""
    _, paper = cv2.threshold(small.min(axis=2), 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    return paper


def _outlines(image: np.ndarray, work: tuple[np.ndarray, float]) -> list[np.ndarray]:
    small, s = work
    h, w = image.shape[:2]
    edges: np.ndarray = np.zeros(small.shape[:2], np.uint8)
    for channel in cv2.split(small):
        edges = cv2.bitwise_or(edges, cv2.Canny(channel, 40, 120))
    paper = paper_mask(small)
    masks = [
        255 - edges,
        255 - cv2.dilate(edges, np.ones((2, 2), np.uint8)),
        cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)),
        cv2.morphologyEx(paper, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)),
    ]
    area = small.shape[0] * small.shape[1]
    out = []
    for mask in masks:
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for c in contours:
            a = cv2.contourArea(c)
            if not MIN_AREA * area <= a <= MAX_AREA * area:
                continue
            hull = cv2.convexHull(c)
            if a < 0.85 * cv2.contourArea(hull):
                continue
            q = cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True)
            if len(q) != 4:
                continue
            quad = _clockwise(q.reshape(4, 2).astype(np.float64) / s)
            sides = np.linalg.norm(np.roll(quad, -1, axis=0) - quad, axis=1)
            short = min(sides[0] + sides[2], sides[1] + sides[3])
            long = max(sides[0] + sides[2], sides[1] + sides[3])
            if short >= MIN_SIDE_RATIO * long and not _touches_border(quad, w, h):
                out.append(quad)
    return out


def _touches_border(quad: np.ndarray, w: int, h: int, margin: float = 2.0) -> bool:
    """A card cut by the photo's edge is not whole."""
    x, y = quad[:, 0], quad[:, 1]
    return bool(
        (x < margin).any()
        or (y < margin).any()
        or (x > w - 1 - margin).any()
        or (y > h - 1 - margin).any()
    )


def _clockwise(quad: np.ndarray) -> np.ndarray:
    """Corners in clockwise order on the image (y down), as CARD_MM is on the plane."""
    x, y = quad[:, 0], quad[:, 1]
    signed = float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))
    return quad if signed > 0 else quad[::-1].copy()


def _portraits(quad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two ways to read the outline as a portrait card: its first side is the card's
    63 mm top. Seen obliquely a card's long side can look the shorter one, so both are tried."""
    return quad, np.roll(quad, -1, axis=0)


def _paper_sides(paper: np.ndarray, s: float, quad: np.ndarray) -> int:
    """How many of the outline's sides have paper just inside and no paper just outside: a
    whole card on the table. A pip box or the middle of a card lies in paper all round; a
    square of a plaid table has none inside; the last card of a cascade lies on the card
    below along its top only."""
    h = cv2.getPerspectiveTransform(CARD_MM.astype(np.float32), (quad * s).astype(np.float32))
    ppm, margin = 2.0, 8.0
    m = round(margin * ppm)
    to_patch = np.array([[ppm, 0, m], [0, ppm, m], [0, 0, 1]])
    w_ = round(layout.CARD_W_MM * ppm) + 2 * m
    h_ = round(layout.CARD_H_MM * ppm) + 2 * m
    patch = (
        cv2.warpPerspective(
            paper, to_patch @ np.linalg.inv(h), (w_, h_), flags=cv2.INTER_NEAREST
        ).astype(np.float32)
        / 255.0
    )
    a, b, e = 3, 9, 10  # inside: 1.5..4.5 mm from the edge; outside: 1.5..4.5 mm; 5 mm off corners
    bands = [
        (patch[m + a : m + b, m + e : w_ - m - e], patch[m - b : m - a, m + e : w_ - m - e]),
        (
            patch[h_ - m - b : h_ - m - a, m + e : w_ - m - e],
            patch[h_ - m + a : h_ - m + b, m + e : w_ - m - e],
        ),
        (patch[m + e : h_ - m - e, m + a : m + b], patch[m + e : h_ - m - e, m - b : m - a]),
        (
            patch[m + e : h_ - m - e, w_ - m - b : w_ - m - a],
            patch[m + e : h_ - m - e, w_ - m + a : w_ - m + b],
        ),
    ]
    return sum(bool(inner.mean() >= 0.5 and outer.mean() <= 0.35) for inner, outer in bands)


def _printed(grey: np.ndarray, s: float, quad: np.ndarray) -> bool:
    """A card's face carries print (an index, a picture, a pattern); a tile or a square of a
    plaid table, however card-shaped, is plain inside."""
    h = cv2.getPerspectiveTransform(CARD_MM.astype(np.float32), (quad * s).astype(np.float32))
    inset = 5.0
    to_patch = np.array([[1.0, 0, -inset], [0, 1.0, -inset], [0, 0, 1]])
    size = (round(layout.CARD_W_MM - 2 * inset), round(layout.CARD_H_MM - 2 * inset))
    patch = cv2.warpPerspective(grey, to_patch @ np.linalg.inv(h), size, flags=cv2.INTER_AREA)
    return float(patch.std()) >= PRINT_STD


def _camera_misfit(h: np.ndarray, w: int, img_h: int) -> float:
    """How far `h` (plane -> image) is from what a real camera can make of a flat table: a
    pinhole with square pixels centred in the photo sees the plane's two axes as orthogonal,
    equally long directions. Smallest over plausible lenses (40..100 degrees wide). Reading a
    card's long side as its short one stretches the plane one way, which no lens does; cards
    lying parallel agree with that stretch too, so only this tells the two apart."""
    centred = np.array([[1, 0, -(w - 1) / 2], [0, 1, -(img_h - 1) / 2], [0, 0, 1]]) @ h
    best = math.inf
    for hfov in (40, 50, 60, 66, 72, 80, 90, 100):
        f = (w / 2) / math.tan(math.radians(hfov) / 2)
        m = np.diag([1 / f, 1 / f, 1.0]) @ centred
        a, b = m[:, 0], m[:, 1]
        na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
        misfit = abs(float(a @ b)) / (na * nb) + abs(na / nb - 1)
        best = min(best, misfit)
    return best


def _distinct(quads: list[np.ndarray]) -> list[np.ndarray]:
    """One outline per place: the edge and the paper masks often find the same card."""
    out: list[np.ndarray] = []
    for q in sorted(quads, key=lambda q: -cv2.contourArea(q.astype(np.float32))):
        c = q.mean(axis=0)
        size = math.sqrt(cv2.contourArea(q.astype(np.float32)))
        if all(np.linalg.norm(c - o.mean(axis=0)) > 0.25 * size for o in out):
            out.append(q)
    return out


def _rect_fit(h: np.ndarray, quad: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(RMS mm, rigid pose card -> plane 3x3, the rectangle's corners in the outline's order)
    of the 63 x 88 mm rectangle that best fits the outline's corners mapped onto the plane by
    `h` (plane -> image); any of the four turns."""
    pts = cv2.perspectiveTransform(
        quad.reshape(-1, 1, 2).astype(np.float64), np.linalg.inv(h)
    ).reshape(-1, 2)
    best: tuple[float, np.ndarray, np.ndarray] = (math.inf, np.eye(3), pts)
    for k in range(4):
        pose, moved, rms = _procrustes(CARD_MM, np.roll(pts, -k, axis=0))
        if rms < best[0]:
            best = (rms, pose, np.roll(moved, k, axis=0))
    return best


def _procrustes(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Rotation + translation taking src points nearest to dst (no scale, no mirror): the
    pose, the moved points and their RMS distance."""
    cs, cd = src.mean(axis=0), dst.mean(axis=0)
    u, _, vt = np.linalg.svd((src - cs).T @ (dst - cd))
    r = (u @ vt).T
    if np.linalg.det(r) < 0:
        return np.eye(3), src, math.inf
    t = cd - r @ cs
    moved = src @ r.T + t
    rms = float(np.sqrt(np.mean(np.sum((moved - dst) ** 2, axis=1))))
    pose = np.eye(3)
    pose[:2, :2], pose[:2, 2] = r, t
    return pose, moved, rms


def _refine(h: np.ndarray, quads: list[np.ndarray]) -> tuple[np.ndarray | None, list[np.ndarray]]:
    """All agreeing cards at once: each card's best rectangle on the plane, then the one
    homography taking all those rectangles to their image corners, in turn."""
    for _ in range(REFINE_ROUNDS):
        fits = [(q, _rect_fit(h, q)) for q in quads]
        kept = [(q, fit) for q, fit in fits if fit[0] <= 2 * AGREE_MM]
        if len(kept) < MIN_CARDS:
            return None, [q for q, _ in kept]
        src = np.concatenate([fit[2] for _, fit in kept])
        dst = np.concatenate([q for q, _ in kept])
        new, _ = cv2.findHomography(src, dst, 0)
        if new is None or not np.isfinite(new).all():
            return None, [q for q, _ in kept]
        h, quads = new, [q for q, _ in kept]
    return h, quads


def _reprojection_px(h: np.ndarray, quads: list[np.ndarray]) -> float:
    """RMS image distance between the cards' corners and their fitted rectangles'."""
    err = []
    for q in quads:
        ideal = _rect_fit(h, q)[2]
        proj = cv2.perspectiveTransform(ideal.reshape(-1, 1, 2), h).reshape(-1, 2)
        err.append(np.sum((proj - q) ** 2, axis=1))
    return float(np.sqrt(np.mean(np.concatenate(err))))


def _placed(h: np.ndarray, poses: list[np.ndarray], w: int, img_h: int) -> np.ndarray:
    """`h` (plane -> image, the plane turned and shifted at random) with the plane turned so
    the cards stand upright with the photo's top at the top, and shifted so what the photo
    shows of the table lies in the play area (centred on the cards when it is larger)."""
    # the cards' long sides, as a doubled angle so a card upside down counts the same
    doubled = [2 * math.atan2(p[1, 1], p[0, 1]) for p in poses]  # card y axis on the plane
    axis = 0.5 * math.atan2(np.mean(np.sin(doubled)), np.mean(np.cos(doubled)))
    # the photo's downward direction at its centre, on the plane
    inv = np.linalg.inv(h)
    mid = cv2.perspectiveTransform(
        np.array([[[w / 2, img_h / 2]], [[w / 2, img_h / 2 + 10]]], np.float64), inv
    ).reshape(-1, 2)
    down = mid[1] - mid[0]
    if math.cos(axis) * down[0] + math.sin(axis) * down[1] < 0:
        axis += math.pi
    # turn the plane so `axis` becomes +y
    turn = math.pi / 2 - axis
    c, s = math.cos(turn), math.sin(turn)
    rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    h_turned = h @ np.linalg.inv(rot)
    inv = np.linalg.inv(h_turned)
    centres = np.array([(rot @ p)[:2, 2] for p in poses])
    # what the photo shows of the table, near the cards (an oblique photo sees to the horizon)
    gx, gy = np.meshgrid(np.linspace(0, w - 1, 17), np.linspace(0, img_h - 1, 11))
    grid = np.column_stack([gx.ravel(), gy.ravel(), np.ones(gx.size)]) @ inv.T
    seen = grid[np.abs(grid[:, 2]) > 1e-12]
    seen = seen[:, :2] / seen[:, 2:3]
    near = np.linalg.norm(seen - centres.mean(axis=0), axis=1) < 2 * layout.PLAY_W_MM
    seen = seen[near] if near.any() else centres
    lo, hi = seen.min(axis=0), seen.max(axis=0)
    size = np.array([layout.PLAY_W_MM, layout.PLAY_H_MM])
    cards_mid = (centres.min(axis=0) + centres.max(axis=0)) / 2
    centre = np.where(
        hi - lo <= size, (lo + hi) / 2, np.clip(cards_mid, lo + size / 2, hi - size / 2)
    )
    shift = np.array([[1, 0, size[0] / 2 - centre[0]], [0, 1, size[1] / 2 - centre[1]], [0, 0, 1]])
    out = h_turned @ np.linalg.inv(shift)
    return out / out[2, 2]
