"""A pinhole camera over the table, its lens, light and sensor.

World frame: table-plane mm (x right, y towards the screen side), z pointing into the table; the
camera hangs at z = -height. Lens distortion follows OpenCV's model (k1, k2, p1, p2, k3) so
cv2.undistort and cv2.projectPoints agree with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np

from companion import layout
from companion.synth.raster import PlaneView
from companion.synth.textures import smooth_noise

WIDTHS: Final[tuple[int, ...]] = (1280, 1536, 1920, 2304)
"""Output widths (16:9) picked per frame; the Camera Module 3 streams all of them."""


@dataclass(frozen=True)
class Camera:
    width: int
    height: int
    K: np.ndarray = field(repr=False)
    dist: np.ndarray = field(repr=False)
    """(5,) OpenCV distortion coefficients k1, k2, p1, p2, k3."""
    R: np.ndarray = field(repr=False)
    """World -> camera rotation."""
    C: np.ndarray = field(repr=False)
    """Camera centre, world mm."""
    mount_mm: float = 700.0
    tilt_deg: float = 0.0

    @property
    def image_from_plane(self) -> np.ndarray:
        """Homography plane mm -> ideal (undistorted) image px."""
        r = self.R
        h = self.K @ np.column_stack([r[:, 0], r[:, 1], -r @ self.C])
        return h / h[2, 2]

    def project(self, pts_mm: np.ndarray) -> np.ndarray:
        """Plane mm -> ideal image px."""
        p = np.asarray(pts_mm, np.float64).reshape(-1, 2)
        q = np.hstack([p, np.ones((len(p), 1))]) @ self.image_from_plane.T
        return q[:, :2] / q[:, 2:3]

    def distort(self, ideal_px: np.ndarray) -> np.ndarray:
        """Ideal px -> px in the delivered (distorted) frame."""
        p = np.asarray(ideal_px, np.float64).reshape(-1, 2)
        fx, fy, cx, cy = self.K[0, 0], self.K[1, 1], self.K[0, 2], self.K[1, 2]
        x, y = (p[:, 0] - cx) / fx, (p[:, 1] - cy) / fy
        k1, k2, p1, p2, k3 = self.dist
        r2 = x * x + y * y
        radial = 1 + k1 * r2 + k2 * r2 * r2 + k3 * r2**3
        xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        return np.column_stack([xd * fx + cx, yd * fy + cy])

    def undistort(self, px: np.ndarray) -> np.ndarray:
        """Distorted frame px -> ideal px."""
        p = np.asarray(px, np.float64).reshape(-1, 1, 2)
        return cv2.undistortPoints(p, self.K, self.dist, P=self.K).reshape(-1, 2)

    def to_frame(self, pts_mm: np.ndarray) -> np.ndarray:
        """Plane mm -> px in the delivered frame."""
        return self.distort(self.project(pts_mm))

    def footprint_mm(self, n: int = 24) -> np.ndarray:
        """The frame's border on the table plane (a closed polygon, mm)."""
        w, h = self.width - 1, self.height - 1
        t = np.linspace(0, 1, n, endpoint=False)
        border = np.concatenate(
            [
                np.column_stack([t * w, np.zeros(n)]),
                np.column_stack([np.full(n, w), t * h]),
                np.column_stack([w - t * w, np.full(n, h)]),
                np.column_stack([np.zeros(n), h - t * h]),
            ]
        )
        ideal = self.undistort(border)
        hinv = np.linalg.inv(self.image_from_plane)
        q = np.hstack([ideal, np.ones((len(ideal), 1))]) @ hinv.T
        return q[:, :2] / q[:, 2:3]

    def px_per_mm_max(self) -> float:
        """The finest image scale anywhere on the visible plane (sets the raster resolution)."""
        fp = self.footprint_mm(8)
        c = fp.mean(axis=0)
        pts = np.vstack([fp, c])
        best = 0.0
        for p in pts:
            a = self.project(p + np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
            best = max(best, float(np.linalg.norm(a[1] - a[0])), float(np.linalg.norm(a[2] - a[0])))
        return best

    def to_json(self) -> dict:
        return {
            "image_size": [self.width, self.height],
            "image_from_plane": np.round(self.image_from_plane, 9).tolist(),
            "K": np.round(self.K, 6).tolist(),
            "dist": np.round(self.dist, 8).tolist(),
            "mount_mm": round(self.mount_mm, 2),
            "tilt_deg": round(self.tilt_deg, 3),
            "center_mm": np.round(self.C, 2).tolist(),
        }


def look_at_camera(
    width: int,
    target: tuple[float, float],
    mount_mm: float,
    tilt_deg: float = 0.0,
    tilt_dir_deg: float = 0.0,
    yaw_deg: float = 0.0,
    hfov_deg: float = layout.CAMERA_HFOV_DEG,
    k1: float = 0.0,
    k2: float = 0.0,
    principal: tuple[float, float] = (0.0, 0.0),
) -> Camera:
    """A camera `mount_mm` above the table, tilted `tilt_deg` and aimed at `target` (mm)."""
    height = round(width * 9 / 16)
    f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
    K = np.array(
        [[f, 0, (width - 1) / 2 + principal[0]], [0, f, (height - 1) / 2 + principal[1]], [0, 0, 1]]
    )
    t = math.radians(tilt_deg)
    a = math.radians(tilt_dir_deg)
    back = mount_mm * math.tan(t)
    T = np.array([target[0], target[1], 0.0])
    C = np.array([target[0] - back * math.cos(a), target[1] - back * math.sin(a), -mount_mm])
    fwd = (T - C) / np.linalg.norm(T - C)
    y = math.radians(yaw_deg)
    up = np.array([-math.sin(y), math.cos(y), 0.0])
    xc = np.cross(up, fwd)
    xc /= np.linalg.norm(xc)
    yc = np.cross(fwd, xc)
    R = np.vstack([xc, yc, fwd])
    dist = np.array([k1, k2, 0.0, 0.0, 0.0])
    return Camera(width, height, K, dist, R, C, mount_mm, tilt_deg)


def random_camera(
    rng: np.random.Generator, width: int | None = None, widths: tuple[int, ...] = WIDTHS
) -> Camera:
    """A plausible mount: 650..850 mm up, aimed near the play area's centre, tilted up to 8 deg."""
    w = int(width or rng.choice(np.array(widths)))
    cx, cy = layout.PLAY_W_MM / 2, layout.PLAY_H_MM / 2
    return look_at_camera(
        w,
        (cx + float(rng.normal(0, 12)), cy + float(rng.normal(0, 10))),
        float(rng.uniform(650, 850)),
        min(8.0, abs(float(rng.normal(0, 4.0)))),
        float(rng.uniform(0, 360)),
        float(rng.normal(0, 1.5)),
        layout.CAMERA_HFOV_DEG * float(rng.uniform(0.97, 1.03)),
        # k1: the Camera Module 3 standard lens is close to rectilinear, and the live pipeline
        # maps the table with a homography only (no lens model): stronger barrel distortion
        # would need a lens calibration step that does not exist yet
        float(rng.uniform(-0.04, 0.02)),
        float(rng.uniform(-0.01, 0.01)),
        (float(rng.normal(0, w * 0.005)), float(rng.normal(0, w * 0.005))),
    )


def plane_view_for(cam: Camera, oversample: float = 1.1, max_px: int = 7_000_000) -> PlaneView:
    """The raster window the camera needs: its footprint, at ~its finest scale."""
    fp = cam.footprint_mm(16)
    x0, y0 = fp.min(axis=0) - 4
    x1, y1 = fp.max(axis=0) + 4
    ppm = cam.px_per_mm_max() * oversample
    area = (x1 - x0) * (y1 - y0)
    ppm = min(ppm, math.sqrt(max_px / area))
    w, h = math.ceil((x1 - x0) * ppm), math.ceil((y1 - y0) * ppm)
    return PlaneView(float(x0), float(y0), float(ppm), int(w), int(h))


def frame_maps(cam: Camera, view: PlaneView, step: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """remap() maps: for each frame pixel, where to sample the plane raster.

    Computed exactly on a coarse grid of block centres and resized (bilinear), which is exact
    for the grid and far below a pixel between: the mapping is smooth.
    """
    gw, gh = math.ceil(cam.width / step), math.ceil(cam.height / step)
    gx = (np.arange(gw) + 0.5) * step - 0.5
    gy = (np.arange(gh) + 0.5) * step - 0.5
    xx, yy = np.meshgrid(gx, gy)
    ideal = cam.undistort(np.column_stack([xx.ravel(), yy.ravel()]))
    hinv = np.linalg.inv(cam.image_from_plane)
    q = np.hstack([ideal, np.ones((len(ideal), 1))]) @ hinv.T
    mm = q[:, :2] / q[:, 2:3]
    px = view.to_px(mm).astype(np.float32)
    mx = cv2.resize(
        px[:, 0].reshape(gh, gw), (gw * step, gh * step), interpolation=cv2.INTER_LINEAR
    )
    my = cv2.resize(
        px[:, 1].reshape(gh, gw), (gw * step, gh * step), interpolation=cv2.INTER_LINEAR
    )
    return mx[: cam.height, : cam.width], my[: cam.height, : cam.width]


@dataclass(frozen=True, slots=True)
class Light:
    """Exposure, white balance error, gradients, lens softness, sensor noise, compression."""

    kelvin: float = 5000.0
    wb_error: float = 0.5
    """How much of the colour cast auto white balance leaves (0 = fully corrected)."""
    brightness: float = 1.0
    gradient: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """(amplitude, direction rad, vignette)."""
    blur_px: float = 0.6
    noise: float = 2.0
    """Read noise sigma (8-bit levels); shot noise scales with it."""
    jpeg_quality: int = 90

    @staticmethod
    def random(rng: np.random.Generator, hard: bool = False, held_out: bool = False) -> Light:
        lo = 2700.0 if held_out else 2900.0
        kelvin = float(rng.uniform(lo, 6500.0))
        if held_out and rng.random() < 0.3:
            kelvin = float(rng.uniform(2700, 3000))
        return Light(
            kelvin,
            float(rng.uniform(0.2, 0.7)),
            float(rng.uniform(0.65, 1.25)),
            (
                float(rng.uniform(0, 0.35)),
                float(rng.uniform(0, 2 * math.pi)),
                float(rng.uniform(0, 0.35)),
            ),
            float(rng.uniform(1.2, 2.8) if hard else rng.uniform(0.0, 1.3)),
            float(rng.uniform(1.0, 5.0) if not hard else rng.uniform(3.0, 8.0)),
            int(rng.integers(55, 96)),
        )

    def to_json(self) -> dict:
        return {
            "kelvin": round(self.kelvin),
            "wb_error": round(self.wb_error, 3),
            "brightness": round(self.brightness, 3),
            "gradient": [round(v, 3) for v in self.gradient],
            "blur_px": round(self.blur_px, 3),
            "noise": round(self.noise, 3),
            "jpeg_quality": self.jpeg_quality,
        }


def kelvin_bgr(kelvin: float) -> np.ndarray:
    """Approximate colour of a black body (Tanner Helland's fit), BGR in 0..1."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.698727446 * (t - 60) ** -0.1332047592
    g = (
        99.4708025861 * math.log(t) - 161.1195681661
        if t <= 66
        else 288.1221695283 * (t - 60) ** -0.0755148492
    )
    if t >= 66:
        b = 255.0
    elif t <= 19:
        b = 0.0
    else:
        b = 138.5177312231 * math.log(t - 10) - 305.0447927307
    return np.clip(np.array([b, g, r]), 1, 255) / 255.0


def shoot(
    plane_img: np.ndarray,
    cam: Camera,
    view: PlaneView,
    light: Light,
    rng: np.random.Generator,
    maps: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The camera's JPEG-decoded frame of the rendered plane (BGR uint8)."""
    mx, my = maps if maps is not None else frame_maps(cam, view)
    img = cv2.remap(plane_img, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return develop(img, light, rng)


def develop(img: np.ndarray, light: Light, rng: np.random.Generator) -> np.ndarray:
    """Light, lens softness, sensor noise and JPEG on a clean frame."""
    h, w = img.shape[:2]
    # gain field: exposure, a linear gradient and vignetting, computed small
    sw, sh = 64, 36
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u, v = xx / (sw - 1) - 0.5, yy / (sh - 1) - 0.5
    amp, ang, vig = light.gradient
    field_ = light.brightness * (1 + amp * (u * math.cos(ang) + v * math.sin(ang)) * 2)
    field_ *= 1 - vig * (u * u + v * v) * 2
    gains = kelvin_bgr(light.kelvin) / kelvin_bgr(5500.0)
    gains = gains**light.wb_error
    gains = gains / gains[1]
    gain = cv2.resize(field_.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    f: np.ndarray = img.astype(np.float32)
    f *= gain[..., None]
    f *= gains.astype(np.float32)
    if light.blur_px > 0.25:
        f = cv2.GaussianBlur(f, (0, 0), light.blur_px)
    if light.noise > 0:
        lum = rng.standard_normal((h, w), dtype=np.float32)
        shot = np.sqrt(np.clip(f.mean(axis=2), 1, 255) / 64.0)
        f += (light.noise * shot * lum)[..., None]
        chroma = smooth_noise(rng, h, w, 2.0) - 0.5
        f[..., 0] += light.noise * 0.8 * chroma
    out = np.clip(f, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, light.jpeg_quality])
    if not ok:  # pragma: no cover - cv2 always encodes a valid array
        return out
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out if decoded is None else decoded
