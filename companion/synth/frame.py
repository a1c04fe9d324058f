"""One rendered camera frame and its exact ground truth.

Ground truth JSON (`Frame.truth`), all image coordinates in px of the delivered (distorted)
frame, OpenCV convention (pixel centres at integers), plane coordinates in mm:

    {"seed": [..], "texture": "wood", "camera": Camera.to_json(), "light": Light.to_json(),
     "markers": [{"id", "corners_px": [[x, y] x4 TL,TR,BR,BL], "visible_fraction"}],
     "cards": [{"card", "region", "placed_region", "face_up", "z", "center_mm", "angle_deg",
                "polygon_px": [[x, y] x4], "visible_fraction",
                "visible_polygons_px": [[[x, y]...]...],
                "strips": [{"end": "top"|"bottom", "polygon_mm", "polygon_px",
                            "visible_fraction", "hand_fraction", "visible_polygons_mm",
                            "visible_bbox_mm": [x0, y0, x1, y1] | null}]}],
     "hands": [{"root_mm", "tip_mm"}]}

`visible_fraction` counts only what the camera frame shows: covered by a later card, a hand or
a distractor, or outside the frame, is not visible. `hand_fraction` is the part under a hand.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import cv2
import numpy as np

from companion import layout
from companion.deck.deckdir import Deck
from companion.synth.camera import (
    Camera,
    Light,
    frame_maps,
    plane_view_for,
    random_camera,
    shoot,
)
from companion.synth.raster import MARKER_ID_BASE, Look, PlaneRender, PlaneRenderer, PlaneView
from companion.synth.scene import (
    HELD_OUT_TEXTURES,
    TEXTURE_FAMILIES,
    Hand,
    PlacedCard,
    Scene,
    SceneStyle,
    card_corners,
    random_scene,
    strip_corners,
)

ALIKE_RUNS = 0.7
"""In an `alike` frame, the share of cascades holding a run of one ingredient."""


@dataclass(frozen=True)
class FrameSpec:
    """What kind of frames to draw: the split decides seeds' stream and unseen textures."""

    hard: bool = False
    split: str = "train"
    """`train` or `test`: different random streams; `test` also uses held-out tables/light."""
    width: int | None = None
    """Fixed output width, or None to pick from camera.WIDTHS per frame."""
    skew_deg: float | None = None
    """Laid cards turned uniformly within +- this (SceneStyle.skew_deg); None: nearly straight."""
    alike: bool = False
    """Cards laid beside like-coloured cards and on a like-coloured table top
    (SceneStyle.ingredient_runs, card_cloth): `companion train --alike-share`,
    `foreign_decks.py --alike`."""

    @property
    def stream(self) -> int:
        return 0 if self.split == "train" else 1

    def style(self) -> SceneStyle:
        textures = (
            tuple(t for t in TEXTURE_FAMILIES if t not in HELD_OUT_TEXTURES)
            if self.split == "train"
            else TEXTURE_FAMILIES
        )
        style = SceneStyle.hard(textures) if self.hard else SceneStyle(textures=textures)
        if self.alike:
            style = replace(style, ingredient_runs=ALIKE_RUNS, card_cloth=True)
        return style if self.skew_deg is None else replace(style, skew_deg=self.skew_deg)


@dataclass
class Frame:
    image: np.ndarray
    """BGR uint8, the delivered (distorted, JPEG-decoded) camera frame."""
    camera: Camera
    scene: Scene
    truth: dict[str, Any]
    plane: PlaneRender = field(repr=False)
    footprint: np.ndarray = field(repr=False)
    """bool raster (plane.view): plane pixels the frame shows."""


def frame_rng(seed: int, index: int, spec: FrameSpec) -> np.random.Generator:
    """The one generator a frame draws everything from: (seed, index, split) -> stream."""
    return np.random.default_rng([seed, index, spec.stream])


def render_frame(
    deck: Deck,
    seed: int,
    index: int = 0,
    spec: FrameSpec | None = None,
    scene: Scene | None = None,
    camera: Camera | None = None,
    light: Light | None = None,
    look: Look | None = None,
) -> Frame:
    """A random (or given) scene through a random (or given) camera, with ground truth."""
    spec = spec or FrameSpec()
    rng = frame_rng(seed, index, spec)
    # draw every random choice in a fixed order, so a given part does not shift the others
    scene_r = random_scene(rng, spec.style())
    cam_r = random_camera(rng, spec.width)
    light_r = Light.random(rng, spec.hard, spec.split == "test")
    look_r = Look.random(rng, spec.hard)
    return render_scene(
        deck,
        scene or scene_r,
        camera or cam_r,
        light or light_r,
        look or look_r,
        rng,
        seed_info=[seed, index, spec.stream],
    )


def render_scene(
    deck: Deck,
    scene: Scene,
    camera: Camera,
    light: Light,
    look: Look,
    rng: np.random.Generator,
    seed_info: list[int] | None = None,
    view: PlaneView | None = None,
    maps: tuple[np.ndarray, np.ndarray] | None = None,
) -> Frame:
    view = view or plane_view_for(camera)
    plane = PlaneRenderer(deck).render(scene, view, look, rng)
    image = shoot(plane.image, camera, view, light, rng, maps)
    footprint = footprint_mask(camera, view)
    truth = ground_truth(scene, camera, plane, footprint)
    truth = {
        "seed": seed_info,
        "texture": scene.texture,
        "camera": camera.to_json(),
        "light": light.to_json(),
        **truth,
    }
    return Frame(image, camera, scene, truth, plane, footprint)


def footprint_mask(cam: Camera, view: PlaneView) -> np.ndarray:
    poly = view.to_px(cam.footprint_mm(32))
    mask = np.zeros((view.h, view.w), np.uint8)
    cv2.fillPoly(mask, [np.round(poly * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
    return mask.astype(bool)


_CARD_AREA = layout.CARD_W_MM * layout.CARD_H_MM - (4 - math.pi) * layout.CARD_CORNER_MM**2
_STRIP_AREA = (
    layout.CARD_W_MM * layout.INDEX_STRIP_MM - (2 - math.pi / 2) * layout.CARD_CORNER_MM**2
)


ENDS: tuple[Literal["top"], Literal["bottom"]] = ("top", "bottom")
"""A card's two index strips."""


def _r(a: np.ndarray | Sequence[float], nd: int = 2) -> list:
    return np.round(np.asarray(a, np.float64), nd).tolist()


def _poly_mask(view: PlaneView, x0: int, y0: int, shape: tuple[int, int], pts_mm: np.ndarray):
    m = np.zeros(shape, np.uint8)
    p = view.to_px(pts_mm) - np.array([x0, y0])
    cv2.fillConvexPoly(m, np.round(p * 16).astype(np.int32), 1, cv2.LINE_8, 4)
    return m.astype(bool)


def _contours_mm(view: PlaneView, x0: int, y0: int, mask: np.ndarray) -> list[np.ndarray]:
    cs, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for c in cs:
        c = cv2.approxPolyDP(c, 0.7, True).reshape(-1, 2).astype(np.float64)
        out.append(view.to_mm(c + np.array([x0, y0])))
    return out


def _bbox_mm(view: PlaneView, x0: int, y0: int, mask: np.ndarray) -> list[float] | None:
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    a = view.to_mm(np.array([[xs.min() + x0 - 0.5, ys.min() + y0 - 0.5]]))[0]
    b = view.to_mm(np.array([[xs.max() + x0 + 0.5, ys.max() + y0 + 0.5]]))[0]
    return [
        round(float(a[0]), 2),
        round(float(a[1]), 2),
        round(float(b[0]), 2),
        round(float(b[1]), 2),
    ]


def ground_truth(
    scene: Scene, cam: Camera, plane: PlaneRender, footprint: np.ndarray
) -> dict[str, Any]:
    view = plane.view
    hand_ids = np.array([k + 1 for k, it in enumerate(scene.items) if isinstance(it, Hand)])
    cards = []
    for k, item in enumerate(scene.items):
        if not isinstance(item, PlacedCard):
            continue
        oid = k + 1
        im = plane.masks.get(oid)
        corners = card_corners(item.center, item.angle)
        entry: dict[str, Any] = {
            "card": item.card,
            "placed_region": item.region,
            "face_up": item.face_up,
            "z": k,
            "center_mm": _r(item.center),
            "angle_deg": round(item.angle, 3),
            "polygon_px": _r(cam.to_frame(corners)),
        }
        strips = []
        if im is None:
            entry.update(visible_fraction=0.0, visible_polygons_px=[], region=item.region)
            for end in ENDS:
                sc = strip_corners(item, end)
                strips.append(
                    {
                        "end": end,
                        "polygon_mm": _r(sc),
                        "polygon_px": _r(cam.to_frame(sc)),
                        "visible_fraction": 0.0,
                        "hand_fraction": 0.0,
                        "visible_polygons_mm": [],
                        "visible_bbox_mm": None,
                    }
                )
            entry["strips"] = strips
            cards.append(entry)
            continue
        h, w = im.mask.shape
        sl = (slice(im.y, im.y + h), slice(im.x, im.x + w))
        ids_roi = plane.ids[sl]
        own = im.mask
        visible = own & (ids_roi == oid) & footprint[sl]
        under_hand = own & np.isin(ids_roi, hand_ids) if len(hand_ids) else np.zeros_like(own)
        # a card partly off the raster keeps its whole area as the denominator
        n_own = max(int(own.sum()), round(0.98 * _CARD_AREA * view.ppm**2), 1)
        entry["visible_fraction"] = round(min(1.0, float(visible.sum()) / n_own), 4)
        entry["visible_polygons_px"] = [
            _r(cam.to_frame(p)) for p in _contours_mm(view, im.x, im.y, visible) if len(p) >= 3
        ]
        best: tuple[float, str | None] = (-1.0, None)
        for end in ENDS:
            sc = strip_corners(item, end)
            smask = _poly_mask(view, im.x, im.y, own.shape, sc) & own
            n = max(int(smask.sum()), round(0.98 * _STRIP_AREA * view.ppm**2), 1)
            vis = smask & visible
            frac = min(1.0, float(vis.sum()) / n)
            polys = _contours_mm(view, im.x, im.y, vis)
            strips.append(
                {
                    "end": end,
                    "polygon_mm": _r(sc),
                    "polygon_px": _r(cam.to_frame(sc)),
                    "visible_fraction": round(frac, 4),
                    "hand_fraction": round(float((smask & under_hand).sum()) / n, 4),
                    "visible_polygons_mm": [_r(p) for p in polys if len(p) >= 3],
                    "visible_bbox_mm": _bbox_mm(view, im.x, im.y, vis),
                }
            )
            if frac > best[0] + 1e-6 and frac > 0:
                ys, xs = np.nonzero(vis)
                c = view.to_mm(np.array([[xs.mean() + im.x, ys.mean() + im.y]]))[0]
                best = (frac, layout.region_at(float(c[0]), float(c[1])))
        entry["strips"] = strips
        entry["region"] = best[1] if best[1] is not None else item.region
        cards.append(entry)
    markers = []
    for mid, r in layout.marker_squares().items():
        sq = np.array([[r.x0, r.y0], [r.x1, r.y0], [r.x1, r.y1], [r.x0, r.y1]])
        im = plane.masks.get(MARKER_ID_BASE + mid)
        frac = 0.0
        if im is not None:
            h, w = im.mask.shape
            sl = (slice(im.y, im.y + h), slice(im.x, im.x + w))
            vis = im.mask & (plane.ids[sl] == MARKER_ID_BASE + mid) & footprint[sl]
            frac = float(vis.sum()) / max(1, int(im.mask.sum()))
        markers.append(
            {"id": mid, "corners_px": _r(cam.to_frame(sq), 3), "visible_fraction": round(frac, 4)}
        )
    hands = [{"root_mm": _r(h.root), "tip_mm": _r(h.tip)} for h in scene.hands]
    return {"markers": markers, "cards": cards, "hands": hands}


def frame_maps_for(cam: Camera) -> tuple[PlaneView, tuple[np.ndarray, np.ndarray]]:
    """The raster window and remap maps of a fixed camera (reused across a recording)."""
    view = plane_view_for(cam)
    return view, frame_maps(cam, view)
