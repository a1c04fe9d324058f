"""The table drawn top-down with an object-id buffer, so what is visible is known exactly.

Each item of a Scene is pasted in z order as a sprite (colour + alpha) through one affine warp
of its region of interest only; the id buffer records which item owns each pixel (alpha >= 0.5).
Shadows darken what lies below before the item is pasted, so they never change visibility.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np

from companion import layout
from companion.deck.deckdir import Deck
from companion.synth.scene import Distractor, Hand, PlacedCard, Scene, rotation
from companion.synth.textures import smooth_noise, table_texture

MARKER_ID_BASE: Final = 60000
"""ids buffer value of marker m is MARKER_ID_BASE + m; item k of the scene is k + 1; table 0."""
QUIET_ZONE_MM: Final = 8.0
GLOSSY: Final = ("card", "back", "deck", "phone", "other_card")


@dataclass(frozen=True, slots=True)
class PlaneView:
    """A raster window on the table plane: pixel (i, j) centre is at mm origin + (i+0.5)/ppm."""

    x0: float
    y0: float
    ppm: float
    w: int
    h: int

    def to_px(self, pts_mm: np.ndarray) -> np.ndarray:
        """mm -> OpenCV pixel coordinates (pixel centres at integers)."""
        p = np.asarray(pts_mm, np.float64)
        return (p - np.array([self.x0, self.y0])) * self.ppm - 0.5

    def to_mm(self, pts_px: np.ndarray) -> np.ndarray:
        p = np.asarray(pts_px, np.float64)
        return (p + 0.5) / self.ppm + np.array([self.x0, self.y0])


@dataclass(frozen=True, slots=True)
class Look:
    """How the table is lit and how glossy things are; random per frame."""

    shadow_dir: tuple[float, float] = (0.6, 0.8)
    """Unit vector on the plane: where shadows fall."""
    shadow_per_mm: float = 0.3
    """Shadow offset per mm of height above the table."""
    shadow_strength: float = 0.35
    hand_shadow_strength: float = 0.45
    glare: tuple[tuple[float, float, float, float], ...] = ()
    """Specular spots (x mm, y mm, radius mm, strength 0..1) seen on glossy objects."""
    paper_noise: float = 3.0

    @staticmethod
    def random(rng: np.random.Generator, hard: bool = False) -> Look:
        a = rng.uniform(0, 2 * math.pi)
        n_glare = int(rng.integers(1, 4)) if hard else int(rng.choice([0, 0, 1, 1, 2]))
        glare = tuple(
            (
                float(rng.uniform(0, layout.PLAY_W_MM)),
                float(rng.uniform(0, layout.PLAY_H_MM)),
                float(rng.uniform(15, 60)),
                float(rng.uniform(0.5, 0.95) if hard else rng.uniform(0.15, 0.7)),
            )
            for _ in range(n_glare)
        )
        return Look(
            (math.cos(a), math.sin(a)),
            float(rng.uniform(0.1, 0.6)),
            float(rng.uniform(0.15, 0.5)),
            float(rng.uniform(0.25, 0.6)),
            glare,
            float(rng.uniform(1.0, 6.0)),
        )


@dataclass
class ItemMask:
    """Where an item landed: its own full mask inside an ROI of the raster."""

    x: int
    y: int
    mask: np.ndarray
    """bool (h, w): alpha >= 0.5, before anything covered it."""


@dataclass
class PlaneRender:
    image: np.ndarray
    """(h, w, 3) uint8 BGR."""
    ids: np.ndarray
    """(h, w) uint16, see MARKER_ID_BASE."""
    view: PlaneView
    masks: dict[int, ItemMask] = field(default_factory=dict)
    """Item id -> its full mask (cards, markers, hands)."""


_SPRITES: dict[tuple, np.ndarray] = {}


def _sized(key: tuple, src: np.ndarray, w: int, h: int) -> np.ndarray:
    """src resized to (w, h) with area averaging, cached (faces recur across frames)."""
    k = (*key, w, h)
    got = _SPRITES.get(k)
    if got is None:
        if len(_SPRITES) > 800:
            _SPRITES.clear()
        got = cv2.resize(src, (w, h), interpolation=cv2.INTER_AREA)
        _SPRITES[k] = got
    return got


def _rounded_alpha(w: int, h: int, r_px: float) -> np.ndarray:
    k = ("alpha", w, h, round(r_px, 1))
    got = _SPRITES.get(k)
    if got is None:
        a = np.zeros((h * 4, w * 4), np.uint8)
        r = max(1, round(r_px * 4))
        cv2.rectangle(a, (r, 0), (w * 4 - 1 - r, h * 4 - 1), 255, -1)
        cv2.rectangle(a, (0, r), (w * 4 - 1, h * 4 - 1 - r), 255, -1)
        for cx, cy in (
            (r, r),
            (w * 4 - 1 - r, r),
            (r, h * 4 - 1 - r),
            (w * 4 - 1 - r, h * 4 - 1 - r),
        ):
            cv2.circle(a, (cx, cy), r, 255, -1, cv2.LINE_AA)
        got = cv2.resize(a, (w, h), interpolation=cv2.INTER_AREA)
        _SPRITES[k] = got
    return got


def tinted_like(table: np.ndarray, face: np.ndarray, seed: int) -> np.ndarray:
    """The table top with its pattern kept and its mean colour moved to within a few levels
    of the face's most common colour (its median)."""
    target = np.median(face.reshape(-1, face.shape[-1])[:, :3], axis=0).astype(np.float32)
    target += np.random.default_rng(seed).uniform(-10, 10, 3).astype(np.float32)
    mean = table.reshape(-1, 3).mean(axis=0).astype(np.float32)
    out = table.astype(np.float32) - mean + target
    return np.clip(out, 0, 255).astype(np.uint8)


class PlaneRenderer:
    """Draws Scenes onto a PlaneView with a given Deck."""

    def __init__(self, deck: Deck) -> None:
        self.deck = deck
        self._deck_key = (id(deck), deck.name)
        self._table: tuple[tuple, np.ndarray] | None = None

    def render(
        self, scene: Scene, view: PlaneView, look: Look, rng: np.random.Generator
    ) -> PlaneRender:
        key = (scene.texture, scene.texture_seed, view, scene.cloth_card)
        if self._table is None or self._table[0] != key:
            # a recording re-renders one table hundreds of times: keep the last one
            table = table_texture(scene.texture, scene.texture_seed, view.w, view.h, view.ppm)
            if scene.cloth_card is not None:
                table = tinted_like(table, self.deck.face(scene.cloth_card), scene.texture_seed)
            self._table = (key, table)
        img = self._table[1].copy()
        ids = np.zeros((view.h, view.w), np.uint16)
        out = PlaneRender(img, ids, view)
        self._shadow_dir = look.shadow_dir
        if scene.markers:
            self._markers(out)
        for k, item in enumerate(scene.items):
            oid = k + 1
            if isinstance(item, PlacedCard):
                self._card(out, item, oid, look, rng)
            elif isinstance(item, Distractor):
                self._distractor(out, item, oid, look, rng)
            elif isinstance(item, Hand):
                self._hand(out, item, oid, look, rng)
        self._glare(out, scene, look)
        return out

    # ---------------------------------------------------------------- pasting

    def _paste(
        self,
        out: PlaneRender,
        sprite: np.ndarray,
        alpha: np.ndarray,
        center: tuple[float, float],
        angle: float,
        size_mm: tuple[float, float],
        oid: int,
        shadow: tuple[float, float, float] | None,
        keep_mask: bool,
    ) -> None:
        """Warp a sprite onto the raster; shadow = (offset mm, blur mm, strength)."""
        v = out.view
        sh, sw = sprite.shape[:2]
        wm, hm = size_mm
        # sprite px -> local mm -> plane mm -> raster px
        s = np.array(
            [[wm / sw, 0, (0.5 * wm / sw) - wm / 2], [0, hm / sh, (0.5 * hm / sh) - hm / 2]]
        )
        rot = rotation(angle)
        lin = rot @ s[:, :2]
        trans = rot @ s[:, 2] + np.asarray(center)
        lin_px = lin * v.ppm
        trans_px = (trans - np.array([v.x0, v.y0])) * v.ppm - 0.5
        corners = np.array([[-0.5, -0.5], [sw - 0.5, -0.5], [sw - 0.5, sh - 0.5], [-0.5, sh - 0.5]])
        pc = corners @ lin_px.T + trans_px
        pad = 2
        if shadow is not None:
            off_mm, blur_mm, _ = shadow
            pad = 2 + math.ceil((off_mm + 3 * blur_mm) * v.ppm)
        x0 = max(0, math.floor(pc[:, 0].min()) - pad)
        y0 = max(0, math.floor(pc[:, 1].min()) - pad)
        x1 = min(v.w, math.ceil(pc[:, 0].max()) + pad + 1)
        y1 = min(v.h, math.ceil(pc[:, 1].max()) + pad + 1)
        if x1 <= x0 or y1 <= y0:
            return
        m = np.hstack([lin_px, (trans_px - np.array([x0, y0]))[:, None]])
        size = (x1 - x0, y1 - y0)
        a = cv2.warpAffine(alpha, m, size, flags=cv2.INTER_LINEAR, borderValue=0)
        roi = out.image[y0:y1, x0:x1]
        if shadow is not None:
            off_mm, blur_mm, strength = shadow
            dx, dy = self._shadow_dir
            ms = m.copy()
            ms[0, 2] += dx * off_mm * v.ppm
            ms[1, 2] += dy * off_mm * v.ppm
            sa = cv2.warpAffine(alpha, ms, size, flags=cv2.INTER_LINEAR, borderValue=0)
            sig = max(0.3, blur_mm * v.ppm)
            sa = cv2.GaussianBlur(sa, (0, 0), sig)
            f = 1.0 - strength * sa.astype(np.float32) / 255.0
            roi[:] = (roi.astype(np.float32) * f[..., None]).astype(np.uint8)
        col = cv2.warpAffine(
            sprite, m, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        af = a.astype(np.float32)[..., None] / 255.0
        roi[:] = (roi.astype(np.float32) * (1 - af) + col.astype(np.float32) * af).astype(np.uint8)
        own = a >= 128
        out.ids[y0:y1, x0:x1][own] = oid
        if keep_mask:
            out.masks[oid] = ItemMask(x0, y0, own)

    _shadow_dir: tuple[float, float] = (0.6, 0.8)

    # ---------------------------------------------------------------- items

    def _markers(self, out: PlaneRender) -> None:
        v = out.view
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.ARUCO_DICT))
        q = QUIET_ZONE_MM
        for mid, r in layout.marker_squares().items():
            a = v.to_px(np.array([[r.x0 - q, r.y0 - q], [r.x1 + q, r.y1 + q]])) + 0.5
            xa, ya = np.clip(np.floor(a[0]).astype(int), 0, [v.w, v.h])
            xb, yb = np.clip(np.ceil(a[1]).astype(int), 0, [v.w, v.h])
            out.image[ya:yb, xa:xb] = (245, 245, 245)
            side = max(12, round(layout.MARKER_MM * v.ppm * 2))
            marker = cv2.aruco.generateImageMarker(dictionary, mid, side)
            sprite = cv2.cvtColor(marker, cv2.COLOR_GRAY2BGR)
            sprite = np.where(sprite < 128, 20, 245).astype(np.uint8)
            alpha = np.full(marker.shape, 255, np.uint8)
            self._paste(
                out,
                sprite,
                alpha,
                r.center,
                0.0,
                (layout.MARKER_MM, layout.MARKER_MM),
                MARKER_ID_BASE + mid,
                None,
                True,
            )

    def _card_sprite(self, card: str | None, ppm: float, rng: np.random.Generator, noise: float):
        w = max(8, round(layout.CARD_W_MM * ppm))
        h = max(8, round(layout.CARD_H_MM * ppm))
        if card is None:
            src = self.deck.back_image()
            sprite = _sized((*self._deck_key, "back"), src, w, h)
        else:
            sprite = _sized((*self._deck_key, card), self.deck.face(card), w, h)
        if noise > 0:
            n = rng.normal(0, noise, (h, w, 1)).astype(np.float32)
            shade = rng.uniform(0.93, 1.05)
            sprite = np.clip(sprite.astype(np.float32) * shade + n, 0, 255).astype(np.uint8)
        alpha = _rounded_alpha(w, h, layout.CARD_CORNER_MM * ppm)
        return sprite, alpha

    def _card(
        self, out: PlaneRender, c: PlacedCard, oid: int, look: Look, rng: np.random.Generator
    ) -> None:
        sprite, alpha = self._card_sprite(
            c.card if c.face_up else None, out.view.ppm, rng, look.paper_noise
        )
        self._paste(
            out,
            sprite,
            alpha,
            c.center,
            c.angle,
            (layout.CARD_W_MM, layout.CARD_H_MM),
            oid,
            (0.6 + 2.0 * look.shadow_per_mm, 1.0, look.shadow_strength),
            True,
        )

    def _distractor(
        self, out: PlaneRender, d: Distractor, oid: int, look: Look, rng: np.random.Generator
    ) -> None:
        ppm = out.view.ppm
        r = np.random.default_rng(d.seed)
        w = max(4, round(d.size[0] * ppm))
        h = max(4, round(d.size[1] * ppm))
        shadow = (0.6 + 2.0 * look.shadow_per_mm, 1.0, look.shadow_strength)
        if d.kind in ("back", "deck"):
            sprite, alpha = self._card_sprite(None, ppm, rng, look.paper_noise)
            if d.kind == "deck":  # a thick stack: long soft shadow, paler edge
                shadow = (2.0 + 15.0 * look.shadow_per_mm, 2.0, look.shadow_strength * 1.2)
                sprite = sprite.copy()
                e = max(1, round(0.8 * ppm))
                sprite[-e:, :] = (200, 205, 210)
                sprite[:, -e:] = (200, 205, 210)
        elif d.kind == "cup":
            sprite, alpha = _cup(r, w, d.color)
            shadow = (5.0 + 90.0 * look.shadow_per_mm, 4.0, look.shadow_strength * 1.3)
        elif d.kind == "phone":
            sprite, alpha = _phone(r, w, h, d.color, ppm)
            shadow = (0.8 + 8.0 * look.shadow_per_mm, 1.5, look.shadow_strength)
        elif d.kind == "other_card":
            sprite, alpha = _other_card(r, w, h, ppm)
        else:
            sprite, alpha = _coin(r, w)
            shadow = (0.4 + 2.0 * look.shadow_per_mm, 0.6, look.shadow_strength)
        self._paste(out, sprite, alpha, d.center, d.angle, d.size, oid, shadow, False)

    def _hand(
        self, out: PlaneRender, hand: Hand, oid: int, look: Look, rng: np.random.Generator
    ) -> None:
        v = out.view
        mask, sleeve_mask = hand_masks(hand, v)
        ys, xs = np.nonzero(mask)
        if len(xs) == 0:
            return
        off = hand.height * look.shadow_per_mm * v.ppm
        dx, dy = look.shadow_dir[0] * off, look.shadow_dir[1] * off
        pad = int(abs(dx) + abs(dy)) + 4
        x0, x1 = max(0, xs.min() - pad), min(v.w, xs.max() + pad + 1)
        y0, y1 = max(0, ys.min() - pad), min(v.h, ys.max() + pad + 1)
        roi = out.image[y0:y1, x0:x1]
        mroi = mask[y0:y1, x0:x1]
        # hard shadow (a little soft at the edge)
        shift = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
        sh = cv2.warpAffine(mroi, shift, (x1 - x0, y1 - y0), borderValue=0)
        sh = cv2.GaussianBlur(sh, (0, 0), max(0.5, 1.5 * v.ppm))
        f = 1.0 - look.hand_shadow_strength * sh.astype(np.float32) / 255.0
        base = roi.astype(np.float32) * f[..., None]
        # the hand itself: skin, rounded shading from the mask's distance to its edge
        dist = cv2.distanceTransform((mroi > 127).astype(np.uint8), cv2.DIST_L2, 3)
        shade = 0.7 + 0.3 * np.clip(dist / max(1.0, 12.0 * v.ppm), 0, 1)
        tex = smooth_noise(rng, y1 - y0, x1 - x0, 10 * v.ppm)
        col = np.empty((y1 - y0, x1 - x0, 3), np.float32)
        col[:] = hand.skin
        if hand.sleeve is not None:
            sl = sleeve_mask[y0:y1, x0:x1] > 127
            col[sl] = hand.sleeve
        col *= (shade * (0.92 + 0.16 * tex))[..., None]
        af = cv2.GaussianBlur(mroi, (0, 0), max(0.5, 0.8 * v.ppm)).astype(np.float32) / 255.0
        roi[:] = np.clip(base * (1 - af[..., None]) + col * af[..., None], 0, 255).astype(np.uint8)
        own = mroi > 127
        out.ids[y0:y1, x0:x1][own] = oid

    def _glare(self, out: PlaneRender, scene: Scene, look: Look) -> None:
        """Specular spots: white blobs where the light mirrors in glossy things."""
        if not look.glare:
            return
        v = out.view
        glossy_ids = [0]
        for k, item in enumerate(scene.items):
            if isinstance(item, PlacedCard) or (
                isinstance(item, Distractor) and item.kind in GLOSSY
            ):
                glossy_ids.append(k + 1)
        lut = np.zeros(MARKER_ID_BASE + 8, np.float32)
        lut[glossy_ids[1:]] = 1.0
        lut[MARKER_ID_BASE : MARKER_ID_BASE + 4] = 0.6
        for gx, gy, gr, gs in look.glare:
            c = v.to_px(np.array([gx, gy]))
            rp = gr * v.ppm
            x0, x1 = max(0, int(c[0] - 2.5 * rp)), min(v.w, int(c[0] + 2.5 * rp) + 1)
            y0, y1 = max(0, int(c[1] - 2.5 * rp)), min(v.h, int(c[1] + 2.5 * rp) + 1)
            if x1 <= x0 or y1 <= y0:
                continue
            yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
            # an elongated blob (a lamp's reflection), with a saturated core
            d2 = ((xx - c[0]) / rp) ** 2 + ((yy - c[1]) / (0.6 * rp)) ** 2
            g = np.clip(gs * 1.4 * np.exp(-d2), 0, 1) * lut[out.ids[y0:y1, x0:x1]]
            roi = out.image[y0:y1, x0:x1].astype(np.float32)
            roi = roi + (255.0 - roi) * g[..., None]
            out.image[y0:y1, x0:x1] = roi.astype(np.uint8)


def hand_masks(hand: Hand, v: PlaneView) -> tuple[np.ndarray, np.ndarray]:
    """(hand + arm, sleeve) masks, uint8 0/255, on the raster."""
    mask = np.zeros((v.h, v.w), np.uint8)
    sleeve = np.zeros((v.h, v.w), np.uint8)
    root = np.asarray(hand.root, np.float64)
    tip = np.asarray(hand.tip, np.float64)
    d = tip - root
    length = float(np.linalg.norm(d))
    if length < 1:
        return mask, sleeve
    d /= length
    n = np.array([-d[1], d[0]])
    w = hand.width
    palm_len = 0.95 * w
    wrist = tip - d * palm_len * 0.45
    sh = 4  # fixed-point bits for sub-pixel drawing
    k = 1 << sh

    def px(p: np.ndarray) -> np.ndarray:
        return np.round(v.to_px(p) * k).astype(np.int32)

    arm = np.array(
        [root + n * 0.55 * w, wrist + n * 0.36 * w, wrist - n * 0.36 * w, root - n * 0.55 * w]
    )
    cv2.fillConvexPoly(mask, px(arm), 255, cv2.LINE_AA, sh)
    # palm
    c = px(tip)
    axes = (round(w / 2 * v.ppm), round(palm_len / 2 * v.ppm))
    ang = math.degrees(math.atan2(d[1], d[0])) - 90
    cv2.ellipse(mask, (int(c[0] // k), int(c[1] // k)), axes, ang, 0, 360, 255, -1, cv2.LINE_AA)
    # fingers
    fw = max(1, round(0.2 * w * v.ppm))
    for i, (off, ln) in enumerate(
        zip((-0.33, -0.11, 0.11, 0.33), (0.62, 0.75, 0.7, 0.55), strict=True)
    ):
        spread = math.radians((i - 1.5) * 7.0 * hand.spread)
        fd = rotation(math.degrees(spread)) @ d
        base = tip + d * palm_len * 0.3 + n * off * w
        end = base + fd * ln * w
        cv2.line(
            mask,
            tuple(int(t) for t in px(base) // k),
            tuple(int(t) for t in px(end) // k),
            255,
            fw,
            cv2.LINE_AA,
        )
    # thumb
    side = 1 if hand.spread > 0.5 else -1
    tb = tip + n * side * 0.42 * w - d * 0.1 * w
    td = rotation(-side * 55.0) @ d
    cv2.line(
        mask,
        tuple(int(t) for t in px(tb) // k),
        tuple(int(t) for t in px(tb + td * 0.5 * w) // k),
        255,
        round(fw * 1.2),
        cv2.LINE_AA,
    )
    if hand.sleeve is not None:
        cuff = root + d * (length - palm_len * 0.45 - 0.35 * w)
        sl = np.array(
            [root + n * 0.6 * w, cuff + n * 0.45 * w, cuff - n * 0.45 * w, root - n * 0.6 * w]
        )
        cv2.fillConvexPoly(sleeve, px(sl), 255, cv2.LINE_AA, sh)
        cv2.fillConvexPoly(mask, px(sl), 255, cv2.LINE_AA, sh)
    return mask, sleeve


# ---------------------------------------------------------------- distractor sprites


def _disc_alpha(w: int) -> np.ndarray:
    a = np.zeros((w * 4, w * 4), np.uint8)
    cv2.circle(a, (w * 2, w * 2), w * 2 - 2, 255, -1, cv2.LINE_AA)
    return cv2.resize(a, (w, w), interpolation=cv2.INTER_AREA)


def _cup(r: np.random.Generator, w: int, color) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:w, 0:w].astype(np.float32)
    c = (w - 1) / 2
    d = np.sqrt((xx - c) ** 2 + (yy - c) ** 2) / (w / 2)
    rim = np.asarray(color, np.float32) * 0.3 + 170
    drink = np.array([[20, 40, 70], [30, 80, 140], [200, 210, 220], [15, 20, 30]], np.float32)[
        r.integers(4)
    ]
    inner = r.uniform(0.72, 0.86)
    t = np.clip((d - inner) / 0.05, 0, 1)
    img = drink * (0.8 + 0.3 * (1 - d))[..., None] * (1 - t[..., None]) + rim * t[..., None]
    # rim highlight towards one side
    img *= (0.85 + 0.25 * np.clip((xx - yy) / w, -1, 1))[..., None]
    return np.clip(img, 0, 255).astype(np.uint8), _disc_alpha(w)


def _phone(r: np.random.Generator, w: int, h: int, color, ppm: float):
    img = np.empty((h, w, 3), np.float32)
    img[:] = color
    m = max(1, round(3 * ppm))
    img[m:-m, m:-m] = np.asarray(color, np.float32) * 0.5 + 5
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    band = np.exp(-((((xx * 0.8 + yy * 0.6) / max(w, h) - r.uniform(0.3, 0.9)) / 0.07) ** 2))
    img += 90 * band[..., None]
    alpha = _rounded_alpha(w, h, 8 * ppm)
    return np.clip(img, 0, 255).astype(np.uint8), alpha


def _other_card(r: np.random.Generator, w: int, h: int, ppm: float):
    """A card from another game: patterns, and often a corner index to fool the detector."""
    bg = r.integers(60, 256, 3).astype(np.float64)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = bg
    for _ in range(int(r.integers(2, 7))):
        col = tuple(int(v) for v in r.integers(0, 256, 3))
        kind = r.integers(3)
        p1 = (int(r.integers(0, w)), int(r.integers(0, h)))
        if kind == 0:
            cv2.circle(img, p1, int(r.integers(2, max(3, w // 3))), col, -1, cv2.LINE_AA)
        elif kind == 1:
            p2 = (int(r.integers(0, w)), int(r.integers(0, h)))
            cv2.rectangle(img, p1, p2, col, -1)
        else:
            p2 = (int(r.integers(0, w)), int(r.integers(0, h)))
            cv2.line(img, p1, p2, col, max(1, int(r.integers(1, max(2, w // 10)))), cv2.LINE_AA)
    if r.random() < 0.7:  # a band with a big character, like an index
        bh = max(2, round(r.uniform(10, 20) * ppm))
        band = tuple(int(v) for v in r.integers(0, 256, 3))
        img[:bh] = band
        txt = str(r.choice(list("0123456789AKQJ")))
        scale = bh / 30.0
        cv2.putText(
            img,
            txt,
            (max(1, bh // 5), bh - max(1, bh // 6)),
            cv2.FONT_HERSHEY_DUPLEX,
            scale,
            (20, 20, 20),
            max(1, round(scale * 2)),
            cv2.LINE_AA,
        )
    return img, _rounded_alpha(w, h, 3 * ppm)


def _coin(r: np.random.Generator, w: int):
    yy, xx = np.mgrid[0:w, 0:w].astype(np.float32)
    c = (w - 1) / 2
    d = np.sqrt((xx - c) ** 2 + (yy - c) ** 2) / (w / 2 + 1e-6)
    metal = np.array([[80, 160, 200], [170, 170, 175], [60, 110, 160]], np.float32)[r.integers(3)]
    shade = 0.75 + 0.35 * np.clip((xx - yy) / max(1, w), -1, 1) - 0.2 * (d > 0.85)
    img = metal * shade[..., None]
    return np.clip(img, 0, 255).astype(np.uint8), _disc_alpha(w)
