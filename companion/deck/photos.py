"""Synthetic enrolment photos: a row of faces on a cloth, seen by a hand-held camera.

For tests and demos of `companion deck enroll` without the published cards: perspective,
a light gradient, a colour cast, sensor noise and a little blur. Optional knobs make the photos
people actually take (a cloudy cloth, uneven shading, a strong gradient, a glare spot, a phone
held off vertical); they draw from their own random stream, so the defaults give the very same
photos as before. Independent of the table-scene renderer on purpose (enrolment must not be
tested by the code it feeds).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from companion.layout import CARD_CORNER_MM, CARD_H_MM, CARD_W_MM

ROW_GAP_MM = 14.0
MARGIN_MM = 30.0


@dataclass(frozen=True)
class RowPhoto:
    image: np.ndarray
    """BGR uint8."""
    corners: tuple[np.ndarray, ...]
    """Each card's true TL, TR, BR, BL in image px, left to right."""


def _card_mask(h: int, w: int, ppm: float) -> np.ndarray:
    mask = np.zeros((h, w), np.uint8)
    r = max(1, round(CARD_CORNER_MM * ppm))
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def _keystone(corners: np.ndarray, amount: float, side: int) -> np.ndarray:
    """The side `side` (0 top, 1 right, 2 bottom, 3 left) of TL, TR, BR, BL shrunk about its
    middle by `amount`: what a camera tilted away from that side sees."""
    q = corners.copy()
    a, b = side, (side + 1) % 4
    mid = (q[a] + q[b]) / 2
    q[a] = mid + (q[a] - mid) * (1 - amount)
    q[b] = mid + (q[b] - mid) * (1 - amount)
    return q


def _mottle(rng: np.random.Generator, h: int, w: int, amplitude: float) -> np.ndarray:
    """Cloudy cloth: smooth noise at four scales (mostly brightness, a little colour)."""
    out = np.zeros((h, w, 3), np.float32)
    for cells, amp in ((3, 1.0), (7, 0.7), (16, 0.45), (40, 0.25)):
        grey = rng.normal(0, amplitude * amp, (cells, max(2, cells * w // h), 1))
        tint = rng.normal(0, amplitude * amp * 0.25, (cells, max(2, cells * w // h), 3))
        out += cv2.resize((grey + tint).astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC)
    return out


def _shading(rng: np.random.Generator, h: int, w: int, amount: float) -> np.ndarray:
    """Uneven light as a gain field: vignetting off a random centre plus broad blotches
    (drawn at 1/8 scale and upscaled: it is smooth, and full-frame maths is the slow part)."""
    yy, xx = np.mgrid[0 : h // 8 + 1, 0 : w // 8 + 1].astype(np.float32) * 8
    cx, cy = rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * h
    r2 = ((xx - cx) / w) ** 2 + ((yy - cy) / h) ** 2
    gain = 1 - amount * np.clip(r2 / 0.5, 0, 1)
    blotch = rng.normal(0, amount * 0.4, (3, 5)).astype(np.float32)
    gain += cv2.resize(blotch, gain.shape[::-1], interpolation=cv2.INTER_CUBIC)
    return cv2.resize(np.clip(gain, 0.2, 1.5), (w, h), interpolation=cv2.INTER_LINEAR)


def _glare(
    rng: np.random.Generator, h: int, w: int, cards: Sequence[np.ndarray], peak: float
) -> np.ndarray:
    """A soft white spot (a Gaussian ellipse about half a card across) centred somewhere
    across a random card: over part of it, perhaps of its neighbour too."""
    card = cards[int(rng.integers(len(cards)))]
    centre = card.mean(axis=0) + (card[1] - card[0]) * rng.uniform(-0.5, 0.5)
    cw = float(np.linalg.norm(card[1] - card[0]))
    sx, sy = cw * rng.uniform(0.35, 0.6), cw * rng.uniform(0.3, 0.5)
    # evaluate on a coarse grid and upscale: a full-frame exp() is the slow part
    k = 8
    yy, xx = np.mgrid[0 : h // k + 1, 0 : w // k + 1].astype(np.float32) * k
    ang = rng.uniform(0, np.pi)
    dx, dy = xx - centre[0], yy - centre[1]
    u = dx * np.cos(ang) + dy * np.sin(ang)
    v = -dx * np.sin(ang) + dy * np.cos(ang)
    spot = peak * np.exp(-0.5 * ((u / sx) ** 2 + (v / sy) ** 2))
    return cv2.resize(spot.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)


def row_photo(
    faces: Sequence[np.ndarray],
    seed: int = 0,
    size: tuple[int, int] = (2400, 1400),
    cloth: tuple[int, int, int] = (95, 60, 30),
    tilt: float = 0.03,
    blur_sigma: float = 0.8,
    noise_sigma: float = 4.0,
    shift_mm: tuple[float, float] = (0.0, 0.0),
    jitter_mm: float = 2.0,
    cloudy: float = 0.0,
    shading: float = 0.0,
    gradient: float | None = None,
    glare: float = 0.0,
    keystone: float = 0.0,
    gap_mm: float = ROW_GAP_MM,
    sideways: Collection[int] = (),
    touching: Collection[int] = (),
) -> RowPhoto:
    """Photo of `faces` laid in a row (left to right), upright, on a cloth of colour `cloth`.

    `tilt` is the strength of the random perspective (0 = straight above); `shift_mm` moves the
    row (to push a card out of the frame); `gap_mm` is the space between cards; the cards
    whose indices are in `sideways` lie turned a quarter clockwise, and card i touches card
    i + 1 for every i in `touching` (the mistakes enrolment must name).
    Realism knobs (0 / None = off):
    `cloudy` - mottling of the cloth at several scales, in grey levels (15 = clearly cloudy);
    `shading` - uneven light: vignetting and broad blotches, as a fraction (0.3 = corners up
    to 30 % darker);
    `gradient` - light falling off across the photo in a random direction, the gain running
    from 1 - gradient/2 to 1 + gradient/2 (default: milder, strength and direction random);
    `glare` - a soft bright spot over part of a card or two, added grey levels at its peak;
    `keystone` - the phone tilted off vertical: the far side of the photo is this fraction
    narrower than the near side.
    """
    rng = np.random.default_rng(seed)
    extra = np.random.default_rng([seed, 7919])  # the knobs' own stream (defaults unchanged)
    n = len(faces)
    turned = len(set(sideways)) * (CARD_H_MM - CARD_W_MM)
    width_mm = n * CARD_W_MM + turned + (n - 1) * gap_mm + 2 * MARGIN_MM
    height_mm = CARD_H_MM + 2 * MARGIN_MM + 60
    out_w, out_h = size
    ppm_out = min(out_w / width_mm, out_h / height_mm)
    # plane mm -> image px: fit, centre, then a random perspective of the corners
    plane = np.array([[0, 0], [width_mm, 0], [width_mm, height_mm], [0, height_mm]], np.float32)
    cx, cy = out_w / 2, out_h / 2
    base = (plane - [width_mm / 2, height_mm / 2]) * ppm_out + [cx, cy]
    d = tilt * min(out_w, out_h)
    image_corners = (base + rng.uniform(-d, d, base.shape)).astype(np.float32)
    if keystone > 0:
        image_corners = _keystone(image_corners, keystone, int(extra.integers(4)))
    angle = np.deg2rad(rng.uniform(-3, 3))
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    image_corners = ((image_corners - [cx, cy]) @ rot.T + [cx, cy]).astype(np.float32)
    hom = cv2.getPerspectiveTransform(plane, image_corners)

    # cloth: base colour with low-frequency mottling and fine weave noise
    img = np.empty((out_h, out_w, 3), np.float32)
    img[:] = cloth
    low = cv2.resize(rng.normal(0, 6, (8, 12, 3)).astype(np.float32), (out_w, out_h))
    img += low + rng.normal(0, 3, img.shape).astype(np.float32)
    if cloudy > 0:
        img += _mottle(extra, out_h, out_w, cloudy)

    corners_out = []
    cursor = MARGIN_MM + shift_mm[0]  # left edge of the next card, before jitter
    prev_x0 = prev_w = 0.0
    for i, face in enumerate(faces):
        fh, fw = face.shape[:2]
        ppm_face = fw / CARD_W_MM
        x0 = cursor + rng.uniform(-1, 1) * jitter_mm
        y0 = MARGIN_MM + 30 + shift_mm[1] + rng.uniform(-1, 1) * jitter_mm
        rot_c = np.deg2rad(rng.uniform(-2, 2))
        cw, ch = (CARD_H_MM, CARD_W_MM) if i in sideways else (CARD_W_MM, CARD_H_MM)
        if i - 1 in touching:  # edge to edge with a hair of overlap, both square to the row
            x0, rot_c = prev_x0 + prev_w - 0.3, 0.0
        elif i in touching:
            rot_c = 0.0
        cursor += cw + gap_mm
        prev_x0, prev_w = x0, cw
        local = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]])
        centre = local.mean(axis=0)
        r2 = np.array([[np.cos(rot_c), -np.sin(rot_c)], [np.sin(rot_c), np.cos(rot_c)]])
        card_plane = ((local - centre) @ r2.T + centre + [x0, y0]).astype(np.float32)
        card_img = cv2.perspectiveTransform(card_plane.reshape(-1, 1, 2), hom).reshape(4, 2)
        if i in sideways:  # turned clockwise: the face's top-left lies at the top-right
            card_img = np.roll(card_img, -1, axis=0)
        src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
        # warp into the card's bounding box only (8 full-frame warps would dominate the time)
        bx0, by0 = np.floor(card_img.min(axis=0)).astype(int) - 2
        bx1, by1 = np.ceil(card_img.max(axis=0)).astype(int) + 2
        bx0, by0, bx1, by1 = max(bx0, 0), max(by0, 0), min(bx1, out_w), min(by1, out_h)
        if bx1 <= bx0 or by1 <= by0:
            corners_out.append(card_img.astype(np.float32))
            continue
        dst = (card_img - [bx0, by0]).astype(np.float32)
        m = cv2.getPerspectiveTransform(src, dst)
        size_roi = (int(bx1 - bx0), int(by1 - by0))
        warped = cv2.warpPerspective(face, m, size_roi, flags=cv2.INTER_AREA)
        alpha = cv2.warpPerspective(_card_mask(fh, fw, ppm_face), m, size_roi)
        a = (alpha.astype(np.float32) / 255)[..., None]
        roi = img[by0:by1, bx0:bx1]
        img[by0:by1, bx0:bx1] = roi * (1 - a) + warped.astype(np.float32) * a
        corners_out.append(card_img.astype(np.float32))

    # light: a linear gradient (one side 25 % darker) and a colour cast (warm lamp)
    gx = rng.uniform(-1, 1)
    gy = rng.uniform(-1, 1)
    yy, xx = np.mgrid[0:out_h, 0:out_w].astype(np.float32)
    if gradient is not None:  # a unit direction, so the strength is `gradient` exactly
        norm = max(1e-6, float(np.hypot(gx, gy)))
        gx, gy = gx / norm * gradient, gy / norm * gradient
        strength = 1.0
    else:
        strength = 0.25
    grad = 1 + strength * ((xx / out_w - 0.5) * gx + (yy / out_h - 0.5) * gy)
    cast = np.array([rng.uniform(0.8, 0.95), rng.uniform(0.92, 1.0), rng.uniform(1.0, 1.1)])
    if shading > 0:
        grad = grad * _shading(extra, out_h, out_w, shading)
    img = img * grad[..., None] * cast.astype(np.float32)
    if glare > 0:
        img += _glare(extra, out_h, out_w, corners_out, glare)[..., None]
    if blur_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur_sigma)
    img += rng.normal(0, noise_sigma, img.shape).astype(np.float32)
    return RowPhoto(np.clip(img, 0, 255).astype(np.uint8), tuple(corners_out))
