"""Synthetic enrolment photos: a row of faces on a cloth, seen by a hand-held camera.

For tests and demos of `companion deck enroll` without the published cards: perspective,
a light gradient, a colour cast, sensor noise and a little blur. Independent of the table-scene
renderer on purpose (enrolment must not be tested by the code it feeds).
"""

from __future__ import annotations

from collections.abc import Sequence
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
) -> RowPhoto:
    """Photo of `faces` laid in a row (left to right), upright, on a plain cloth.

    `tilt` is the strength of the perspective (0 = straight above); `shift_mm` moves the row
    (to push a card out of the frame).
    """
    rng = np.random.default_rng(seed)
    n = len(faces)
    width_mm = n * CARD_W_MM + (n - 1) * ROW_GAP_MM + 2 * MARGIN_MM
    height_mm = CARD_H_MM + 2 * MARGIN_MM + 60
    out_w, out_h = size
    ppm_out = min(out_w / width_mm, out_h / height_mm)
    # plane mm -> image px: fit, centre, then a random perspective of the corners
    plane = np.array([[0, 0], [width_mm, 0], [width_mm, height_mm], [0, height_mm]], np.float32)
    cx, cy = out_w / 2, out_h / 2
    base = (plane - [width_mm / 2, height_mm / 2]) * ppm_out + [cx, cy]
    d = tilt * min(out_w, out_h)
    image_corners = (base + rng.uniform(-d, d, base.shape)).astype(np.float32)
    angle = np.deg2rad(rng.uniform(-3, 3))
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    image_corners = ((image_corners - [cx, cy]) @ rot.T + [cx, cy]).astype(np.float32)
    hom = cv2.getPerspectiveTransform(plane, image_corners)

    # cloth: base colour with low-frequency mottling and fine weave noise
    img = np.empty((out_h, out_w, 3), np.float32)
    img[:] = cloth
    low = cv2.resize(rng.normal(0, 6, (8, 12, 3)).astype(np.float32), (out_w, out_h))
    img += low + rng.normal(0, 3, img.shape).astype(np.float32)

    corners_out = []
    for i, face in enumerate(faces):
        fh, fw = face.shape[:2]
        ppm_face = fw / CARD_W_MM
        x0 = MARGIN_MM + i * (CARD_W_MM + ROW_GAP_MM) + shift_mm[0] + rng.uniform(-1, 1) * jitter_mm
        y0 = MARGIN_MM + 30 + shift_mm[1] + rng.uniform(-1, 1) * jitter_mm
        rot_c = np.deg2rad(rng.uniform(-2, 2))
        local = np.array([[0, 0], [CARD_W_MM, 0], [CARD_W_MM, CARD_H_MM], [0, CARD_H_MM]])
        centre = local.mean(axis=0)
        r2 = np.array([[np.cos(rot_c), -np.sin(rot_c)], [np.sin(rot_c), np.cos(rot_c)]])
        card_plane = ((local - centre) @ r2.T + centre + [x0, y0]).astype(np.float32)
        card_img = cv2.perspectiveTransform(card_plane.reshape(-1, 1, 2), hom).reshape(4, 2)
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
    grad = 1 + 0.25 * ((xx / out_w - 0.5) * gx + (yy / out_h - 0.5) * gy)
    cast = np.array([rng.uniform(0.8, 0.95), rng.uniform(0.92, 1.0), rng.uniform(1.0, 1.1)])
    img = img * grad[..., None] * cast.astype(np.float32)
    if blur_sigma > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur_sigma)
    img += rng.normal(0, noise_sigma, img.shape).astype(np.float32)
    return RowPhoto(np.clip(img, 0, 255).astype(np.uint8), tuple(corners_out))
