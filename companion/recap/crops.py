"""Each served bowl as the camera saw it: a small top-down crop of its region, kept beside the
game log so a recap can show the bowls long after the game.

While a game is followed, `BowlCropper` (a `TablePipeline.on_frame` observer) keeps, for each
bowl region, the crop of the last still frame in which the region showed the most cards; when
the follower serves that bowl, the crop is written to `CropStore`. Bounded in size: each crop
is a JPEG at most `MAX_CROP_SIDE` px, at most `MAX_CROPS_PER_GAME` per game, and the whole
store is pruned (oldest games first) above `MAX_STORE_BYTES`. A crop that cannot be written
(disk full, read-only folder) is skipped with one warning: the game itself never suffers.

Layout on disk: `<log folder>/<log name>-crops/<game id>/<region>_<t>.jpg`, `t` the serve
event's time in seconds (the `ServedPile.t` it belongs to).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import cv2
import numpy as np

from companion.layout import REGIONS

if TYPE_CHECKING:
    from companion.camera import Frame
    from companion.vision.calibration import TableCalibration

log = logging.getLogger(__name__)

MAX_CROP_SIDE: Final = 360
"""Longest side of a stored crop, px (a bowl region is 120 x 314 mm)."""
JPEG_QUALITY: Final = 80
MAX_CROPS_PER_GAME: Final = 40
"""A game serves at most 28 bowls (56 cards, 2 a bowl); more means something is wrong."""
MAX_STORE_BYTES: Final = 64 * 1024 * 1024
"""Above this, the crops of the oldest games are deleted (about 300 games of 12 bowls)."""
MARGIN_MM: Final = 6.0
CARD_MM: Final = 95.0
"""Below the lowest card's centre, a crop keeps this much (a card is 88 mm tall)."""
BOWL_REGIONS: Final = {r.id: r for r in REGIONS if r.id.startswith("bowl-")}


def crops_folder(log_path: str | Path) -> Path:
    """Where the crops of the game log at `log_path` live: `<folder>/<stem>-crops/`."""
    path = Path(log_path)
    return path.parent / f"{path.stem}-crops"


def crop_bowl(
    image: np.ndarray,
    calibration: TableCalibration,
    region: str,
    lowest_mm: float | None = None,
) -> np.ndarray:
    """Top-down picture of one bowl region (BGR), at the camera's own resolution or less.
    `lowest_mm`: table y of the lowest card seen in it, to leave out the empty rest."""
    rect = BOWL_REGIONS[region].rect
    x0, y0 = rect.x0 - MARGIN_MM, rect.y0 - MARGIN_MM
    x1, y1 = rect.x1 + MARGIN_MM, rect.y1 + MARGIN_MM
    if lowest_mm is not None:
        y1 = min(y1, max(y0 + CARD_MM, lowest_mm + CARD_MM))
    corners_mm = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)
    corners_px = calibration.to_image(corners_mm).astype(np.float32)
    native = float(np.linalg.norm(corners_px[1] - corners_px[0])) / (x1 - x0)
    scale = min(native, MAX_CROP_SIDE / max(x1 - x0, y1 - y0))
    w, h = max(1, round((x1 - x0) * scale)), max(1, round((y1 - y0) * scale))
    out = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    warp = cv2.getPerspectiveTransform(corners_px, out)
    return cv2.warpPerspective(image, warp, (w, h), flags=cv2.INTER_AREA)


@dataclass(frozen=True, slots=True)
class StoredCrop:
    """One crop on disk."""

    region: str
    """`bowl-1`..`bowl-3`."""
    t: float
    """Seconds on the game's clock when the bowl was served."""
    path: Path


class CropStore:
    """The crops of the games of one game log, one folder per game."""

    def __init__(self, folder: Path, max_bytes: int = MAX_STORE_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self._warned = False

    @classmethod
    def beside(cls, log_path: str | Path) -> CropStore:
        return cls(crops_folder(log_path))

    def game_folder(self, game_id: str) -> Path:
        return self.folder / _safe(game_id)

    def save(self, game_id: str, region: str, t: float, image: np.ndarray) -> Path | None:
        """Write one crop (atomically); None when it could not be written or the game has
        its share already."""
        folder = self.game_folder(game_id)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if len(list(folder.glob("*.jpg"))) >= MAX_CROPS_PER_GAME:
                return None
            ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
            if not ok:
                return None
            target = folder / f"{region}_{t:.2f}.jpg"
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(data.tobytes())
            os.replace(tmp, target)
            self.prune(keep=game_id)
            return target
        except (OSError, cv2.error) as exc:
            if not self._warned:
                log.warning("recap crops not kept (%s): %s", folder, exc)
                self._warned = True
            return None

    def crops(self, game_id: str) -> tuple[StoredCrop, ...]:
        """The game's crops, in serving order (missing folder: none)."""
        out: list[StoredCrop] = []
        try:
            paths = list(self.game_folder(game_id).glob("*.jpg"))
        except OSError:
            return ()
        for p in paths:
            region, _, t = p.stem.rpartition("_")
            try:
                out.append(StoredCrop(region, float(t), p))
            except ValueError:
                continue
        return tuple(sorted(out, key=lambda c: (c.t, c.region)))

    def find(self, game_id: str, region: str, t: float, tolerance: float = 2.0) -> Path | None:
        """The crop of the bowl served from `region` at `t` (nearest within tolerance)."""
        near = [c for c in self.crops(game_id) if c.region == region and abs(c.t - t) <= tolerance]
        return min(near, key=lambda c: abs(c.t - t)).path if near else None

    def size(self, game_id: str | None = None) -> int:
        """Bytes used by one game's crops, or by the whole store."""
        root = self.game_folder(game_id) if game_id is not None else self.folder
        try:
            return sum(p.stat().st_size for p in root.rglob("*.jpg"))
        except OSError:
            return 0

    def prune(self, keep: str | None = None) -> list[str]:
        """Delete the oldest games' crops until the store fits `max_bytes`; returns their ids.
        Game ids sort by start time, so the oldest folder comes first."""
        try:
            games = sorted(p for p in self.folder.iterdir() if p.is_dir())
        except OSError:
            return []
        sizes = {p: sum(f.stat().st_size for f in p.glob("*.jpg")) for p in games}
        total = sum(sizes.values())
        removed: list[str] = []
        for p in games:
            if total <= self.max_bytes:
                break
            if keep is not None and p.name == _safe(keep):
                continue
            shutil.rmtree(p, ignore_errors=True)
            total -= sizes[p]
            removed.append(p.name)
        return removed


def _safe(game_id: str) -> str:
    """A game id as a folder name (ids are `YYYYmmdd-HHMMSS-xxxxxx`; never trust a path)."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in game_id) or "_"


@dataclass
class BowlCropper:
    """`TablePipeline.on_frame` observer: keeps each bowl's fullest still view, writes it to the
    store when the bowl is served. `game_id()` names the game being followed (the app may
    start a new one)."""

    store: CropStore
    game_id: Callable[[], str]
    _game: str | None = None
    _detections: int = -1
    _best: dict[str, tuple[int, np.ndarray]] = field(default_factory=dict)

    def __call__(self, pipeline: Any, frame: Frame, events: Sequence[dict[str, Any]]) -> None:
        game = self.game_id()
        if game != self._game:
            self._game, self._best = game, {}
        if pipeline.detections != self._detections:
            self._detections = pipeline.detections
            self._look(frame.image, pipeline.calibration, pipeline.last_reading)
        for event in events:
            if event.get("type") == "bowl_served":
                region = str(event.get("region"))
                kept = self._best.pop(region, None)
                if kept is not None:
                    self.store.save(game, region, float(event.get("t", 0.0)), kept[1])

    def _look(self, image: np.ndarray, calibration: Any, reading: Any) -> None:
        """A still frame was read: a bowl showing at least as many cards as its best view so
        far replaces it (a bowl only grows until it is served)."""
        if calibration is None or reading is None:
            return
        counts: dict[str, int] = {}
        lowest: dict[str, float] = {}
        for card in reading.cards:
            if card.region in BOWL_REGIONS:
                counts[card.region] = counts.get(card.region, 0) + 1
                y = float(card.center_mm[1])
                lowest[card.region] = max(lowest.get(card.region, y), y)
        for region, n in counts.items():
            best = self._best.get(region)
            if best is None or n >= best[0]:
                try:
                    crop = crop_bowl(image, calibration, region, lowest[region])
                    self._best[region] = (n, crop)
                except cv2.error:
                    continue
