"""Frame sources: picamera2, OpenCV device or video file, image folder; and the watchdog.

`open_source(spec)` turns what the user typed after `--source` into a source (not yet opened):

    with open_source("usb:0") as cam:
        frame = cam.read()

Wrap live sources in `WatchedSource(lambda: open_source(spec))` to survive a stalled camera.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from companion.camera.base import CameraError, Frame, FrameSource
from companion.camera.folder import ImageFolderSource
from companion.camera.opencv import OpenCVDeviceSource, VideoFileSource
from companion.camera.picamera import PiCameraSource
from companion.camera.watchdog import LOST, OK, RECONNECTING, STATUSES, WatchedSource

__all__ = [
    "LOST",
    "OK",
    "RECONNECTING",
    "STATUSES",
    "CameraError",
    "Frame",
    "FrameSource",
    "ImageFolderSource",
    "OpenCVDeviceSource",
    "PiCameraSource",
    "VideoFileSource",
    "WatchedSource",
    "open_source",
]

_USB = re.compile(r"usb:(\d+)")


def open_source(spec: str, **opts: Any) -> FrameSource:
    """`picamera`, `usb:N`, a video file or a folder of images -> an unopened FrameSource.

    `opts` go to the chosen class (e.g. `realtime=True` for a video, `fps=` for a folder).
    Unknown specs and missing paths raise CameraError with a one-line message.
    """
    spec = spec.strip()
    if not spec:
        raise CameraError("empty camera source: use picamera, usb:N, a video file or a folder")
    if spec == "picamera":
        return PiCameraSource(**opts)
    if match := _USB.fullmatch(spec):
        return OpenCVDeviceSource(int(match.group(1)), **opts)
    if spec.startswith("usb:"):
        raise CameraError(f"bad camera source {spec!r}: expected usb:N with N a number, e.g. usb:0")
    path = Path(spec).expanduser()
    if path.is_dir():
        return ImageFolderSource(path, **opts)
    if path.is_file():
        return VideoFileSource(path, **opts)
    raise CameraError(
        f"camera source {spec!r} not found: use picamera, usb:N, a video file or a folder of images"
    )
