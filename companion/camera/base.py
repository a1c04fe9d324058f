"""The one small camera interface: a `Frame` value and the `FrameSource` every backend fulfils.

Everything downstream (detector, tracker, UI preview) reads `Frame`s and never knows whether they
came from a Camera Module 3, a USB webcam, a recorded video or a folder of photos; that is what
lets the real pipeline run in CI on recordings (gpiozero's "backend chosen by configuration").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType
from typing import Self

import numpy as np

from companion.errors import CompanionError


class CameraError(CompanionError, OSError):
    """A source that cannot be opened or stopped delivering: one line the user can act on."""


@dataclass(frozen=True, slots=True, eq=False)
class Frame:
    """One picture of the table, as a source delivered it."""

    image: np.ndarray
    """BGR uint8, shape (H, W, 3): OpenCV's order, so detectors and drawing need no conversion."""
    t: float
    """Seconds since the source started: from the frame index and fps for recordings (so replays
    are deterministic), from the monotonic clock for live cameras."""
    index: int
    """Frame number in the source, from 0 (a folder's skipped files leave gaps)."""


class FrameSource(ABC):
    """configure (constructor) -> open -> read... -> close; a context manager.

    `read()` returns the next frame, or None at the end of a recording or folder. A live source
    never ends by itself: when it cannot deliver it raises CameraError (or blocks, if the driver
    hangs); `WatchedSource` turns both into "camera lost" and a reconnection.
    """

    name: str
    """What the user typed or would recognise: `usb:0`, `picamera`, a path."""
    is_live: bool
    """True for cameras (frames are dropped rather than queued; stalls are watched)."""

    @abstractmethod
    def open(self) -> None:
        """Acquire the device or file; raises CameraError with a one-line message."""

    @abstractmethod
    def read(self) -> Frame | None:
        """Next frame; None at the end of a recording."""

    @abstractmethod
    def close(self) -> None:
        """Release the device or file; safe to call twice or before open()."""

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self):  # type: ignore[no-untyped-def]
        """Frames until the end of the stream (an open source only)."""
        while (frame := self.read()) is not None:
            yield frame

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
