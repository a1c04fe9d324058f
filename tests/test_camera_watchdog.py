"""The watchdog: a stalled live camera is reopened and reported; recordings pass untouched.

A stalling camera cannot be produced on demand here, so `StallingCamera` (tests only) stands in
for the hardware; the recordings beside it go through the real OpenCV sources.
"""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np
import pytest

from companion.camera import (
    LOST,
    OK,
    RECONNECTING,
    CameraError,
    Frame,
    FrameSource,
    ImageFolderSource,
    VideoFileSource,
    WatchedSource,
)
from tests.camera_helpers import grey_level, write_folder, write_video

FAST = {"stall_seconds": 0.2, "backoff": 0.02, "max_backoff": 0.05}


class StallingCamera(FrameSource):
    """A live camera that delivers `frames` frames, then hangs for `hang_seconds` in read()
    (as V4L2 does until its select() timeout) or raises at once."""

    is_live = True

    def __init__(
        self, frames: int | None, *, hang: bool = True, level: int = 0, hang_seconds: float = 0.5
    ) -> None:
        self.name = "fake"
        self.frames, self.hang, self.level = frames, hang, level
        self.hang_seconds = hang_seconds
        self.reading = threading.Event()
        self.closed_during_read = False
        self.delivered = 0
        self.closed = threading.Event()

    def open(self) -> None:
        self.t0 = time.monotonic()

    def read(self) -> Frame | None:
        if self.frames is not None and self.delivered >= self.frames:
            if self.hang:
                self.reading.set()
                time.sleep(self.hang_seconds)
                self.reading.clear()
            raise CameraError("fake camera: no frame")
        time.sleep(0.005)
        image = np.full((4, 4, 3), self.level, np.uint8)
        frame = Frame(image, time.monotonic() - self.t0, self.delivered)
        self.delivered += 1
        return frame

    def close(self) -> None:
        self.closed_during_read = self.reading.is_set()  # would crash a real capture
        self.closed.set()


def read_until(source: WatchedSource, predicate, timeout: float = 5.0) -> list[Frame]:
    frames: list[Frame] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = source.poll(0.05)
        if frame is not None:
            frames.append(frame)
            if predicate(frames):
                return frames
    raise AssertionError(f"condition not reached; status {source.status}, {len(frames)} frames")


@pytest.mark.parametrize("hang", [True, False], ids=["driver-hangs", "driver-errors"])
def test_stalled_camera_is_reported_lost_and_reopened(hang):
    cameras = [StallingCamera(3, hang=hang, level=10), StallingCamera(None, level=200)]
    made: list[StallingCamera] = []

    def factory() -> StallingCamera:
        made.append(cameras[min(len(made), 1)])
        return made[-1]

    statuses: list[str] = []
    with WatchedSource(factory, on_status=statuses.append, **FAST) as source:
        frames = read_until(source, lambda fs: fs[-1].image[0, 0, 0] == 200)
        assert source.status == OK
        assert source.reconnects == 1
    assert statuses == [LOST, RECONNECTING, OK]
    assert cameras[0].closed.wait(2.0)  # released once its hung read returned
    assert cameras[1].closed.is_set()
    assert not any(c.closed_during_read for c in cameras)
    assert [f.image[0, 0, 0] for f in frames[:3]] == [10, 10, 10]
    # t and index keep going forward across the reconnection
    assert all(b.t >= a.t for a, b in itertools.pairwise(frames))
    assert all(b.index > a.index for a, b in itertools.pairwise(frames))
    assert frames[3].t >= 0.2  # the new camera's frames come after the outage


def test_reconnect_retries_until_the_camera_is_back():
    attempts = {"n": 0}

    def factory() -> FrameSource:
        attempts["n"] += 1
        if attempts["n"] == 1:
            return StallingCamera(2, level=10)
        if attempts["n"] <= 4:
            raise CameraError("camera usb:0 did not open")
        return StallingCamera(None, level=200)

    seen: list[str] = []
    with WatchedSource(factory, on_status=seen.append, **FAST) as source:
        read_until(source, lambda fs: fs[-1].image[0, 0, 0] == 200)
    assert attempts["n"] == 5
    assert seen == [LOST, RECONNECTING, OK]


def test_missing_camera_fails_at_open_not_forever():
    def factory() -> FrameSource:
        raise CameraError("camera usb:5 did not open (is it plugged in and free?)")

    with pytest.raises(CameraError, match="usb:5"):
        WatchedSource(factory, **FAST).open()


@pytest.mark.parametrize("fourcc", ["MJPG", "mp4v"])
def test_recording_through_watchdog_is_delivered_whole_and_end_is_not_a_stall(tmp_path, fourcc):
    video = write_video(tmp_path / ("g.avi" if fourcc == "MJPG" else "g.mp4"), 12, fourcc=fourcc)
    statuses: list[str] = []
    with WatchedSource(lambda: VideoFileSource(video), on_status=statuses.append, **FAST) as src:
        frames = []
        while (frame := src.read()) is not None:
            frames.append(frame)
            if frame.index in (2, 7):
                time.sleep(0.4)  # a slow consumer is not a stalled camera
        time.sleep(0.4)  # nor is a finished recording
        assert src.read() is None and src.ended
        assert src.status == OK and src.reconnects == 0
    assert statuses == []
    assert [f.index for f in frames] == list(range(12))
    assert [grey_level(f.image) for f in frames] == list(range(12))
    assert [f.t for f in frames] == pytest.approx([i / 10 for i in range(12)])


def test_folder_with_corrupt_image_through_watchdog(tmp_path):
    names = [f"shot{i}.png" for i in range(1, 7)]
    folder = write_folder(tmp_path / "shots", names, corrupt=("shot4.png",))
    inner: list[ImageFolderSource] = []

    def factory() -> ImageFolderSource:
        inner.append(ImageFolderSource(folder))
        return inner[-1]

    with WatchedSource(factory, **FAST) as source:
        frames = list(source)
    assert [grey_level(f.image) for f in frames] == [0, 1, 2, 4, 5]
    assert inner[0].skipped == 1 and len(inner) == 1


def test_close_returns_even_while_the_driver_hangs():
    camera = StallingCamera(1, hang_seconds=3.0)
    with WatchedSource(lambda: camera, stall_seconds=5.0) as source:
        assert source.read() is not None
        assert camera.reading.wait(1.0)
    assert source.status == OK  # closed before the stall was due: nothing reported
    assert not camera.closed.is_set()  # left to the reader thread, never closed under a read
