"""One frame -> the named cards on the table (the whole detection step).

Pipeline: markers -> homography -> top-down view at RECTIFIED_PX_PER_MM -> YOLO finds index
strips -> each strip is named from the full-resolution frame (naming.py) -> duplicates resolved
(every card exists once). A card lying in full view shows two strips (top and bottom); they are
merged into one reading spanning the card.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
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
from companion.vision.band_embedding import TOP_MM
from companion.vision.band_naming import LOOSE_FIT, BandNamer
from companion.vision.calibration import STILL_MIN_MARKERS, TableCalibration, calibrate
from companion.vision.card_body import outline_shown, side_support
from companion.vision.card_ends import (
    drop_facing_away,
    drop_inside_band,
    drop_on_shown_face,
    drop_one_strip_read_both_ways,
    drop_turned_over_upright,
    join_ends,
    joined,
)
from companion.vision.default_naming import DefaultNamer
from companion.vision.detections import Detections
from companion.vision.naming import Naming, StripNamer
from companion.vision.plane import rectify
from companion.vision.strip_classifier import AnyStripClassifier, load_classifier
from companion.vision.turned_cards import (
    MIN_SUPPORT,
    MIN_TURN_DEG,
    CardPose,
    band_boxes,
    from_turned,
    on_plane,
    turned_calibration,
    turned_cards,
)

MIN_CONFIDENCE = 0.3
"""Readings below this are dropped (junk boxes on distractors score low on every card)..."""
DOUBTFUL_MIN: Final = 0.02
"""... and kept apart as doubtful down to this (`FrameReading.doubtful`)."""
SAME_CARD_MM = (layout.CARD_H_MM - layout.INDEX_STRIP_MM, 12.0)
"""Two strips of one id this far apart (+/- tolerance) are the two ends of one card."""
SIDES_UNSEEN: Final = 0.2
"""A band that fits its ingredient below LOOSE_FIT (whole-band score) and shows an edge along
under SIDES_UNSEEN of either long side of its card is on no card (`_on_no_card`). Chosen on the
training families' scenes (`foreign_decks.py --families band,corner,bordered,photo,badge,mixed
--seeds 5 --frames 15 --hard-frames 8`): 1 of 22 false readings caught, none of 2,326 right
ones lost (a score bar of 0.5 lost a right menma-7 at 0.46 under a hand)."""
FAINT_BOX: Final = 0.05
"""An enrolled deck's finder keeps boxes down to this confidence (the shipped one gives 0.25 at
least)..."""
FAINT_FIT: Final = 0.9
FAINT_SURE: Final = 0.98
FAINT_NAMED: Final = 0.45
"""... and a box under the finder's own bar (`BOX_SURE`) counts as sure as FAINT_NAMED when its
band fits a face of the deck this well (`Naming.score`) and is named this surely; others are
dropped unread. The bands-finder, trained on other designs, is unsure (0.06-0.22) of bands the
namer reads at 0.99+ with a fit of 0.9-1.08: at the view's edge under a sleeve, in a fan.
Chosen on the seed-1 tuned held-out decks' cached frames, every box named (a fit bar of 0.7 or
a sureness of 0.9 added wrong readings), checked on the seed-2 ones. `benchmarks/cached_decks.py`
on all 8: misses 123 -> 112 plain and 285 -> 279 hard, wrong readings 18 and 13 unchanged.
Under BETWEEN_MIN_CONFIDENCE: such a box does not part two ends."""
BOX_FLOOR: Final = 0.4
"""An enrolled deck's named band counts at least this sure of being a band: the bands-finder,
trained on other designs, is unsure of some bands of a held-out design that the namer reads
surely, and finder x namer put such right readings under the gate. On the 8 held-out decks'
cached hard frames (stop 45, `benchmarks/cached_decks.py --slice hard`): 340 -> 335 missed,
12 -> 12 false of 3,280; on the 8 rebuilt with 15 + 5 frames (stop 46) plain 98 -> 95
missed, 13 -> 13 false of 1,824 (models/README.md). Boxes under the finder's bar still need
FAINT_FIT and FAINT_SURE."""
BOX_SURE: Final = 0.25
"""The finder's own bar (`backends.load_model`'s conf)."""
FAN_TURNS_DEG: Final = (30.0, -30.0)
"""The finder boxes bands lying along the view's axes (to ~15 degrees), and the outline search
(turned_cards) misses a turned card whose edges a fanned pile's other cards break up. So the
scan area, where piles are fanned to be counted, is searched again in views turned by these
angles, and a band found there that lies turned (`MIN_TURN_DEG`), on no band the upright view
boxed, is read as any other. `benchmarks/cached_decks.py` on the 8 tuned held-out decks, after
FAINT_BOX: misses 112 -> 110 plain and 279 -> 266 hard, wrong readings 18 -> 19 and 13 -> 13."""
FAN_FIT: Final = 0.5
FAN_SIDES: Final = 0.5
"""A band read in a turned view must fit its ingredient this well (`Naming.score`) and show
this much of one of its card's sides (`side_support`): a turned view also boxes a face-down
card's back and the fan's overlaps, read loosely. On 4 tuned held-out decks (ornate-1, foil-2,
minimal-1, tarot-2, all frames) the turned views' announced readings were right in 71 of 79;
these bars drop 7 of the 8 wrong ones (fits 0.03-0.40, and one at 0.56 showing 0.07 of a side)
and 2 right ones (0.18, a band read right elsewhere too, and 0.42)."""
FAN_APART_MM: Final = 8.0
"""A band found in a turned view this close to a box of the upright view is that box's band."""
BETWEEN_MIN_CONFIDENCE: Final = 0.5
"""A box that says two strips are two cards (lying between them) when the finder is this sure."""
BETWEEN_MIN_NAMED: Final = 0.02
BETWEEN_UNNAMED_CONFIDENCE: Final = 0.6
"""A box the namer reads no card in (under this) parts two ends only when the finder is this
sure of it: on foil-1's picture under a cascade's last band the finder gave 0.36-0.52 (named
0.0); strips of the default deck's cascade under a hand, named 0.0 too, 0.70 and 0.81."""
SAME_BOX_IOU: Final = 0.8
"""A box this close to one of the previous reading (same calibration) is the same strip..."""
UNCHANGED_LEVEL: Final = 24
"""... and keeps its name when no pixel of its top-down crop (3 x 3 mean of the largest
channel difference) changed by more than this: camera noise stays under ~5 on a still table,
a different numeral or one pip more changes a blob of pixels by 60-200..."""
RECALL_SURE: Final = 0.9
"""... unless, of an enrolled deck, it was named less surely than this and the view changed
over its card: such a card is checked against its whole picture once it shows whole, and a hand
leaving it changes its picture, not its band (held-out game segment-1 solo, 60.5 s: an
ajitama-7 landing there was named nori-7 at 0.83 from its band, its outline showing along 0.7;
its band kept that name, never checked against its picture, and the bowl was served with a
nori-7)."""
CROP_MARGIN_PX: Final = 3
CROP_CONTEXT_PX: Final = 72
"""Around the part of the view that changed, this much more is searched: a strip reaching into
the change (63 mm long, 1 px/mm) lies wholly inside, so it is found whole."""
STRIP_MAX_PX: Final = 80
"""No strip's box is longer (63 mm at 1 px/mm, turned: under 70)."""
NMS_IOU: Final = 0.5
"""As the finder's own (backends.decode)."""
WHOLE_OVERLAP: Final = 0.2
"""Two turned whole cards overlapping by this share of a card's area are one place."""
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
    """The table plane is the kit's (markers found, or a manual calibration): regions are
    meaningful. False for a guessed camera or a scale taken from the cards."""
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
    search_share: float = 1.0
    """Share of the view the finder ran on (only around what changed, when the model takes
    any input size); 0 when it did not run."""
    doubtful: tuple[CardReading, ...] = ()
    """Readings under the gate (from DOUBTFUL_MIN), of cards not read surely elsewhere, best
    first: too unsure to say what lies there, enough to confirm a card the game expects there
    (`tracking/game_prior.py`)."""


@dataclass(frozen=True, slots=True)
class _Remembered:
    """One strip of the previous reading: where it was, what it looked like, its name."""

    box: tuple[int, int, int, int]
    """Crop of the rectified view (x0, y0, x1, y1 px, margin included)."""
    xyxy: np.ndarray
    """The detector's box (rectified view px)."""
    crop: np.ndarray
    naming: Naming | None


def strip_centres(
    boxes_mm: Sequence[tuple[float, float, float, float]],
    found: Sequence[float] | np.ndarray,
    namings: Sequence[Naming | None],
) -> list[tuple[float, float] | None]:
    """Per box, its centre when it is surely a strip, else None: a strip between two ends says
    they are two cards; a box the finder is unsure of (on a card's picture, 0.33) says nothing,
    nor one the namer reads nothing in unless the finder is surer of it."""
    out: list[tuple[float, float] | None] = []
    for b, c, n in zip(boxes_mm, found, namings, strict=True):
        named = n is not None and n.confidence >= BETWEEN_MIN_NAMED
        sure = c >= (BETWEEN_MIN_CONFIDENCE if named else BETWEEN_UNNAMED_CONFIDENCE)
        out.append(((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) if sure else None)
    return out


def _crop_box(xyxy: np.ndarray, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    m = CROP_MARGIN_PX
    h, w = shape[:2]
    x0, y0 = max(0, int(xyxy[0]) - m), max(0, int(xyxy[1]) - m)
    x1, y1 = min(w, math.ceil(xyxy[2]) + m), min(h, math.ceil(xyxy[3]) + m)
    return x0, y0, max(x0 + 1, x1), max(y0 + 1, y1)


def _box_mm(xyxy: np.ndarray, ppm: float) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) / ppm for v in xyxy)
    return x0, y0, x1, y1


def _ious(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n, m) intersection over union of boxes a (n, 4) and b (m, 4)."""
    ix = np.clip(
        np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None
    )
    iy = np.clip(
        np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None
    )
    inter = ix * iy
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)


def changed_box(
    before: np.ndarray, after: np.ndarray, level: int = UNCHANGED_LEVEL
) -> tuple[int, int, int, int] | None:
    """Bounding box (x0, y0, x1, y1) of the 3 x 3 patches that changed by more than `level`
    between two views of one shape, or None when none did."""
    diff = _largest_channel(cv2.absdiff(before, after))
    _, mask = cv2.threshold(cv2.blur(diff, (3, 3)), level, 255, cv2.THRESH_BINARY)
    points = cv2.findNonZero(mask)
    if points is None:
        return None
    x, y, w, h = cv2.boundingRect(points)
    return x, y, x + w, y + h


def _span(lo: int, hi: int, limit: int, want: int) -> tuple[int, int]:
    """[lo, hi) grown to `want` pixels (real view, not padding: the finder boxes junk in a
    thin padded strip), inside [0, limit) as far as it fits."""
    grow = want - (hi - lo)
    lo, hi = lo - grow // 2, hi + grow - grow // 2
    if lo < 0:
        lo, hi = 0, hi - lo
    if hi > limit:
        lo, hi = max(0, lo - (hi - limit)), limit
    return lo, hi


def _touches(xyxy: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """Boxes (n, 4) that overlap `box`."""
    x0, y0, x1, y1 = box
    return (xyxy[:, 0] < x1) & (xyxy[:, 2] > x0) & (xyxy[:, 1] < y1) & (xyxy[:, 3] > y0)


def _largest_channel(diff: np.ndarray) -> np.ndarray:
    """Per pixel, the largest of the channels (OpenCV's loops: numpy's max(axis=2) is 5x
    slower on a whole view)."""
    if diff.ndim == 2:
        return diff
    b, g, r = cv2.split(diff)
    out: np.ndarray = cv2.max(cv2.max(b, g), r)
    return out


def unchanged(before: np.ndarray, after: np.ndarray, level: int = UNCHANGED_LEVEL) -> bool:
    """No 3 x 3 patch of `after` differs from `before` by more than `level` (largest channel)."""
    if before.shape != after.shape:
        return False
    diff = _largest_channel(cv2.absdiff(before, after))
    return float(cv2.blur(diff, (3, 3)).max()) <= level


def is_default(deck: Deck | None) -> bool:
    """None stands for the default deck too."""
    return deck is None or (deck.name == DEFAULT_DECK_NAME and deck.folder is None)


def finder_name(deck: Deck | None) -> str:
    """Which strip finder reads this deck (backends.MODEL_NAME or ANY_DECK_MODEL_NAME)."""
    return MODEL_NAME if is_default(deck) else ANY_DECK_MODEL_NAME


def namer_for(
    deck: Deck | None,
    classifier: AnyStripClassifier | bool | None = True,
    backend: str | None = None,
) -> DefaultNamer | BandNamer:
    """The default deck (None, or the Deck) is named by its own strip layout (numeral panel,
    glyph, pips) and, with `classifier` True, the shipped classifier (on the finder's
    `backend` when it has an export for it: NCNN on the Pi, so no ONNX Runtime), its unsure
    strips by its faces too (`DefaultNamer`); any other deck by BandNamer (its band embedding
    on NCNN too when the finder is). With None only the default deck's strips are drawn (no
    89 MB of faces; the second opinion draws them one at a time)."""
    if deck is None or is_default(deck):
        if classifier is True:
            classifier = load_classifier(MODELS_DIR, backend=backend)
        strips = StripNamer(deck if deck is not None else default_strips(), classifier or None)
        return DefaultNamer(strips, deck, backend)
    return BandNamer(deck, backend=backend)


@dataclass(frozen=True, slots=True)
class _Search:
    """What the finder found in a frame and how it searched."""

    dets: Detections
    share: float
    """Share of the view searched."""
    whole: bool
    """The whole view was searched (else only around a change)."""
    changed: tuple[int, int, int, int] | None
    """The part of the view that changed since the last frame read from here (view px)."""
    same_view: bool
    """The last frame read saw the table from here."""


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
    return TableCalibration(image_from_plane, (w, h), (), float("nan"), regions_known=False)


class CardDetector:
    def __init__(
        self,
        model: StripModel | None = None,
        deck: Deck | None = None,
        min_confidence: float = MIN_CONFIDENCE,
        classifier: AnyStripClassifier | bool | None = True,
        reuse_names: bool = True,
    ) -> None:
        """`classifier` (default deck only): True = the shipped strip classifier; False/None =
        matching only. `reuse_names`: a strip found where it was in the previous frame, with
        the same pixels (same calibration), keeps its name instead of being named again (on a
        still table only the card just laid is named), and a table view unchanged since the
        finder last ran keeps that whole reading (the finder does not run again).

        The default deck (None: only its strips are drawn) is named by its own strip layout
        (numeral panel, glyph, pips) and the shipped classifier, its unsure strips by its faces
        too; any other deck by BandNamer, which knows nothing of the design."""
        self.model = model if model is not None else load_model(name=finder_name(deck))
        self.namer = namer_for(deck, classifier, getattr(self.model, "backend", None))
        self._any_deck = isinstance(self.namer, BandNamer)
        if self._any_deck and hasattr(self.model, "conf"):  # `FAINT_BOX`
            self.model.conf = min(self.model.conf, FAINT_BOX)  # type: ignore[union-attr,attr-defined]
        self.min_confidence = min_confidence
        self.reuse_names = reuse_names
        self._memory: tuple[TableCalibration, list[_Remembered]] | None = None
        """(calibration, strips) of the previous frame read."""
        self._last: tuple[TableCalibration, np.ndarray, FrameReading, Detections] | None = None
        """(calibration, rectified view, reading, boxes) of the last frame the finder ran on."""
        self._turned: list[tuple[CardPose, CardReading]] = []
        """The turned whole cards read in that frame."""
        self._fans: list[CardReading] = []
        """The bands the turned views of the scan area read at the last whole search
        (`FAN_TURNS_DEG`)..."""
        self._fan_view: tuple[TableCalibration, np.ndarray] | None = None
        """... and (calibration, the scan area's pixels) they were read in."""

    def prepare(self) -> None:
        """Make now what naming would make at the first unsure strip (the default deck's
        second namer, about a second): a live game must not hold a bowl's announcement on it."""
        if isinstance(self.namer, DefaultNamer):
            self.namer.faces()

    def forget_view(self) -> None:
        """Run the finder at the next frame even if the view did not change (strips that did
        not change still keep their names): what a frame costs when something moved."""
        self._last = None

    def forget(self) -> None:
        """Find and name every strip afresh at the next frame."""
        self._memory = None
        self._last = None
        self._fan_view = None

    def _recall(
        self,
        view: np.ndarray,
        cal: TableCalibration,
        xyxy: np.ndarray,
        changed: tuple[int, int, int, int] | None = None,
    ) -> list[tuple[bool, Naming | None]]:
        """Per box: (True, previous naming) when the strip lies where it lay in the previous
        frame with the same pixels and no unsure naming of it lies under `changed` (the part
        of the view that changed: `RECALL_SURE`), else (False, None)."""
        out: list[tuple[bool, Naming | None]] = [(False, None)] * len(xyxy)
        if self._memory is None or not len(xyxy) or not self._memory[1]:
            return out
        before, strips = self._memory
        if before is not cal and cal.moved_from(before, SAME_VIEW_PX):
            return out
        ious = _ious(xyxy, np.stack([old.xyxy for old in strips]))
        for k, row in enumerate(ious):
            for j in np.flatnonzero(row >= SAME_BOX_IOU):
                old = strips[j]
                x0, y0, x1, y1 = old.box
                if unchanged(old.crop, view[y0:y1, x0:x1]) and not _changed_over(
                    old.naming, changed
                ):
                    out[k] = (True, old.naming)
                    break
        return out

    def detect(self, image: np.ndarray, cal: TableCalibration | None = None) -> FrameReading:
        """Read one BGR frame; `cal` = a known calibration, else markers are looked for."""
        if cal is None:
            cal = calibrate(image, STILL_MIN_MARKERS, recover=True)
        if cal is None:
            cal = nominal_calibration(image)
        calibrated = cal.regions_known
        view = rectify(image, cal)
        search = self._search(view, cal)
        if isinstance(search, FrameReading):
            return search
        dets = search.dets
        boxes = [_box_mm(x, layout.RECTIFIED_PX_PER_MM) for x in dets.xyxy]
        namings, named = self._name_strips(image, cal, view, dets, boxes, search.changed)
        # the two ends of a card are joined after the memory took the namings as read (joined
        # again at every frame, two agreeing ends would grow surer and surer)
        box_conf, namings = self._faint_boxes(dets.confidence, namings)
        readings, doubtful = self._band_readings(image, cal, boxes, box_conf, namings)
        for fan in self._fan_readings(
            image, cal, view, search.whole, search.changed, boxes, box_conf
        ):
            (readings if fan.confidence >= self.min_confidence else doubtful).append(fan)
        turned = self._turned_readings(image, cal, view, search.same_view, search.changed)
        readings = self._with_turned(readings, turned)
        cards, duplicates = resolve_duplicates(readings)
        sure = {c.card for c in cards}
        unsure, _ = resolve_duplicates([r for r in doubtful if r.card not in sure])
        reading = FrameReading(
            tuple(cards),
            calibrated,
            tuple(duplicates),
            len(dets),
            named,
            True,
            search.share,
            tuple(sorted(unsure, key=lambda r: -r.confidence)),
        )
        if self.reuse_names and calibrated:
            self._last = (cal, view, reading, dets)
        return reading

    def _search(self, view: np.ndarray, cal: TableCalibration) -> _Search | FrameReading:
        """The finder's boxes for this view: the last reading as it was when nothing changed
        since the finder last ran on the whole view, else a search around what changed (when
        the model takes any input size), else of the whole view."""
        dets: Detections | None = None
        share = 1.0
        same_view = False  # the last frame read saw the table from here...
        changed: tuple[int, int, int, int] | None = None  # ... and this part of it changed
        if self.reuse_names and self._last is not None and cal.regions_known:
            last_cal, last_view, last, last_dets = self._last
            if last_cal is cal or not cal.moved_from(last_cal, SAME_VIEW_PX):  # same view
                change = changed = changed_box(last_view, view)
                same_view = True
                if change is None and last.search_share >= 1.0:
                    return replace(last, named=0, searched=False, search_share=0.0)
                # (a reading searched only around a change is confirmed by a whole search at
                # the next frame: a strip the part missed is not left missing for long)
                searched = self._search_change(view, change, last_dets) if change else None
                if searched is not None:
                    dets, share = searched
        if dets is None:
            return _Search(self.model.predict(view), 1.0, True, changed, same_view)
        return _Search(dets, share, False, changed, same_view)

    def _name_strips(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        view: np.ndarray,
        dets: Detections,
        boxes: list[tuple[float, float, float, float]],
        changed: tuple[int, int, int, int] | None = None,
    ) -> tuple[list[Naming | None], int]:
        """(naming per box, how many were named afresh): a strip where it lay in the previous
        frame with the same pixels keeps its name (`_recall`; `changed`: the part of the view
        that changed since), the others are named in one batch (one matching pass and one
        classifier call); the namings are remembered for the next frame."""
        namings: list[Naming | None] = [None] * len(dets)
        todo: list[int] = []
        recalled = (
            self._recall(view, cal, dets.xyxy, changed if self._any_deck else None)
            if self.reuse_names
            else [(False, None)] * len(dets)
        )
        for k, (kept, naming) in enumerate(recalled):
            if kept:
                namings[k] = naming
            else:
                todo.append(k)
        if todo:
            # all the frame's boxes given: its cards seen whole are checked whole
            # (a faint box, on no band most often, hides no card: `FAINT_BOX`)
            sure_boxes = [b for b, c in zip(boxes, dets.confidence, strict=True) if c >= BOX_SURE]
            named = self.namer.name_boxes(image, cal, [boxes[k] for k in todo], found=sure_boxes)
            for k, fresh in zip(todo, named, strict=True):
                namings[k] = fresh
        if self.reuse_names:
            strips = []
            for xyxy, naming in zip(dets.xyxy, namings, strict=True):
                x0, y0, x1, y1 = box = _crop_box(xyxy, view.shape)
                strips.append(_Remembered(box, xyxy.copy(), view[y0:y1, x0:x1].copy(), naming))
            self._memory = (cal, strips)
        return namings, len(todo)

    def _band_readings(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes: list[tuple[float, float, float, float]],
        box_conf: np.ndarray,
        namings: list[Naming | None],
    ) -> tuple[list[CardReading], list[CardReading]]:
        """(readings over the gate, doubtful ones) of the named strips: a card's two ends
        joined, readings the card's other strips contradict dropped, each one's confidence the
        finder's (an enrolled deck's at least BOX_FLOOR) times the naming's."""
        centres = strip_centres(boxes, box_conf, namings)
        readings: list[CardReading] = []
        doubtful: list[CardReading] = []
        found = box_conf.tolist()
        read = drop_facing_away(join_ends(namings, centres), centres)
        read = drop_one_strip_read_both_ways(read, found)
        read = drop_turned_over_upright(read, centres, found)
        read = drop_on_shown_face(read, found)
        if self._any_deck:
            read = drop_inside_band(read, TOP_MM, found)
        for naming, det_conf in zip(read, box_conf, strict=True):
            if naming is None:
                continue
            box_sure = max(float(det_conf), BOX_FLOOR) if self._any_deck else float(det_conf)
            conf = box_sure * naming.confidence
            if conf < min(DOUBTFUL_MIN, self.min_confidence) or self._on_no_card(
                image, cal, naming
            ):
                continue
            card_reading = CardReading(
                card=naming.card,
                confidence=conf,
                box=_strip_box(cal, naming),
                region=layout.region_at(*naming.center_mm) if cal.regions_known else None,
                center_mm=naming.center_mm,
                naming=naming,
                detector_confidence=float(det_conf),
            )
            (readings if conf >= self.min_confidence else doubtful).append(card_reading)
        return readings, doubtful

    def _faint_boxes(
        self, confidence: np.ndarray, namings: list[Naming | None]
    ) -> tuple[np.ndarray, list[Naming | None]]:
        """(finder confidence per box, namings) with the boxes under BOX_SURE judged by their
        naming (`FAINT_BOX`): as sure as FAINT_NAMED when read surely, else unread."""
        if not self._any_deck:
            return confidence, namings
        conf, out = confidence.copy(), list(namings)
        for k in np.flatnonzero(confidence < BOX_SURE):
            n = out[k]
            if n is not None and n.score >= FAINT_FIT and n.confidence >= FAINT_SURE:
                conf[k] = FAINT_NAMED
            else:
                out[k] = None
        return conf, out

    def _fan_readings(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        view: np.ndarray,
        whole: bool,
        change: tuple[int, int, int, int] | None,
        boxes: Sequence[tuple[float, float, float, float]],
        box_conf: np.ndarray,
    ) -> list[CardReading]:
        """An enrolled deck's turned bands in the scan area (`FAN_TURNS_DEG`). Searched when
        the whole view is and the scan area's pixels changed since it was last searched (in
        play it stays empty until the end: no cost), kept otherwise (but where the view
        changed)."""
        if not (self._any_deck and cal.regions_known and FAN_TURNS_DEG):
            return []
        ppm = layout.RECTIFIED_PX_PER_MM
        scan = layout.region_by_id("scan").rect
        x0, y0, x1, y1 = (round(v * ppm) for v in (scan.x0, scan.y0, scan.x1, scan.y1))
        seen = view[y0:y1, x0:x1]
        if whole:
            last = self._fan_view
            if (
                last is None
                or not self.reuse_names
                or (last[0] is not cal and cal.moved_from(last[0], SAME_VIEW_PX))
                or not unchanged(last[1], seen)
            ):
                self._fans = [r for turn in FAN_TURNS_DEG for r in self._fan_pass(image, cal, turn)]
                self._fan_view = (cal, seen.copy())
        elif change is not None and _touches(np.array([change]), (x0, y0, x1, y1))[0]:
            # searched only around a change that reaches the scan area: what it read there
            # goes, and the next whole search looks again
            cx0, cy0, cx1, cy1 = (v / ppm for v in change)
            self._fans = [
                r
                for r in self._fans
                if not (cx0 <= r.center_mm[0] <= cx1 and cy0 <= r.center_mm[1] <= cy1)
            ]
            self._fan_view = None
        centres = [
            ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)
            for b, c in zip(boxes, box_conf, strict=True)
            if c >= BOX_SURE
        ]
        return [
            r for r in self._fans if all(math.dist(r.center_mm, c) > FAN_APART_MM for c in centres)
        ]

    def _fan_pass(self, image: np.ndarray, cal: TableCalibration, turn: float) -> list[CardReading]:
        """The scan area searched in a view turned by `turn` degrees about its centre (moved to
        the view's centre), the turned bands found there read."""
        scan = layout.region_by_id("scan").rect
        at = (layout.PLAY_W_MM / 2, layout.PLAY_H_MM / 2)
        pose = CardPose(scan.center, turn)
        upright = turned_calibration(cal, pose, at)
        dets = self.model.predict(rectify(image, upright))
        ppm = layout.RECTIFIED_PX_PER_MM
        keep: list[tuple[tuple[float, float, float, float], float]] = []
        for xyxy, conf in zip(dets.xyxy, dets.confidence, strict=True):
            box = _box_mm(xyxy, ppm)
            mid = from_turned(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), pose, at)
            if conf >= BOX_SURE and scan.contains(*mid):
                keep.append((box, float(conf)))
        if not keep:
            return []
        found = [b for b, _ in keep]
        named = self.namer.name_boxes(image, upright, found, light=cal, found=found)
        out: list[CardReading] = []
        for (_, det_conf), naming in zip(keep, named, strict=True):
            if naming is None:
                continue
            n = on_plane(naming, pose, at)
            a = abs(n.angle_deg) % 90.0
            conf = det_conf * n.confidence
            if (
                min(a, 90.0 - a) <= MIN_TURN_DEG
                or conf < min(DOUBTFUL_MIN, self.min_confidence)
                or n.score < FAN_FIT
                or side_support(image, cal, n.center_mm, n.angle_deg, n.flipped) < FAN_SIDES
            ):
                continue
            out.append(
                CardReading(
                    card=n.card,
                    confidence=conf,
                    box=_strip_box(cal, n),
                    region=layout.region_at(*n.center_mm),
                    center_mm=n.center_mm,
                    naming=n,
                    detector_confidence=det_conf,
                )
            )
        return out

    def _on_no_card(self, image: np.ndarray, cal: TableCalibration, naming: Naming) -> bool:
        """A band of an enrolled deck that fits its card loosely and shows neither of its
        card's long sides: a box on the cloth's stripes or a marker tile, named by the
        nearest thing (held-out ornate-1 plain: 2 such readings at 0.33-0.35, no right one)."""
        return (
            self._any_deck
            and naming.score < LOOSE_FIT
            and side_support(image, cal, naming.center_mm, naming.angle_deg, naming.flipped)
            < SIDES_UNSEEN
        )

    def _turned_readings(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        view: np.ndarray,
        same_view: bool,
        change: tuple[int, int, int, int] | None,
    ) -> list[tuple[CardPose, CardReading]]:
        """The whole cards lying turned (turned_cards), read. In the view of the last frame read
        (`same_view`) they are looked for only around `change`, where it changed since (nowhere:
        None): the ones read before elsewhere stand, their pixels unchanged."""
        ppm = layout.RECTIFIED_PX_PER_MM
        if same_view and change is None:
            found: list[tuple[CardPose, CardReading | None]] = list(self._turned)
        elif change is None:
            found = [(pose, self._read_turned(image, cal, pose)) for pose in turned_cards(view)]
        else:
            h, w = view.shape[:2]
            m = round(layout.CARD_H_MM * ppm)
            x0, y0 = max(0, change[0] - m), max(0, change[1] - m)
            x1, y1 = min(w, change[2] + m), min(h, change[3] + m)
            near = [
                CardPose((p.center_mm[0] + x0 / ppm, p.center_mm[1] + y0 / ppm), p.angle_deg)
                for p in turned_cards(view[y0:y1, x0:x1], ppm)
            ]
            touched = [p for p in near if _card_touches(p.corners_mm(), change, ppm)]
            kept = [
                (p, r) for p, r in self._turned if not _card_touches(p.corners_mm(), change, ppm)
            ]
            found = kept + [(p, self._read_turned(image, cal, p)) for p in touched]
        read = whole_cards_apart([(p, r) for p, r in found if r is not None])
        if self.reuse_names and cal.regions_known:
            self._turned = read  # beside self._last
        return read

    @staticmethod
    def _with_turned(
        readings: list[CardReading], turned: list[tuple[CardPose, CardReading]]
    ) -> list[CardReading]:
        """`readings` and the turned cards' readings. A turned card read surely lies on top of
        whatever the finder boxed under it: those readings, less sure, are junk boxes on its
        face and go."""
        out = list(readings)
        for pose, reading in turned:
            out = [
                r
                for r in out
                if r.confidence >= reading.confidence or not _on_card(pose, r.center_mm)
            ]
            out.append(reading)
        return out

    def _read_turned(
        self, image: np.ndarray, cal: TableCalibration, pose: CardPose
    ) -> CardReading | None:
        """A turned whole card named from its two ends, read as the namers read upright ones."""
        upright = turned_calibration(cal, pose)
        boxes = band_boxes(pose)
        # a card found by its outline: checked whole, in the table's light
        read = self.namer.name_boxes(image, upright, boxes, light=cal, found=boxes)
        # the pose says which end is which: its first box is a top band read upright, its
        # second a bottom band read upside down; a band read the other way puts the card
        # off the outline (a face-down card's edge read as a band of the deck)
        # and the card its band puts there must show its outline as the pose did: a band
        # fitted to what lies there (a fan's first card, posed from the fan's edges, whose
        # top band is the other cards' corners: minimal-1's chashu-5 at 0.997) puts it off
        ends = [
            on_plane(n, pose)
            for k, n in enumerate(read)
            if n is not None
            and n.flipped == (k == 1)
            and outline_shown(image, upright, n.center_mm, n.angle_deg, n.flipped, boxes)
            >= MIN_SUPPORT
        ]
        if not ends:
            return None
        if len(ends) == 2:
            ends = list(joined(ends[0], ends[1]))
        best = max(ends, key=lambda n: n.confidence)
        if best.confidence < self.min_confidence:
            return None
        box = _bbox(cal.to_image(pose.corners_mm()))
        return CardReading(
            card=best.card,
            confidence=best.confidence,
            box=box,
            region=layout.region_at(*best.center_mm) if cal.regions_known else None,
            center_mm=best.center_mm,
            naming=best,
        )

    def _search_change(
        self, view: np.ndarray, change: tuple[int, int, int, int], before: Detections
    ) -> tuple[Detections, float] | None:
        """The finder on the part of the view that changed (and CROP_CONTEXT_PX around it),
        the previous boxes elsewhere, and the share of the view searched; None when the model
        cannot take a part (fixed input size) or the change covers too much of the view."""
        predict_crop = getattr(self.model, "predict_crop", None)
        side = getattr(self.model, "crop_size", None)
        h, w = view.shape[:2]
        bx0, by0, bx1, by1 = change
        m = CROP_CONTEXT_PX
        if predict_crop is None or not side or max(bx1 - bx0, by1 - by0) + 2 * m > side:
            return None
        x0, x1 = _span(bx0 - m, bx1 + m, w, min(side, w))
        y0, y1 = _span(by0 - m, by1 + m, h, min(side, h))
        found = predict_crop(np.ascontiguousarray(view[y0:y1, x0:x1]))
        xyxy = found.xyxy + np.array([x0, y0, x0, y0], np.float32)
        size = xyxy[:, 2:] - xyxy[:, :2]
        # a box cut by the crop's edge (not the view's) is a strip that does not reach the
        # change: the previous box of it stands
        inner = (
            ((xyxy[:, 0] > x0 + 1) | (x0 == 0))
            & ((xyxy[:, 1] > y0 + 1) | (y0 == 0))
            & ((xyxy[:, 2] < x1 - 1) | (x1 == w))
            & ((xyxy[:, 3] < y1 - 1) | (y1 == h))
        )
        new = inner & _touches(xyxy, change) & (size.max(axis=1) <= STRIP_MAX_PX)
        kept = before[~_touches(before.xyxy, change)]
        both = Detections(
            np.concatenate([kept.xyxy, xyxy[new]]).astype(np.float32),
            np.concatenate([kept.confidence, found.confidence[new]]).astype(np.float32),
            np.concatenate([kept.class_id, found.class_id[new]]),
        )
        share = (x1 - x0) * (y1 - y0) / (w * h)
        if not len(both):
            return both, share
        # a strip just beside the change may be boxed again, a little larger: one box each
        rects = [
            [float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])] for b in both.xyxy
        ]
        keep = cv2.dnn.NMSBoxes(rects, both.confidence.tolist(), 0.0, NMS_IOU)
        return both[np.sort(np.asarray(keep, int).ravel())], share


def whole_cards_apart(
    read: list[tuple[CardPose, CardReading]],
) -> list[tuple[CardPose, CardReading]]:
    """Turned cards seen whole cannot overlap: of poses that do (a fan's edges fit a card
    askew across its others), the surest reading stands, the best outline on a tie (the
    poses come best outline first)."""
    order = sorted(range(len(read)), key=lambda k: -read[k][1].confidence)
    kept: list[int] = []
    for k in order:
        mine = read[k][0].corners_mm().astype(np.float32)
        if all(
            cv2.intersectConvexConvex(mine, read[j][0].corners_mm().astype(np.float32))[0]
            < WHOLE_OVERLAP * layout.CARD_W_MM * layout.CARD_H_MM
            for j in kept
        ):
            kept.append(k)
    return [read[k] for k in sorted(kept)]


def _changed_over(naming: Naming | None, changed: tuple[int, int, int, int] | None) -> bool:
    """Whether an unsure naming's card (`RECALL_SURE`) meets `changed` (view px)."""
    if naming is None or changed is None or naming.confidence >= RECALL_SURE:
        return False
    half = layout.INDEX_STRIP_MM / 2
    card = _strip_corners_mm(naming, -half, layout.CARD_H_MM - half)
    return _card_touches(card, changed, layout.RECTIFIED_PX_PER_MM)


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


def _on_card(pose: CardPose, point_mm: tuple[float, float]) -> bool:
    """`point_mm` lies on the card (in from its edges by a few millimetres)."""
    x, y = pose.to_card(point_mm)
    return abs(x) <= layout.CARD_W_MM / 2 - 3.0 and abs(y) <= layout.CARD_H_MM / 2 - 3.0


def _card_touches(corners_mm: np.ndarray, box: tuple[int, int, int, int], ppm: float) -> bool:
    """The bounding box of a card's corners (mm, `ppm` px a mm) meets `box` (view px)."""
    c = corners_mm * ppm
    return bool(
        c[:, 0].min() <= box[2]
        and c[:, 0].max() >= box[0]
        and c[:, 1].min() <= box[3]
        and c[:, 1].max() >= box[1]
    )


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
