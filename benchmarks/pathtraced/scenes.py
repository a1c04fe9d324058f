"""Scene descriptions for the path-traced benchmark, and their exact ground truth (no bpy here).

A scene is one JSON object that `scene_bpy.py` turns into a Blender scene. Everything the
renderer needs is in it (poses, texture files, lights, camera), and everything the ground truth
needs is computed here from the same numbers, so the truth never depends on Blender.

Coordinates: the table plane in mm as in `companion/layout.py` (origin at marker 0's outer
corner, x right, y towards the near side of the table, z up). Blender's world is right-handed
in metres, so `world = (x / 1000, -y / 1000, z / 1000)`. The camera looks down its own -Z with
+Y up in the image (Blender's convention); `rotation` holds its axes as columns, in world.

Truth per frame (the fields `benchmarks/foreign_decks.py` scores with, image px in OpenCV's
convention): `cards[]` with `card`, `face_up`, `region`, `polygon_mm`, `polygon_px` and
`strips[]` (`end` top/bottom, `polygon_mm`, `polygon_px`, `visible_fraction`,
`hand_fraction` 0), `required` (a face-up card with a band >= 50 % showing), and
`image_from_plane` (3 x 3 homography of the table plane, mm -> px).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

import cv2
import numpy as np

from companion import layout
from companion.cards import ALL_CARDS

RENDER_VERSION: Final = 1
"""Bump when the scene recipe or the Blender scene changes: part of the frame cache key."""
WIDTH: Final = 2304
HEIGHT: Final = 1296
"""The Pi camera's full-field 16:9 stream the kit uses."""
CARD_MM: Final = 0.3
QUIET_MM: Final = 8.0
"""White paper round each marker's black square (as the kit prints it)."""
CASCADE_MM: Final = layout.INDEX_STRIP_MM
TRUTH_PPM: Final = 2.0
"""Raster resolution of the visibility truth (px per mm on the plane)."""
MUST_VISIBLE: Final = 0.5
CLOTHS: Final[tuple[str, ...]] = ("felt", "wood", "plaid")
SLICES: Final[tuple[str, ...]] = ("plain", "hard")


# ------------------------------------------------------------------ geometry


def rotation2d(angle_deg: float) -> np.ndarray:
    """As companion.synth.scene.rotation: counter-clockwise on screen (y down)."""
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, s], [-s, c]])


def card_corners(center: Sequence[float], angle: float) -> np.ndarray:
    """Face TL, TR, BR, BL of a card on the plane (mm)."""
    w, h = layout.CARD_W_MM / 2, layout.CARD_H_MM / 2
    local = np.array([[-w, -h], [w, -h], [w, h], [-w, h]])
    return local @ rotation2d(angle).T + np.asarray(center, np.float64)


def band_corners(center: Sequence[float], angle: float, end: str) -> np.ndarray:
    """The index band at one end of a face (`top` = the face's own top), plane mm."""
    h, w, s = layout.CARD_H_MM / 2, layout.CARD_W_MM / 2, layout.INDEX_STRIP_MM
    y0, y1 = (-h, -h + s) if end == "top" else (h - s, h)
    local = np.array([[-w, y0], [w, y0], [w, y1], [-w, y1]])
    return local @ rotation2d(angle).T + np.asarray(center, np.float64)


def to_world(points_mm: np.ndarray, z_mm: float | np.ndarray = 0.0) -> np.ndarray:
    """Plane mm (n, 2) -> Blender world metres (n, 3)."""
    p = np.asarray(points_mm, np.float64).reshape(-1, 2)
    z = np.broadcast_to(np.asarray(z_mm, np.float64), (len(p),))
    return np.stack([p[:, 0], -p[:, 1], z], axis=1) / 1000.0


def focal_px(camera: dict[str, Any]) -> float:
    return camera["width"] / 2 / math.tan(math.radians(camera["hfov_deg"]) / 2)


def project(camera: dict[str, Any], world: np.ndarray) -> np.ndarray:
    """World metres (n, 3) -> image px (OpenCV: pixel centres at integers) of a pinhole camera
    exactly as Blender renders it (sensor fit horizontal, no shift)."""
    r = np.asarray(camera["rotation"], np.float64)
    c = np.asarray(camera["position"], np.float64)
    pc = (np.asarray(world, np.float64).reshape(-1, 3) - c) @ r  # = R^T (p - c)
    f = focal_px(camera)
    depth = -pc[:, 2]
    u = camera["width"] / 2 - 0.5 + f * pc[:, 0] / depth
    v = camera["height"] / 2 - 0.5 - f * pc[:, 1] / depth
    return np.stack([u, v], axis=1)


def image_from_plane(camera: dict[str, Any]) -> np.ndarray:
    """Homography of the table plane (z = 0): plane mm -> image px."""
    src = np.array([[0, 0], [780, 0], [780, 440], [0, 440]], np.float64)
    dst = project(camera, to_world(src))
    return cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))


def _rot(axis: str, deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def make_camera(
    height_mm: float, tilt_deg: tuple[float, float], roll_deg: float, aim_mm: Sequence[float]
) -> dict[str, Any]:
    """A camera `height_mm` above the table, tilted a little, aiming at `aim_mm` on the plane."""
    r = _rot("z", roll_deg) @ _rot("x", tilt_deg[0]) @ _rot("y", tilt_deg[1])
    aim = to_world(np.array([aim_mm]))[0]
    dist = height_mm / 1000.0 / r[2, 2]  # along the optical axis (camera +Z points back)
    pos = aim + r[:, 2] * dist
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "hfov_deg": layout.CAMERA_HFOV_DEG,
        "position": pos.round(6).tolist(),
        "rotation": r.round(9).tolist(),
    }


# ------------------------------------------------------------------ light


def kelvin_rgb(kelvin: float) -> np.ndarray:
    """Linear RGB of a black body (Tanner Helland's fit of the sRGB values), max 1."""
    t = kelvin / 100.0
    if t <= 66:
        r = 255.0
        g = 99.4708025861 * math.log(t) - 161.1195681661
        b = 0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307
    else:
        r = 329.698727446 * (t - 60) ** -0.1332047592
        g = 288.1221695283 * (t - 60) ** -0.0755148492
        b = 255.0
    srgb = np.clip(np.array([r, g, b]) / 255.0, 1e-3, 1.0)
    lin = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    return lin / lin.max()


def light_colour(kelvin: float, white_balance_k: float) -> list[float]:
    """The light's colour as a camera set for `white_balance_k` records it (not corrected)."""
    c = kelvin_rgb(kelvin) / kelvin_rgb(white_balance_k)
    return (c / c.max()).round(4).tolist()


# ------------------------------------------------------------------ the random table


def _angle(rng: np.random.Generator, spread: float, upside_down: float) -> float:
    a = float(np.clip(rng.normal(0, spread / 2), -spread, spread))
    return a + (180.0 if rng.random() < upside_down else 0.0)


def _card(
    cid: str | None,
    center: tuple[float, float],
    angle: float,
    region: str | None,
    face_up: bool = True,
    curl: float = 0.0,
    stack_mm: float = CARD_MM,
) -> dict[str, Any]:
    return {
        "card": cid,
        "face_up": face_up,
        "region": region,
        "center_mm": [round(center[0], 3), round(center[1], 3)],
        "angle_deg": round(angle, 3),
        "corners_mm": card_corners(center, angle).round(3).tolist(),
        "curl_mm": round(curl, 3),
        "thickness_mm": stack_mm,
        "z_mm": 0.0,
    }


def _cascade(
    rng: np.random.Generator,
    ids: list[str],
    top: tuple[float, float],
    region: str,
    step: tuple[float, float],
    curl: float,
) -> list[dict[str, Any]]:
    """A bowl laid as the kit asks: each card about 16 mm lower than the previous, on top."""
    out = []
    x, y = top[0], top[1] + layout.CARD_H_MM / 2
    for k, cid in enumerate(ids):
        last = k == len(ids) - 1
        c = float(rng.uniform(0, curl)) if last else 0.0
        out.append(_card(cid, (x + float(rng.normal(0, 1.2)), y), _angle(rng, 4, 0.06), region))
        out[-1]["curl_mm"] = round(c, 3)
        y += float(rng.uniform(*step))
        x += float(rng.normal(0, 1.2))
    return out


def random_scene(seed: int, slice_: str, index: int) -> dict[str, Any]:
    """One kit-style table (deck, Fridge row, bowls, scan columns), camera and light, all drawn
    from (seed, slice, index): the same arguments give the same scene for every deck."""
    rng = np.random.default_rng([seed, SLICES.index(slice_), index])
    hard = slice_ == "hard"
    pool = [c.id for c in ALL_CARDS]
    rng.shuffle(pool)  # type: ignore[arg-type]
    curl = 3.0 if hard else 1.5
    cards: list[dict[str, Any]] = []
    d = layout.DECK_SPOT
    deck_h = float(rng.uniform(4, 12))
    cards.append(
        _card(
            None,
            (d.center[0] + float(rng.normal(0, 2)), d.center[1] + float(rng.normal(0, 2))),
            float(rng.normal(0, 3)),
            None,
            face_up=False,
            stack_mm=round(deck_h, 2),
        )
    )
    for slot in layout.fridge_slots():
        if rng.random() < 0.85:
            cx, cy = slot.center
            cards.append(
                _card(
                    pool.pop(),
                    (cx + float(rng.normal(0, 2.5)), cy + float(rng.normal(0, 2.5))),
                    _angle(rng, 4, 0.08),
                    "fridge",
                    curl=float(rng.uniform(0, curl)) if rng.random() < 0.5 else 0.0,
                )
            )
    for n in (1, 2, 3):
        r = layout.region_by_id(f"bowl-{n}").rect
        k = int(rng.integers(1, 10 if hard else 7))
        top = (r.center[0] + float(rng.normal(0, 4)), r.y0 + float(rng.uniform(2, 12)))
        cards += _cascade(rng, [pool.pop() for _ in range(k)], top, f"bowl-{n}", (15, 18), curl)
    scan = layout.region_by_id("scan").rect
    columns = int(rng.integers(1, 4))
    for j in range(columns):
        k = int(rng.integers(2, 6))
        cx = scan.x0 + 40 + j * 88 + float(rng.normal(0, 3))
        top = (cx, scan.y0 + float(rng.uniform(4, 30)))
        cards += _cascade(rng, [pool.pop() for _ in range(k)], top, "scan", (16, 26), curl)
    if rng.random() < 0.3:  # someone's served pile, face down, beside the scan columns
        x = scan.x0 + 40 + columns * 88
        if x < scan.x1 - 30:
            cards.append(
                _card(pool.pop(), (x, 330 + float(rng.normal(0, 10))), 15.0, None, face_up=False)
            )
    _stack(cards)
    if hard:
        kelvin = float(rng.choice([rng.uniform(2700, 3300), rng.uniform(5800, 6500)]))
        wb = float(rng.uniform(4300, 4800))
    else:
        kelvin = float(rng.uniform(4200, 6500))
        wb = kelvin + float(rng.uniform(-300, 300))
    camera = make_camera(
        float(rng.uniform(600, 800)),
        (float(rng.normal(0, 2.5)), float(rng.normal(0, 2.5))),
        float(rng.normal(0, 1.0)),
        (390 + float(rng.normal(0, 8)), 220 + float(rng.normal(0, 6))),
    )
    # the kit's play area must stay in view: pull the camera up a little while it does not
    while not _in_view(camera, margin_px=12):
        camera = _higher(camera, 20.0)
    area = {
        "position_mm": [
            float(rng.uniform(150, 630)),
            float(rng.uniform(-200, 640)),
            float(rng.uniform(1300, 1900)),
        ],
        "size_mm": float(rng.uniform(500, 1200)),
        "power_w": float(rng.uniform(26, 34)),
    }
    lamp = None
    if hard and rng.random() < 0.8:
        # a small lamp whose mirror image in the table falls on a card: a glare spot
        target = np.asarray(cards[int(rng.integers(1, len(cards)))]["center_mm"], float)
        target += rng.normal(0, 15, 2)
        lz = float(rng.uniform(350, 550))
        cam = np.asarray(camera["position"]) * 1000.0
        cxy = np.array([cam[0], -cam[1]])
        lxy = cxy + (target - cxy) * (cam[2] + lz) / cam[2]
        lamp = {
            "position_mm": [float(lxy[0]), float(lxy[1]), lz],
            "radius_mm": float(rng.uniform(10, 30)),
            "power_w": float(rng.uniform(15, 40)),
        }
    return {
        "version": RENDER_VERSION,
        "seed": [seed, slice_, index],
        "slice": slice_,
        "cloth": str(rng.choice(np.array(CLOTHS))),
        "cloth_seed": int(rng.integers(1 << 30)),
        "camera": camera,
        "light": {
            "kelvin": round(kelvin),
            "white_balance_k": round(wb),
            "colour": light_colour(kelvin, wb),
            "area": area,
            "lamp": lamp,
            "ambient": float(rng.uniform(0.15, 0.35)),
            "exposure": float(rng.uniform(-0.3, 0.1) if not hard else rng.uniform(-0.7, 0.0)),
        },
        "gloss": {
            "roughness": float(rng.uniform(0.25, 0.45)),
            "coat": float(rng.uniform(0.15, 0.5 if hard else 0.35)),
            "coat_roughness": float(rng.uniform(0.05, 0.2)),
        },
        "markers": [
            {"id": mid, "square_mm": [r.x0, r.y0, r.x1, r.y1], "quiet_mm": QUIET_MM}
            for mid, r in layout.marker_squares().items()
        ],
        "cards": cards,
        "noise": float(rng.uniform(1.0, 2.5)),
        "samples": 5,
    }


def _bbox(corners: Sequence[Sequence[float]]) -> tuple[float, float, float, float]:
    a = np.asarray(corners, np.float64)
    return (a[:, 0].min(), a[:, 1].min(), a[:, 0].max(), a[:, 1].max())


def _stack(cards: list[dict[str, Any]]) -> None:
    """Each card's base height: on top of every earlier card it overlaps (list = draw order)."""
    for k, c in enumerate(cards):
        b = _bbox(c["corners_mm"])
        z = 0.0
        for below in cards[:k]:
            o = _bbox(below["corners_mm"])
            if b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3]:
                z = max(z, below["z_mm"] + below["thickness_mm"] + below["curl_mm"] + 0.05)
        c["z_mm"] = round(z, 3)


def _in_view(camera: dict[str, Any], margin_px: float) -> bool:
    q = QUIET_MM
    pts = np.array([[-q, -q], [780 + q, -q], [780 + q, 440 + q], [-q, 440 + q]], float)
    uv = project(camera, to_world(pts))
    return bool(
        (uv[:, 0] >= margin_px).all()
        and (uv[:, 0] <= camera["width"] - 1 - margin_px).all()
        and (uv[:, 1] >= margin_px).all()
        and (uv[:, 1] <= camera["height"] - 1 - margin_px).all()
    )


def _higher(camera: dict[str, Any], mm: float) -> dict[str, Any]:
    r = np.asarray(camera["rotation"])
    pos = np.asarray(camera["position"]) + r[:, 2] * mm / 1000.0 / r[2, 2]
    return {**camera, "position": pos.round(6).tolist()}


# ------------------------------------------------------------------ ground truth


def ground_truth(scene: dict[str, Any]) -> dict[str, Any]:
    """Per card: bands on the plane and in the image, how much of each shows (covered by later
    cards, or outside the frame), and whether the card must be read."""
    cam = scene["camera"]
    hom = image_from_plane(cam)
    ppm = TRUTH_PPM
    x0, y0, x1, y1 = -80.0, -80.0, 860.0, 520.0
    w, h = int((x1 - x0) * ppm), int((y1 - y0) * ppm)
    ids = np.zeros((h, w), np.int32)
    to_px = np.array([[ppm, 0, -x0 * ppm], [0, ppm, -y0 * ppm]])

    def raster(poly_mm: np.ndarray) -> np.ndarray:
        p = np.c_[poly_mm, np.ones(len(poly_mm))] @ to_px.T - 0.5
        return np.round(p * 16).astype(np.int32)

    for k, c in enumerate(scene["cards"]):
        cv2.fillConvexPoly(ids, raster(np.asarray(c["corners_mm"])), k + 1, cv2.LINE_8, 4)
    # plane pixels the camera frame shows
    gx, gy = np.meshgrid((np.arange(w) + 0.5) / ppm + x0, (np.arange(h) + 0.5) / ppm + y0)
    uv = cv2.perspectiveTransform(
        np.stack([gx, gy], -1).reshape(-1, 1, 2).astype(np.float64), hom
    ).reshape(h, w, 2)
    shown = (
        (uv[..., 0] >= 0)
        & (uv[..., 0] <= cam["width"] - 1)
        & (uv[..., 1] >= 0)
        & (uv[..., 1] <= cam["height"] - 1)
    )
    out = []
    for k, c in enumerate(scene["cards"]):
        if c["card"] is None:
            continue  # the draw deck: no id to read
        entry: dict[str, Any] = {
            "card": c["card"],
            "face_up": c["face_up"],
            "region": c["region"],
            "center_mm": c["center_mm"],
            "angle_deg": c["angle_deg"],
            "polygon_mm": c["corners_mm"],
            "polygon_px": _px(hom, c["corners_mm"]),
            "strips": [],
        }
        for end in ("top", "bottom"):
            band = band_corners(c["center_mm"], c["angle_deg"], end)
            m = np.zeros((h, w), np.uint8)
            cv2.fillConvexPoly(m, raster(band), 1, cv2.LINE_8, 4)
            own = m.astype(bool)
            n = max(1, int(own.sum()))
            vis = own & (ids == k + 1) & shown
            entry["strips"].append(
                {
                    "end": end,
                    "polygon_mm": band.round(2).tolist(),
                    "polygon_px": _px(hom, band),
                    "visible_fraction": round(float(vis.sum()) / n, 4),
                    "hand_fraction": 0.0,
                }
            )
        entry["required"] = bool(
            c["face_up"] and any(s["visible_fraction"] >= MUST_VISIBLE for s in entry["strips"])
        )
        out.append(entry)
    return {
        "seed": scene["seed"],
        "slice": scene["slice"],
        "cloth": scene["cloth"],
        "light": {k: scene["light"][k] for k in ("kelvin", "white_balance_k")}
        | {"lamp": scene["light"]["lamp"] is not None},
        "image_from_plane": hom.round(8).tolist(),
        "cards": out,
    }


def _px(hom: np.ndarray, pts_mm: Sequence[Sequence[float]] | np.ndarray) -> list:
    p = cv2.perspectiveTransform(np.asarray(pts_mm, np.float64).reshape(-1, 1, 2), hom)
    return p.reshape(-1, 2).round(2).tolist()
