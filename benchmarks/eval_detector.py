"""Accuracy of the whole detection step on held-out rendered frames (prints figures).

The test frames come from the renderer's `test` split: another random stream, plus table
textures and light the training never saw; `--hard` adds strong glare, blur, hands and 8-10
card bowls. Every frame goes through the real pipeline (markers found in the image, rectified
view, YOLO strips, naming by the deck). A card *must* be found when one of its index strips
shows at least 50 % and is not half under a hand (the training label rule); a reading of a card
that is on the table at all is never a false positive; anything else is.

    .venv/bin/python benchmarks/eval_detector.py --frames 200 [--hard] [--backend onnx]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MUST_VISIBLE = 0.5
MAX_HAND = 0.5


def expected_cards(truth: dict) -> tuple[dict[str, dict], set[str]]:
    """(cards that must be read -> their truth, ids that may be read)."""
    must, may = {}, set()
    for c in truth["cards"]:
        if not c.get("face_up", True):
            continue
        strips = c.get("strips", [])
        if any(s["visible_fraction"] > 0 for s in strips):
            may.add(c["card"])
        if any(
            s["visible_fraction"] >= MUST_VISIBLE and s.get("hand_fraction", 0) <= MAX_HAND
            for s in strips
        ):
            must[c["card"]] = c
    return must, may


def strip_centre_mm(card: dict) -> tuple[float, float]:
    best = max(card["strips"], key=lambda s: s["visible_fraction"])
    pts = best["polygon_mm"]
    return (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))


def render_set(out: Path, frames: int, seed: int, hard: bool) -> Path:
    from companion.synth.dataset import DatasetSpec, write_dataset

    stamp = out / "spec.txt"
    want = f"{frames} {seed} {hard}"
    if not (stamp.exists() and stamp.read_text() == want):
        spec = DatasetSpec(
            frames=frames, seed=seed, split="test", hard=hard, keep_frames=True, val_fraction=0.0
        )
        write_dataset(out, spec)
        stamp.write_text(want)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--seed", type=int, default=90_000)
    ap.add_argument("--hard", action="store_true")
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"))
    ap.add_argument("--data", type=Path, help="test set folder (default runs/eval-...)")
    ap.add_argument("--models", type=Path, default=ROOT / "models")
    ap.add_argument("--no-map", action="store_true", help="skip the ultralytics mAP pass")
    ap.add_argument(
        "--no-classifier", action="store_true", help="name strips by matching the deck alone"
    )
    ap.add_argument("--min-confidence", type=float, default=None, help="reading gate")
    args = ap.parse_args()

    from tqdm import tqdm

    from companion.deck.deckdir import load_deck
    from companion.vision.backends import load_model
    from companion.vision.detector import CardDetector

    name = f"eval-{'hard' if args.hard else 'test'}-{args.frames}-{args.seed}"
    data = render_set(args.data or ROOT / "runs" / name, args.frames, args.seed, args.hard)
    model = load_model(args.backend, args.models)
    detector = CardDetector(model, load_deck(None), classifier=not args.no_classifier)
    if args.min_confidence is not None:
        detector.min_confidence = args.min_confidence
    tp = fp = fn = 0
    region_ok = region_n = 0
    frames_ok = frames_n = 0
    uncalibrated = 0
    confusions: Counter[tuple[str, str]] = Counter()
    kinds: Counter[str] = Counter()
    t_total = 0.0
    paths = sorted((data / "frames").glob("*.jpg"))
    for path in tqdm(paths, desc="detect", unit="frame"):
        truth = json.loads(path.with_suffix(".json").read_text())
        image = cv2.imread(str(path))
        t = time.perf_counter()
        reading = detector.detect(image)
        t_total += time.perf_counter() - t
        uncalibrated += not reading.calibrated
        must, may = expected_cards(truth)
        got = {r.card: r for r in reading.cards}
        hit = set(got) & set(must)
        wrong = set(got) - may
        missed = set(must) - set(got)
        tp += len(hit)
        fp += len(wrong)
        fn += len(missed)
        frames_n += 1
        frames_ok += not wrong and not missed
        for cid in hit:
            region_n += 1
            region_ok += got[cid].region == must[cid]["region"]
        misnamed: set[str] = set()
        for cid in missed:
            centre = strip_centre_mm(must[cid])
            near = min(reading.cards, key=lambda r: math.dist(r.center_mm, centre), default=None)
            if near is not None and math.dist(near.center_mm, centre) < 12 and near.card in wrong:
                confusions[(cid, near.card)] += 1
                misnamed.add(near.card)
                kinds["misnamed"] += 1
            else:
                kinds["not found"] += 1
        kinds["false reading elsewhere"] += len(wrong - misnamed)
    precision = tp / max(1, tp + fp)
    recall = tp / max(1, tp + fn)
    naming = "matching only" if detector.namer.classifier is None else "matching + classifier"
    print(f"\n{name}: {frames_n} frames, backend {model.backend}, models {args.models}, {naming}")
    print(f"card-id precision {precision:.4f}  recall {recall:.4f}  (TP {tp}, FP {fp}, FN {fn})")
    print(
        f"frames with every card right: {frames_ok / max(1, frames_n):.4f} ({frames_ok}/{frames_n})"
    )
    print(
        f"region right for found cards: {region_ok / max(1, region_n):.4f}; "
        f"frames without markers found: {uncalibrated}"
    )
    print(f"mean detection step: {1000 * t_total / max(1, frames_n):.1f} ms per frame")
    print(f"errors by kind: {dict(kinds)}")
    print("worst confusions (truth -> read: count):")
    for (a, b), n in confusions.most_common(10):
        print(f"  {a} -> {b}: {n}")
    if not args.no_map:
        from companion.training.yolo_env import prepare_offline_ultralytics

        prepare_offline_ultralytics()
        from ultralytics import YOLO

        from companion.vision.backends import INPUT_SIZE

        yaml = data / "data.yaml"
        # the whole test set is the val split for ultralytics
        text = yaml.read_text().replace("val: images/val", "val: images/train")
        (data / "data-eval.yaml").write_text(text)
        metrics = YOLO(str(args.models / "strips.pt")).val(
            data=str(data / "data-eval.yaml"),
            imgsz=INPUT_SIZE[0],
            batch=8,
            rect=True,
            plots=False,
            verbose=False,
            device="cpu",
        )
        print(
            f"strip detector mAP50 {metrics.box.map50:.4f}  mAP50-95 {metrics.box.map:.4f}  "
            f"(ultralytics val, imgsz {INPUT_SIZE[0]})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
