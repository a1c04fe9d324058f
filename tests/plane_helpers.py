"""Small builders for vision tests: a table plane with markers and cards, seen by a camera."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import cv2
import numpy as np

from companion import layout
from companion.deck.deckdir import Deck
from companion.deck.designs import design_deck
from companion.synth.camera import Light, look_at_camera
from companion.synth.frame import Frame, FrameSpec, render_frame, render_scene
from companion.synth.raster import Look
from companion.synth.scene import PlacedCard, Scene
from companion.vision.detector import FrameReading

CLEAN = Light(blur_px=0.6, noise=2.0, jpeg_quality=92, gradient=(0.0, 0.0, 0.0), wb_error=0.0)
FLAT_LOOK = Look(shadow_strength=0.3, hand_shadow_strength=0.0, glare=(), paper_noise=0.0)


HELD_OUT_SEED = 90_000
"""`benchmarks/foreign_decks.py`'s scene seed (its `--frame-seed`)."""


@cache
def ornate() -> Deck:
    """A held-out design family (never in any model's training) whose two browns differ by
    lightness as much as by hue, and whose chashu is a dark teal."""
    return design_deck("ornate", 1)


def held_out_frame(deck: Deck, index: int) -> Frame:
    """Frame `index` of the held-out benchmark's plain slice (`benchmarks/foreign_decks.py`)
    for `deck`: the scenes its figures are measured on."""
    spec = FrameSpec(hard=False, split="test", width=2304)
    return render_frame(deck, HELD_OUT_SEED, index, spec)


def kit_view(deck: Deck, scene: Scene, seed: int) -> Frame:
    """`scene` as the kit's camera sees it (700 mm above the table's centre, straight down,
    2304 px wide), in clean, even light."""
    camera = look_at_camera(2304, (390.0, 220.0), 700.0)
    return render_scene(deck, scene, camera, CLEAN, FLAT_LOOK, np.random.default_rng(seed))


def three_bowls(cards: Sequence[str], angles: Sequence[float] = (-1.0,)) -> tuple[PlacedCard, ...]:
    """`cards` cascaded four to a bowl, Bowl 1 first, each 17 mm below the one before (the
    kit's step), turned by `angles` card after card in turn (all 1 degree by default)."""
    out = []
    for k, cid in enumerate(cards):
        top = layout.region_by_id(f"bowl-{k // 4 + 1}").rect
        cx, y = top.center[0], top.y0 + 10.0 + layout.CARD_H_MM / 2
        angle = angles[k % len(angles)]
        out.append(PlacedCard(cid, (cx, y + 17.0 * (k % 4)), angle, True, f"bowl-{k // 4 + 1}"))
    return tuple(out)


def sheen_over(frame: Frame, veil: float, rim_mm: float) -> np.ndarray:
    """`frame`'s image with every card's middle veiled by `veil` of white (linear light: the
    broad light a glossy card mirrors), its rim (`rim_mm`: the curled edge that mirrors the
    darker room) not."""
    mask = np.zeros(frame.image.shape[:2], np.float32)
    for card in frame.truth["cards"]:  # back to front: a card's rim hides the sheen under it
        p = np.array(card["polygon_px"], float)
        rim = rim_mm * float(np.linalg.norm(p[1] - p[0])) / 63.0
        inward = [
            (p[(i + 1) % 4] - p[i]) / np.linalg.norm(p[(i + 1) % 4] - p[i])
            + (p[i - 1] - p[i]) / np.linalg.norm(p[i - 1] - p[i])
            for i in range(4)
        ]
        middle = p + rim * np.array(inward)
        cv2.fillConvexPoly(mask, np.round(p).astype(np.int32), 0.0)
        cv2.fillConvexPoly(mask, np.round(middle).astype(np.int32), 1.0)
    mask = cv2.GaussianBlur(mask, (0, 0), 1.5)
    linear = np.power(frame.image / 255.0, 2.2) + veil * mask[..., None]
    return (np.power(np.clip(linear, 0.0, 1.0), 1 / 2.2) * 255).astype(np.uint8)


class NoCards:
    """Tests only: a detector that reads no card (the calibration and the markers are what is
    looked at)."""

    def detect(self, image: np.ndarray, calibration: object) -> FrameReading:
        return FrameReading((), True)


def marker_plane(ppm: float, table=(90, 120, 140)) -> np.ndarray:
    """The play area drawn top-down at ppm px/mm, with the four markers in place."""
    w, h = round(layout.PLAY_W_MM * ppm), round(layout.PLAY_H_MM * ppm)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = table
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.ARUCO_DICT))
    for mid, r in layout.marker_squares().items():
        # white quiet zone, then the marker filling the square exactly
        q = 6
        x0, y0, x1, y1 = (round(v * ppm) for v in (r.x0, r.y0, r.x1, r.y1))
        cv2.rectangle(
            img,
            (max(0, x0 - q), max(0, y0 - q)),
            (min(w, x1 + q), min(h, y1 + q)),
            (255, 255, 255),
            -1,
        )
        side = x1 - x0
        marker = cv2.aruco.generateImageMarker(dictionary, mid, side)
        img[y0 : y0 + side, x0 : x0 + side] = marker[:, :, None]
    return img


def place_card(
    plane: np.ndarray,
    deck: Deck,
    card_id: str,
    center_mm,
    angle_deg: float,
    ppm: float,
    flipped: bool = False,
) -> None:
    """Paste a face (rotated counter-clockwise by angle_deg) onto the plane image."""
    face = deck.face(card_id)
    if flipped:
        face = face[::-1, ::-1]
    fh, fw = face.shape[:2]
    s = ppm * layout.CARD_W_MM / fw
    m = cv2.getRotationMatrix2D((fw / 2, fh / 2), angle_deg, s)
    m[0, 2] += center_mm[0] * ppm - fw / 2
    m[1, 2] += center_mm[1] * ppm - fh / 2
    h, w = plane.shape[:2]
    warped = cv2.warpAffine(face, m, (w, h), flags=cv2.INTER_AREA)
    mask = cv2.warpAffine(np.full((fh, fw), 255, np.uint8), m, (w, h))
    plane[mask > 128] = warped[mask > 128]


def camera_view(
    plane: np.ndarray, ppm: float, size=(1280, 720), tilt_px: float = 40.0
) -> tuple[np.ndarray, np.ndarray]:
    """Perspective view of the plane; returns (image, image_from_plane_mm)."""
    h, w = plane.shape[:2]
    W, H = size
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    mx, my = 0.07 * W, 0.08 * H
    dst = np.float32([[mx + tilt_px, my], [W - mx - tilt_px, my], [W - mx, H - my], [mx, H - my]])
    m = cv2.getPerspectiveTransform(src, dst)
    img = cv2.warpPerspective(plane, m, (W, H), flags=cv2.INTER_AREA, borderValue=(60, 60, 60))
    return img, m @ np.diag([ppm, ppm, 1.0])
