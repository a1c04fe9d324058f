"""One frame -> the named cards on the table (the whole detection step).

Pipeline: markers -> homography -> top-down view at RECTIFIED_PX_PER_MM -> YOLO finds index
strips -> each strip is named from the full-resolution frame (naming.py) -> duplicates resolved
(every card exists once). A card lying in full view shows two strips (top and bottom); they are
merged into one reading spanning the card.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from companion import layout
from companion.deck.deckdir import DEFAULT_DECK_NAME, Deck, load_deck
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


def is_default(deck: Deck) -> bool:
    return deck.name == DEFAULT_DECK_NAME and deck.folder is None


def finder_name(deck: Deck) -> str:
    """Which strip finder reads this deck (backends.MODEL_NAME or ANY_DECK_MODEL_NAME)."""
    return MODEL_NAME if is_default(deck) else ANY_DECK_MODEL_NAME


def namer_for(
    deck: Deck, classifier: StripClassifier | bool | None = True
) -> StripNamer | BandNamer:
    """The default deck is named by its own strip layout (numeral panel, glyph, pips) and, with
    `classifier` True, the shipped classifier; any other deck by BandNamer."""
    if is_default(deck):
        if classifier is True:
            classifier = load_classifier(MODELS_DIR)
        return StripNamer(deck, classifier or None)
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
    ) -> None:
        """`classifier` (default deck only): True = the shipped strip classifier; False/None =
        matching only.

        The default deck is named by its own strip layout (numeral panel, glyph, pips) and the
        shipped classifier; any other deck by BandNamer, which knows nothing of the design."""
        deck = deck if deck is not None else load_deck(None)
        self.model = model if model is not None else load_model(name=finder_name(deck))
        self.namer = namer_for(deck, classifier)
        self.min_confidence = min_confidence

    def detect(self, image: np.ndarray, cal: TableCalibration | None = None) -> FrameReading:
        """Read one BGR frame; `cal` = a known calibration, else markers are looked for."""
        calibrated = True
        if cal is None:
            cal = calibrate(image, STILL_MIN_MARKERS)
        if cal is None:
            cal, calibrated = nominal_calibration(image), False
        view = rectify(image, cal)
        dets = self.model.predict(view)
        ppm = layout.RECTIFIED_PX_PER_MM
        boxes_mm = [tuple(float(v) / ppm for v in box) for box in dets.xyxy]
        namings = self.namer.name_boxes(image, cal, boxes_mm)  # type: ignore[arg-type]
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
        return FrameReading(tuple(cards), calibrated, tuple(duplicates), len(dets))


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
