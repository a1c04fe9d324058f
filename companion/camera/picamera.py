"""Raspberry Pi Camera Module 3 through picamera2 (imported here only, and only in open()).

picamera2 and its libcamera bindings exist only on Raspberry Pi OS (`python3-picamera2`); the
project venv sees them when created with `--system-site-packages`. Everywhere else this module
imports fine and open() raises a CameraError saying how to install it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from companion.camera.base import CameraError, Frame, FrameSource

NOT_INSTALLED = (
    "picamera2 is not installed: on Raspberry Pi OS install python3-picamera2 "
    "and create the venv with --system-site-packages"
)

# libcamera's AfModeEnum values (Manual, Auto, Continuous); ints avoid importing libcamera here.
AF_MANUAL, AF_AUTO = 0, 1


class PiCameraSource(FrameSource):
    """Camera Module 3 (IMX708) set up for a card table seen from an arm ~700 mm above it.

    Why these settings:
    - main stream 2304x1296: the sensor's 2x2-binned full-field mode. It keeps the whole 66 degree
      field of view (the 4608x2592 full mode is limited to ~14 fps, the 1536x864 mode is cropped
      and too coarse for cascaded index strips), runs up to ~56 fps and binning halves the noise.
      The sensor is pinned to that mode (`sensor.output_size`) so libcamera cannot pick a crop.
    - format "RGB888": libcamera's name for 24-bit pixels laid out B, G, R in memory, i.e.
      exactly OpenCV's BGR; no conversion, no alpha channel to strip.
    - no lores stream: the detector letterboxes the main image itself; one stream keeps memory
      and ISP work down on a Pi 4.
    - focus fixed at the table: `AfMode` manual with `LensPosition` in dioptres (1 / metres),
      1 / 0.7 m ~ 1.43. Continuous autofocus would hunt every time a hand passes over the
      cards and blur the frames the tracker needs. `autofocus="once"` instead runs one
      autofocus cycle at start (for an unusual mount height) and then locks the lens there.
    - auto exposure on, but `FrameDurationLimits` caps a frame at 1/fps (33 ms at 30 fps), which
      also caps the exposure time: hands moving cards stay sharp enough, and the tracker only
      commits settled scenes anyway. Auto white balance copes with warm room lights.
    - buffer_count 3 and queue=False: capture_request() returns a fresh frame, not one that
      waited in a queue while the detector was busy; three buffers keep the ISP from stalling.
    - each request is released in try/finally after copying the array out (picamera2 reuses
      the buffer as soon as it is released).
    """

    is_live = True
    name = "picamera"

    def __init__(
        self,
        *,
        camera_num: int = 0,
        size: tuple[int, int] = (2304, 1296),
        fps: float = 30.0,
        table_distance_mm: float = 700.0,
        autofocus: str = "fixed",
        buffer_count: int = 3,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if autofocus not in ("fixed", "once"):
            raise CameraError(f"autofocus must be 'fixed' or 'once', got {autofocus!r}")
        if table_distance_mm <= 0 or fps <= 0:
            raise CameraError("table distance and fps must be positive")
        self.camera_num = camera_num
        self.size = size
        self.fps = fps
        self.table_distance_mm = table_distance_mm
        self.autofocus = autofocus
        self.buffer_count = buffer_count
        self._clock = clock
        self._cam: Any = None
        self._t0 = 0.0
        self._index = 0

    @property
    def lens_position(self) -> float:
        """Dioptres for the table distance: 1 / metres."""
        return 1000.0 / self.table_distance_mm

    def controls(self) -> dict[str, Any]:
        """The libcamera controls applied at start (see the class docstring for why)."""
        frame_us = round(1_000_000 / self.fps)
        controls: dict[str, Any] = {
            "AeEnable": True,
            "AwbEnable": True,
            "AwbMode": 0,  # AwbModeEnum.Auto
            "FrameDurationLimits": (frame_us, frame_us),
        }
        if self.autofocus == "fixed":
            controls |= {"AfMode": AF_MANUAL, "LensPosition": self.lens_position}
        return controls

    def open(self) -> None:
        try:
            from picamera2 import Picamera2  # type: ignore[import-not-found]
        except ImportError as exc:
            raise CameraError(NOT_INSTALLED) from exc
        try:
            cam = Picamera2(self.camera_num)
        except (RuntimeError, IndexError, OSError) as exc:
            raise CameraError(f"no Pi camera {self.camera_num} found ({exc})") from exc
        try:
            main = {"size": self.size, "format": "RGB888"}
            kwargs: dict[str, Any] = {
                "main": main,
                "buffer_count": self.buffer_count,
                "controls": self.controls(),
                "queue": False,
            }
            try:
                config = cam.create_video_configuration(**kwargs, sensor={"output_size": self.size})
            except TypeError:  # picamera2 before 0.3.17 has no `sensor` argument
                config = cam.create_video_configuration(**kwargs)
            cam.configure(config)
            cam.start()
            if self.autofocus == "once":
                cam.autofocus_cycle()  # sweeps, focuses, returns when done
                position = cam.capture_metadata().get("LensPosition", self.lens_position)
                cam.set_controls({"AfMode": AF_MANUAL, "LensPosition": position})
        except Exception as exc:
            cam.close()
            raise CameraError(f"Pi camera {self.camera_num} did not start ({exc})") from exc
        self._cam, self._t0, self._index = cam, self._clock(), 0

    def read(self) -> Frame | None:
        if self._cam is None:
            raise CameraError("Pi camera is not open")
        try:
            request = self._cam.capture_request()
        except Exception as exc:
            raise CameraError(f"Pi camera delivered no frame ({exc})") from exc
        try:
            image = np.array(request.make_array("main"), copy=True)
        except Exception as exc:
            raise CameraError(f"Pi camera frame unreadable ({exc})") from exc
        finally:
            request.release()
        frame = Frame(image, self._clock() - self._t0, self._index)
        self._index += 1
        return frame

    def close(self) -> None:
        if self._cam is not None:
            cam, self._cam = self._cam, None
            try:
                cam.stop()
            finally:
                cam.close()
