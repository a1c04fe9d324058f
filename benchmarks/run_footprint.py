"""Cold start and memory of `companion run --headless` (issue 12: first processed frame <= 5 s
on a Pi 5, peak memory <= 300 MB), with where the memory goes.

    .venv/bin/python benchmarks/run_footprint.py [RECORDING] [--backend ncnn] [--deck DIR] [--json]

RECORDING: default the demo game at 15 frames/s rendered by benchmarks/pipeline_speed.py
(runs/speed/demo-15fps/). The real command runs in a fresh child process (`companion run
--headless --source RECORDING`, a throw-away game log) with probes wrapped around its own steps:
the clock starts when the parent launches the child (interpreter start and every import
included), and at each step the child notes the time and its resident memory (VmRSS) and peak
(VmHWM). Cold start = launch -> the first frame processed by the pipeline. The child then plays
the whole recording (unless --first-frame-only) and reports the peak: what `/usr/bin/time -v`
calls "Maximum resident set size". The modules torch and ultralytics must not be loaded by then.

Pi 5 projection of the cold start, as for every speed figure (README "Speed"): the reference
YOLO11n 640 NCNN is timed here in another child right after, and the cold start is scaled by
88 ms (ultralytics' published Pi 5 figure) / that reference. Imports and file reads are not
all CPU-bound, so this is a rough projection; on the Pi the script measures the real thing.
With --json the last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RECORDING = ROOT / "runs" / "speed" / "demo-15fps" / "recording.mp4"
PI5_REFERENCE_NCNN_MS = 88.0


def _status_mb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MB (0 where /proc is missing)."""
    rss = hwm = 0.0
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    except OSError:
        pass
    return rss, hwm


def child(argv: list[str], started: float, out: Path, first_only: bool) -> int:
    """Runs in the child: the real `companion run` with probes around its steps."""
    marks: list[dict[str, Any]] = []

    def mark(what: str) -> None:
        rss, hwm = _status_mb()
        marks.append({"step": what, "s": round(time.time() - started, 3), "rss": rss, "hwm": hwm})

    def dump(done: bool) -> None:
        heavy = sorted(m for m in ("torch", "ultralytics", "onnxruntime") if m in sys.modules)
        out.write_text(json.dumps({"marks": marks, "loaded": heavy, "done": done}))

    mark("interpreter")
    import companion.cli as cli

    mark("companion.cli imported")
    import companion.session as session
    import companion.vision.backends as backends
    import companion.vision.detector as detector

    load_model = backends.load_model

    def timed_load(*args: Any, **kwargs: Any) -> Any:
        mark("run: before the finder is loaded")
        model = load_model(*args, **kwargs)
        mark("finder loaded")
        return model

    backends.load_model = timed_load  # the command imports it from the module at call time
    init = detector.CardDetector.__init__

    def timed_init(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        mark("detector built (finder, namer)")

    detector.CardDetector.__init__ = timed_init  # type: ignore[method-assign]
    process = session.TablePipeline.process
    frames = [0]

    def timed_process(self: Any, frame: Any) -> Any:
        result = process(self, frame)
        frames[0] += 1
        if frames[0] == 1:
            mark("first frame processed")
            if first_only:
                dump(False)
                os._exit(0)
        elif frames[0] in (10, 100, 300, 1000, 3000):
            mark(f"{frames[0]} frames processed")
        return result

    session.TablePipeline.process = timed_process  # type: ignore[method-assign]
    sys.argv = ["companion", *argv]
    try:
        code = cli.main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    mark(f"end ({frames[0]} frames)")
    dump(True)
    return int(code or 0)


def reference_ms(threads: int) -> float:
    """Median of 10 YOLO11n 640 NCNN inferences, in a child (as benchmarks/pipeline_speed.py)."""
    import statistics

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from pipeline_speed import ReferenceTimer

    timer = ReferenceTimer("ncnn", threads)
    try:
        timer.sample(10)
    finally:
        timer.close()
    return statistics.median(timer.ms)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("recording", nargs="?", type=Path, default=DEFAULT_RECORDING)
    ap.add_argument("--backend", default="ncnn", choices=("ncnn", "onnx", "torch"))
    ap.add_argument("--deck", type=Path, help="an enrolled deck folder (`companion run --deck`)")
    ap.add_argument("--first-frame-only", action="store_true", help="stop at the first frame")
    ap.add_argument("--json", action="store_true", help="last line: one JSON object")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        started, out, first_only, *argv = args.child
        return child(argv, float(started), Path(out), first_only == "1")
    if not args.recording.exists():
        print(
            f"{args.recording} is missing: `benchmarks/pipeline_speed.py` renders the demo at "
            "15 frames/s there",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "marks.json"
        argv = [
            "run",
            "--headless",
            "--source",
            str(args.recording),
            "--backend",
            args.backend,
            "--log",
            str(Path(tmp) / "games.sqlite"),
        ]
        if args.deck:
            argv += ["--deck", str(args.deck)]
        env = dict(os.environ, YOLO_OFFLINE="1", KIVY_NO_ARGS="1")
        env.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".yolo"))
        started = time.time()
        cmd = [sys.executable, __file__, "--child", repr(started), str(out)]
        cmd += ["1" if args.first_frame_only else "0", *argv]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if not out.exists():
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        result = json.loads(out.read_text())
    ref = reference_ms(1)
    scale = PI5_REFERENCE_NCNN_MS / ref
    marks = result["marks"]
    print(f"`companion {' '.join(argv[:-2])}` (a throw-away log), {args.backend}:")
    print(f"{'step':<34}{'s':>7}{'Pi 5 s':>8}{'RSS MB':>8}{'peak MB':>9}")
    for m in marks:
        print(
            f"{m['step']:<34}{m['s']:>7.2f}{m['s'] * scale:>8.2f}{m['rss']:>8.0f}{m['hwm']:>9.0f}"
        )
    first = next(m for m in marks if m["step"] == "first frame processed")
    peak = max(m["hwm"] for m in marks)
    print(
        f"cold start to the first processed frame: {first['s']:.2f} s here, Pi 5 projection "
        f"{first['s'] * scale:.2f} s (x {scale:.2f} = 88 ms / reference YOLO11n 640 NCNN "
        f"{ref:.1f} ms here); peak memory {peak:.0f} MB"
        + ("" if result["done"] else " (to the first frame)")
        + f"; heavy modules loaded: {', '.join(result['loaded']) or 'none'}"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "cold_start_s": first["s"],
                    "cold_start_pi5_s": round(first["s"] * scale, 2),
                    "reference_ms": round(ref, 1),
                    "peak_rss_mb": round(peak, 1),
                    "whole_run": result["done"],
                    "loaded": result["loaded"],
                    "exit": proc.returncode,
                    "load": round(os.getloadavg()[0], 2),
                }
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
