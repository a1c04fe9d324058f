"""OpenCV-backed sources: a USB/V4L2 camera (`usb:N`) and any video file FFmpeg decodes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from companion.camera.base import CameraError, Frame, FrameSource


def _as_bgr(image: np.ndarray) -> np.ndarray:
    """Some backends hand out grey or BGRA frames; the pipeline always gets 3-channel BGR."""
    if image.ndim == 2:
        return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image


class OpenCVDeviceSource(FrameSource):
    """A webcam through cv2.VideoCapture(N).

    1920x1080 is requested by default: enough pixels for the cascaded index strips of a bowl seen
    from ~700 mm; the driver may give less, and `size` reports what it really delivers.
    """

    is_live = True

    def __init__(
        self,
        device: int = 0,
        *,
        width: int = 1920,
        height: int = 1080,
        fps: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.device = device
        self.name = f"usb:{device}"
        self.width, self.height, self.fps = width, height, fps
        self._clock = clock
        self._cap: cv2.VideoCapture | None = None
        self._t0 = 0.0
        self._index = 0
        self.size: tuple[int, int] | None = None
        """(width, height) the device actually delivers, known after open()."""

    def open(self) -> None:
        cap = cv2.VideoCapture(self.device)
        if not cap.isOpened():
            cap.release()
            raise CameraError(f"camera {self.name} did not open (is it plugged in and free?)")
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
        if self.fps:
            cap.set(cv2.CAP_PROP_FPS, self.fps)
        # A one-frame driver queue: we want the table as it is now, not as it was.
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        self.size = (
            int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
            int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        )
        self._cap, self._t0, self._index = cap, self._clock(), 0

    def read(self) -> Frame | None:
        if self._cap is None:
            raise CameraError(f"camera {self.name} is not open")
        ok, image = self._cap.read()
        if not ok or image is None:
            raise CameraError(f"camera {self.name} delivered no frame")
        frame = Frame(_as_bgr(image), self._clock() - self._t0, self._index)
        self._index += 1
        return frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class VideoFileSource(FrameSource):
    """A recorded game (any container/codec the OpenCV build decodes).

    `t` is index / fps, so a replay gives the same events on any machine at any speed.
    `realtime=True` paces frames at the recorded fps (to watch a recording as if live);
    the default reads as fast as the consumer asks, for tests and headless runs.
    `start_after=t` skips (without decoding) every frame at or before `t` seconds: a resumed
    game continues from the frame it had reached.

    A file that stops before the frame count its container announces (a copy cut off half-way,
    a read error) is not a finished recording: read() raises CameraError there instead of
    returning None, so the game is not ended on half a recording.
    """

    is_live = False

    def __init__(
        self,
        path: str | Path,
        *,
        realtime: bool = False,
        fps: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        start_after: float | None = None,
    ) -> None:
        self.path = Path(path)
        self.name = str(path)
        self.realtime = realtime
        self.fps = fps
        """Frames per second; None -> read from the file (30 if the file does not say)."""
        self._clock, self._sleep = clock, sleep
        self._cap: cv2.VideoCapture | None = None
        self._index = 0
        self._first: np.ndarray | None = None
        self._t_start = 0.0
        self.frame_count: int | None = None
        """Frames the container announces (may be approximate), known after open()."""
        self.start_after = start_after
        self.skipped = 0
        """Frames passed over by `start_after`."""

    def open(self) -> None:
        if not self.path.exists():
            raise CameraError(f"video file not found: {self.path}")
        if self.path.is_dir():
            raise CameraError(f"{self.path} is a folder, not a video file")
        cap = cv2.VideoCapture(str(self.path))
        ok, first = cap.read() if cap.isOpened() else (False, None)
        if not ok or first is None:
            cap.release()
            raise CameraError(f"cannot decode video file {self.path} (corrupt or unknown format)")
        if self.fps is None:
            fps = cap.get(cv2.CAP_PROP_FPS)
            self.fps = float(fps) if fps and 0 < fps < 1000 else 30.0
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        self.frame_count = count if count > 0 else None
        self._cap, self._first, self._index = cap, first, 0
        self.skipped = 0
        if self.start_after is not None:
            self._skip_to(self.start_after)
        # realtime pacing starts at the first frame delivered
        self._t_start = self._clock() - self._index / self.fps

    def _skip_to(self, after: float) -> None:
        """Pass over the frames at or before `after` seconds (grab() does not decode them)."""
        assert self._cap is not None and self.fps is not None
        if after < 0:
            return
        self._first, self._index = None, 1  # frame 0 was read by open()
        while self._index / self.fps <= after + 1e-9 and self._cap.grab():
            self._index += 1
        self.skipped = self._index

    def _end_of_stream(self) -> None:
        """The file ended: fine at its announced length, an error well before it."""
        count = self.frame_count
        if count is not None and count - self._index > max(1, count // 200):
            raise CameraError(
                f"video {self.name} ended at frame {self._index} of {count}: the file is cut "
                "off or unreadable there"
            )

    def read(self) -> Frame | None:
        if self._cap is None:
            raise CameraError(f"video {self.name} is not open")
        if self._first is not None:
            image, self._first = self._first, None
        else:
            ok, image = self._cap.read()
            if not ok or image is None:
                self._end_of_stream()
                return None
        assert self.fps is not None
        t = self._index / self.fps
        if self.realtime:
            delay = self._t_start + t - self._clock()
            if delay > 0:
                self._sleep(delay)
        frame = Frame(_as_bgr(image), t, self._index)
        self._index += 1
        return frame

    def close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None
        self._first = None
