"""A folder of images read in natural name order (`frame2.png` before `frame10.png`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from companion.camera.base import CameraError, Frame, FrameSource
from companion.images import ImageError, read_image

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that compares digit runs as numbers: people name photos img_9, img_10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.lower())
        for part in re.split(r"(\d+)", name)
        if part
    )


class ImageFolderSource(FrameSource):
    """Each image file is one frame; `t = position / fps`.

    An unreadable image (corrupt, truncated, past the size limit) is skipped: `on_skip(path,
    reason)` is called (else a warning is logged) and `skipped` counts it, because one bad
    photo must not end a game. A folder with no image at all, or none that decodes, is a
    CameraError at open(). `start_after=t` starts at the
    first image after `t` seconds (a resumed game continues where it was).
    """

    is_live = False

    def __init__(
        self,
        folder: str | Path,
        *,
        fps: float = 1.0,
        on_skip: Callable[[Path, str], None] | None = None,
        start_after: float | None = None,
    ) -> None:
        if fps <= 0:
            raise CameraError(f"fps must be positive, got {fps}")
        self.folder = Path(folder)
        self.name = str(folder)
        self.fps = fps
        self.on_skip = on_skip
        self.start_after = start_after
        self.skipped = 0
        self.paths: list[Path] = []
        self._pos = 0
        self._first: Frame | None = None

    def open(self) -> None:
        if not self.folder.is_dir():
            raise CameraError(f"image folder not found: {self.folder}")
        self.paths = sorted(
            (p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES),
            key=lambda p: natural_key(p.name),
        )
        self.paths = [p for p in self.paths if p.is_file()]
        if not self.paths:
            raise CameraError(f"no images in folder {self.folder}")
        self._pos, self.skipped = 0, 0
        if self.start_after is not None:
            while self._pos < len(self.paths) and self._pos / self.fps <= self.start_after + 1e-9:
                self._pos += 1
            if self._pos == len(self.paths):
                return  # everything was seen already: read() returns None
        held: list[str] = []  # the skips before the first frame: one error if no frame comes
        self._first = self._next(held)
        if self._first is None:
            first = f": {held[0]}" if held else ""
            raise CameraError(f"no readable image in folder {self.folder}{first}")
        for reason in held:
            log.warning("skipped %s", reason)

    def read(self) -> Frame | None:
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        return self._next()

    def _next(self, held: list[str] | None = None) -> Frame | None:
        while self._pos < len(self.paths):
            pos = self._pos
            self._pos += 1
            path = self.paths[pos]
            try:  # size-checked, and a truncated or corrupt image refused, not half read
                image = read_image(path)
            except ImageError as exc:
                self.skipped += 1
                if self.on_skip is not None:
                    self.on_skip(path, str(exc))
                elif held is not None:
                    held.append(str(exc))
                else:
                    log.warning("skipped %s", exc)
                continue
            return Frame(image, pos / self.fps, pos)
        return None

    def close(self) -> None:
        self._pos = len(self.paths)
        self._first = None
