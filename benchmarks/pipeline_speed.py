"""Per-stage latency and fps of the whole table pipeline on a recording, with a Pi 5 projection.

Run it on the Pi itself (the same script runs here, so the figures compare):

    .venv/bin/python benchmarks/pipeline_speed.py [RECORDING] [--threads 1] [--json]

RECORDING is a video or a folder of images; default: the bundled demo game
(companion/assets/demo/record.json) re-rendered at the Pi camera's real frame rate (--fps,
default 15) and cached under runs/speed/ (the bundled recording.mp4 itself is 4 frames/s, too
slow a camera to time announcements on); a folder's images are each held for --hold frames.
With --json the last line is one JSON object (other tools read these names): `step_ms` (median
detection step where the finder ran: markers, warp, finder, naming; `step_every_ms` counts the
frames whose unchanged view kept its reading too), `reference_ms` (YOLO11n at 640, same backend,
same run), `ratio`, `ready_median_ms` / `ready_p95_ms` (table settled -> `bowl_ready`, live
here), `fps` (the source's), `pipeline_fps` (every frame, detections included), `moving_fps`
(frames while hands move: decode, motion gate, hand watch), `peak_rss_mb` (the pipeline's
process; the reference runs in a child), their Pi 5 projections (`*_pi5`), and the checks that
speed cost no correctness: `ready_events` / `ready_expected` / `ready_false` (announcements
with no ready bowl in the truth replay: a later-withdrawn one counts here), `spurious` camera
changes, `exact` result.

Every frame goes through the real `TablePipeline` (motion gate -> markers -> rectified view ->
YOLO -> naming -> settler -> game follower); each stage is timed by wrapping it, nothing is
re-implemented.

Method of the Pi 5 projection: absolute times on another machine do not carry to a Pi, ratios
do. In the same run the reference YOLO11n at imgsz 640 (benchmarks/detect_latency.py) is timed on
the same backend and thread count, once every --ref-every detections (in a child process, so a
busy machine slows both alike); ultralytics publishes that model on a Pi 5 (NCNN 88 ms, ONNX
168 ms, PyTorch 405 ms). Each stage measured here is scaled by published / reference-here, i.e.
projected = (stage / reference) x 88 ms for NCNN, the Pi's backend. It assumes the CPU-bound
OpenCV/numpy stages slow down like the network does; on a Pi run the projection is ~1x (a check).

"Scene settled" -> bowl_ready: a bowl becomes ready when a card is placed. The hand's motion
ends at the last moving frame before the event; the scene is settled at the next (first still)
frame. (The frame before it may already show the final table: the motion gate compares
consecutive frames, so a frame is called still only once it equals its predecessor; at 15 fps
that leaves out at most 67 ms.) The delay is the recording time from that settled frame to the
frame whose processing emitted bowl_ready (what the settler waits for: two agreeing certain
frames, else still_frames and still_seconds), plus that frame's processing time. On a live
camera slower processing also drops frames, so the live delay is at least the wall time this
machine took to process the settled..event frames: the script prints max(recording delay +
processing, wall time) and its Pi 5 projection.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

# first: companion's settings (one BLAS thread) apply before numpy loads, as in `companion run`
import companion  # noqa: E402, F401

# isort: split
import numpy as np  # noqa: E402
from detect_latency import (  # noqa: E402
    PI5_REFERENCE_NCNN_MS,
    _reference,
    reference_models,
)

PI5_PUBLISHED_MS = {"ncnn": PI5_REFERENCE_NCNN_MS, "onnx": 168.0, "torch": 405.0}
"""ultralytics Raspberry Pi guide: YOLO11n at 640 on a Pi 5, by export format."""
DEMO = ROOT / "companion" / "assets" / "demo" / "recording.mp4"
CACHE = ROOT / "runs" / "speed"
"""Rendered sources (the demo game at other frame rates)."""
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
        self.crop_size = getattr(self.model, "crop_size", None)
        if self.crop_size:  # NCNN with its crop export: only the part of the view that changed
            self.predict_crop = self.timings.wrap("yolo", self.model.predict_crop)


def held_frames(folder: Path, hold: int, fps: float) -> Iterator[Any]:
    """A folder of stills as a recording: each image `hold` times (a still table)."""
    from companion.camera import Frame, ImageFolderSource

    index = 0
    with ImageFolderSource(folder) as src:
        for frame in src:
            for _ in range(hold):
                yield Frame(frame.image, index / fps, index)
                index += 1


def _reference_worker(backend: str, threads: int, conn: Any) -> None:
    """Child process: times one reference inference per request (its memory is not ours)."""
    refs = reference_models()
    ref = _reference(backend, refs[backend], threads)
    square = np.full((640, 640, 3), 114, np.uint8)
    ref(square)  # warm-up
    ref(square)
    while conn.recv():
        t = time.perf_counter()
        ref(square)
        conn.send((time.perf_counter() - t) * 1000)


class ReferenceTimer:
    """The reference YOLO11n 640 timed in a child process, between the pipeline's frames, so
    both see the same load on a busy machine (one figure at the end would not) and the
    pipeline's peak memory is its own."""

    def __init__(self, backend: str, threads: int) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(
            target=_reference_worker, args=(backend, threads, child), daemon=True
        )
        self._proc.start()
        self.ms: list[float] = []

    def sample(self, n: int = 1) -> None:
        for _ in range(n):
            self._conn.send(True)
            self.ms.append(float(self._conn.recv()))

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(False)
        self._proc.join(timeout=10)


def demo_at(fps: float, deck: Any = None, tag: str = "") -> Path:
    """The bundled demo game rendered at `fps` with `deck`'s faces (None: the default deck),
    cached under runs/speed/ by `tag` (the deck's name), rendered once."""
    out = CACHE / f"demo-{fps:g}fps{'-' + tag if tag else ''}"
    meta = out / "meta.json"
    if meta.exists() and json.loads(meta.read_text(encoding="utf-8")).get("fps") == fps:
        video = out / json.loads(meta.read_text(encoding="utf-8"))["video"]
        if video.exists():
            return video
    from companion.deck.deckdir import load_deck
    from companion.synth.recording import RecordingSpec, render_recording

    print(f"rendering the demo game at {fps:g} fps into {out} (once) ...", file=sys.stderr)
    width = int(json.loads((DEMO.parent / "meta.json").read_text())["camera"]["image_size"][0])
    render_recording(
        DEMO.parent / "record.json",
        out,
        RecordingSpec(fps=fps, width=width),
        deck if deck is not None else load_deck(None),
    )
    return out / json.loads(meta.read_text(encoding="utf-8"))["video"]


def enrolled_deck(spec: str) -> tuple[Any, Any, str]:
    """(deck the table is rendered with, enrolled deck the pipeline names with, tag) for
    `--deck`: a deck folder is both; `design:FAMILY:SEED` is rendered with the design's own
    faces and named with the deck `companion deck enroll` makes from its row photos (as a
    player would enrol it; cached under runs/speed/decks/, as benchmarks/foreign_decks.py)."""
    from companion.deck.deckdir import load_deck

    if not spec.startswith("design:"):
        deck = load_deck(Path(spec))
        return deck, deck, Path(spec).name
    from foreign_decks import enrol

    from companion.deck.designs import design_deck, parse_deck_spec

    family, seed = parse_deck_spec(spec)
    name = f"{family}-{seed}"
    design = design_deck(family, seed)
    folder = CACHE / "decks" / name
    if not (folder / "deck.json").exists():
        print(f"enrolling {spec} from rendered row photos into {folder} ...", file=sys.stderr)
        enrolment, folder = enrol(design, name, CACHE)
        if not enrolment.accepted:
            raise SystemExit(f"{spec}: enrolment refused: {enrolment.message}")
    return design, load_deck(folder), name


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MB)."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def expected_ready(truth: list[dict[str, Any]], mode: str, players: Any) -> list[dict[str, Any]]:
    """The bowl_ready events the game follower gives on the recording's true table changes."""
    from companion.tracking.follower import GameFollower

    out: list[dict[str, Any]] = []
    follower = GameFollower(
        mode, players, sink=lambda e: out.append(e) if e["type"] == "bowl_ready" else None
    )
    table: dict[str, str] = {}
    by_t: dict[float, list[dict[str, Any]]] = defaultdict(list)
    for e in truth:
        if e.get("type") in ("card_added", "card_removed"):
            by_t[float(e["t"])].append(e)
    for t in sorted(by_t):
        for e in by_t[t]:
            if e["type"] == "card_removed" and table.get(e["card"]) == e["region"]:
                del table[e["card"]]
        for e in by_t[t]:
            if e["type"] == "card_added":
                table[e["card"]] = e["region"]
        follower.update(dict(table), t)
    return out


def false_ready(seen: list[dict[str, Any]], expected: list[dict[str, Any]]) -> int:
    """Announcements matching no true one (same bowl, same sum, in order, not earlier than the
    true change): a bowl announced on a misread card, or announced twice because a card was
    withdrawn in between."""
    left = list(expected)
    false = 0
    for e in seen:
        k = next(
            (
                i
                for i, x in enumerate(left)
                if x["region"] == e["region"] and x["sum"] == e["sum"] and x["t"] <= e["t"] + 0.5
            ),
            None,
        )
        if k is None:
            false += 1
        else:
            left.pop(k)
    return false


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("recording", nargs="?", type=Path, help="video or image folder")
    ap.add_argument(
        "--fps", type=float, default=15.0, help="frame rate of the default source (default 15)"
    )
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"), help="default: ncnn if present")
    ap.add_argument("--models", type=Path, default=None, help="models folder (default models/)")
    ap.add_argument("--threads", type=int, default=None, help="inference threads (default <= 4)")
    ap.add_argument("--max-frames", type=int, default=None, help="stop after N frames")
    ap.add_argument("--hold", type=int, default=5, help="frames per image of a folder")
    ap.add_argument(
        "--ref-every",
        type=int,
        default=8,
        help="time the reference once every N detections (default 8), and 10 times at the end",
    )
    ap.add_argument("--mode", default=None, help="game mode (default: record.json, else 2p)")
    ap.add_argument("--json", action="store_true", help="last line: one JSON object of figures")
    ap.add_argument(
        "--deck",
        default=None,
        help="an enrolled deck: its folder, or design:FAMILY:SEED (enrolled from rendered row "
        "photos); the default source is then the demo game rendered with that deck, named by "
        "BandNamer and found by the any-deck finder",
    )
    args = ap.parse_args()

    import os

    from tqdm import tqdm

    import companion.vision.detector as detector_module
    from companion.camera import open_source
    from companion.camera.folder import IMAGE_SUFFIXES
    from companion.session import TablePipeline
    from companion.tracking.follower import GameFollower
    from companion.vision.backends import MODELS_DIR, load_model, model_path

    deck = None  # the default deck
    if args.deck:
        rendered, deck, tag = enrolled_deck(args.deck)
        recording = args.recording or demo_at(args.fps, rendered, tag)
        del rendered  # its faces (~100 MB) are not the pipeline's memory
    else:
        recording = args.recording or demo_at(args.fps)
    models_dir = args.models or MODELS_DIR
    finder = detector_module.finder_name(deck)
    backend = args.backend
    if backend is None and model_path("ncnn", models_dir, finder).exists():
        backend = "ncnn"  # what the Pi runs, and what the published 88 ms is for
    threads = args.threads or min(4, os.cpu_count() or 1)
    model = load_model(backend, models_dir, threads=threads, name=finder)
    timings = Timings()
    detector = detector_module.CardDetector(TimedModel(model, timings), deck)
    detector.prepare()  # as `companion run`
    del deck  # as `companion run`: the namer keeps its references, not the faces

    record_path = recording.parent / "record.json" if recording.is_file() else None
    mode, players = args.mode or "2p", None
    record: dict[str, Any] = {}
    if record_path is not None and record_path.exists():
        record = json.loads(record_path.read_text(encoding="utf-8"))
        mode, players = args.mode or record["mode"], record["players"]
    events: list[tuple[int, dict[str, Any]]] = []
    """(frame index, event): every event the follower emits, through its sink (a correction
    of its own, e.g. a Fridge card back from hiding, emits events no process() returns)."""
    current = [0]
    pipeline = TablePipeline(
        detector, GameFollower(mode, players, sink=lambda e: events.append((current[0], e)))
    )

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

    fps = args.fps
    if recording.is_dir():
        fps = 4.0
        frames: Iterator[Any] = held_frames(recording, args.hold, fps)
        images = [p for p in recording.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
        total, source = len(images) * args.hold, None
        what = f"{recording} (folder, each image held {args.hold} frames at 4 fps)"
    else:
        source = open_source(str(recording))
        source.open()
        frames = iter(source)
        total = getattr(source, "frame_count", None)
        fps = float(getattr(source, "fps", 0) or 0)
        what = f"{recording} ({fps:g} fps)"
    if args.max_frames:
        total = min(total or args.max_frames, args.max_frames)

    print(
        "reference: YOLO11n imgsz 640 on the same backend, timed in a child process between "
        "frames (built once in runs/reference) ...",
        file=sys.stderr,
    )
    reference = ReferenceTimer(model.backend, threads)
    reference.sample(3)
    ref_total = 0.0
    """Seconds spent timing the reference, taken out of the pipeline's clock."""
    process_ms: list[float] = []
    step_ms: list[float] = []
    """Per frame that was read (markers found): markers + detect (warp, finder, naming)."""
    starts: list[float] = []
    ends: list[float] = []
    times: list[float] = []
    strips = [0, 0]
    kept_ms: list[float] = []
    part_ms: list[float] = []
    """Detection steps whose finder ran on the part of the view that changed only."""
    """Detection steps on a view unchanged since the finder last ran (its reading kept)."""
    """Strips found, strips named (the others kept their name: same place, same pixels)."""
    size = (0, 0)
    t_all = time.perf_counter()
    try:
        for i in tqdm(
            range(total or 10**9), total=total, desc="pipeline", unit="frame", disable=args.json
        ):
            t0 = time.perf_counter()
            frame = next(frames, None)
            timings.ms["decode"].append((time.perf_counter() - t0) * 1000)
            if frame is None:
                timings.ms["decode"].pop()
                break
            size = (frame.image.shape[1], frame.image.shape[0])
            n_detect = len(timings.ms["detect"])
            n_cal = len(timings.ms["calibrate"])
            t1 = time.perf_counter()
            current[0] = i
            pipeline.process(frame)
            t2 = time.perf_counter()
            starts.append(t1 - ref_total)
            ends.append(t2 - ref_total)
            if len(timings.ms["detect"]) > n_detect:
                if len(step_ms) % args.ref_every == 0:
                    t3 = time.perf_counter()
                    reference.sample()
                    ref_total += time.perf_counter() - t3
                last = pipeline.last_reading
                searched = last is None or getattr(last, "searched", True)
                if last is not None and searched:
                    strips[0] += last.strips
                    strips[1] += getattr(last, "named", last.strips)
                took = sum(timings.ms["calibrate"][n_cal:]) + sum(timings.ms["detect"][n_detect:])
                (step_ms if searched else kept_ms).append(took)
                if searched and last is not None and getattr(last, "search_share", 1.0) < 1.0:
                    part_ms.append(took)
            times.append(frame.t)
            process_ms.append((t2 - t1) * 1000)
    finally:
        if source is not None:
            source.close()
    wall = time.perf_counter() - t_all - ref_total
    view = pipeline.follower.view()
    if not args.max_frames and view.final is None and view.phase != "setup":
        pipeline.follower.finish()  # as `companion run`: a recording played to its end is the game
    peak_mb = peak_rss_mb()
    reference.sample(10)
    reference.close()
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
    print(
        f"backend {model.backend}, {threads} threads, models {models_dir}, deck "
        f"{args.deck or 'default'} (finder {finder}, namer {type(detector.namer).__name__})"
    )
    ref_ms = statistics.median(reference.ms)
    print(
        f"reference YOLO11n 640 on {model.backend}: {ref_ms:.1f} ms (median of "
        f"{len(reference.ms)} timed between the frames, in a child process)"
    )
    published = PI5_PUBLISHED_MS[model.backend]
    scale = published / ref_ms

    threshold = pipeline.settle.motion_threshold
    moving = [k for k in range(n) if scores[k] > threshold]
    moving_ms = sum(ms["decode"][k] + process_ms[k] for k in moving)
    moving_fps = len(moving) / (moving_ms / 1000) if moving_ms else float("nan")
    print(
        f"while hands move ({len(moving)} frames: decode, motion gate, hand watch): "
        f"{moving_fps:.0f} frames/s here, Pi 5 projection {moving_fps / scale:.0f}"
    )
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
    step = statistics.median(step_ms) if step_ms else float("nan")
    every = statistics.median(step_ms + kept_ms) if step_ms or kept_ms else float("nan")
    part = statistics.median(part_ms) if part_ms else float("nan")
    full_ms = [x for x in step_ms if x not in set(part_ms)]
    full = statistics.median(full_ms) if full_ms else float("nan")
    print(
        f"\nend to end: {n} frames in {wall:.1f} s = {n / wall:.1f} fps here "
        f"(decode + pipeline); Pi 5 projection {n / (wall * scale):.1f} fps"
    )
    print(
        f"detection step {step:.1f} ms (median of the {len(step_ms)} frames the finder ran on: "
        f"markers, warp, YOLO, naming) vs reference YOLO11n 640 {ref_ms:.1f} ms here: ratio "
        f"{step / ref_ms:.2f}; Pi 5 projection {step * scale:.0f} ms; on {len(kept_ms)} more "
        f"frames the view had not changed and the reading was kept (median of every "
        f"detection step: {every:.1f} ms); {len(part_ms)} of the {len(step_ms)} searched only "
        f"around the change ({part:.1f} ms, ratio {part / ref_ms:.2f}), the others the whole "
        f"view ({full:.1f} ms, ratio {full / ref_ms:.2f})"
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
    delays = _settle_delays(events, scores, times, starts, ends, process_ms, pipeline, scale)
    if delays is not None:
        print("  each (live here, ms): " + ", ".join(f"{d:.0f}" for d in delays[0]))
    seen = [e for _, e in events if e.get("type") == "bowl_ready"]
    figures: dict[str, Any] = {
        "source": str(recording),
        "deck": args.deck or "default",
        "finder": finder,
        "backend": model.backend,
        "threads": threads,
        "frames": n,
        "detections": len(step_ms) + len(kept_ms),
        "searched": len(step_ms),
        "searched_part": len(part_ms),
        "step_ms": round(step, 1),
        "step_every_ms": round(every, 1),
        "step_part_ms": round(part, 1),
        "step_full_ms": round(full, 1),
        "reference_ms": round(ref_ms, 1),
        "ratio": round(step / ref_ms, 3),
        "yolo_ms": round(yolo, 1),
        "strips_found": strips[0],
        "strips_named": strips[1],
        "step_pi5_ms": round(step * scale, 1),
        "ready_median_ms": None,
        "ready_p95_ms": None,
        "ready_median_pi5_ms": None,
        "ready_p95_pi5_ms": None,
        "fps": round(fps, 2),
        "pipeline_fps": round(n / wall, 1),
        "pipeline_fps_pi5": round(n / (wall * scale), 1),
        "moving_fps": round(moving_fps, 1),
        "moving_fps_pi5": round(moving_fps / scale, 1),
        "peak_rss_mb": round(peak_mb, 1),
        "ready_events": len(seen),
        "load": round(os.getloadavg()[0], 2),
    }
    if delays is not None:
        live, pi = delays
        figures |= {
            "ready_median_ms": round(statistics.median(live)),
            "ready_p95_ms": round(float(np.percentile(live, 95))),
            "ready_median_pi5_ms": round(statistics.median(pi)),
            "ready_p95_pi5_ms": round(float(np.percentile(pi, 95))),
        }
    truth_path = recording.parent / "truth.jsonl" if recording.is_file() else None
    if truth_path is not None and truth_path.exists():
        from false_warnings import _spurious

        truth = [json.loads(x) for x in truth_path.read_text().splitlines() if x.strip()]
        expected = expected_ready(truth, mode, players)
        run_events = [e for _, e in events]
        CACHE.mkdir(parents=True, exist_ok=True)
        kept = CACHE / f"events-{recording.parent.name}.jsonl"  # to look into
        kept.write_text("".join(json.dumps(e) + "\n" for e in run_events), encoding="utf-8")
        over = [e for e in run_events if e.get("type") == "game_over"]
        final = record.get("final", {})
        figures |= {
            "ready_expected": len(expected),
            "ready_false": false_ready(seen, expected),
            "spurious": _spurious(run_events, truth),
            "exact": bool(over) and all(over[-1].get(k) == v for k, v in final.items()),
        }
        print(
            f"bowl_ready: {len(seen)} announced, {len(expected)} in the truth replay, "
            f"{figures['ready_false']} false; {figures['spurious']} spurious camera changes; "
            f"final result {'exact' if figures['exact'] else 'WRONG'} (events in {kept})"
        )
        if not figures["exact"]:
            print(f"  game_over {over[-1] if over else None} != {final}")
    print(f"strips: {strips[0]} found, {strips[1]} named (the others kept their names)")
    print(f"peak memory {peak_mb:.0f} MB (this process: the pipeline without the reference)")
    if args.json:  # strict JSON: a figure that could not be measured is null, never NaN
        clean = {
            k: None if isinstance(v, float) and not np.isfinite(v) else v
            for k, v in figures.items()
        }
        print(json.dumps(clean, allow_nan=False))
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
) -> tuple[list[float], list[float]] | None:
    """Scene settled (first still frame after the last motion) -> bowl_ready processed:
    (live here, Pi 5 projection) per event, or None when no bowl became ready."""
    threshold = pipeline.settle.motion_threshold
    ready = [(i, e) for i, e in events if e.get("type") == "bowl_ready"]
    if not ready:
        print("\nbowl_ready: none in this run (a longer recording or --max-frames yields some)")
        return None
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
        f"\nscene settled -> bowl_ready ({len(ready)} events): median / 95th percentile: "
        f"recording {statistics.median(rec):.0f} / {np.percentile(rec, 95):.0f} ms, "
        f"live here {statistics.median(live):.0f} / {np.percentile(live, 95):.0f} ms, "
        f"Pi 5 projection {statistics.median(pi):.0f} / {np.percentile(pi, 95):.0f} ms "
        f"(settled = first still frame after the motion that placed the card)"
    )
    return live, pi


if __name__ == "__main__":
    sys.exit(main())
