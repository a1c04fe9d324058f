"""The Session's two threads: the screen never waits on detection, recordings lose no frame.

No timings: a pipeline that blocks until the test lets it go stands for a slow detection.
"""

from __future__ import annotations

import threading
from typing import Any, cast

import numpy as np
import pytest

from companion.camera import Frame, FrameSource
from companion.session import Session, TablePipeline
from companion.tracking.follower import GameFollower

WAIT_S = 10.0
"""Upper bound on any wait here (never reached when the code is right)."""


class CountingSource(FrameSource):
    """Frame i is an image whose three channels spell i (base 256); `live` as a camera or a
    recording of `frames` frames."""

    def __init__(self, live: bool, frames: int = 10_000) -> None:
        self.name = "counting"
        self.is_live = live
        self.frames = frames
        self.index = 0
        self.closed = threading.Event()

    def open(self) -> None:
        pass

    def read(self) -> Frame | None:
        if self.index >= self.frames or self.closed.is_set():
            return None
        i = self.index
        self.index += 1
        image = np.empty((4, 6, 3), np.uint8)
        image[:] = (i % 256, i // 256 % 256, i // 65536 % 256)
        return Frame(image, i / 15, i)

    def close(self) -> None:
        self.closed.set()


class BlockingPipeline(TablePipeline):
    """process() records the frame and, from frame `block_at` on, waits until released."""

    def __init__(self, block_at: int | None = None) -> None:
        super().__init__(cast(Any, None), GameFollower("2p", ["Alice", "Bob"]))
        self.block_at = block_at
        self.seen: list[int] = []
        self.blocked = threading.Event()
        self.release = threading.Event()
        self.blocked_on = -1

    def process(self, frame: Frame) -> list[dict[str, Any]]:
        self.seen.append(frame.index)
        if self.block_at is not None and frame.index >= self.block_at:
            self.blocked_on = frame.index
            self.blocked.set()
            assert self.release.wait(WAIT_S)
        return []


def _shown(session: Session) -> int | None:
    frame = session.latest_frame()
    if frame is None:
        return None
    b, g, r = (int(v) for v in frame[0, 0])
    return b + 256 * g + 65536 * r


def test_a_stalled_detection_never_stalls_the_picture_on_screen() -> None:
    source = CountingSource(live=True)
    pipeline = BlockingPipeline(block_at=3)
    session = Session(source, pipeline)
    session.start()
    try:
        assert pipeline.blocked.wait(WAIT_S)
        seen_when_blocked = pipeline.blocked_on
        moved = threading.Event()

        def watch() -> None:
            while not moved.is_set():
                shown = _shown(session)
                if (
                    shown is not None
                    and seen_when_blocked is not None
                    and shown > seen_when_blocked + 5
                ):
                    moved.set()
                    return
                if session.ended.is_set():
                    return
                threading.Event().wait(0.01)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        # the pipeline is still blocked on frame 3, yet newer frames reach the screen
        assert moved.wait(WAIT_S)
        assert pipeline.seen[-1] == pipeline.blocked_on  # a live camera: older frames dropped
        pipeline.release.set()
    finally:
        pipeline.release.set()
        source.close()
        session.stop()


@pytest.mark.parametrize("frames", [1, 37])
def test_a_recording_is_processed_whole_and_in_order_behind_a_slow_pipeline(frames: int) -> None:
    source = CountingSource(live=False, frames=frames)
    pipeline = BlockingPipeline(block_at=0)
    session = Session(source, pipeline)
    session.start()
    try:
        assert pipeline.blocked.wait(WAIT_S)
        pipeline.release.set()
        assert session.ended.wait(WAIT_S)
    finally:
        pipeline.release.set()
        session.stop()
    assert pipeline.seen == list(range(frames))
    assert session.source_ended and session.error is None
