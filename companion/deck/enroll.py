"""Deck enrolment: seven photos of the published game's cards -> a deck folder of 56 faces.

The player lays the 8 cards of one ingredient in a row (values 0..7 from left to right, face up,
upright) on a plain surface that contrasts with the cards, and photographs them from above; one
photo per ingredient, in the rulebook order. Each card is labelled by its place, so nothing has
to be recognised: the cards are only found, measured and rectified.

Finding cards: the surface is modelled as a smooth colour field (a quadratic per channel fitted
to the pixels that are not card, so a light gradient does not count as a card), the colour
distance to it is thresholded (Otsu), and each blob's outline is fitted by four straight sides
(lines fitted to the contour away from the rounded corners), intersected into exact corners.

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
ASPECT_TOLERANCE: Final = 0.15
"""Relative error allowed on width/height (a photo taken from slightly off vertical)."""
MIN_FILL: Final = 0.93
"""Blob area / fitted quadrilateral area below this: a corner is covered or the card is bent."""
MIN_SHARPNESS: Final = 0.02
"""Variance of the Laplacian over the cards' grey variance (contrast-normalised, so warm or dim
light does not change it); sharp photos give 0.1..1, a visibly blurred one < 0.01."""

MIN_CONTRAST_LAB: Final = 10.0
"""A card edge must differ from the surface by at least this (CIE Lab units, 8-bit scale)."""


class EnrolmentError(BadInputError):
    """A photo that cannot be enrolled; the message says what to fix."""


@dataclass(frozen=True)
class CardOutline:
    """One card found in a photo."""

    corners: np.ndarray
    """(4, 2) float32 image px: top-left, top-right, bottom-right, bottom-left of the face."""
    fill: float
    """Blob area / quadrilateral area (1.0 = clean outline)."""
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


def _ordinal(i: int) -> str:
    return {1: "1st", 2: "2nd", 3: "3rd"}.get(i, f"{i}th")


def _foreground(image: np.ndarray) -> np.ndarray:
    """uint8 mask of what is not the plain surface."""
    h, w = image.shape[:2]
    scale = 400 / max(h, w)
    small = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB).astype(np.float32)
    sh, sw = lab.shape[:2]
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    xx, yy = xx / sw - 0.5, yy / sh - 0.5
    basis = np.stack([np.ones_like(xx), xx, yy, xx * xx, yy * yy, xx * yy], axis=-1)
    border = max(2, round(0.04 * min(sh, sw)))
    bg = np.zeros((sh, sw), bool)
    bg[:border], bg[-border:], bg[:, :border], bg[:, -border:] = True, True, True, True
    for _ in range(3):
        a = basis[bg].reshape(-1, 6)
        coef, *_ = np.linalg.lstsq(a, lab[bg].reshape(-1, 3), rcond=None)
        model = basis.reshape(-1, 6) @ coef
        dist = np.linalg.norm(lab.reshape(-1, 3) - model, axis=1).reshape(sh, sw)
        # the surface's own spread (texture, noise) sets the threshold, not Otsu: Otsu would
        # split paper from everything else and lose dark card edges on a mid-tone cloth
        t = max(MIN_CONTRAST_LAB, 3.0 * float(np.percentile(dist[bg], 95)))
        new_bg = dist < t
        if new_bg.sum() < 0.2 * new_bg.size:
            break
        bg = new_bg
    # full resolution: distance to the surface model, thresholded the same way
    full_model = cv2.resize(model.reshape(sh, sw, 3), (w, h), interpolation=cv2.INTER_LINEAR)
    lab_full = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    dist = np.linalg.norm(lab_full - full_model, axis=2)
    dist = cv2.GaussianBlur(dist, (0, 0), max(1.0, min(h, w) / 1000))
    mask = (dist >= t).astype(np.uint8) * 255
    k = max(3, round(min(h, w) / 300)) | 1
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((2 * k + 1, 2 * k + 1), np.uint8))
    return mask


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


def _fit_sides(contour: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Exact corners: a line fitted to each side's contour points, away from the corners."""
    pts = contour.reshape(-1, 2).astype(np.float32)
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        ab = b - a
        length = float(np.linalg.norm(ab))
        if length < 1:
            return quad
        u = ab / length
        n = np.array([-u[1], u[0]])
        rel = pts - a
        t = rel @ u
        d = np.abs(rel @ n)
        sel = pts[(t > 0.15 * length) & (t < 0.85 * length) & (d < max(3.0, 0.04 * length))]
        if len(sel) < 5:
            return quad
        vx, vy, x0, y0 = cv2.fitLine(sel, cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0]), np.array([vx, vy])))
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        m = np.array([d1, -d2]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return quad
        s = np.linalg.solve(m, p2 - p1)
        out.append(p1 + s[0] * d1)
    return np.array(out, np.float32)


def find_cards(image: np.ndarray, expected: int = CARDS_PER_PHOTO) -> list[CardOutline]:
    """The cards of a row photo, left to right; EnrolmentError says what to fix."""
    if image is None or image.ndim != 3 or min(image.shape[:2]) < 50:
        raise EnrolmentError("not a usable colour photo")
    h, w = image.shape[:2]
    mask = _foreground(image)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    min_area = 0.0015 * h * w
    blobs = [c for c in contours if cv2.contourArea(c) >= min_area]
    if not blobs:
        raise EnrolmentError(
            f"found 0 cards, expected {expected}: lay the cards on a plain surface that "
            "contrasts with them and fill the photo with the row"
        )
    blobs.sort(key=lambda c: cv2.boundingRect(c)[0])
    margin = 2
    for c in blobs:
        x, y, bw, bh = cv2.boundingRect(c)
        if x <= margin or y <= margin or x + bw >= w - margin or y + bh >= h - margin:
            where = "left" if x <= margin else "right" if x + bw >= w - margin else "top/bottom"
            raise EnrolmentError(
                f"a card at the {where} edge of the photo is cut off: step back or re-centre "
                f"so all {expected} cards are fully in view with a margin round them"
            )
    outlines = []
    for i, c in enumerate(blobs, 1):
        hull = cv2.convexHull(c)
        quad = None
        peri = cv2.arcLength(hull, True)
        for eps in (0.01, 0.02, 0.03, 0.05):
            approx = cv2.approxPolyDP(hull, eps * peri, True)
            if len(approx) == 4:
                quad = approx.reshape(4, 2).astype(np.float32)
                break
        bad_shape = (
            f"the {_ordinal(i)} card from the left is not card-shaped (covered, bent, or "
            "touching its neighbour): keep cards flat, apart and uncovered"
        )
        if quad is None:
            raise EnrolmentError(bad_shape)
        ordered = _order_upright(quad)
        if ordered is None:
            raise EnrolmentError(
                f"the {_ordinal(i)} card from the left lies sideways: lay every card upright "
                "(taller than wide, top towards the top of the photo)"
            )
        corners = _fit_sides(c, ordered)
        outline = CardOutline(
            corners=corners,
            fill=float(cv2.contourArea(c) / max(1.0, cv2.contourArea(corners))),
            aspect_error=0.0,
        )
        ratio = outline.width_px / max(1.0, outline.height_px)
        outline = CardOutline(corners, outline.fill, float(abs(ratio / ASPECT - 1)))
        if outline.aspect_error > ASPECT_TOLERANCE or outline.fill < MIN_FILL:
            raise EnrolmentError(bad_shape)
        outlines.append(outline)
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
    fit = np.polyfit(centres[:, 0], centres[:, 1], 1)
    off = np.abs(centres[:, 1] - np.polyval(fit, centres[:, 0]))
    if off.max() > 0.35 * np.median(heights) or abs(fit[0]) > 0.35:
        raise EnrolmentError(
            "the cards are not in one row: lay them side by side in a straight horizontal row"
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
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    mask = np.zeros(grey.shape, np.uint8)
    for o in outlines:
        cv2.fillConvexPoly(mask, o.corners.astype(np.int32), 255)
    mask = cv2.erode(mask, np.ones((9, 9), np.uint8)) > 0
    if not mask.any():
        return 0.0
    lap = cv2.Laplacian(grey, cv2.CV_32F, ksize=3)
    return float(lap[mask].var() / max(1e-6, grey[mask].var()))


def read_photo(
    image: np.ndarray, ingredient: str, source: str = "", px_per_mm: float = ENROL_PX_PER_MM
) -> PhotoReading:
    """Find, check and rectify the 8 cards of one ingredient's photo."""
    t0 = time.perf_counter()
    outlines = find_cards(image)
    sharp = sharpness(image, outlines)
    if sharp < MIN_SHARPNESS:
        raise EnrolmentError(
            f"the photo is blurred (sharpness {sharp:.3f} < {MIN_SHARPNESS}): hold the camera "
            "still, focus on the cards, use more light"
        )
    faces = tuple(rectify(image, o.corners, px_per_mm) for o in outlines)
    return PhotoReading(source, ingredient, faces, tuple(outlines), sharp, time.perf_counter() - t0)


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
    if not path.is_file():
        raise BadInputError(f"{path}: no such photo")
    data = np.fromfile(str(path), np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise BadInputError(f"{path}: not a readable image (corrupt or not a photo)")
    return image


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
            {"ingredient": r.ingredient, "path": r.source, "sharpness": round(r.sharpness, 4)}
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
