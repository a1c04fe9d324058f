"""Is a hand over the table? A change that reaches in from beyond the play area's edge.

The motion gate (`companion.vision.motion`) sees a hand only while it moves: a hand that rests
over a bowl for a second is a still frame, and the cards under it look gone. Hands, though,
always come from outside: a player's arm crosses the edge of the play area (and the edge of the
camera's view) to reach a card. Cards never do: they lie inside the play area.

`HandWatch` keeps a reference picture of the table as it was the last time nothing was over
it, and compares each still frame with it. A connected patch of change that touches the image
border or lies partly outside the play area is an arm: the frame has a hand. A patch wholly
inside the play area is a card laid, taken or moved (the table changed: the reference follows
it). A change over most of the view is the light or the camera moving, not a hand (the
reference is taken again). Anything taken for a hand that stays perfectly still for
`adopt_after_s` is not one (a cup pushed in from the side, a hand that was already there when
watching began): the reference is taken again then; should it leave after all, the table as it
was before it is recognised and the hand is over at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion import layout


@dataclass(frozen=True, slots=True)
class HandConfig:
    width: int = 320
    """Frames are compared at this width (blurred): an arm is tens of pixels wide here."""
    pixel_threshold: int = 28
    """Change of any colour channel that counts a pixel as changed."""
    min_area: float = 0.002
    """A patch of change smaller than this fraction of the view is no hand."""
    global_change: float = 0.45
    """Change over more than this fraction of the view is the light or the camera."""
    outside_mm: float = 12.0
    """A patch reaching more than this beyond the play area's edge crosses it."""
    adopt_after_s: float = 10.0
    """A 'hand' perfectly still this long is part of the scene (see the module docstring)."""


@dataclass(frozen=True, slots=True)
class HandReading:
    hand: bool
    """A hand (or arm) is over the table in this frame."""
    area: float
    """Fraction of the view covered by the change that reaches in from outside."""


class HandWatch:
    """`update(t, image, calibration, still) -> HandReading`; `reset()`."""

    def __init__(self, config: HandConfig | None = None) -> None:
        self.config = config or HandConfig()
        self._ref: np.ndarray | None = None
        self._prior: np.ndarray | None = None
        """The table before something still was taken as scenery (see update)."""
        self._inside: np.ndarray | None = None
        self._inside_key: tuple[float, ...] | None = None
        self._hand_since: float | None = None

    def reset(self) -> None:
        self._ref = None
        self._prior = None
        self._inside = None
        self._inside_key = None
        self._hand_since = None

    def adopt(self, image: np.ndarray) -> None:
        """Take `image` as the table with no hand over it (e.g. the camera was bumped: the
        markers moved, so the change is the view, not a hand)."""
        self._ref = self._small(image)
        self._prior = None
        self._hand_since = None

    def _small(self, image: np.ndarray) -> np.ndarray:
        c = self.config
        h, w = image.shape[:2]
        size = (c.width, max(1, round(h * c.width / w)))
        small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        return cv2.GaussianBlur(small, (5, 5), 0)

    def _inside_mask(self, calibration: object | None, shape: tuple[int, int]) -> np.ndarray:
        """True where the (slightly grown) play area lies, at the compared size; all False
        but the border when the table plane is unknown."""
        h, w = shape
        mat = getattr(calibration, "image_from_plane", None)
        size = getattr(calibration, "image_size", None)
        if mat is None or size is None:
            key: tuple[float, ...] = (float(h), float(w))
        else:
            key = (float(h), float(w), *np.asarray(mat, np.float64).ravel().round(3).tolist())
        if self._inside is not None and self._inside_key == key:
            return self._inside
        inside = np.zeros((h, w), np.uint8)
        if mat is not None and size is not None:
            m = self.config.outside_mm
            corners = np.array(
                [
                    [-m, -m],
                    [layout.PLAY_W_MM + m, -m],
                    [layout.PLAY_W_MM + m, layout.PLAY_H_MM + m],
                    [-m, layout.PLAY_H_MM + m],
                ],
                np.float64,
            ).reshape(-1, 1, 2)
            px: np.ndarray = cv2.perspectiveTransform(corners, np.asarray(mat, np.float64))
            px = px.reshape(-1, 2) * (w / float(size[0]))
            cv2.fillConvexPoly(inside, np.round(px).astype(np.int32), 1)
        else:
            inside[1:-1, 1:-1] = 1  # only the image border is outside
        inside[0, :] = inside[-1, :] = 0
        inside[:, 0] = inside[:, -1] = 0
        self._inside, self._inside_key = inside.astype(bool), key
        return self._inside

    def update(
        self, t: float, image: np.ndarray, calibration: object | None = None, still: bool = True
    ) -> HandReading:
        """One frame: `still` is the motion gate's verdict (a moving frame is not compared:
        the caller already knows something is moving; it neither sets nor clears the hand)."""
        c = self.config
        small = self._small(image)
        if self._ref is None or self._ref.shape != small.shape:
            if not still:  # started mid-move (a resumed game, a restarted kiosk): wait
                return HandReading(False, 0.0)
            self._ref, self._prior = small, None
            self._hand_since = None
            return HandReading(False, 0.0)
        if not still:
            if self._hand_since is not None:
                self._hand_since = t  # a hand that moves is a hand: its stillness clock restarts
            return HandReading(self._hand_since is not None, 0.0)
        reaching = self._reaching(small, self._ref, calibration)
        if reaching is None:  # the light or the camera changed
            self._ref, self._prior = small, None
            self._hand_since = None
            return HandReading(False, 0.0)
        if (
            reaching > 0.0
            and self._prior is not None
            and self._reaching(small, self._prior, calibration) == 0.0
        ):
            reaching = 0.0  # what was taken as scenery has left: it was a hand after all
        if reaching == 0.0:
            self._ref, self._prior = small, None  # what a hand will be compared with
            self._hand_since = None
            return HandReading(False, 0.0)
        if self._hand_since is None:
            self._hand_since = t
        elif t - self._hand_since >= c.adopt_after_s:
            # kept: if it leaves after all, the table before it tells
            self._prior = self._prior if self._prior is not None else self._ref
            self._ref = small
            self._hand_since = None
            return HandReading(False, reaching)
        return HandReading(True, reaching)

    def _reaching(
        self, small: np.ndarray, ref: np.ndarray, calibration: object | None
    ) -> float | None:
        """Fraction of the view changed from `ref` by patches crossing the play area's edge
        or the picture's; None when most of the view changed."""
        c = self.config
        diff = cv2.absdiff(small, ref)
        changed = (diff.max(axis=2) if diff.ndim == 3 else diff) > c.pixel_threshold
        if float(changed.mean()) > c.global_change:
            return None
        mask = cv2.dilate(changed.astype(np.uint8), np.ones((5, 5), np.uint8))
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        outside = ~self._inside_mask(calibration, mask.shape)
        min_px = c.min_area * mask.size
        reaching = 0.0
        for k in range(1, n):
            if stats[k, cv2.CC_STAT_AREA] < min_px:
                continue
            blob = labels == k
            if (blob & outside).any():
                reaching += float(blob.mean())
        return reaching
