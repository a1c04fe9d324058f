"""Latency of the whole detection step, by backend and thread count, against a reference.

The reference is a plain YOLO11n at imgsz 640 on the full frame (the shape ultralytics
publishes Pi figures for), built from its yaml and exported here, so its weights do not matter
for timing. Both run in the same process on the same frames; the ratio carries to other
machines. Pi 5 projection: ultralytics publishes YOLO11n NCNN at 640 = ~88 ms on a Pi 5; our
step on the Pi is projected as ratio(NCNN) x 88 ms.

    .venv/bin/python benchmarks/detect_latency.py [--frames DIR] [--repeat 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# first: companion's settings (one BLAS thread) apply before numpy loads, as in `companion run`
import companion  # noqa: E402, F401

# isort: split
import cv2  # noqa: E402
import numpy as np  # noqa: E402

from companion.training.yolo_env import prepare_offline_ultralytics  # noqa: E402

PI5_REFERENCE_NCNN_MS = 88.0
"""ultralytics Raspberry Pi guide, YOLO11n NCNN at 640 on a Pi 5."""
CACHE = ROOT / "runs" / "reference"


def reference_models() -> dict[str, Path]:
    """YOLO11n (80 classes, 640x640) exported to every backend, cached in runs/."""
    prepare_offline_ultralytics()
    from ultralytics import YOLO

    CACHE.mkdir(parents=True, exist_ok=True)
    pt = CACHE / "yolo11n_ref.pt"
    if not pt.exists():
        YOLO("yolo11n.yaml").save(str(pt))
    out = {"torch": pt}
    onnx = CACHE / "yolo11n_ref.onnx"
    if not onnx.exists():
        YOLO(str(pt)).export(format="onnx", imgsz=640, simplify=True)
    out["onnx"] = onnx
    ncnn = CACHE / "yolo11n_ref_ncnn_model"
    if not ncnn.exists():
        YOLO(str(pt)).export(format="ncnn", imgsz=640)
    out["ncnn"] = ncnn
    return out


def time_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    fn()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=Path, default=ROOT / "tests" / "data" / "golden")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--backends", default="torch,onnx,ncnn")
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()

    from companion.deck.deckdir import load_deck
    from companion.vision import backends as B
    from companion.vision.calibration import calibrate
    from companion.vision.detector import CardDetector
    from companion.vision.plane import rectify

    frames = [cv2.imread(str(p)) for p in sorted(args.frames.glob("*.jpg"))][:5]
    frames = [f for f in frames if f is not None]
    if not frames:
        print(f"no .jpg frames in {args.frames}", file=sys.stderr)
        return 2
    h, w = frames[0].shape[:2]
    print(f"{len(frames)} frames of {w}x{h}; median of {args.repeat} runs per frame")
    refs = reference_models()
    deck = load_deck(None)
    cals = [calibrate(f) for f in frames]
    print(
        f"{'backend':8} {'thr':>3} {'step ms':>8} {'first ms':>8} {'(warp':>7} {'yolo':>6} "
        f"{'naming)':>8} {'ref640 ms':>10} {'ratio':>6} {'first':>6} {'Pi5 proj ms':>11}"
    )
    print(
        "step: the finder runs, every unchanged strip keeps its name; first: the first read "
        "(every strip named; naming = first - warp - yolo). An unchanged view skips both."
    )
    for backend in args.backends.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            try:
                model = B.load_model(backend, threads=threads)
            except Exception as exc:  # a missing backend is reported, not fatal
                print(f"{backend:8} {threads:>3} unavailable: {exc}")
                continue
            det = CardDetector(model, deck)
            ref = _reference(backend, refs[backend], threads)
            square = cv2.resize(frames[0], (640, 640))
            step, cold, warp, yolo, total_ref = [], [], [], [], []
            for frame, cal in zip(frames, cals, strict=True):
                # the reference beside each frame's figures: a busy machine slows both alike
                total_ref.append(time_ms(lambda r=ref, sq=square: r(sq), args.repeat))
                # the finder runs, every strip keeps its name (a frame where something moved)
                step.append(
                    time_ms(
                        lambda f=frame, c=cal, d=det: (d.forget_view(), d.detect(f, c)),
                        args.repeat,
                    )
                )
                # the first read of a table: every strip named
                cold.append(
                    time_ms(lambda f=frame, c=cal, d=det: (d.forget(), d.detect(f, c)), args.repeat)
                )
                warp.append(time_ms(lambda f=frame, c=cal: rectify(f, c), args.repeat))
                view = rectify(frame, cal)
                yolo.append(time_ms(lambda v=view, m=model: m.predict(v), args.repeat))
            s, c0, wp, y, r = (statistics.median(x) for x in (step, cold, warp, yolo, total_ref))
            naming = c0 - wp - y
            proj = f"{s / r * PI5_REFERENCE_NCNN_MS:.0f}" if backend == "ncnn" else "-"
            print(
                f"{backend:8} {threads:>3} {s:8.1f} {c0:8.1f} {wp:7.1f} {y:6.1f} {naming:8.1f} "
                f"{r:10.1f} {s / r:6.2f} {c0 / r:6.2f} {proj:>11}"
            )
    return 0


def _reference(backend: str, path: Path, threads: int):
    """A callable running the reference model on a 640x640 BGR image."""
    from companion.vision import backends as B

    if backend == "onnx":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        return lambda img: sess.run(None, {name: _blob640(img)})
    if backend == "ncnn":
        import ncnn

        net = ncnn.Net()
        net.opt.num_threads = threads
        net.load_param(str(path / "model.ncnn.param"))
        net.load_model(str(path / "model.ncnn.bin"))

        def run(img):
            # ncnn.Mat wraps without copying: the blob must outlive extract() (else segfault)
            blob = _blob640(img)[0]
            mat = ncnn.Mat(blob)
            ex = net.create_extractor()
            ex.input("in0", mat)
            _, out = ex.extract("out0")
            return np.array(out)

        return run
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(threads)
    yolo = YOLO(str(path))
    del B
    return lambda img: yolo.predict(img, imgsz=640, verbose=False)


def _blob640(img: np.ndarray) -> np.ndarray:
    rgb = img[:, :, ::-1].transpose(2, 0, 1)[None]
    return np.ascontiguousarray(rgb, dtype=np.float32) / 255.0


if __name__ == "__main__":
    sys.exit(main())
