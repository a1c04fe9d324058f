"""`companion deck check`: is a deck ready to play with, before anyone sits down?

An enrolled deck is named from its own faces, so how well the companion will read it depends
on the deck itself (two ingredients printed in alike colours, numerals a stroke apart) and on
how well it was photographed. Two checks answer that cheaply and without a camera:

1. the faces alone: every pair of cards compared in the representation the namer uses, each
   pair's gap measured in the namer's own doubt margin, so the nearest pairs show what the
   namer will hesitate over even on perfect pictures; two ingredients also by their mean
   bands, in even light and under a lamp bright enough to wash pale tints out (listed once
   for all values);
2. rendered table scenes of the deck (its enrolled faces are the best stand-in for the real
   cards): every band at least half visible and not half under a hand is named from its
   ground-truth box, exactly as the play-time namer would, and scored against the truth.

The verdict counts the bands read right above the detector's gate and, above all, the wrong
readings that pass it: those are the ones the companion would announce.

JSON (`--json`) keys: deck, namer, cards, nearest_pairs [{a, b, similarity, separation,
reason}], frames, frames_calibrated, seed, width, gate, bands, read, right, passed,
right_passed, wrong_passed, right_share, recall, ingredient_recall {ingredient: share|null},
confusions [{truth, read, count, passed}], verdict (ready|usable|hard), verdict_line, advice
[..], seconds.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import cv2
import numpy as np

from companion.cards import CARD_IDS, INGREDIENTS
from companion.deck.deckdir import DEFAULT_DECK_NAME, Deck, load_deck
from companion.errors import BadInputError, CompanionError
from companion.vision.calibration import TableCalibration
from companion.vision.naming import Naming

GATE: Final = 0.35
"""A reading counts at play time when the finder's confidence (~0.85) times the namer's is at
least the detector's MIN_CONFIDENCE (0.3): about 0.35 of the namer's own."""
READY_SHARE: Final = 0.99
USABLE_SHARE: Final = 0.90
"""Shares of the bands read right above the gate for `ready` and `usable`."""
MIN_VISIBLE: Final = 0.5
MAX_HAND: Final = 0.5
"""Bands checked: at least half visible and not half under a hand (the finder's own bar)."""
NEAREST: Final = 5
DEFAULT_FRAMES: Final = 6
DEFAULT_SEED: Final = 8_808
FRAME_WIDTH: Final = 2304
"""The Pi camera's full-field stream the companion reads from (2304 x 1296)."""
SHIFT_PX: Final = 2
"""Two bands are compared at their best alignment within this many pixels (0.8 mm)."""
BRIGHT: Final = 1.2
"""A lamp overexposes the table this much over the markers' paper white at most (held-out
minimal-1's pale backgrounds in warm light: 1.15-1.2 x); a pixel clipped in any channel has no
colour say in BandNamer (`band_naming._clipped`), so tints only colour tells apart are left to
their icons there."""
IDENTICAL: Final = 0.99
VALUE_DOUBT: Final = 0.018
INGREDIENT_DOUBT: Final = 0.035
"""Margins at which BandNamer's confidence is one half for a value and for an ingredient
(band_naming._confidence): the unit a pair's separation is measured in."""
N_VAL: Final = len(CARD_IDS) // len(INGREDIENTS)

VERDICTS: Final = {
    "ready": "ready",
    "usable": "usable, some cards need a second look",
    "hard": "hard to tell apart",
}


def _ing(card: str) -> str:
    return card.rsplit("-", 1)[0]


class _Namer(Protocol):
    def name_boxes(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes_mm: Sequence[tuple[float, float, float, float]],
        light: TableCalibration | None = None,
        found: Sequence[tuple[float, float, float, float]] | None = None,
    ) -> list[Naming | None]: ...


@dataclass(frozen=True)
class Pair:
    """Two cards the namer finds alike on the faces alone."""

    a: str
    b: str
    similarity: float
    """The namer's score of one band against the other (1 = identical)."""
    separation: float
    """Their gap in the namer's doubt margins: under 1 even a perfect picture leaves it unsure."""
    reason: str

    def __str__(self) -> str:
        return f"{self.a} ~ {self.b}: {self.reason} (separation {self.separation:.1f})"


@dataclass(frozen=True)
class Confusion:
    truth: str
    read: str
    count: int
    passed: int
    """How many of them passed the gate (would have been announced)."""


@dataclass(frozen=True)
class Tally:
    """What naming every checked band of the rendered scenes gave."""

    bands: int
    read: int
    right: int
    passed: int
    right_passed: int
    wrong_passed: int
    ingredient_recall: dict[str, float | None]
    confusions: tuple[Confusion, ...]

    @property
    def right_share(self) -> float:
        return self.right / self.bands if self.bands else 0.0

    @property
    def recall(self) -> float:
        """Bands read right above the gate: what the companion gets at the table."""
        return self.right_passed / self.bands if self.bands else 0.0


@dataclass(frozen=True)
class DeckCheck:
    """Everything `companion deck check` reports."""

    deck: str
    namer: str
    nearest_pairs: tuple[Pair, ...]
    frames: int
    frames_calibrated: int
    seed: int
    width: int
    gate: float
    tally: Tally
    verdict: str
    """`ready`, `usable` or `hard`."""
    verdict_line: str
    advice: tuple[str, ...]
    seconds: float
    index_mm: float | None = None
    """How far down the card its values are compared (`band_naming.INDEX_SHARE`): the depth
    of the index a cascade must leave showing; None for the default deck's strip layout."""

    @property
    def ok(self) -> bool:
        return self.verdict != "hard"

    def to_json(self) -> dict[str, Any]:
        t = self.tally
        return {
            "deck": self.deck,
            "namer": self.namer,
            "cards": len(CARD_IDS),
            "nearest_pairs": [
                {
                    "a": p.a,
                    "b": p.b,
                    "similarity": round(p.similarity, 4),
                    "separation": round(p.separation, 3),
                    "reason": p.reason,
                }
                for p in self.nearest_pairs
            ],
            "frames": self.frames,
            "frames_calibrated": self.frames_calibrated,
            "seed": self.seed,
            "width": self.width,
            "gate": self.gate,
            "bands": t.bands,
            "read": t.read,
            "right": t.right,
            "passed": t.passed,
            "right_passed": t.right_passed,
            "wrong_passed": t.wrong_passed,
            "right_share": round(t.right_share, 4),
            "recall": round(t.recall, 4),
            "ingredient_recall": {
                k: None if v is None else round(v, 4) for k, v in t.ingredient_recall.items()
            },
            "confusions": [
                {"truth": c.truth, "read": c.read, "count": c.count, "passed": c.passed}
                for c in t.confusions
            ],
            "verdict": self.verdict,
            "verdict_line": self.verdict_line,
            "advice": list(self.advice),
            "seconds": round(self.seconds, 2),
            "index_mm": None if self.index_mm is None else round(self.index_mm, 1),
        }


# ------------------------------------------------------------------ loading


def load_checked_deck(path: Path | str) -> Deck:
    """The deck to check, `default` for the built-in one; anything that is not a readable deck
    folder is one BadInputError (a file, a folder without deck.json, a deck.json that is a
    folder or not text), never a traceback."""
    if str(path) == DEFAULT_DECK_NAME:
        return load_deck(None)
    folder = Path(path)
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is a file"
        raise BadInputError(f"{folder} is not a deck folder: it {what}")
    try:
        return load_deck(folder)
    except CompanionError:
        raise
    except (OSError, UnicodeDecodeError, TypeError, ValueError) as exc:
        raise BadInputError(f"{folder / 'deck.json'} cannot be read as a deck: {exc}") from None


def play_namer(deck: Deck) -> tuple[_Namer, str]:
    """The namer the live detector would use for this deck, and a label: the default deck is
    named by its own strip layout and the shipped classifier (its unsure strips by its faces
    too), any other deck by BandNamer."""
    from companion.vision.band_naming import BandNamer
    from companion.vision.detector import namer_for

    namer = namer_for(deck)
    if isinstance(namer, BandNamer):
        tuned = " and its own tuned comparison (deck tune)" if namer.tuned else ""
        return namer, f"matching the deck's faces (BandNamer){tuned}"
    classifier = " + classifier" if namer.classifier else ""
    label = f"default strip layout{classifier}, unsure strips by its faces (BandNamer)"
    return namer, label


# ------------------------------------------------------------------ faces alone


def _band_score(a: np.ndarray, b: np.ndarray, clipped: np.ndarray | None = None) -> float:
    """BandNamer's ingredient score of band `a` against band `b`: structure (normalised
    correlation at the best small shift) minus its colour penalty (none where `a` clipped)."""
    from companion.vision.band_naming import ingredient_score

    p = SHIFT_PX
    padded = cv2.copyMakeBorder(a, p, p, p, p, cv2.BORDER_REPLICATE)
    if clipped is not None:
        mask = clipped.astype(np.uint8)
        clipped = cv2.copyMakeBorder(mask, p, p, p, p, cv2.BORDER_REPLICATE).astype(bool)
    return float(ingredient_score(padded, b, clipped)[0])


def _bgr(rep: np.ndarray) -> np.ndarray:
    """The BGR band an opponent one (`band_naming._opponent`) was made from."""
    lum, rg, by = rep[..., 0], rep[..., 1], rep[..., 2]
    rg_sum = (3 * lum - by) * (2 / 3)  # r + g
    return np.stack([by + rg_sum / 2, (rg_sum - rg) / 2, (rg_sum + rg) / 2], axis=-1)


LIT_SHARE: Final = 0.75
"""An ingredient pair whose margin under the lamp is below this share of its margin in even
light is one the lamp makes alike (minimal-1's pink and pale yellow: 0.116 -> 0.052; ornate-1's
two browns, which no lamp clips: 0.116 -> 0.095)."""


@dataclass(frozen=True)
class IngredientNearness:
    """Two cards of one value and two ingredients, as BandNamer tells the ingredients apart:
    by the ingredients' mean bands (the value's numeral is the same on both)."""

    similarity: np.ndarray
    """(56, 56): 1 minus the smaller margin by which an ingredient's mean band, seen in even
    light or overexposed by BRIGHT, fits its own mean band better than the other's (the worse
    end and way round); -inf for the other pairs."""
    lit: np.ndarray
    """(56, 56) bool: the lamp makes the pair alike (LIT_SHARE)."""


def ingredient_nearness(ing_mean: np.ndarray) -> IngredientNearness:
    """`IngredientNearness` from the namer's mean bands (`ing_mean`: both ends' 7, opponent)."""
    from companion.vision.band_naming import CLIPPED, _opponent

    n_ing = len(INGREDIENTS)
    margins = {k: np.full((n_ing, n_ing), np.inf) for k in (1.0, BRIGHT)}
    for exposure, margin in margins.items():
        for end in range(2):
            means = ing_mean[end * n_ing : (end + 1) * n_ing]
            for i in range(n_ing):
                bgr = _bgr(means[i]) * exposure
                clipped = bgr.max(axis=2) >= CLIPPED
                seen = _opponent(np.minimum(bgr, 255.0))
                own = _band_score(seen, means[i], clipped)
                for j in range(n_ing):
                    if j != i:
                        other = _band_score(seen, means[j], clipped)
                        margin[i, j] = min(margin[i, j], own - other)
    even, lamp = (np.minimum(m, m.T) for m in margins.values())
    sim = np.full((len(CARD_IDS), len(CARD_IDS)), -np.inf)
    lit = np.zeros(sim.shape, bool)
    for i in range(n_ing):
        for j in range(n_ing):
            if i != j:
                idx = (np.arange(N_VAL) + i * N_VAL, np.arange(N_VAL) + j * N_VAL)
                sim[idx] = 1.0 - max(0.0, float(min(even[i, j], lamp[i, j])))
                lit[idx] = lamp[i, j] < LIT_SHARE * even[i, j]
    return IngredientNearness(sim, lit)


def _value_score(a: np.ndarray, b: np.ndarray, box: tuple[int, int, int, int]) -> float:
    """BandNamer's value score of band `a` against band `b`'s numeral area (same ingredient):
    the two compared only where that ingredient's 8 faces differ."""
    from companion.vision.band_naming import VALUE_SEARCH_PX, value_score

    y0, y1, x0, x1 = box
    p = VALUE_SEARCH_PX
    score = value_score(a[max(0, y0 - p) : y1 + p, max(0, x0 - p) : x1 + p], b[y0:y1, x0:x1])
    return 1.0 if score is None else score


def pair_similarities(
    full: np.ndarray, value_box: Sequence[tuple[int, int, int, int]]
) -> np.ndarray:
    """(56, 56) similarity of every pair as BandNamer tells them apart: two ingredients on the
    whole band, two values of one ingredient where its faces differ. The worse of the two ends
    (top band, bottom band turned) counts, since either may be the one that shows."""
    n = len(CARD_IDS)
    sim = np.full((n, n), -np.inf)
    for end in range(2):
        bands = full[end * n : (end + 1) * n]
        for a in range(n):
            for b in range(a + 1, n):
                ia, ib = a // N_VAL, b // N_VAL
                if ia != ib:
                    s = _band_score(bands[a], bands[b])
                else:
                    box = value_box[end * len(INGREDIENTS) + ia]
                    s = max(
                        _value_score(bands[a], bands[b], box),
                        _value_score(bands[b], bands[a], box),
                    )
                sim[a, b] = sim[b, a] = max(sim[a, b], s)
    return sim


def nearest_pairs(
    sim: np.ndarray, n: int = NEAREST, ingredients: IngredientNearness | None = None
) -> tuple[Pair, ...]:
    """The n pairs with the smallest gap, in the namer's doubt margins (a value is decided on
    a few numeral pixels and doubts sooner than an ingredient, so the two are put on one scale
    by the margin each needs). `ingredients`: two ingredients nearer by their mean bands count
    as near as that, listed once for all values."""
    pairs = []
    for a in range(len(CARD_IDS)):
        for b in range(a + 1, len(CARD_IDS)):
            same = a // N_VAL == b // N_VAL
            doubt = VALUE_DOUBT if same else INGREDIENT_DOUBT
            s = float(sim[a, b])
            by_ing = -np.inf if ingredients is None else float(ingredients.similarity[a, b])
            whole = by_ing > s
            s = max(s, by_ing)
            gap = max(0.0, 1.0 - s) / doubt
            pairs.append((gap, a, b, s, same, whole))
    pairs.sort()
    out: list[Pair] = []
    listed: set[tuple[int, int]] = set()
    for gap, a, b, s, same, whole in pairs:
        if len(out) == n:
            break
        if whole:
            if (a // N_VAL, b // N_VAL) in listed:
                continue
            listed.add((a // N_VAL, b // N_VAL))
        if s >= IDENTICAL:
            reason = "numerals identical" if same else "bands identical"
        elif same:
            reason = "numerals alike"
        elif whole and ingredients is not None and ingredients.lit[a, b]:
            reason = "colours alike at every value, more under a bright lamp (icons decide)"
        elif whole:
            reason = "colours alike at every value"
        else:
            reason = "colours alike"
        out.append(Pair(CARD_IDS[a], CARD_IDS[b], s, gap, reason))
    return tuple(out)


def confusable_pairs(deck: Deck, namer: object | None = None, n: int = NEAREST) -> tuple[Pair, ...]:
    """The deck's n most confusable pairs from its faces alone (about a second); `namer`, a
    BandNamer of the deck already built, saves building its references again."""
    from companion.vision.band_naming import BandNamer

    band_namer = namer if isinstance(namer, BandNamer) else BandNamer(deck)
    refs = band_namer._refs
    sim = pair_similarities(refs.full, refs.value_box)
    return nearest_pairs(sim, n, ingredient_nearness(refs.ing_mean))


# ------------------------------------------------------------------ rendered scenes


def bands_to_check(truth: dict[str, Any]) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(card, visible box on the table in mm) of every face-up band the finder is expected to
    box: at least MIN_VISIBLE visible and at most MAX_HAND under a hand."""
    out = []
    for card in truth["cards"]:
        if not card.get("face_up", True):
            continue
        for s in card["strips"]:
            box = s.get("visible_bbox_mm")
            if box and s["visible_fraction"] >= MIN_VISIBLE and s["hand_fraction"] <= MAX_HAND:
                out.append((card["card"], (box[0], box[1], box[2], box[3])))
    return out


def tally(
    readings: Iterable[tuple[str, Naming | None]], gate: float = GATE, worst: int = NEAREST
) -> Tally:
    """Count (truth, naming) pairs: right, passing the gate, wrong and passing (the dangerous
    ones), recall per ingredient and the commonest confusions."""
    bands = read = right = passed = right_passed = wrong_passed = 0
    per_ing: Counter[str] = Counter()
    per_ing_ok: Counter[str] = Counter()
    wrong: Counter[tuple[str, str]] = Counter()
    wrong_pass: Counter[tuple[str, str]] = Counter()
    for truth, naming in readings:
        bands += 1
        ing = _ing(truth)
        per_ing[ing] += 1
        if naming is None:
            continue
        read += 1
        ok = naming.card == truth
        gated = naming.confidence >= gate
        right += ok
        passed += gated
        if ok and gated:
            right_passed += 1
            per_ing_ok[ing] += 1
        if not ok:
            wrong[(truth, naming.card)] += 1
            if gated:
                wrong_passed += 1
                wrong_pass[(truth, naming.card)] += 1
    ranked = sorted(wrong.items(), key=lambda kv: (-wrong_pass[kv[0]], -kv[1], kv[0]))
    return Tally(
        bands=bands,
        read=read,
        right=right,
        passed=passed,
        right_passed=right_passed,
        wrong_passed=wrong_passed,
        ingredient_recall={
            k: (per_ing_ok[k] / per_ing[k] if per_ing[k] else None) for k in INGREDIENTS
        },
        confusions=tuple(Confusion(t, r, c, wrong_pass[(t, r)]) for (t, r), c in ranked[:worst]),
    )


def render_readings(
    deck: Deck,
    namer: _Namer,
    frames: int,
    seed: int = DEFAULT_SEED,
    width: int = FRAME_WIDTH,
    progress: bool = False,
) -> tuple[list[tuple[str, Naming | None]], int]:
    """Name every checked band of `frames` held-out table scenes of the deck, each from its
    ground-truth box and the markers' calibration (what the pipeline gets after the finder),
    all of them given as the frame's boxes, so a card seen whole is checked whole as in play.
    Returns the (truth, naming) pairs and how many frames calibrated."""
    from tqdm import tqdm

    from companion.synth.frame import FrameSpec, render_frame
    from companion.vision.calibration import calibrate

    spec = FrameSpec(split="test", width=width)
    out: list[tuple[str, Naming | None]] = []
    calibrated = 0
    for i in tqdm(range(frames), desc="render", unit="frame", disable=not progress):
        frame = render_frame(deck, seed, i, spec)
        cal = calibrate(frame.image)
        if cal is None:
            continue
        calibrated += 1
        bands = bands_to_check(frame.truth)
        boxes = [box for _, box in bands]
        names = namer.name_boxes(frame.image, cal, boxes, found=boxes)
        out.extend((card, n) for (card, _), n in zip(bands, names, strict=True))
    return out, calibrated


# ------------------------------------------------------------------ verdict


def _ingredients_confused(t: Tally, pairs: Sequence[Pair]) -> list[str]:
    """Ingredients mistaken for another one, in the scenes or (identical) on the faces."""
    names: list[str] = []
    cross = [(c.truth, c.read) for c in t.confusions if _ing(c.truth) != _ing(c.read)]
    cross += [(p.a, p.b) for p in pairs if _ing(p.a) != _ing(p.b) and p.similarity >= IDENTICAL]
    for a, b in cross:
        for ing in (_ing(a), _ing(b)):
            if ing not in names:
                names.append(ing)
    return names


def advise(
    t: Tally, pairs: Sequence[Pair], enrolled: bool, untuned: Path | None = None
) -> tuple[str, ...]:
    """What would make the deck easier to read, most likely cause first. `untuned`: the
    folder of an enrolled deck that has no tuned comparison of its own yet."""
    out = []
    if untuned is not None:
        out.append(f"tune it to your cards: companion deck tune {untuned} (5-8 minutes)")
    confused = _ingredients_confused(t, pairs)
    if confused and enrolled:
        out.append(f"re-enrol {' and '.join(confused)}: their bands look alike")
    if enrolled:
        out.append("enrol again in better light with a sharper photo (camera still, in focus)")
    if any(_ing(c.truth) == _ing(c.read) for c in t.confusions):
        out.append("lay cascades with 16 mm steps so the numerals show")
    out.append("use the Pi camera at full resolution (2304 x 1296)")
    return tuple(out)


def judge(t: Tally, advice: Sequence[str]) -> tuple[str, str]:
    """(verdict, line): `ready` at READY_SHARE right above the gate and nothing wrong passing
    it, `usable` at USABLE_SHARE, else `hard` with what to do."""
    if t.bands == 0:
        return "hard", f"{VERDICTS['hard']}: no band could be checked (no scene calibrated)"
    figures = f"{t.recall:.1%} of {t.bands} bands read right above the gate"
    danger = "none wrong above it" if t.wrong_passed == 0 else f"{t.wrong_passed} wrong above it"
    if t.recall >= READY_SHARE and t.wrong_passed == 0:
        return "ready", f"{VERDICTS['ready']} ({figures}, {danger})"
    if t.recall >= USABLE_SHARE:
        return "usable", f"{VERDICTS['usable']} ({figures}, {danger})"
    return "hard", f"{VERDICTS['hard']}: {figures}, {danger}; " + "; ".join(advice)


def check_deck(
    deck: Deck,
    frames: int = DEFAULT_FRAMES,
    seed: int = DEFAULT_SEED,
    width: int = FRAME_WIDTH,
    progress: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> DeckCheck:
    """Both checks and the verdict for one deck."""
    t0 = clock()
    namer, label = play_namer(deck)
    pairs = confusable_pairs(deck, namer)
    readings, calibrated = render_readings(deck, namer, frames, seed, width, progress)
    t = tally(readings)
    from companion.vision.detector import is_default

    enrolled = not is_default(deck)
    untuned = deck.folder if enrolled and not getattr(namer, "tuned", True) else None
    advice = advise(t, pairs, enrolled, untuned)
    verdict, line = judge(t, advice)
    return DeckCheck(
        deck=deck.name,
        namer=label,
        nearest_pairs=pairs,
        frames=frames,
        frames_calibrated=calibrated,
        seed=seed,
        width=width,
        gate=GATE,
        tally=t,
        verdict=verdict,
        verdict_line=line,
        advice=advice if verdict != "ready" else (),
        seconds=clock() - t0,
        index_mm=getattr(namer, "index_mm", None),
    )


def format_report(c: DeckCheck) -> str:
    """The plain-text report `companion deck check` prints."""
    t = c.tally
    lines = [f"deck {c.deck}: named by {c.namer}"]
    if c.index_mm is not None:
        lines.append(
            f"values compared over the top {c.index_mm:.0f} mm of each card: lay cascades with "
            f"steps of at least {c.index_mm:.0f} mm (the kit's 16 mm is right)"
        )
    lines.append("nearest pairs on the faces alone (separation 1 = where the namer doubts):")
    lines += [f"  {p}" for p in c.nearest_pairs]
    lines.append(
        f"rendered check: {c.frames_calibrated} of {c.frames} table scenes at {c.width} px, "
        f"{t.bands} bands at least half visible"
    )
    if t.bands:
        lines.append(
            f"  read {t.read}, right {t.right} ({t.right_share:.1%}), passing the gate "
            f"{t.passed}, right above the gate {t.right_passed} ({t.recall:.1%})"
        )
        lines.append(f"  wrong readings passing the gate: {t.wrong_passed}")
        lines.append(
            "  right above the gate per ingredient: "
            + ", ".join(
                f"{k} {'-' if v is None else f'{v:.0%}'}" for k, v in t.ingredient_recall.items()
            )
        )
        if t.confusions:
            lines.append(
                "  worst confusions: "
                + ", ".join(
                    f"{x.truth} -> {x.read} x{x.count}"
                    + (f" ({x.passed} above the gate)" if x.passed else "")
                    for x in t.confusions
                )
            )
    lines.append(f"verdict: {c.verdict_line}")
    if c.verdict == "usable":
        lines += [f"  to do: {a}" for a in c.advice]
    lines.append(f"({c.seconds:.1f} s)")
    return "\n".join(lines)
