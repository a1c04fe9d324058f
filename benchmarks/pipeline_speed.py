"""Per-stage latency and fps of the whole table pipeline on a recording, with a Pi 5 projection.

Run it on the Pi itself (the same script runs here, so the figures compare):

    .venv/bin/python benchmarks/pipeline_speed.py [RECORDING] [--backend ncnn] [--max-frames N]

RECORDING is a video or a folder of images; default: the bundled demo recording
(companion/assets/demo/recording.mp4), else the golden frames in tests/data/golden (each image
held for --hold frames, so the table is still and the detector runs). Every frame goes through
the real `TablePipeline` (motion gate -> markers -> rectified view -> YOLO -> naming -> settler
-> game follower); each stage is timed by wrapping it, nothing is re-implemented.

Method of the Pi 5 projection: absolute times on another machine do not carry to a Pi, ratios
do. In the same run the reference YOLO11n at imgsz 640 (benchmarks/detect_latency.py) is timed on
the same backend and thread count; ultralytics publishes that model on a Pi 5 (NCNN 88 ms, ONNX
168 ms, PyTorch 405 ms). Each stage measured here is scaled by published / reference-here, i.e.
projected = (stage / reference) x 88 ms for NCNN, the Pi's backend. It assumes the CPU-bound
OpenCV/numpy stages slow down like the network does; on a Pi run the projection is ~1x (a check).

"Scene settled" -> bowl_ready: a bowl becomes ready when a card is placed. The hand's motion
ends at the last moving frame before the event; the scene is settled at the next (first still)
frame. (The frame before it may already show the final table: the motion gate compares
consecutive frames, so a frame is called still only once it equals its predecessor; at 4 fps
that leaves out at most 250 ms.) The delay is the recording time from that settled frame to the
frame whose processing emitted bowl_ready (what the settler waits for: still_frames and
still_seconds), plus that frame's processing time. On a live camera slower processing also
drops frames, so the live delay is at least the wall time this machine took to process the
settled..event frames: the script prints max(recording delay + processing, wall time) and its
Pi 5 projection.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from detect_latency import (  # noqa: E402
    PI5_REFERENCE_NCNN_MS,
    _reference,
    reference_models,
    time_ms,
)

PI5_PUBLISHED_MS = {"ncnn": PI5_REFERENCE_NCNN_MS, "onnx": 168.0, "torch": 405.0}
"""ultralytics Raspberry Pi guide: YOLO11n at 640 on a Pi 5, by export format."""
DEMO = ROOT / "companion" / "assets" / "demo" / "recording.mp4"
GOLDEN = ROOT / "tests" / "data" / "golden"
STAGES = (
    "decode",
    "motion",
    "calibrate",
    "rectify",
    "yolo",
    "naming",
    "settle+follow",
)


class Timings:
    """Milliseconds per call, by stage."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ms[stage].append((time.perf_counter() - t) * 1000)

        return timed


@dataclass
class TimedModel:
    """The strip model with its predict() timed (the detector only sees `predict`)."""

    model: Any
    timings: Timings

    def __post_init__(self) -> None:
        self.backend = self.model.backend
        self.predict = self.timings.wrap("yolo", self.model.predict)


def held_frames(folder: Path, hold: int, fps: float) -> Iterator[Any]:
    """A folder of stills as a recording: each image `hold` times (a still table)."""
    from companion.camera import Frame, ImageFolderSource

    index = 0
    with ImageFolderSource(folder) as src:
        for frame in src:
            for _ in range(hold):
                yield Frame(frame.image, index / fps, index)
                index += 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("recording", nargs="?", type=Path, help="video or image folder")
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"), help="default: ncnn if present")
    ap.add_argument("--models", type=Path, default=None, help="models folder (default models/)")
    ap.add_argument("--threads", type=int, default=None, help="inference threads (default <= 4)")
    ap.add_argument("--max-frames", type=int, default=None, help="stop after N frames")
    ap.add_argument("--hold", type=int, default=5, help="frames per image of a folder")
    ap.add_argument("--repeat", type=int, default=10, help="reference runs (median)")
    ap.add_argument("--mode", default=None, help="game mode (default: record.json, else 2p)")
    args = ap.parse_args()

    import os

    from tqdm import tqdm

    import companion.vision.detector as detector_module
    from companion.camera import open_source
    from companion.camera.folder import IMAGE_SUFFIXES
    from companion.deck.deckdir import load_deck
    from companion.session import TablePipeline
    from companion.tracking.follower import GameFollower
    from companion.vision.backends import MODELS_DIR, load_model, model_path

    recording = args.recording or (DEMO if DEMO.exists() else GOLDEN)
    models_dir = args.models or MODELS_DIR
    backend = args.backend
    if backend is None and model_path("ncnn", models_dir).exists():
        backend = "ncnn"  # what the Pi runs, and what the published 88 ms is for
    threads = args.threads or min(4, os.cpu_count() or 1)
    model = load_model(backend, models_dir, threads=threads)
    timings = Timings()
    detector = detector_module.CardDetector(TimedModel(model, timings), load_deck(None))

    record_path = recording.parent / "record.json" if recording.is_file() else None
    mode, players = args.mode or "2p", None
    if record_path is not None and record_path.exists():
        record = json.loads(record_path.read_text(encoding="utf-8"))
        mode, players = args.mode or record["mode"], record["players"]
    pipeline = TablePipeline(detector, GameFollower(mode, players))

    # Wrap each stage of the real pipeline (this process only).
    pipeline.motion.update = timings.wrap("motion", pipeline.motion.update)  # type: ignore[method-assign]
    pipeline._calibrate = timings.wrap("calibrate", pipeline._calibrate)  # type: ignore[method-assign]
    detector.namer.name_boxes = timings.wrap("naming", detector.namer.name_boxes)  # type: ignore[method-assign]
    detector.detect = timings.wrap("detect", detector.detect)  # type: ignore[method-assign]
    detector_module.rectify = timings.wrap("rectify", detector_module.rectify)
    scores: list[float] = []
    update = pipeline.motion.update

    def motion(image: np.ndarray) -> float:
        scores.append(update(image))
        return scores[-1]

    pipeline.motion.update = motion  # type: ignore[method-assign]

    if recording.is_dir():
        frames: Iterator[Any] = held_frames(recording, args.hold, 4.0)
        images = [p for p in recording.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
        total, source = len(images) * args.hold, None
        what = f"{recording} (folder, each image held {args.hold} frames at 4 fps)"
    else:
        source = open_source(str(recording))
        source.open()
        frames = iter(source)
        total = getattr(source, "frame_count", None)
        what = f"{recording} ({getattr(source, 'fps', 0):g} fps)"
    if args.max_frames:
        total = min(total or args.max_frames, args.max_frames)

    process_ms: list[float] = []
    starts: list[float] = []
    ends: list[float] = []
    times: list[float] = []
    events: list[tuple[int, dict[str, Any]]] = []
    size = (0, 0)
    t_all = time.perf_counter()
    try:
        for i in tqdm(range(total or 10**9), total=total, desc="pipeline", unit="frame"):
            t0 = time.perf_counter()
            frame = next(frames, None)
            timings.ms["decode"].append((time.perf_counter() - t0) * 1000)
            if frame is None:
                timings.ms["decode"].pop()
                break
            size = (frame.image.shape[1], frame.image.shape[0])
            t1 = time.perf_counter()
            for e in pipeline.process(frame):
                events.append((i, e))
            t2 = time.perf_counter()
            starts.append(t1)
            ends.append(t2)
            times.append(frame.t)
            process_ms.append((t2 - t1) * 1000)
    finally:
        if source is not None:
            source.close()
    wall = time.perf_counter() - t_all
    n = len(process_ms)
    if n == 0:
        print(f"no frames in {recording}", file=sys.stderr)
        return 2

    ms = timings.ms
    detect_rest = sum(ms["detect"]) - sum(ms["rectify"]) - sum(ms["yolo"]) - sum(ms["naming"])
    other = sum(process_ms) - sum(ms["motion"]) - sum(ms["calibrate"]) - sum(ms["detect"])
    per_frame = {s: sum(ms[s]) / n for s in STAGES if s != "settle+follow"}
    per_frame["naming"] += detect_rest / n  # duplicates and readings belong to naming
    per_frame["settle+follow"] = other / n
    calls = {s: len(ms[s]) for s in STAGES}
    calls["settle+follow"] = n
    per_call = {s: (per_frame[s] * n / calls[s] if calls[s] else 0.0) for s in STAGES}

    print(f"\n{what}: {n} frames of {size[0]}x{size[1]}, {len(ms['yolo'])} detections")
    print(f"backend {model.backend}, {threads} threads, models {models_dir}")
    print("reference: YOLO11n imgsz 640 on the same backend (building it once in runs/) ...")
    refs = reference_models()
    ref = _reference(model.backend, refs[model.backend], threads)
    square = np.full((640, 640, 3), 114, np.uint8)
    ref_ms = time_ms(lambda: ref(square), args.repeat)
    published = PI5_PUBLISHED_MS[model.backend]
    scale = published / ref_ms

    total_frame = sum(per_frame.values())
    print(
        f"\n{'stage':<14}{'calls':>6}{'ms/call':>9}{'ms/frame':>10}{'Pi5 ms/call':>13}"
        f"{'Pi5 ms/frame':>14}"
    )
    for s in STAGES:
        print(
            f"{s:<14}{calls[s]:>6}{per_call[s]:>9.1f}{per_frame[s]:>10.1f}"
            f"{per_call[s] * scale:>13.1f}{per_frame[s] * scale:>14.1f}"
        )
    print(f"{'total':<14}{'':>6}{'':>9}{total_frame:>10.1f}{'':>13}{total_frame * scale:>14.1f}")
    yolo = statistics.median(ms["yolo"]) if ms["yolo"] else float("nan")
    print(
        f"\nend to end: {n} frames in {wall:.1f} s = {n / wall:.1f} fps here "
        f"(decode + pipeline); Pi 5 projection {n / (wall * scale):.1f} fps"
    )
    print(
        f"YOLO {yolo:.1f} ms (median) vs reference YOLO11n 640 {ref_ms:.1f} ms here: "
        f"ratio {yolo / ref_ms:.2f}; Pi 5 projection {yolo / ref_ms:.2f} x {published:g} ms "
        f"= {yolo * scale:.0f} ms"
    )
    print(
        f"method: every figure x ({published:g} ms published for YOLO11n {model.backend} 640 on "
        f"a Pi 5 / {ref_ms:.1f} ms measured here) = x {scale:.2f}"
    )
    if model.backend != "ncnn":
        print(
            f"note: a Pi runs NCNN; this {model.backend} projection uses the published "
            f"{model.backend} figure. Run with --backend ncnn for the Pi's own path."
        )
    _settle_delays(events, scores, times, starts, ends, process_ms, pipeline, scale)
    return 0


def _settle_delays(
    events: list[tuple[int, dict[str, Any]]],
    scores: list[float],
    times: list[float],
    starts: list[float],
    ends: list[float],
    process_ms: list[float],
    pipeline: Any,
    scale: float,
) -> None:
    """Scene settled (first still frame after the last motion) -> bowl_ready processed."""
    threshold = pipeline.settle.motion_threshold
    ready = [(i, e) for i, e in events if e.get("type") == "bowl_ready"]
    if not ready:
        print("\nbowl_ready: none in this run (a longer recording or --max-frames yields some)")
        return
    rec, live, pi = [], [], []
    for k, _ in ready:
        s = k
        while s > 0 and scores[s - 1] <= threshold:
            s -= 1  # back to the first still frame after the last moving one
        rec_ms = (times[k] - times[s]) * 1000
        wall_ms = (ends[k] - starts[s]) * 1000
        rec.append(rec_ms + process_ms[k])
        live.append(max(rec_ms + process_ms[k], wall_ms))
        pi.append(max(rec_ms + process_ms[k] * scale, wall_ms * scale))
    print(
        f"\nscene settled -> bowl_ready ({len(ready)} events, median): recording "
        f"{statistics.median(rec):.0f} ms, live here {statistics.median(live):.0f} ms, "
        f"Pi 5 projection {statistics.median(pi):.0f} ms "
        f"(settled = first still frame after the motion that placed the card)"
    )


if __name__ == "__main__":
    sys.exit(main())
