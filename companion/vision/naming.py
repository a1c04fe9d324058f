"""Naming a found index strip by matching it against the deck's own reference strips.

No training: the reference is the deck itself (default or enrolled), so a newly enrolled deck
is named correctly at once. For each strip the detector boxed: sample a small top-down patch from
the full-resolution camera frame, measure its skew from edge directions, find the strip inside
the patch with the deck's mean strip (upright and turned 180 degrees), re-sample exactly that
strip, and score it against all 56 references by normalised cross-correlation. The margin between
the best and second-best card becomes the naming confidence, so doubt is flagged, not announced.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Final

import cv2
import numpy as np

from companion.cards import CARD_IDS
from companion.deck.deckdir import Deck
from companion.layout import CARD_W_MM, INDEX_STRIP_MM
from companion.vision.calibration import TableCalibration
from companion.vision.plane import plane_patch, turned_patch
from companion.vision.skew import band_edge_skews, edge_skew_deg, parabola_offset
from companion.vision.strip_classifier import AnyStripClassifier

LOCATE_PX_PER_MM: Final = 1.5
"""The strip is found and deskewed on a coarse patch (cheap) ..."""
DESC_PX_PER_MM: Final = 2.0
"""... then read at this resolution: the 11 mm numeral keeps 22 px, a pip 9 px."""
DESC_TOP_MM: Final = 12.0
"""Only the top 12 mm of the strip are compared: the tightest cascade (12 mm) still shows them."""
SEARCH_X_MM: Final = 5.0
SEARCH_Y_MM: Final = 2.5
"""How far the strip may sit from the box centre: vertically less than the tightest cascade
offset, so the neighbouring card's strip is never taken for this one."""
BLUR_SIGMA_MM: Final = 0.5
"""Both sides are blurred alike so a soft camera image still correlates with sharp art."""
MIN_SCORE: Final = 0.2
REFINE_X_MM: Final = 2.5
REFINE_Y_MM: Final = 2.0
"""How far the best candidates may shift to find their own alignment."""
SKEW_RETRIES_DEG: Final = (-8.0, -4.0, 4.0, 8.0)
UPRIGHT_DEG: Final = 3.0
"""A strip found within this of upright (or of a quarter turn) gets no skew retries: its edges
are the box's own, the skew they give is as sure as on any upright strip."""
LINE_APART_DEG: Final = 1.5
"""A strip's top edge this far from the edge directions' skew is read along it too..."""
LINE_CANDIDATES: Final = 2
"""... each of the longest few straight edges where it may lie (the best match wins)."""
REFINE_TOP: Final = 4
"""Candidates (card and orientation) re-scored at their best alignment."""
PIP_OVERRIDE: Final = 0.08
"""A card whose value the pips count wins if its correlation is at most this far behind."""
PIP_AGREE_MARGIN: Final = 0.1
"""Pips and correlation agree: the reading is treated as confident."""
PIPS_MM: Final = (32.0, 1.5, 61.0, 12.5)
"""The pips panel (x0, y0, x1, y1 on the upright strip)."""
PIP_RADIUS_MM: Final = 1.9
GLYPH_MM: Final = (16.0, 30.0)
"""x range of the glyph disc on the strip."""
SHAPE_MARGIN: Final = 0.08
SHAPE_OVERRIDE: Final = 0.12


@dataclass(frozen=True, slots=True)
class Naming:
    card: str
    score: float
    """Normalised cross-correlation with the best reference, -1..1."""
    margin: float
    """Best minus second-best score; small margins mean doubt."""
    runner_up: str
    flipped: bool
    """The strip was read turned 180 degrees (a bottom strip, or a card laid upside down)."""
    angle_deg: float
    """Counter-clockwise skew of the strip on the table plane."""
    center_mm: tuple[float, float]
    """Centre of the strip on the table plane."""
    probability: float | None = None
    """The strip classifier's probability of `card`, when a classifier named it."""

    @property
    def confidence(self) -> float:
        """The classifier's probability, else 0..1 from the matching score and margin (0.5 at
        a margin of 0.015)."""
        if self.probability is not None:
            return self.probability
        if self.score <= MIN_SCORE:
            return 0.0
        return float(1.0 / (1.0 + math.exp(-(self.margin - 0.015) / 0.006)))


def _desc_size() -> tuple[int, int]:
    return round(CARD_W_MM * DESC_PX_PER_MM), round(DESC_TOP_MM * DESC_PX_PER_MM)


PARTS_MM: Final = ((1.5, 16.0), (16.0, 31.0), (31.0, 62.0))
"""Numeral panel, glyph, pips panel (x ranges on the strip). Each part is normalised on its
own so the small glyph weighs as much as the wide pips panel: otherwise two ingredients whose
colours warm light pulls together (yellow and orange) differ by too little."""


def _descriptor(strip_top: np.ndarray) -> np.ndarray:
    """Per part and channel zero-mean, unit-variance, then unit norm per part: the dot product
    of two descriptors is the mean of the parts' normalised cross-correlations."""
    img = _white_balanced(
        cv2.GaussianBlur(strip_top.astype(np.float32), (0, 0), BLUR_SIGMA_MM * DESC_PX_PER_MM)
    )
    parts = []
    for x0, x1 in PARTS_MM:
        part = img[:, round(x0 * DESC_PX_PER_MM) : round(x1 * DESC_PX_PER_MM)]
        part = _zero_mean_unit_var(part)
        vec = part.ravel()
        parts.append(vec / max(float(np.linalg.norm(vec)), 1e-6))
    return (np.concatenate(parts) * np.float32(1 / np.sqrt(len(parts)))).astype(np.float32)


def _white_balanced(bgr: np.ndarray) -> np.ndarray:
    """Each channel scaled so the strip's white panels read 255: the light's colour goes, the
    card's colour stays (orange and gold differ by how dark their band is in green)."""
    sample = bgr.reshape(-1, 3)
    k = int(len(sample) * 0.97)
    white = np.partition(sample, k, axis=0)[k].astype(np.float32)
    return (bgr * (255.0 / np.maximum(white, 8.0))).astype(np.float32)


def _zero_mean_unit_var(img: np.ndarray) -> np.ndarray:
    """Per-channel zero mean, one variance for all channels: scaling each channel on its own
    would erase the channels' relative contrast, i.e. the colour."""
    mean = np.asarray(cv2.mean(img)[: img.shape[2]], np.float32)
    centred = img - mean
    std = float(np.sqrt(np.mean(centred * centred)))
    return centred / max(std, 4.0)


def _whiteness(bgr: np.ndarray) -> np.ndarray:
    """Darkest channel after white balance: the strip's white panels stand out on every
    ingredient colour (yellow is bright in grey but dark in blue), whatever the light."""
    b, g, r = cv2.split(_white_balanced(bgr.astype(np.float32)) * np.float32(1 / 255))
    return cv2.min(cv2.min(b, g), r)


@cache
def _search_mask(res_shape: tuple[int, int], cx: float, cy: float) -> np.ndarray:
    ys, xs = np.mgrid[0 : res_shape[0], 0 : res_shape[1]]
    sx, sy = SEARCH_X_MM * LOCATE_PX_PER_MM, SEARCH_Y_MM * LOCATE_PX_PER_MM
    return (np.abs(xs - cx) <= sx) & (np.abs(ys - cy) <= sy)


def _unit(img: np.ndarray) -> np.ndarray:
    v = img.astype(np.float32).ravel()
    v = v - v.mean()
    return v / max(float(np.linalg.norm(v)), 1e-6)


def count_pips(patch: np.ndarray, at: tuple[int, int]) -> int | None:
    """Dark round blobs in the pips panel of a strip whose top-left lies at `at` in a patch
    sampled at DESC_PX_PER_MM; None when the panel is too unclear to count."""
    ppm = DESC_PX_PER_MM
    x0, y0, x1, y1 = PIPS_MM
    ax, ay = at
    panel = patch[
        ay + round(y0 * ppm) : ay + round(y1 * ppm), ax + round(x0 * ppm) : ax + round(x1 * ppm)
    ]
    if panel.size == 0 or panel.shape[0] < 6 or panel.shape[1] < 20:
        return None
    gray = panel.min(axis=2) if panel.ndim == 3 else panel
    if float(gray.std()) < 12:
        return None  # blank (value 0 shows a dash, which is not a pip) or washed out
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    area = math.pi * (PIP_RADIUS_MM * ppm) ** 2
    pips = 0
    for k in range(1, n):
        _, _, w, h, a = stats[k]
        if 0.35 * area <= a <= 2.0 * area and 0.5 <= w / max(h, 1) <= 2.0:
            pips += 1
        elif a > 2.0 * area:
            return None  # merged blobs or a dash: do not guess
    return pips if 1 <= pips <= 7 else None


CLS_TRUST: Final = 0.9
"""When matching and classifier disagree, the classifier's card wins from this probability on."""


def _combine(matched: Naming, probs: np.ndarray) -> Naming:
    """Two independent readings of one crop. Agreeing, they are right 99.8 % of the time
    (held-out frames), so the confidence is high (either may be sure); disagreeing, the kept card
    is discounted by the other reading's certainty, so the doubt shows and the gate or the
    tracker's vote holds it back instead of announcing it."""
    top = int(np.argmax(probs))
    p_top = float(probs[top])
    t_conf = matched.confidence
    if CARD_IDS[top] == matched.card:
        return replace(matched, probability=1.0 - (1.0 - p_top) * (1.0 - t_conf))
    if p_top >= CLS_TRUST:
        return replace(
            matched,
            card=CARD_IDS[top],
            runner_up=matched.card,
            probability=p_top * (1.0 - t_conf),
        )
    return replace(matched, probability=float(probs[CARD_IDS.index(matched.card)]) * t_conf)


@dataclass(frozen=True, slots=True)
class _Located:
    center_mm: tuple[float, float]
    angle_deg: float
    flipped: bool


class StripNamer:
    """Names index strips for one deck."""

    def __init__(
        self, deck: Deck | Mapping[str, np.ndarray], classifier: AnyStripClassifier | None = None
    ) -> None:
        """`deck`: the deck, or only its strips (card id -> `Deck.strip(id)`, e.g.
        `deckdir.default_strips()`): nothing else of it is kept."""
        self.classifier = classifier
        strip = deck.strip if isinstance(deck, Deck) else deck.__getitem__
        w, h = _desc_size()
        full_h = round(INDEX_STRIP_MM * DESC_PX_PER_MM)
        refs = [
            cv2.resize(strip(cid), (w, full_h), interpolation=cv2.INTER_AREA) for cid in CARD_IDS
        ]
        self._refs = np.ascontiguousarray(np.stack([_descriptor(s[:h]) for s in refs]))
        lw, lh = round(CARD_W_MM * LOCATE_PX_PER_MM), round(INDEX_STRIP_MM * LOCATE_PX_PER_MM)
        small = [cv2.resize(s, (lw, lh), interpolation=cv2.INTER_AREA) for s in refs]
        up = np.mean(np.stack([_whiteness(s) for s in small]), axis=0).astype(np.float32)
        self._locators = ((False, up), (True, np.ascontiguousarray(up[::-1, ::-1])))
        self._templates = [self._norm(s[:h]) for s in refs]
        self._generic = np.mean(np.stack(self._templates), axis=0).astype(np.float32)
        gx0, gx1 = (round(v * DESC_PX_PER_MM) for v in GLYPH_MM)
        # one silhouette per ingredient (value 0's strip: the glyph is the same for all values)
        self._glyphs = np.stack(
            [
                _unit(_whiteness(np.ascontiguousarray(refs[k * 8][:h, gx0:gx1]))).reshape(h, -1)
                for k in range(len(CARD_IDS) // 8)
            ]
        )

    def name_boxes(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes_mm: Sequence[tuple[float, float, float, float]],
        light: TableCalibration | None = None,
        found: Sequence[tuple[float, float, float, float]] | None = None,
    ) -> list[Naming | None]:
        """Name the strips the detector boxed (x0, y0, x1, y1 on the table plane, mm).
        `light` and `found` are BandNamer's (another deck's light and whole-card check): the
        default deck's strips carry their own white and are told apart by the strip alone."""
        matched = self.match_boxes(image, cal, boxes_mm)
        out: list[Naming | None] = [m[0] if m else None for m in matched]
        if self.classifier is None:
            return out
        hits = [(k, m) for k, m in enumerate(matched) if m is not None]
        probs = self.classifier.probabilities([patch for _, (_, patch) in hits])
        for (k, (naming, _)), p in zip(hits, probs, strict=True):
            out[k] = _combine(naming, p)
        return out

    def match_boxes(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes_mm: Sequence[tuple[float, float, float, float]],
    ) -> list[tuple[Naming, np.ndarray] | None]:
        """Matching against the deck alone: per box its naming and the upright strip patch
        (REFINE margins) it was read from, or None when no strip was found in the box."""
        # turned cards (boxes not clearly wider than tall, found off upright) get their skew
        # re-tried either side: edge directions are least sure there, and a strip 2 degrees
        # off loses its ends
        variants: list[tuple[int, _Located]] = []
        for k, box in enumerate(boxes_mm):
            loc = self._locate(image, cal, box)
            if loc is None:
                continue
            variants.append((k, loc))
            squarish = box[3] - box[1] > 0.5 * (box[2] - box[0])  # as `_locate` has it
            if not squarish:
                # a card laid askew in a cascade: the next card across the strip's lower part
                # pulls the edge directions towards its own angle; the strip's own top edge
                # does not (a strip 8 degrees off read at 0 lost its numeral)
                centre = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
                for line in band_edge_skews(image, cal, *centre, LINE_CANDIDATES):
                    if abs(line - loc.angle_deg) >= LINE_APART_DEG:
                        on_edge = self._locate(image, cal, box, line)
                        if on_edge is not None:
                            variants.append((k, on_edge))
            off_axis = abs((loc.angle_deg + 45.0) % 90.0 - 45.0) > UPRIGHT_DEG
            if off_axis and squarish:
                for d in SKEW_RETRIES_DEG:
                    variants.append((k, replace(loc, angle_deg=loc.angle_deg + d)))
        out: list[tuple[Naming, np.ndarray] | None] = [None] * len(boxes_mm)
        if not variants:
            return out
        w, h = _desc_size()
        patches = []
        crops = []
        for _, loc in variants:
            patch = self._sample(image, cal, loc, REFINE_X_MM, REFINE_Y_MM)
            pair = (patch, np.ascontiguousarray(patch[::-1, ::-1]))
            patches.append(pair)
            for p in pair:
                # align on what every strip shares (panels, band) before comparing cards:
                # a partly covered strip pulls the locator off by a millimetre or two
                res = cv2.matchTemplate(self._norm(p), self._generic, cv2.TM_CCOEFF_NORMED)
                ax, ay = cv2.minMaxLoc(res)[3]
                crops.append(p[ay : ay + h, ax : ax + w])
        descs = np.stack([_descriptor(c) for c in crops])
        scores = (descs @ self._refs.T).reshape(len(patches), 2, len(CARD_IDS))  # one product
        for (k, loc), pair, sc in zip(variants, patches, scores, strict=True):
            naming = self._name(loc, pair, sc)
            best = out[k]
            if best is None or naming.score > best[0].score:
                out[k] = (naming, pair[1 if naming.flipped else 0])
        return out

    def _name(
        self, loc: _Located, patches: tuple[np.ndarray, np.ndarray], scores: np.ndarray
    ) -> Naming:
        """Rank all 56 cards in both orientations on the located crop (`scores`), then let the
        best few find their own best alignment in the slightly larger patch: a strip a few
        tenths of a millimetre off (lens distortion, a coarse locator) no longer loses to a
        neighbour."""
        top = np.argsort(scores, axis=None)[::-1][:REFINE_TOP]
        normed: dict[int, np.ndarray] = {}
        refined: dict[int, tuple[float, int, tuple[int, int]]] = {}

        def refine(i: int, o: int) -> None:
            if o not in normed:
                normed[o] = self._norm(patches[o])
            res = cv2.matchTemplate(normed[o], self._templates[i], cv2.TM_CCOEFF_NORMED)
            _, score, _, at = cv2.minMaxLoc(res)
            if i not in refined or score > refined[i][0]:
                refined[i] = (float(score), o, (int(at[0]), int(at[1])))

        for flat in top:
            refine(*reversed(divmod(int(flat), len(CARD_IDS))))
        best = max(refined, key=lambda i: refined[i][0])
        s_best, o_best, at = refined[best]
        # the value again, counted: pips are what blur and JPEG leave readable longest
        pips = count_pips(patches[o_best], at)
        # the ingredient again, by shape alone: warm light pulls yellow, orange and red
        # together, the glyph's silhouette stays
        shape = self._shape_ingredient(patches[o_best], at)
        if shape is not None and shape != best // 8:
            alt = shape * 8 + best % 8
            refine(alt, o_best)
            if refined[alt][0] >= s_best - SHAPE_OVERRIDE:
                best = alt
                s_best = refined[alt][0]
        ingredient_base = best - best % 8
        if pips is not None and pips != best % 8:
            alt = ingredient_base + pips
            refine(alt, o_best)
            if refined[alt][0] >= s_best - PIP_OVERRIDE:
                best = alt
        ranked = sorted(refined, key=lambda i: refined[i][0], reverse=True)
        s1, o1, _ = refined[best]
        runner = next((i for i in ranked if i != best), best)
        s2 = refined[runner][0] if runner != best else -1.0
        margin = s1 - s2
        if pips is not None:
            margin = max(margin, PIP_AGREE_MARGIN) if pips == best % 8 else min(margin, 0.0)
        return Naming(
            card=CARD_IDS[best],
            score=s1,
            margin=margin,
            runner_up=CARD_IDS[runner],
            flipped=o1 == 1,
            angle_deg=loc.angle_deg,
            center_mm=loc.center_mm,
        )

    def _shape_ingredient(self, patch: np.ndarray, at: tuple[int, int]) -> int | None:
        """Ingredient whose glyph silhouette (in whiteness, colour-blind) fits best, when it
        fits clearly better than the others; None when unsure."""
        x0, x1 = (round(v * DESC_PX_PER_MM) for v in GLYPH_MM)
        h = self._glyphs.shape[1]
        ax, ay = at
        crop = patch[ay : ay + h, ax + x0 : ax + x1]
        if crop.shape[:2] != self._glyphs.shape[1:3]:
            return None
        vec = _unit(_whiteness(np.ascontiguousarray(crop)))
        scores = self._glyphs.reshape(len(self._glyphs), -1) @ vec
        order = np.argsort(scores)[::-1]
        if scores[order[0]] - scores[order[1]] < SHAPE_MARGIN:
            return None
        return int(order[0])

    @staticmethod
    def _norm(img: np.ndarray) -> np.ndarray:
        """Per-channel zero mean, unit variance (white balance and exposure out)."""
        f = cv2.GaussianBlur(img.astype(np.float32), (0, 0), BLUR_SIGMA_MM * DESC_PX_PER_MM)
        return _zero_mean_unit_var(_white_balanced(f))

    def _locate(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        box: tuple[float, float, float, float],
        skew: float | None = None,
    ) -> _Located | None:
        """Where exactly the strip lies, its skew, and which way up it is.

        `skew`: read along this tilt instead of the edge directions' (a cascade's next card
        across the strip pulls those its way). Edge directions give the skew only modulo 90
        degrees: a box that is not clearly wider than tall (a card turned more than ~15
        degrees, e.g. fanned in the scan area) is also tried a quarter turn further, in a
        square patch that holds either.
        """
        ppm = LOCATE_PX_PER_MM
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        bw, bh = box[2] - box[0], box[3] - box[1]
        squarish = bh > 0.5 * bw
        if squarish:
            side = max(CARD_W_MM, bw, bh) + 2 * SEARCH_X_MM + 4
            pw = ph = side
        else:
            pw, ph = CARD_W_MM + 2 * SEARCH_X_MM + 4, INDEX_STRIP_MM + 2 * SEARCH_Y_MM + 4
        patch = plane_patch(image, cal, cx - pw / 2, cy - ph / 2, pw, ph, ppm)
        white0 = _whiteness(patch)
        skew = edge_skew_deg(white0) if skew is None else skew
        h, w = white0.shape
        best: tuple[float, float, float, bool, float, np.ndarray] | None = None
        for angle in (skew, skew + 90.0) if squarish else (skew,):
            rot = cv2.getRotationMatrix2D((w / 2, h / 2), -angle, 1.0)
            white = cv2.warpAffine(white0, rot, (w, h), borderMode=cv2.BORDER_REPLICATE)
            for flipped, loc in self._locators:
                th, tw = loc.shape
                if h < th or w < tw:
                    return None
                res = cv2.matchTemplate(white, loc, cv2.TM_CCOEFF_NORMED)
                masked = np.where(_search_mask(res.shape, (w - tw) / 2, (h - th) / 2), res, -2.0)
                iy, ix = np.unravel_index(int(np.argmax(masked)), masked.shape)
                if best is None or masked[iy, ix] > best[0]:
                    rows, cols = res.shape
                    fx = parabola_offset(*res[iy, ix - 1 : ix + 2]) if 0 < ix < cols - 1 else 0
                    fy = parabola_offset(*res[iy - 1 : iy + 2, ix]) if 0 < iy < rows - 1 else 0
                    best = (
                        float(masked[iy, ix]),
                        ix + fx + tw / 2,
                        iy + fy + th / 2,
                        flipped,
                        angle,
                        rot,
                    )
        assert best is not None
        _, sx, sy, flipped, angle, rot = best
        px, py = cv2.invertAffineTransform(rot) @ np.array([sx, sy, 1.0])
        center = (cx - pw / 2 + px / ppm, cy - ph / 2 + py / ppm)
        return _Located(center, angle, flipped)

    def _sample(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        loc: _Located,
        margin_x_mm: float = 0.0,
        margin_y_mm: float = 0.0,
    ) -> np.ndarray:
        """The strip's top DESC_TOP_MM (plus margins), upright as located, at DESC_PX_PER_MM,
        straight from the frame. Not turned for `loc.flipped`: the caller tries both ways."""
        w, h = _desc_size()
        ppm = DESC_PX_PER_MM
        mx, my = round(margin_x_mm * ppm), round(margin_y_mm * ppm)
        full_h = round(INDEX_STRIP_MM * ppm)
        # the strip frame: mm, origin at the strip centre
        origin = (-CARD_W_MM / 2 - margin_x_mm, -INDEX_STRIP_MM / 2 - margin_y_mm)
        size = (w + 2 * mx, full_h + 2 * my) if (mx or my) else (w, h)
        return turned_patch(image, cal, loc.center_mm, loc.angle_deg, origin, size, ppm)
