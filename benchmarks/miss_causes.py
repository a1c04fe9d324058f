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

    .venv/bin/python benchmarks/foreign_decks.py --backend ncnn --tune 450 --tune-scenes 24
    .venv/bin/python benchmarks/miss_causes.py ornate-1 foil-1 minimal-1 tarot-1
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
from companion.commands.detect import still_calibration  # noqa: E402
from companion.deck.deckdir import load_deck  # noqa: E402
from companion.vision.backends import MODELS_DIR, load_model  # noqa: E402
from companion.vision.detector import MIN_CONFIDENCE, CardDetector, finder_name  # noqa: E402

CAUSES = ("not boxed", "namer rejected", "right, not announced", "read as another")
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


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _on(centre: tuple[float, float], box: Sequence[float]) -> bool:
    x, y = centre
    m = ON_BAND_MM
    return box[0] - m <= x <= box[2] + m and box[1] - m <= y <= box[3] + m


def causes(
    deck_dir: Path, frames: Path, backend: str, limit: int | None = None
) -> tuple[Counter, Counter, int]:
    """(cause -> misses, (slice, cause) -> misses, cards that must be read)."""
    deck = load_deck(deck_dir, lazy=True)
    model = load_model(backend, MODELS_DIR, name=finder_name(deck))
    detector = CardDetector(model, deck, 0.0)  # type: ignore[arg-type]
    namer = _NamerSpy(detector.namer)
    detector.namer = namer  # type: ignore[assignment]
    total: Counter = Counter()
    per_slice: Counter = Counter()
    must_all = 0
    jpgs = [j for part in sorted(frames.iterdir()) for j in sorted(part.glob("*.jpg"))[:limit]]
    for jpg in tqdm(jpgs, desc=deck.name, unit="frame"):
        truth = json.loads(jpg.with_suffix(".json").read_text())
        image = cv2.imread(str(jpg))
        detector.forget()
        namer.fresh, namer.boxes, namer.names = True, [], []
        cal, _ = still_calibration(image, None)
        reading = detector.detect(image, cal)
        must, _ = expected_cards(truth)
        must_all += len(must)
        announced = {c.card for c in reading.cards if c.confidence >= MIN_CONFIDENCE}
        slice_ = jpg.parent.name.split("-")[0]
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
            elif any(_iou(fb, b) >= BOXED_IOU for fb in namer.boxes for b in bands):
                cause = CAUSES[1]
            else:
                cause = CAUSES[0]
            total[cause] += 1
            per_slice[(slice_, cause)] += 1
    return total, per_slice, must_all


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("decks", nargs="+", help="deck names under runs/foreign-decks/decks")
    ap.add_argument("--backend", default="ncnn", choices=("ncnn", "onnx", "torch"))
    ap.add_argument("--frames", type=int, help="the first N frames of each slice (all)")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="cache")
    args = ap.parse_args(argv)
    rows = []
    for name in args.decks:
        folder, frames = args.out / "decks" / name, args.out / "frames" / name
        if not (folder / "deck.json").exists() or not frames.is_dir():
            raise SystemExit(f"error: no enrolled deck or frames for {name} under {args.out}")
        rows.append((name, *causes(folder, frames, args.backend, args.frames)))
    print(f"\nmisses at the gate {MIN_CONFIDENCE} by cause (plain / hard)")
    print(f"{'deck':<12}" + "".join(f"{c:>24}" for c in CAUSES))
    for name, _, per_slice, _ in rows:
        cells = [f"{per_slice[('plain', c)]} / {per_slice[('hard', c)]}" for c in CAUSES]
        print(f"{name:<12}" + "".join(f"{c:>24}" for c in cells))
    every: Counter = sum((r[2] for r in rows), Counter())
    cells = [f"{every[('plain', c)]} / {every[('hard', c)]}" for c in CAUSES]
    print(f"{'all':<12}" + "".join(f"{c:>24}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
