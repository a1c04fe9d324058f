"""Where to run the strip detector: the designs compared on the same held-out frames.

  rectified  the shipped design: markers -> homography -> top-down view of the play area at
             1 px/mm (780 x 440, padded to 800 x 448), one inference; cards always the same size
  frame640   the raw camera frame letterboxed to 640 x 640 (ultralytics' default), one inference
  tiles640   the raw frame cut into 640 x 640 tiles at native resolution, one inference per tile

Strip recall (IoU >= 0.5 with a strip at least 90 % visible) and boxes per frame that match no
strip, with the shipped model; latency of the inference itself (ultralytics PyTorch for all
three, so the comparison is like for like). The model was trained on rectified views: the raw
designs see cards at other scales, which is the point of rectifying (a model trained per scale
would need data and time for each camera height). The 56-class alternative is the probe in
MACHINE.md (per-card recall 7 %); naming is measured by eval_detector.py and naming_eval.py.

    .venv/bin/python benchmarks/detector_designs.py [--frames 40] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MIN_VISIBLE = 0.9


def iou(a: np.ndarray, b: np.ndarray) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def score(pred: np.ndarray, truth: list[np.ndarray], any_strip: list[np.ndarray]) -> tuple:
    """(strips found, strips, predicted boxes that overlap no strip at all)."""
    found = sum(any(iou(t, p) >= 0.5 for p in pred) for t in truth)
    stray = sum(all(iou(s, p) < 0.1 for s in any_strip) for p in pred)
    return found, len(truth), stray


def strips(truth: dict, key: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(strips to find, every strip showing at all) as boxes from `key` polygons."""
    must, shown = [], []
    for c in truth["cards"]:
        if not c.get("face_up", True):
            continue
        for s in c["strips"]:
            if s["visible_fraction"] <= 0:
                continue
            pts = np.asarray(s[key], np.float64)
            box = np.array([*pts.min(axis=0), *pts.max(axis=0)])
            shown.append(box)
            if s["visible_fraction"] >= MIN_VISIBLE and s.get("hand_fraction", 0) == 0:
                must.append(box)
    return must, shown


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--data", type=Path, default=ROOT / "runs" / "eval-test-200-90000")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    from companion.training.yolo_env import prepare_offline_ultralytics

    prepare_offline_ultralytics()
    import torch
    from tqdm import tqdm
    from ultralytics import YOLO

    from companion import layout
    from companion.vision.backends import INPUT_SIZE, MODELS_DIR, pad_view
    from companion.vision.calibration import STILL_MIN_MARKERS, calibrate
    from companion.vision.plane import rectify

    torch.set_num_threads(args.threads)
    paths = sorted((args.data / "frames").glob("*.jpg"))[: args.frames]
    if not paths:
        print(f"no frames in {args.data / 'frames'}: run benchmarks/eval_detector.py first")
        return 2
    model = YOLO(str(MODELS_DIR / "strips.pt"), task="detect")
    ppm = layout.RECTIFIED_PX_PER_MM
    totals = {k: [0, 0, 0] for k in ("rectified", "frame640", "tiles640")}
    times: dict[str, list[float]] = {k: [] for k in totals}

    def predict(img: np.ndarray, imgsz) -> tuple[np.ndarray, float]:
        t = time.perf_counter()
        r = model.predict(img, imgsz=imgsz, conf=0.25, iou=0.5, verbose=False)[0]
        return r.boxes.xyxy.cpu().numpy(), (time.perf_counter() - t) * 1000

    for path in tqdm(paths, desc="designs", unit="frame"):
        truth = json.loads(path.with_suffix(".json").read_text())
        image = cv2.imread(str(path))
        cal = calibrate(image, STILL_MIN_MARKERS)
        if cal is not None:
            w, h = INPUT_SIZE
            boxes, ms = predict(pad_view(rectify(image, cal)), (h, w))
            must_mm, shown_mm = strips(truth, "polygon_mm")
            res = score(boxes / ppm, must_mm, shown_mm)
            totals["rectified"] = [a + b for a, b in zip(totals["rectified"], res, strict=True)]
            times["rectified"].append(ms)
        must_px, shown_px = strips(truth, "polygon_px")
        boxes, ms = predict(image, 640)
        res = score(boxes, must_px, shown_px)
        totals["frame640"] = [a + b for a, b in zip(totals["frame640"], res, strict=True)]
        times["frame640"].append(ms)
        ih, iw = image.shape[:2]
        tile_boxes, tile_ms = [], 0.0
        for y in range(0, ih, 640):
            for x in range(0, iw, 640):
                tile = image[y : y + 640, x : x + 640]
                b, ms = predict(tile, 640)
                tile_boxes.append(b + np.array([x, y, x, y]))
                tile_ms += ms
        res = score(np.concatenate(tile_boxes), must_px, shown_px)
        totals["tiles640"] = [a + b for a, b in zip(totals["tiles640"], res, strict=True)]
        times["tiles640"].append(tile_ms)

    print(f"\n{len(paths)} held-out frames from {args.data}, PyTorch, {args.threads} thread(s)")
    print(f"{'design':<10} {'strip recall':>12} {'stray/frame':>12} {'median ms':>10}")
    for k, (found, n, stray) in totals.items():
        frames = max(1, len(times[k]))
        print(
            f"{k:<10} {found / max(1, n):>12.4f} {stray / frames:>12.2f} "
            f"{statistics.median(times[k]) if times[k] else float('nan'):>10.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
