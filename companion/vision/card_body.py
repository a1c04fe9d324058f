"""A card's body, the art between its two index bands, against each ingredient's.

A band alone tells two look-alike ingredients apart by a small icon and a few percent of
colour; a card seen whole shows its whole picture, which differs far more. And a thing that is
no face of the deck at all (the face-down deck's back, whose top edge can pass for a band of a
like colour) shows a picture like none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from companion.layout import CARD_H_MM, CARD_W_MM, INDEX_STRIP_MM
from companion.vision.calibration import TableCalibration
from companion.vision.plane import plane_patch, turned_patch
from companion.vision.turned_cards import (
    EDGE_LEVEL,
    CardPose,
    edge_across,
    outline_support,
)

BODY_PPM: Final = 1.0
"""The art is compared at 1 px/mm: its shapes are centimetres, a hand's blur is not."""
INSET_MM: Final = 3.0
"""Left out round the body: card edges a millimetre or two off, rounded corners."""
BODY_BLUR_MM: Final = 1.0
SEARCH_MM: Final = 3
"""How far the body may sit from where the band puts it (the band's own alignment, curl)."""
BODY_Y0_MM: Final = INDEX_STRIP_MM
BODY_Y1_MM: Final = CARD_H_MM - INDEX_STRIP_MM
"""The body: from under the top band to over the bottom one (whose index differs per value)."""
COVER_V_MM: Final = (6.0, CARD_H_MM - 1.5 * INDEX_STRIP_MM + 2.0)
"""Where another box's centre lies on a card's body (mm down from the card's band centre): a
cascade's next band sits 10-20 mm down, the card's own other end (72 mm) is not on it. A box
a card's length lower is the bottom band of a card over the body, its top band missed (a scan
column's last card read from its foot, path-traced foil-1): one whose top band would lie at
most FOOT_OVER_MM down (a cascade's), not the top band of a card laid further on (the first
card of a bowl below the face-down deck, 100+ mm down)."""
FOOT_OVER_MM: Final = 30.0
FOOT_MIN_MM: Final = 0.9 * INDEX_STRIP_MM
"""Only a box a whole band tall is taken for another card's foot (a card's last band shows
whole): a box cut by the table's edge beyond the face-down deck (11 mm) hid the deck from the
check. The finder's confidence does not tell them apart (that box 0.40, a real foot 0.43)."""
END_TO_END_MM: Final = CARD_H_MM - INDEX_STRIP_MM
"""From a card's top band's centre to its bottom band's."""
OUTLINE_MARGIN_MM: Final = 6.0
FLAT: Final = 8.0
"""A body whose every channel varies less than this (grey levels, standard deviation) shows
nothing to tell cards apart by: a deck with a blank middle is not checked whole."""
N_VALUES: Final = 8
BODY_W: Final = round((CARD_W_MM - 2 * INSET_MM) * BODY_PPM)
BODY_H: Final = round((BODY_Y1_MM - BODY_Y0_MM - 2 * INSET_MM) * BODY_PPM)


def body_of_face(face: np.ndarray, gains: np.ndarray | None = None) -> np.ndarray:
    """A face's body (float32 BGR, BODY_H x BODY_W) as the table's are cut (`body_patch`)."""
    fh, fw = face.shape[:2]
    ppm_y, ppm_x = fh / CARD_H_MM, fw / CARD_W_MM
    y0 = round((BODY_Y0_MM + INSET_MM) * ppm_y)
    y1 = round((BODY_Y1_MM - INSET_MM) * ppm_y)
    x0, x1 = round(INSET_MM * ppm_x), round((CARD_W_MM - INSET_MM) * ppm_x)
    body = cv2.resize(face[y0:y1, x0:x1], (BODY_W, BODY_H), interpolation=cv2.INTER_AREA)
    body = body.astype(np.float32)
    return body * gains if gains is not None else body


def body_patch(
    image: np.ndarray,
    cal: TableCalibration,
    band_centre_mm: tuple[float, float],
    angle_deg: float,
    flipped: bool,
) -> np.ndarray:
    """The body of the card whose top band is centred at `band_centre_mm` (uint8 BGR, SEARCH_MM
    wider each way than BODY_H x BODY_W), upright."""
    # card-local mm: x right from the card's middle, y down from the band's centre
    s = SEARCH_MM
    x0 = -CARD_W_MM / 2 + INSET_MM - s
    y0 = BODY_Y0_MM - INDEX_STRIP_MM / 2 + INSET_MM - s
    size = (BODY_W + 2 * round(s * BODY_PPM), BODY_H + 2 * round(s * BODY_PPM))
    angle = _band_frame(band_centre_mm, angle_deg, flipped).angle_deg
    return turned_patch(image, cal, band_centre_mm, angle, (x0, y0), size, BODY_PPM, cv2.INTER_AREA)


@dataclass(frozen=True)
class Bodies:
    """A deck's card bodies as the table's are compared with them."""

    means: np.ndarray
    """(2, 7, BODY_H, BODY_W, 3) each ingredient's mean body, upright then turned (a card read
    from its bottom band): where the table's body lies is found against these."""
    units: np.ndarray
    """(2, 56, BODY_H * BODY_W * 3) every card's body, per-channel zero-mean, unit length."""
    plain: np.ndarray
    """(56,) the card's body shows too little to compare (a blank middle, a faint wash)."""


def bodies_of(bodies: Sequence[np.ndarray]) -> Bodies:
    """`bodies`: the 56 cards' (`body_of_face`, float32), in CARD_IDS order."""
    blur = BODY_BLUR_MM * BODY_PPM
    upright = np.stack([cv2.GaussianBlur(b, (0, 0), blur) for b in bodies])
    both = np.stack([upright, np.ascontiguousarray(upright[:, ::-1, ::-1])])
    n_ing = len(bodies) // N_VALUES
    means = both.reshape(2, n_ing, N_VALUES, *upright.shape[1:]).mean(axis=2)
    flat = both - both.mean(axis=(2, 3), keepdims=True)
    norms = np.linalg.norm(flat.reshape(2, len(bodies), -1), axis=2, keepdims=True)
    units = flat.reshape(2, len(bodies), -1) / np.maximum(norms, 1e-6)
    spread = upright.reshape(len(bodies), -1, 3).std(axis=1).max(axis=1)
    plain = spread < FLAT
    units[:, plain] = 0.0  # correlates with nothing (its rounding noise would, at random)
    return Bodies(means.astype(np.float32), units.astype(np.float32), plain)


def card_scores(patch: np.ndarray, bodies: Bodies) -> np.ndarray:
    """(56,) each card's body's normalised correlation with the table's (`patch`, float32,
    the frame's white balance applied like the references'), read either way up: the patch's
    body is placed against the ingredients' mean bodies, then compared with every card's."""
    seen = cv2.GaussianBlur(patch, (0, 0), BODY_BLUR_MM * BODY_PPM)
    out = np.full(bodies.units.shape[1], -1.0, np.float32)
    for end in range(2):
        best, x, y = -2.0, 0, 0
        for mean in bodies.means[end]:
            _, score, _, loc = cv2.minMaxLoc(cv2.matchTemplate(seen, mean, cv2.TM_CCOEFF_NORMED))
            if score > best:
                best, (x, y) = score, loc
        crop = seen[y : y + BODY_H, x : x + BODY_W]
        crop = (crop - crop.mean(axis=(0, 1))).ravel()
        unit = crop / max(float(np.linalg.norm(crop)), 1e-6)
        out = np.maximum(out, bodies.units[end] @ unit)
    return out


Box = tuple[float, float, float, float]
"""A band the finder boxed: x0, y0, x1, y1 on the table plane, mm."""


def _band_frame(band_centre_mm: tuple[float, float], angle_deg: float, flipped: bool) -> CardPose:
    """The band's own frame (x right, y down the card from the band's centre) as a pose."""
    return CardPose(band_centre_mm, angle_deg + (180.0 if flipped else 0.0))


def covered(
    band_centre_mm: tuple[float, float], angle_deg: float, flipped: bool, boxes: Sequence[Box]
) -> bool:
    """Whether another band the finder boxed lies on the body of this band's card: a
    cascade's next card (its top band, COVER_V_MM down) or one read from its foot alone."""
    if not boxes:
        return False
    b = np.asarray(boxes, np.float64)
    frame = _band_frame(band_centre_mm, angle_deg, flipped)
    # the boxes' centres in the band's frame (CardPose.to_card, all at once)
    centres = (b[:, :2] + b[:, 2:]) / 2 - np.asarray(band_centre_mm)
    u, v = (centres @ frame.rotation).T
    lo, hi = COVER_V_MM
    tall = np.minimum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]) >= FOOT_MIN_MM
    foot = tall & (lo <= v - END_TO_END_MM) & (v - END_TO_END_MM <= FOOT_OVER_MM)
    on_body = (lo <= v) & (v <= hi)
    return bool(np.any((np.abs(u) < CARD_W_MM / 2) & (on_body | foot)))


def outline_shown(
    image: np.ndarray,
    cal: TableCalibration,
    band_centre_mm: tuple[float, float],
    angle_deg: float,
    flipped: bool,
    boxes: Sequence[Box],
) -> float:
    """The share of the outline of a band's card that shows an edge across it; 0 when another
    band the finder boxed lies on its body (`covered`: a cascade's next card). The card lies
    whole in view when it is at least MIN_SUPPORT (a hand or a card the finder missed breaks
    the outline)."""
    if covered(band_centre_mm, angle_deg, flipped, boxes):
        return 0.0
    frame = _band_frame(band_centre_mm, angle_deg, flipped)
    cx, cy = frame.to_plane(np.array([[0.0, END_TO_END_MM / 2]]))[0]  # the card's centre
    half = CARD_H_MM / 2 + OUTLINE_MARGIN_MM
    gx, gy = _gradients_round(image, cal, (float(cx), float(cy)), half)
    pose = CardPose((half, half), frame.angle_deg)
    return float(outline_support(gx, gy, [pose])[0])


def _gradients_round(
    image: np.ndarray, cal: TableCalibration, centre_mm: tuple[float, float], half: float
) -> tuple[np.ndarray, np.ndarray]:
    """Sobel gradients (x, y) of the table at 1 px/mm in the square `half` mm round
    `centre_mm`, whose centre is then (half, half) px: where outlines are looked for."""
    cx, cy = centre_mm
    patch = plane_patch(image, cal, cx - half, cy - half, 2 * half, 2 * half, 1.0)
    gray = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    return cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)


SIDE_INSET_MM: Final = 2.0
"""The band's long edges are looked at from this far under the card's top edge (its corner
is rounded) to the band's foot."""


def side_support(
    image: np.ndarray,
    cal: TableCalibration,
    band_centre_mm: tuple[float, float],
    angle_deg: float,
    flipped: bool,
) -> float:
    """The larger share of the band's two long edges (the card's sides over the band's height)
    where the view has an edge across them within a pixel: a band on a card shows at least one
    side (a cascade's bands line up on the card's sides), a box on the cloth's stripes or on a
    marker tile shows none."""
    frame = _band_frame(band_centre_mm, angle_deg, flipped)
    half = CARD_W_MM / 2 + OUTLINE_MARGIN_MM
    gx, gy = _gradients_round(image, cal, band_centre_mm, half)
    ys = np.arange(-INDEX_STRIP_MM / 2 + SIDE_INSET_MM, INDEX_STRIP_MM / 2, 1.0)
    rot = frame.rotation
    nx, ny = rot[:, 0]  # across the card, on the plane
    shares = []
    for side in (-CARD_W_MM / 2, CARD_W_MM / 2):
        local = np.stack([np.full_like(ys, side), ys], axis=1)
        pts = np.round(local @ rot.T + half).astype(int)
        across = edge_across(gx, gy, pts[:, 0], pts[:, 1], nx, ny)
        shares.append(float(np.mean(across >= EDGE_LEVEL)))
    return max(shares)


PAIR_BLUR_MM: Final = 2.0
"""Where two ingredients' mean bodies differ is blurred this much: an outline a millimetre or
two off must still fall on it."""


def pair_lead(patch: np.ndarray, bodies: Bodies, a: int, b: int) -> float:
    """How much better ingredient a's mean body fits the table's (`patch`, as `card_scores`)
    than b's, compared only where the two differ: two ingredients of one colour share most
    of their body, so its whole correlation barely parts them, while their pictures differ
    where it counts. At the way up whose alignment fits best; each mean at its own best
    place and at the other's."""
    seen = cv2.GaussianBlur(patch, (0, 0), BODY_BLUR_MM * BODY_PPM)
    best_fit, lead = -2.0, 0.0
    for end in range(2):
        ma, mb = bodies.means[end, a], bodies.means[end, b]
        diff = cv2.GaussianBlur(np.abs(ma - mb).sum(axis=2), (0, 0), PAIR_BLUR_MM * BODY_PPM)
        peak = float(diff.max())
        if peak <= 0.0:
            continue
        weights = (diff / peak)[..., None]
        places, fit = [], -2.0
        for mean in (ma, mb):
            _, score, _, loc = cv2.minMaxLoc(cv2.matchTemplate(seen, mean, cv2.TM_CCOEFF_NORMED))
            places.append(loc)
            fit = max(fit, score)
        if fit <= best_fit:
            continue
        units = [masked_unit(m, weights) for m in (ma, mb)]
        scores = [-2.0, -2.0]
        for x, y in places:
            crop = masked_unit(seen[y : y + BODY_H, x : x + BODY_W], weights)
            for k in range(2):
                scores[k] = max(scores[k], float(crop @ units[k]))
        best_fit, lead = fit, scores[0] - scores[1]
    return lead


def masked_unit(image: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted, per-channel zero-mean, unit vector (float32): the shape of what differs,
    not its average colour (a faint numeral must not lose to the card with the least ink)."""
    mean = (image * weights).sum(axis=(0, 1)) / max(float(weights.sum()), 1e-6)
    v = ((image - mean) * weights).astype(np.float32).ravel()
    return v / max(float(np.linalg.norm(v)), 1e-6)
