"""Naming alone: every ground-truth index strip of held-out frames, named from its true box.

Separates naming from localisation: the strip boxes come from the renderer's ground truth
(visible part, on the table plane), the calibration from the markers in the frame, exactly as
the pipeline gets them. Prints the accuracy, how many readings pass the detector's confidence
gate, the accuracy of those, and the worst confusions.

    .venv/bin/python benchmarks/naming_eval.py --data DIR   # a `render dataset --keep-frames` dir
    .venv/bin/python benchmarks/naming_eval.py --frames 40 --width 1280   # renders one
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, help="rendered test folder with frames/")
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--width", type=int, default=None, help="camera width (default: mixed)")
    ap.add_argument(
        "--gate", type=float, default=None, help="confidence gate (default: detector's)"
    )
    ap.add_argument("--models", type=Path, default=ROOT / "models", help="strip classifier folder")
    ap.add_argument(
        "--no-classifier", action="store_true", help="name strips by matching the deck alone"
    )
    args = ap.parse_args()

    from tqdm import tqdm

    from companion.deck.deckdir import load_deck
    from companion.vision.calibration import calibrate
    from companion.vision.detector import MIN_CONFIDENCE
    from companion.vision.naming import StripNamer
    from companion.vision.strip_classifier import load_classifier

    gate = MIN_CONFIDENCE if args.gate is None else args.gate
    data = args.data or ROOT / "runs" / f"naming-{args.frames}-{args.seed}-{args.width}"
    if not (data / "frames").is_dir():
        from companion.synth.dataset import DatasetSpec, write_dataset

        write_dataset(
            data,
            DatasetSpec(
                frames=args.frames,
                seed=args.seed,
                split="test",
                keep_frames=True,
                val_fraction=0.0,
                width=args.width,
            ),
        )
    classifier = None if args.no_classifier else load_classifier(args.models)
    namer = StripNamer(load_deck(None), classifier)
    print("naming:", "matching only" if classifier is None else f"matching + {classifier.path}")
    n = right = passed = passed_right = 0
    confusions: Counter[tuple[str, str]] = Counter()
    for path in tqdm(sorted((data / "frames").glob("*.jpg")), desc="name", unit="frame"):
        truth = json.loads(path.with_suffix(".json").read_text())
        image = cv2.imread(str(path))
        cal = calibrate(image)
        if cal is None:
            continue
        want, boxes = [], []
        for card in truth["cards"]:
            if not card.get("face_up", True):
                continue
            for s in card["strips"]:
                if s["visible_fraction"] >= 0.5 and s["hand_fraction"] <= 0.5:
                    want.append(card["card"])
                    boxes.append(tuple(s["visible_bbox_mm"]))
        for cid, naming in zip(want, namer.name_boxes(image, cal, boxes), strict=True):
            n += 1
            ok = naming is not None and naming.card == cid
            right += ok
            if naming is not None and naming.confidence >= gate:
                passed += 1
                passed_right += ok
            if not ok:
                confusions[(cid, naming.card if naming else "-")] += 1
    print(f"strips named: {n}")
    print(f"right: {right / max(n, 1):.1%}")
    print(f"passing the gate ({gate}): {passed / max(n, 1):.1%} of strips")
    print(f"right among those passing: {passed_right / max(passed, 1):.1%}")
    print(f"right and passing (recall): {passed_right / max(n, 1):.1%}")
    print(
        "worst confusions:", ", ".join(f"{a}->{b} x{c}" for (a, b), c in confusions.most_common(8))
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
