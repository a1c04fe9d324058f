"""One frame -> the named cards on the table (the whole detection step).

Pipeline: markers -> homography -> top-down view at RECTIFIED_PX_PER_MM -> YOLO finds index
strips -> each strip is named from the full-resolution frame (naming.py) -> duplicates resolved
(every card exists once). A card lying in full view shows two strips (top and bottom); they are
merged into one reading spanning the card.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Final

import cv2
import numpy as np

from companion import layout
from companion.deck.deckdir import DEFAULT_DECK_NAME, Deck, default_strips
from companion.vision.backends import (
    ANY_DECK_MODEL_NAME,
    MODEL_NAME,
    MODELS_DIR,
    StripModel,
    load_model,
)
from companion.vision.band_naming import BandNamer
from companion.vision.calibration import STILL_MIN_MARKERS, TableCalibration, calibrate
from companion.vision.naming import Naming, StripNamer
from companion.vision.plane import rectify
from companion.vision.strip_classifier import StripClassifier, load_classifier

MIN_CONFIDENCE = 0.3
"""Readings below this are dropped (junk boxes on distractors score low on every card)."""
SAME_CARD_MM = (layout.CARD_H_MM - layout.INDEX_STRIP_MM, 12.0)
"""Two strips of one id this far apart (+/- tolerance) are the two ends of one card."""
SAME_BOX_IOU: Final = 0.8
"""A box this close to one of the previous reading (same calibration) is the same strip..."""
UNCHANGED_LEVEL: Final = 24
"""... and keeps its name when no pixel of its top-down crop (3 x 3 mean of the largest
channel difference) changed by more than this: camera noise stays under ~5 on a still table,
a different numeral or one pip more changes a blob of pixels by 60-200."""
CROP_MARGIN_PX: Final = 3
SAME_VIEW_PX: Final = 0.5
"""Calibrations closer than this (play-area corners, image px) see the same rectified view."""


@dataclass(frozen=True, slots=True)
class CardReading:
    card: str
    confidence: float
    box: tuple[float, float, float, float]
    """x1, y1, x2, y2 in frame pixels: the visible strip, or the whole card when both ends show."""
    region: str | None
    """Region id, or None when the table is not calibrated from markers or the card is outside."""
    center_mm: tuple[float, float]
    naming: Naming = field(repr=False)
    detector_confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class FrameReading:
    cards: tuple[CardReading, ...]
    calibrated: bool
    """The markers were found (regions are meaningful)."""
    duplicates: tuple[tuple[CardReading, CardReading], ...] = ()
    """(kept, dropped) pairs: one id read in two places; the better reading was kept."""
    strips: int = 0
    """Strip boxes the detector found before naming."""
    named: int = 0
    """Strips named in this frame; the others kept the name they had in the previous one
    (same place, same pixels)."""
    searched: bool = True
    """The finder ran on this frame. False: the whole table view was unchanged since it last
    ran (every pixel within camera noise), so that reading was kept as it was."""


@dataclass(frozen=True, slots=True)
class _Remembered:
    """One strip of the previous reading: where it was, what it looked like, its name."""

    box: tuple[int, int, int, int]
    """Crop of the rectified view (x0, y0, x1, y1 px, margin included)."""
    xyxy: np.ndarray
    """The detector's box (rectified view px)."""
    crop: np.ndarray
    naming: Naming | None


def _crop_box(xyxy: np.ndarray, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    m = CROP_MARGIN_PX
    h, w = shape[:2]
    x0, y0 = max(0, int(xyxy[0]) - m), max(0, int(xyxy[1]) - m)
    x1, y1 = min(w, math.ceil(xyxy[2]) + m), min(h, math.ceil(xyxy[3]) + m)
    return x0, y0, max(x0 + 1, x1), max(y0 + 1, y1)


def _box_mm(xyxy: np.ndarray, ppm: float) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) / ppm for v in xyxy)
    return x0, y0, x1, y1


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def unchanged(before: np.ndarray, after: np.ndarray, level: int = UNCHANGED_LEVEL) -> bool:
    """No 3 x 3 patch of `after` differs from `before` by more than `level` (largest channel)."""
    if before.shape != after.shape:
        return False
    diff = cv2.absdiff(before, after)
    if diff.ndim == 3:
        diff = diff.max(axis=2)
    return float(cv2.blur(diff, (3, 3)).max()) <= level


def is_default(deck: Deck | None) -> bool:
    """None stands for the default deck too."""
    return deck is None or (deck.name == DEFAULT_DECK_NAME and deck.folder is None)


def finder_name(deck: Deck | None) -> str:
    """Which strip finder reads this deck (backends.MODEL_NAME or ANY_DECK_MODEL_NAME)."""
    return MODEL_NAME if is_default(deck) else ANY_DECK_MODEL_NAME


def namer_for(
    deck: Deck | None, classifier: StripClassifier | bool | None = True
) -> StripNamer | BandNamer:
    """The default deck (None, or the Deck) is named by its own strip layout (numeral panel,
    glyph, pips) and, with `classifier` True, the shipped classifier; any other deck by
    BandNamer. With None only the default deck's strips are drawn (no 89 MB of faces)."""
    if deck is None or is_default(deck):
        if classifier is True:
            classifier = load_classifier(MODELS_DIR)
        return StripNamer(deck if deck is not None else default_strips(), classifier or None)
    return BandNamer(deck)


def nominal_calibration(image: np.ndarray) -> TableCalibration:
    """No markers: assume the kit's default camera (centred, looking down, default height)."""
    h, w = image.shape[:2]
    cover_mm = (
        2 * layout.DEFAULT_CAMERA_HEIGHT_MM * math.tan(math.radians(layout.CAMERA_HFOV_DEG / 2))
    )
    ppm = w / cover_mm
    cx, cy = layout.PLAY_W_MM / 2, layout.PLAY_H_MM / 2
    image_from_plane = np.array(
        [[ppm, 0, w / 2 - cx * ppm], [0, ppm, h / 2 - cy * ppm], [0, 0, 1]], np.float64
    )
    return TableCalibration(image_from_plane, (w, h), (), float("nan"))


class CardDetector:
    def __init__(
        self,
        model: StripModel | None = None,
        deck: Deck | None = None,
        min_confidence: float = MIN_CONFIDENCE,
        classifier: StripClassifier | bool | None = True,
        reuse_names: bool = True,
    ) -> None:
        """`classifier` (default deck only): True = the shipped strip classifier; False/None =
        matching only. `reuse_names`: a strip found where it was in the previous frame, with
        the same pixels (same calibration), keeps its name instead of being named again (on a
        still table only the card just laid is named), and a table view unchanged since the
        finder last ran keeps that whole reading (the finder does not run again).

        The default deck (None: only its strips are drawn) is named by its own strip layout
        (numeral panel, glyph, pips) and the shipped classifier; any other deck by BandNamer,
        which knows nothing of the design."""
        self.model = model if model is not None else load_model(name=finder_name(deck))
        self.namer = namer_for(deck, classifier)
        self.min_confidence = min_confidence
        self.reuse_names = reuse_names
        self._memory: tuple[TableCalibration, list[_Remembered]] | None = None
        """(calibration, strips) of the previous frame read."""
        self._last: tuple[TableCalibration, np.ndarray, FrameReading] | None = None
        """(calibration, rectified view, reading) of the last frame the finder ran on."""

    def forget_view(self) -> None:
        """Run the finder at the next frame even if the view did not change (strips that did
        not change still keep their names): what a frame costs when something moved."""
        self._last = None

    def forget(self) -> None:
        """Find and name every strip afresh at the next frame."""
        self._memory = None
        self._last = None

    def _recall(
        self, view: np.ndarray, cal: TableCalibration, xyxy: np.ndarray
    ) -> tuple[bool, Naming | None]:
        """(True, previous naming) when the strip boxed `xyxy` lies where it lay in the
        previous frame with the same pixels, else (False, None)."""
        if self._memory is None:
            return False, None
        before = self._memory[0]
        if before is not cal and cal.moved_from(before, SAME_VIEW_PX):
            return False, None
        for old in self._memory[1]:
            if _iou(old.xyxy, xyxy) >= SAME_BOX_IOU:
                x0, y0, x1, y1 = old.box
                if unchanged(old.crop, view[y0:y1, x0:x1]):
                    return True, old.naming
        return False, None

    def detect(self, image: np.ndarray, cal: TableCalibration | None = None) -> FrameReading:
        """Read one BGR frame; `cal` = a known calibration, else markers are looked for."""
        calibrated = True
        if cal is None:
            cal = calibrate(image, STILL_MIN_MARKERS)
        if cal is None:
            cal, calibrated = nominal_calibration(image), False
        view = rectify(image, cal)
        if self.reuse_names and self._last is not None and calibrated:
            last_cal, last_view, last = self._last
            same_view = last_cal is cal or not cal.moved_from(last_cal, SAME_VIEW_PX)
            if same_view and unchanged(last_view, view):
                return replace(last, named=0, searched=False)
        dets = self.model.predict(view)
        ppm = layout.RECTIFIED_PX_PER_MM
        namings: list[Naming | None] = [None] * len(dets)
        todo: list[int] = []
        for k, xyxy in enumerate(dets.xyxy):
            kept, naming = self._recall(view, cal, xyxy) if self.reuse_names else (False, None)
            if kept:
                namings[k] = naming
            else:
                todo.append(k)
        if todo:  # one batch: every strip to name in one matching pass and one classifier call
            boxes_mm = [_box_mm(dets.xyxy[k], ppm) for k in todo]
            for k, fresh in zip(todo, self.namer.name_boxes(image, cal, boxes_mm), strict=True):
                namings[k] = fresh
        if self.reuse_names:
            strips = []
            for xyxy, naming in zip(dets.xyxy, namings, strict=True):
                x0, y0, x1, y1 = box = _crop_box(xyxy, view.shape)
                strips.append(_Remembered(box, xyxy.copy(), view[y0:y1, x0:x1].copy(), naming))
            self._memory = (cal, strips)
        readings = []
        for naming, det_conf in zip(namings, dets.confidence, strict=True):
            if naming is None:
                continue
            conf = float(det_conf) * naming.confidence
            if conf < self.min_confidence:
                continue
            readings.append(
                CardReading(
                    card=naming.card,
                    confidence=conf,
                    box=_strip_box(cal, naming),
                    region=layout.region_at(*naming.center_mm) if calibrated else None,
                    center_mm=naming.center_mm,
                    naming=naming,
                    detector_confidence=float(det_conf),
                )
            )
        cards, duplicates = resolve_duplicates(readings)
        reading = FrameReading(tuple(cards), calibrated, tuple(duplicates), len(dets), len(todo))
        if self.reuse_names and calibrated:
            self._last = (cal, view, reading)
        return reading


def _strip_corners_mm(n: Naming, y_from: float, y_to: float) -> np.ndarray:
    """Corners of a band of the strip's card frame (mm from the strip centre, upright)."""
    a = math.radians(n.angle_deg)
    ca, sa = math.cos(a), math.sin(a)
    if n.flipped:
        ca, sa = -ca, -sa
    hw = layout.CARD_W_MM / 2
    pts = np.array([[-hw, y_from], [hw, y_from], [hw, y_to], [-hw, y_to]])
    rot = np.array([[ca, sa], [-sa, ca]])
    return pts @ rot.T + np.array(n.center_mm)


def _bbox(points_px: np.ndarray) -> tuple[float, float, float, float]:
    x1, y1 = points_px.min(axis=0)
    x2, y2 = points_px.max(axis=0)
    return (round(float(x1), 1), round(float(y1), 1), round(float(x2), 1), round(float(y2), 1))


def _strip_box(cal: TableCalibration, n: Naming) -> tuple[float, float, float, float]:
    half = layout.INDEX_STRIP_MM / 2
    return _bbox(cal.to_image(_strip_corners_mm(n, -half, half)))


def resolve_duplicates(
    readings: list[CardReading],
) -> tuple[list[CardReading], list[tuple[CardReading, CardReading]]]:
    """One reading per card id: the two ends of one card merge; otherwise the better is kept."""
    by_card: dict[str, list[CardReading]] = {}
    for r in readings:
        by_card.setdefault(r.card, []).append(r)
    kept: list[CardReading] = []
    dropped: list[tuple[CardReading, CardReading]] = []
    for group in by_card.values():
        group.sort(key=lambda r: r.confidence, reverse=True)
        best = group[0]
        for other in group[1:]:
            if _two_ends(best, other):
                best = _merge_ends(best, other)
            else:
                dropped.append((best, other))
        kept.append(best)
    kept.sort(key=lambda r: (r.region or "~", r.center_mm[1], r.center_mm[0]))
    return kept, dropped


def _two_ends(a: CardReading, b: CardReading) -> bool:
    if a.naming.flipped == b.naming.flipped:
        return False
    d = math.dist(a.center_mm, b.center_mm)
    return abs(d - SAME_CARD_MM[0]) <= SAME_CARD_MM[1]


def _merge_ends(a: CardReading, b: CardReading) -> CardReading:
    """The reading of a whole card: its box spans both strips, its place is the upper strip."""
    top = a if a.center_mm[1] <= b.center_mm[1] else b
    x1 = min(a.box[0], b.box[0])
    y1 = min(a.box[1], b.box[1])
    x2 = max(a.box[2], b.box[2])
    y2 = max(a.box[3], b.box[3])
    return CardReading(
        card=a.card,
        confidence=max(a.confidence, b.confidence),
        box=(x1, y1, x2, y2),
        region=top.region,
        center_mm=top.center_mm,
        naming=top.naming,
        detector_confidence=max(a.detector_confidence, b.detector_confidence),
    )
