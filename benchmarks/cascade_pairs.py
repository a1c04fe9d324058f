"""Readings that lie within the index of another band of their cascade (figures, no change made).

In a cascade each band that shows is the top of a card, laid at least the tightest step (the
top band, `TOP_MM`) below the one before it. A reading lying closer than that below a band
lying the same way up is either a tight cascade (both right, the upper band partly covered)
or a box straddling two cards (one's colour, the other's numeral). `card_ends.drop_inside_band`
drops the lower one when the upper fits its card INSIDE_BAND_FIT better and is at least as
sure. This reads the cached frames of enrolled decks (as `benchmarks/foreign_decks.py` cached
them) without that rule and lists every pair of announced readings within the deck's compared
index depth (`index_rows`, 12-16 mm) with both fits and whether each reading lies on its card,
and counts what the rule drops of each pair (judged by `drop_inside_band` itself).

    .venv/bin/python benchmarks/cascade_pairs.py --out runs/outsider segment-1 kanji-2
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import companion.vision.detector as detector_module  # noqa: E402
from benchmarks.miss_causes import _on_its_card  # noqa: E402
from companion.commands.detect import still_calibration  # noqa: E402
from companion.deck.deckdir import load_deck  # noqa: E402
from companion.vision.backends import MODELS_DIR, load_model  # noqa: E402
from companion.vision.band_embedding import TOP_MM  # noqa: E402
from companion.vision.card_ends import (  # noqa: E402
    TURNED_PARALLEL_DEG,
    _across_card,
    _local,
    drop_inside_band,
)
from companion.vision.detector import CardDetector, finder_name  # noqa: E402


def _pairs(cards: Sequence[Any], index_mm: float) -> list[tuple[Any, Any, float]]:
    """(upper, lower, mm apart) of announced readings the same way up, the lower within the
    upper's index."""
    out = []
    for high in cards:
        for low in cards:
            h, lo = high.naming, low.naming
            if low is high or h.flipped != lo.flipped:
                continue
            if abs(h.angle_deg - lo.angle_deg) > TURNED_PARALLEL_DEG:
                continue
            across, along = _local(h, lo.center_mm)
            if 0.0 < along < index_mm and _across_card(across):
                out.append((high, low, along))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("decks", nargs="+", help="deck names under OUT/decks")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="cache")
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"), default="ncnn")
    args = ap.parse_args(argv)
    # read as without the rule: the pairs it judges must all show
    detector_module.drop_inside_band = lambda namings, *_a, **_k: list(namings)
    dropped_right = dropped_wrong = kept = 0
    for name in args.decks:
        deck = load_deck(args.out / "decks" / name, lazy=True)
        model = load_model(args.backend, MODELS_DIR, name=finder_name(deck))
        det = CardDetector(model, deck)
        index_mm = float(getattr(det.namer, "index_mm", 12.0))
        frames = sorted((args.out / "frames" / name).glob("*/*.jpg"))
        for jpg in tqdm(frames, desc=name, unit="frame", leave=False):
            truth = json.loads(jpg.with_suffix(".json").read_text())
            image = cv2.imread(str(jpg))
            cal, _ = still_calibration(image, None)
            det.forget()
            cards = det.detect(image, cal).cards
            for high, low, along in _pairs(cards, index_mm):
                h, lo = high.naming, low.naming
                # the rule itself, on the two as the detector gave them to it
                found = [high.detector_confidence, low.detector_confidence]
                drop = drop_inside_band([h, lo], TOP_MM, found)[1] is None
                right = _on_its_card(low, truth)
                if drop:
                    dropped_right += right
                    dropped_wrong += not right
                else:
                    kept += 1
                print(
                    f"{name} {jpg.parent.name[:5]} {jpg.stem}: {high.card} fit {h.score:.2f} "
                    f"({'right' if _on_its_card(high, truth) else 'WRONG'}) over "
                    f"{low.card} fit {lo.score:.2f} ({'right' if right else 'WRONG'}) "
                    f"{along:.1f} mm below, index {index_mm:.1f} mm: "
                    f"{'dropped' if drop else 'kept'}"
                )
    print(
        f"pairs within the index: the rule drops {dropped_right + dropped_wrong} lower readings "
        f"({dropped_wrong} not on their card, {dropped_right} right), keeps {kept} pairs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
