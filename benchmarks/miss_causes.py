"""Why `detect --deck` missed the cards it missed (figures, no change made).

For decks that `benchmarks/foreign_decks.py` enrolled (their folders and cached frames under
runs/foreign-decks/), every frame is read as `companion detect --deck` reads it, with the
reading gate at 0 so that what the gate hides shows. Each card that must be read and was not
read at the gate is put down to one cause:

- `not boxed`: no finder box covers a band of it that shows (IoU >= 0.3 on the plane);
- `namer rejected`: boxed, but the namer found no card of the deck there (or a rule of the
  detector dropped the band unread);
- `right, not announced`: read as itself, but too unsure to be announced (or dropped);
- `read as another`: the reading on it, or the namer's reading of its box that the detector
  then dropped (most often as a second reading of a card read surer elsewhere), names another
  card.

Each miss is also told by whether its index shows as a person at the table sees it
(`index_shown.py`, as `foreign_decks.py`'s "idx shows" recall), and a misreading by whether it
was announced (a false reading at the gate) or read too unsure to be.

    .venv/bin/python benchmarks/foreign_decks.py --backend ncnn --tune 450 --tune-scenes 24
    .venv/bin/python benchmarks/miss_causes.py ornate-1 foil-1 minimal-1 tarot-1
    .venv/bin/python benchmarks/miss_causes.py --list ornate-1   # and every miss, one a line
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eval_detector import expected_cards  # noqa: E402
from benchmarks.foreign_decks import _bbox, _iou, load_design  # noqa: E402
from benchmarks.index_shown import cards_shown, index_masks  # noqa: E402
from companion.cards import parse_card  # noqa: E402
from companion.commands.detect import still_calibration  # noqa: E402
from companion.deck.deckdir import load_deck  # noqa: E402
from companion.vision.backends import MODELS_DIR, load_model  # noqa: E402
from companion.vision.detector import MIN_CONFIDENCE, CardDetector, finder_name  # noqa: E402

CAUSES = ("not boxed", "namer rejected", "right, not announced", "read as another")
ANNOUNCED = "of them, announced"
RUNNER_UP = "of them, runner-up right"
HIDDEN = "of all, index hidden"
MUST = "must read"
ANNOUNCED_ALL = "announced readings"
ELSEWHERE = "announced, not on a band of the card named"
MUST_HIDDEN = "must read, index hidden"
COLUMNS = (*CAUSES, ANNOUNCED, RUNNER_UP, HIDDEN)
BOXED_IOU = 0.3
ON_BAND_MM = 4.0
"""A reading's centre within this of a band's box lies on that band."""


class _NamerSpy:
    """The namer, keeping the boxes and namings of its first call in a frame: every band the
    finder boxed (the detector forgets the last frame, so all are named), in mm; a later call
    names turned cards."""

    def __init__(self, namer: Any) -> None:
        self.namer = namer
        self.boxes: list[Sequence[float]] = []
        self.names: list[Any] = []
        self.fresh = True

    def name_boxes(self, image: Any, cal: Any, boxes: Any, **kw: Any) -> Any:
        out = self.namer.name_boxes(image, cal, boxes, **kw)
        if self.fresh:
            self.boxes, self.names, self.fresh = list(boxes), list(out), False
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.namer, name)


def _on(centre: tuple[float, float], box: Sequence[float]) -> bool:
    x, y = centre
    m = ON_BAND_MM
    return box[0] - m <= x <= box[2] + m and box[1] - m <= y <= box[3] + m


def _on_its_card(reading: Any, truth: dict) -> bool:
    """Whether a reading lies on a band of the card it names (on the whole band, hidden part
    included: a band half hidden is read at its whole band's centre)."""
    for c in truth["cards"]:
        if c["card"] == reading.card and reading.center_mm:
            return any(
                s["visible_fraction"] > 0 and _on(reading.center_mm, _bbox(s["polygon_mm"]))
                for s in c["strips"]
            )
    return False


def causes(
    deck_dir: Path, frames: Path, backend: str, limit: int | None = None, listing: bool = False
) -> tuple[Counter, Counter]:
    """((slice, column) -> count: misses by cause and the other COLUMNS, cards to read, ...;
    (card, read as) -> misreadings). `listing`: also print each miss (`_miss_line`)."""
    deck = load_deck(deck_dir, lazy=True)
    masks = index_masks(load_design(deck_dir.name).faces)
    model = load_model(backend, MODELS_DIR, name=finder_name(deck))
    detector = CardDetector(model, deck, 0.0)  # type: ignore[arg-type]
    namer = _NamerSpy(detector.namer)
    detector.namer = namer  # type: ignore[assignment]
    per_slice: Counter = Counter()
    misread: Counter = Counter()
    jpgs = [j for part in sorted(frames.iterdir()) for j in sorted(part.glob("*.jpg"))[:limit]]
    for jpg in tqdm(jpgs, desc=deck.name, unit="frame"):
        truth = json.loads(jpg.with_suffix(".json").read_text())
        image = cv2.imread(str(jpg))
        detector.forget()
        namer.fresh, namer.boxes, namer.names = True, [], []
        slice_ = jpg.parent.name.split("-")[0]
        cal, _ = still_calibration(image, None)
        reading = detector.detect(image, cal)
        must, _ = expected_cards(truth)
        per_slice[(slice_, MUST)] += len(must)
        shown = cards_shown(truth, masks)
        per_slice[(slice_, MUST_HIDDEN)] += len(set(must) - shown)
        announced = {c.card for c in reading.cards if c.confidence >= MIN_CONFIDENCE}
        for c in reading.cards:
            if c.confidence >= MIN_CONFIDENCE:
                per_slice[(slice_, ANNOUNCED_ALL)] += 1
                per_slice[(slice_, ELSEWHERE)] += not _on_its_card(c, truth)
        for card in sorted(set(must) - announced):
            truth_card = next(c for c in truth["cards"] if c["card"] == card)
            bands = [
                s["visible_bbox_mm"] for s in truth_card["strips"] if s["visible_fraction"] > 0
            ]
            on = [
                c for c in reading.cards if c.center_mm and any(_on(c.center_mm, b) for b in bands)
            ]
            named = [
                n
                for fb, n in zip(namer.boxes, namer.names, strict=True)
                if n is not None and any(_iou(fb, b) >= BOXED_IOU for b in bands)
            ]
            if any(c.card == card for c in on) or any(n.card == card for n in named):
                cause = CAUSES[2]
            elif on or named:
                cause = CAUSES[3]
                wrong = on[0].naming if on else named[0]
                misread[(card, wrong.card)] += 1
                per_slice[(slice_, ANNOUNCED)] += bool(on) and on[0].confidence >= MIN_CONFIDENCE
                per_slice[(slice_, RUNNER_UP)] += wrong.runner_up == card
            elif any(_iou(fb, b) >= BOXED_IOU for fb in namer.boxes for b in bands):
                cause = CAUSES[1]
            else:
                cause = CAUSES[0]
            per_slice[(slice_, cause)] += 1
            per_slice[(slice_, HIDDEN)] += card not in shown
            if listing:
                where = f"{deck.name} {slice_} {jpg.stem}"
                tqdm.write(_miss_line(where, card, cause, card in shown, on, named))
    return per_slice, misread


def _miss_line(
    where: str, card: str, cause: str, shown: bool, on: Sequence[Any], named: Sequence[Any]
) -> str:
    """One miss: where, the card, its cause, whether its index shows, the announced readings on
    its bands and the namer's readings of the finder's boxes on them (card, confidence)."""
    read = ", ".join(f"{c.card} {c.confidence:.2f}" for c in on) or "-"
    boxed = ", ".join(f"{n.card} {n.confidence:.2f}" for n in named[:3]) or "-"
    index = "index shown" if shown else "index hidden"
    return f"miss {where} {card}: {cause}; {index}; read there: {read}; named there: {boxed}"


def _wrong_part(pairs: Counter) -> str:
    """How many misreadings got the ingredient wrong, the value wrong, or both."""
    parts: Counter = Counter()
    for (card, read), n in pairs.items():
        a, b = parse_card(card), parse_card(read)
        same_value, same_ingredient = a.value == b.value, a.ingredient == b.ingredient
        parts["ingredient" if same_value else "value" if same_ingredient else "both"] += n
    return ", ".join(f"{parts[k]} {k}" for k in ("ingredient", "value", "both"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("decks", nargs="+", help="deck names under runs/foreign-decks/decks")
    ap.add_argument("--backend", default="ncnn", choices=("ncnn", "onnx", "torch"))
    ap.add_argument("--frames", type=int, help="the first N frames of each slice (all)")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="cache")
    ap.add_argument(
        "--list", action="store_true", help="print every miss: cause, index, what was read there"
    )
    args = ap.parse_args(argv)
    rows = []
    for name in args.decks:
        folder, frames = args.out / "decks" / name, args.out / "frames" / name
        if not (folder / "deck.json").exists() or not frames.is_dir():
            raise SystemExit(f"error: no enrolled deck or frames for {name} under {args.out}")
        rows.append((name, *causes(folder, frames, args.backend, args.frames, args.list)))
    print(f"\nmisses at the gate {MIN_CONFIDENCE} by cause (plain / hard)")
    print(f"{'deck':<12}" + "".join(f"{c:>26}" for c in COLUMNS))
    for name, per_slice, _ in rows:
        cells = [f"{per_slice[('plain', c)]} / {per_slice[('hard', c)]}" for c in COLUMNS]
        print(f"{name:<12}" + "".join(f"{c:>26}" for c in cells))
    every: Counter = sum((r[1] for r in rows), Counter())
    cells = [f"{every[('plain', c)]} / {every[('hard', c)]}" for c in COLUMNS]
    print(f"{'all':<12}" + "".join(f"{c:>26}" for c in cells))
    print("\nrecall of every card to read, and of those whose index shows")
    for slice_ in ("plain", "hard"):
        must, hidden = every[(slice_, MUST)], every[(slice_, MUST_HIDDEN)]
        missed = sum(every[(slice_, c)] for c in CAUSES)
        missed_shown = missed - every[(slice_, HIDDEN)]
        print(
            f"{slice_:<6} {must} cards, {missed} missed (recall {1 - missed / max(1, must):.4f});"
            f" index shown: {must - hidden} cards, {missed_shown} missed"
            f" (recall {1 - missed_shown / max(1, must - hidden):.4f})"
        )
    print(
        "\nannounced readings not on a band of the card they name (a false reading, or a card"
        " read at another's place; scored by id alone, as foreign_decks.py does, the second"
        " counts as right when the card named is in view elsewhere)"
    )
    for slice_ in ("plain", "hard"):
        n, off = every[(slice_, ANNOUNCED_ALL)], every[(slice_, ELSEWHERE)]
        print(f"{slice_:<6} {off} of {n} (precision by place {1 - off / max(1, n):.4f})")
    print("\nread as another: which part was wrong, and the most frequent misreadings")
    for name, _, pairs in rows:
        top = ", ".join(f"{c} as {r} x{n}" for (c, r), n in pairs.most_common(6))
        print(f"{name:<12}{_wrong_part(pairs)}: {top}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
