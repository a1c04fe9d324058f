"""`companion detect IMAGE... --json`: the cards in still images (PRODUCT.md contract)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from companion.inputs import real

if TYPE_CHECKING:
    import numpy as np

    from companion.vision.calibration import TableCalibration

NAME = "detect"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="name every card in images",
        description="Find and name every card in each image. With --json: one JSON object per "
        'line per image: {"image", "cards": [{"card", "confidence", "box", "region"}], '
        '"duplicates"}. An unreadable image is reported on stderr and the others go on (exit 2). '
        "Images past 50 megapixels (or 16384 px a side) and damaged ones (a truncated JPEG) "
        "are refused before decoding.",
    )
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    p.add_argument("--backend", choices=("ncnn", "onnx", "torch"), help="default: best available")
    p.add_argument("--deck", type=Path, help="deck folder (enrolled deck); default deck if omitted")
    p.add_argument("--calibration", type=Path, help="manual calibration JSON (when no markers)")
    p.add_argument(
        "--min-confidence", type=real(0, 1), default=None, help="drop weaker readings (0..1)"
    )
    p.add_argument(
        "--models",
        type=Path,
        default=None,
        help="folder holding the strip finders (strips.* for the default deck, bands.* for "
        "others); default: the shipped models/",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion.deck.deckdir import load_deck
    from companion.errors import CompanionError
    from companion.images import probe_image, read_image
    from companion.vision.backends import MODELS_DIR, load_model
    from companion.vision.calibration import load_calibration
    from companion.vision.detector import MIN_CONFIDENCE, CardDetector, finder_name

    failed = 0

    def refuse(exc: CompanionError) -> None:
        nonlocal failed
        print(f"companion detect: error: {exc}", file=sys.stderr, flush=True)
        failed += 1

    images: list[Path] = []
    for path in args.images:  # header checks first: no model is loaded for nothing
        try:
            probe_image(path)
            images.append(path)
        except CompanionError as exc:
            refuse(exc)
    if not images:
        return 2
    cal = load_calibration(args.calibration) if args.calibration else None
    # None: the default deck's strips only; an enrolled deck's faces are read once, by the namer
    deck = load_deck(args.deck, lazy=True) if args.deck else None
    detector = CardDetector(
        load_model(args.backend, args.models or MODELS_DIR, name=finder_name(deck)),
        deck,
        MIN_CONFIDENCE if args.min_confidence is None else args.min_confidence,
    )
    for path in images:
        try:
            image = read_image(path)
        except CompanionError as exc:
            refuse(exc)
            continue
        use, note = still_calibration(image, cal)
        if note:
            print(f"companion detect: {note.format(path=path)}", file=sys.stderr)
        reading = detector.detect(image, use)
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


SCALE_FROM_CARDS = (
    "note: {path}: no table markers in view: the table's scale was taken from the whole cards "
    "in the photo, so cards are found and named but regions are unknown"
)
NO_MARKERS = (
    "warning: {path}: this photo has no table markers and no whole card to take the scale "
    "from: card sizes are guessed from the kit's camera (700 mm above the table) and regions "
    "are unknown; give --calibration for a photo taken otherwise"
)


def still_calibration(
    image: np.ndarray, given: TableCalibration | None
) -> tuple[TableCalibration, str | None]:
    """(calibration, stderr note or None) for one still image: the --calibration file, else
    the markers, else the cards' own size, else the kit camera guessed (said plainly)."""
    from companion.vision.calibration import STILL_MIN_MARKERS, calibrate
    from companion.vision.card_scale import calibration_from_cards
    from companion.vision.detector import nominal_calibration

    if given is not None:
        return given, None
    found = calibrate(image, STILL_MIN_MARKERS, recover=True)
    if found is not None:
        return found, None
    found = calibration_from_cards(image)
    if found is not None:
        return found, SCALE_FROM_CARDS
    return nominal_calibration(image), NO_MARKERS
