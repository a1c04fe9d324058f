"""Motion on the table (hands reaching in) from frame differences, cheap enough for every frame.

The game follower commits changes only once the scene has settled; this is what tells it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True, slots=True)
class MotionConfig:
    width: int = 160
    """Frames are compared at this width (grey, blurred): hands are big, noise is not."""
    pixel_threshold: int = 18
    """Grey-level change that counts a pixel as moving."""
    moving_fraction: float = 0.004
    """Fraction of moving pixels above which the frame is 'in motion'."""


class MotionGate:
    def __init__(self, config: MotionConfig | None = None) -> None:
        self.config = config or MotionConfig()
        self._prev: np.ndarray | None = None

    def reset(self) -> None:
        self._prev = None

    def update(self, frame: np.ndarray) -> float:
        """Fraction of the view that changed since the previous frame (1.0 for the first)."""
        c = self.config
        h, w = frame.shape[:2]
        small = cv2.resize(
            frame, (c.width, max(1, round(h * c.width / w))), interpolation=cv2.INTER_AREA
        )
        gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
        prev, self._prev = self._prev, gray
        if prev is None or prev.shape != gray.shape:
            return 1.0
        moving = cv2.absdiff(gray, prev) > c.pixel_threshold
        return float(moving.mean())

    def is_moving(self, score: float) -> bool:
        return score > self.config.moving_fraction
