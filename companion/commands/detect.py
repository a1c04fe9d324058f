"""`companion detect IMAGE... --json`: the cards in still images (PRODUCT.md contract)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

NAME = "detect"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="name every card in images",
        description="Find and name every card in each image. With --json: one JSON object per "
        'line per image: {"image", "cards": [{"card", "confidence", "box", "region"}], '
        '"duplicates"}. An unreadable image is reported on stderr and the others go on (exit 2).',
    )
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.add_argument("--backend", choices=("ncnn", "onnx", "torch"), help="default: best available")
    p.add_argument("--deck", type=Path, help="deck folder (enrolled deck); default deck if omitted")
    p.add_argument("--calibration", type=Path, help="manual calibration JSON (when no markers)")
    p.add_argument("--min-confidence", type=float, default=None, help="drop weaker readings")
    p.add_argument(
        "--models",
        type=Path,
        default=None,
        help="folder holding the strip finders (strips.* for the default deck, bands.* for "
        "others); default: the shipped models/",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import cv2

    from companion.deck.deckdir import load_deck
    from companion.vision.backends import MODELS_DIR, load_model
    from companion.vision.calibration import load_calibration
    from companion.vision.detector import MIN_CONFIDENCE, CardDetector, finder_name

    cal = load_calibration(args.calibration) if args.calibration else None
    deck = load_deck(args.deck)
    detector = CardDetector(
        load_model(args.backend, args.models or MODELS_DIR, name=finder_name(deck)),
        deck,
        MIN_CONFIDENCE if args.min_confidence is None else args.min_confidence,
    )
    failed = 0
    for path in args.images:
        image = cv2.imread(str(path), cv2.IMREAD_COLOR) if path.is_file() else None
        if image is None:
            why = "not found" if not path.exists() else "not a readable image"
            print(f"companion detect: error: {path}: {why}", file=sys.stderr)
            failed += 1
            continue
        reading = detector.detect(image, cal)
        if not reading.calibrated:
            print(
                f"companion detect: warning: {path}: no table markers in view, so regions are "
                "unknown and card sizes are guessed from the kit's camera (700 mm above the "
                "table); give --calibration for a photo taken otherwise",
                file=sys.stderr,
            )
        cards = [
            {
                "card": r.card,
                "confidence": round(r.confidence, 3),
                "box": list(r.box),
                "region": r.region,
            }
            for r in reading.cards
        ]
        dups = [
            {"card": kept.card, "kept": list(kept.box), "dropped": list(drop.box)}
            for kept, drop in reading.duplicates
        ]
        if args.json:
            out = {"image": str(path), "cards": cards}
            if dups:
                out["duplicates"] = dups
            print(json.dumps(out), flush=True)
        else:
            where = "markers found" if reading.calibrated else "no markers: regions unknown"
            print(f"{path}: {len(cards)} cards ({where})")
            for c in cards:
                print(
                    f"  {c['card']:<12} {c['confidence']:.2f}  {c['region'] or '-':<7} {c['box']}"
                )
            for d in dups:
                print(f"  duplicate {d['card']}: kept {d['kept']}, dropped {d['dropped']}")
    return 2 if failed else 0
