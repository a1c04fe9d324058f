"""The strip finder alone, per deck design: does it box the top band of cards it never saw?

Frames of each design (held-out scenes, the Pi camera's 2304 px stream unless --width) go
through the live path up to the finder: markers -> homography -> rectified view -> YOLO. A
visible band (>= 50 % showing, not half under a hand) is found when a box overlaps it with
IoU >= 0.5; a box that overlaps no band of a face-up card (IoU < 0.3) is a stray (a ghost on an
illustration, a name ribbon, the deck, a marker tile). Naming is not involved.

    .venv/bin/python benchmarks/finder_designs.py [--frames 8] [--models models] [--hard]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.detector_designs import iou as _iou  # noqa: E402

MIN_VISIBLE = 0.5


def truth_boxes(truth: dict) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(bands that must be found, every visible band) as boxes on the plane at the finder's
    1 px/mm."""
    from companion import layout

    must, any_ = [], []
    for card in truth["cards"]:
        if not card["face_up"]:
            continue
        for s in card["strips"]:
            if not s["visible_bbox_mm"] or s["visible_fraction"] <= 0.05:
                continue
            box = np.array(s["visible_bbox_mm"]) * layout.RECTIFIED_PX_PER_MM
            any_.append(box)
            if s["visible_fraction"] >= MIN_VISIBLE and s["hand_fraction"] <= 0.5:
                must.append(box)
    return must, any_


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=8, help="frames per design (8)")
    ap.add_argument("--models", type=Path, default=ROOT / "models", help="folder of the finders")
    ap.add_argument(
        "--name", default="bands", help="bands (any deck, default) or strips (the default deck's)"
    )
    ap.add_argument("--backend", choices=("onnx", "ncnn", "torch"), default="onnx")
    ap.add_argument("--families", default=None, help="comma-separated (default: all + default)")
    ap.add_argument("--hard", action="store_true", help="hands, glare, blur, long bowls")
    ap.add_argument("--width", type=int, default=2304)
    ap.add_argument("--seed", type=int, default=93_000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from tqdm import tqdm

    from companion.deck.deckdir import default_deck
    from companion.deck.designs import FAMILIES, HELD_OUT_FAMILIES, design_deck
    from companion.synth.frame import FrameSpec, render_frame
    from companion.vision.backends import load_model
    from companion.vision.calibration import calibrate
    from companion.vision.plane import rectify

    model = load_model(args.backend, args.models, name=args.name)
    names = args.families.split(",") if args.families else ["default", *FAMILIES]
    spec = FrameSpec(hard=args.hard, split="test", width=args.width)
    rows = {}
    for name in names:
        deck = default_deck() if name == "default" else design_deck(name, 2)
        found = must_n = strays = boxes = 0
        for i in tqdm(range(args.frames), desc=name, unit="frame", leave=False):
            frame = render_frame(deck, args.seed, i, spec)
            cal = calibrate(frame.image)
            if cal is None:
                continue
            dets = model.predict(rectify(frame.image, cal))
            must, any_ = truth_boxes(frame.truth)
            pred = [np.asarray(b, np.float64) for b in dets.xyxy]
            boxes += len(pred)
            must_n += len(must)
            found += sum(any(_iou(m, p) >= 0.5 for p in pred) for m in must)
            strays += sum(not any(_iou(p, t) >= 0.3 for t in any_) for p in pred)
        rows[name] = {
            "held_out": name in HELD_OUT_FAMILIES,
            "bands": must_n,
            "recall": round(found / max(must_n, 1), 4),
            "strays_per_frame": round(strays / max(args.frames, 1), 2),
            "boxes": boxes,
        }
    print(
        f"finder {args.models} ({args.backend}), {args.frames} frames per design, "
        f"{'hard' if args.hard else 'plain'}, width {args.width}"
    )
    print(f"{'design':10s} {'held out':>8s} {'bands':>6s} {'recall':>7s} {'strays/frame':>13s}")
    for name, r in rows.items():
        print(
            f"{name:10s} {'yes' if r['held_out'] else '':>8s} {r['bands']:6d} "
            f"{r['recall']:7.3f} {r['strays_per_frame']:13.2f}"
        )
    if args.json:
        print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
