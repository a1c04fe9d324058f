"""The seam between the app and the pipeline: what the UI may ask and tell.

The app polls a `Controller` on the UI thread (Clock, about 8 Hz) and never waits on it: the
pipeline (camera -> detector -> follower) runs on its own thread and every method here must
return at once (read the latest snapshot, queue a correction). Nothing in this module imports
Kivy, so the pipeline side can implement it without a display.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from companion.tracking.view import GameView


@dataclass(frozen=True, slots=True)
class Settings:
    """What the Settings screen edits; the app keeps it, the controller is told on Apply."""

    source: str = "usb:0"
    """The camera the session watches (`companion run --source`): shown on screen, not
    editable (another camera is another `companion run`)."""
    language: str = "en"
    """`en` or `fr`."""
    sound: bool = True
    """Chime when a bowl becomes ready."""
    voice: bool = False
    """Spoken line (espeak-ng) when a bowl becomes ready."""
    calibration_view: bool = False
    """Ask the pipeline to draw markers and regions on `latest_frame()`."""
    fullscreen: bool = False
    hide_cursor: bool = False
    """Kiosk: a touchscreen needs no pointer."""


@runtime_checkable
class Controller(Protocol):
    """What `run_app` drives. All calls are on the UI thread and must not block."""

    def view(self) -> GameView:
        """The follower's latest GameView (the only game state the UI reads)."""
        ...

    def latest_frame(self) -> np.ndarray | None:
        """Latest camera picture, BGR uint8 (H, W, 3), raw or annotated, possibly downscaled;
        None before the first frame."""
        ...

    def frame_scale(self) -> float:
        """Pixels of `latest_frame()` per pixel of the `GameView.seen` boxes (1.0 when the
        frame is not downscaled; 0.5 when it is halved)."""
        ...

    def new_game(self, mode: str, players: Sequence[str], language: str, source: str) -> None:
        """Start following a new game: mode `solo|2p|3p|4p`, player names in seat order."""
        ...

    def correct_card(self, old_id: str, new_id: str) -> None:
        """The card read as old_id is really new_id (wherever it lies now)."""
        ...

    def reassign_served(self, index: int, scorer: str) -> None:
        """Served pile `GameView.served[index]` belongs to scorer (a player, or team A/B)."""
        ...

    def undo(self) -> None:
        """Take back the last correction."""
        ...

    def begin_scoring(self) -> None:
        """End of play: from now on the scan area is read pile by pile (`GameView.scan`)."""
        ...

    def resolve_scan(self, scorer: str, cards: Sequence[str]) -> None:
        """One served pile of scorer as confirmed on the End game screen (read or corrected)."""
        ...

    def finish(self) -> None:
        """All piles confirmed: compute the final tally (`GameView.final`, phase `over`)."""
        ...

    def apply_settings(self, settings: Settings) -> None:
        """Settings changed (camera source, calibration view...); may reopen the camera."""
        ...
