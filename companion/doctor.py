"""`companion doctor`'s checks: is this table ready to follow a game?

Each check is a small function returning a `Check` value (a verdict, one line of what was
measured, one line of what to do), so the checks test without the CLI and the UI could show
them too. Order: camera (frames arrive, resolution, fps) -> model (which backend loads, its
latency on the frame) -> markers -> light (exposure) -> glare -> focus (the markers' edges)
-> disk (space, fsync speed).
The camera is read on a thread with a deadline, so a stalled driver is a FAIL after the
timeout, never a hang.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from companion import layout
from companion.camera import Frame, FrameSource

OK: Final = "OK"
WARN: Final = "WARN"
FAIL: Final = "FAIL"
SKIP: Final = "SKIP"
"""A check that could not run because an earlier one failed (no frame to look at)."""
STATUSES: Final = (OK, WARN, FAIL, SKIP)

MIN_WIDTH: Final = 1280
"""Below this the index digits of a bowl's cascade get too few pixels (from ~700 mm)."""
MIN_FPS: Final = 4.0
"""The settler's defaults suit 4-10 frames per second."""
MAX_MODEL_MS: Final = 200.0
"""Detector inference above this leaves the pipeline under ~4 detections per second."""
STEP_BUDGET_X: Final = 1.0
"""The whole detection step (markers, warp, finder, naming) within one YOLO11n 640 inference
on the same backend (issue 12). The reference is estimated on this machine from the finder's
own time: the finder is a YOLO11n on 800 x 448 pixels, FINDER_PER_REFERENCE of 640 x 640."""
FINDER_PER_REFERENCE: Final = 800 * 448 / (640 * 640)
READY_BUDGET_MS: Final = 400.0
"""A ready bowl announced within this after the table settles (median): one camera frame,
then two agreeing frames read (the first names the new card, the second only confirms)."""
MAX_REPROJECTION_PX: Final = 2.0
FREE_FAIL_MB: Final = 100.0
FREE_WARN_MB: Final = 1000.0
SLOW_COMMIT_MS: Final = 20.0
"""Per-event fsynced commit above this: a slow SD card (an SSD commits in ~1-5 ms)."""


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the doctor's report."""

    name: str
    """camera, model, markers, light, glare, focus, game log, disk space, disk writes."""
    status: str
    """OK, WARN, FAIL or SKIP."""
    message: str
    """What was measured, in words."""
    advice: str = ""
    """What to do (empty when OK)."""
    value: dict[str, Any] | None = None
    """The measured figures (JSON-ready), for --json and tests."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _skip(name: str, why: str) -> Check:
    return Check(name, SKIP, why, "fix the failed check above, then run the doctor again")


# -- camera -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CameraProbe:
    """What reading a source for a couple of seconds showed."""

    source: str
    frame: Frame | None
    """The newest frame received (the 'current' table), or None."""
    frames: int
    seconds: float
    """Time between the first and the last frame received."""
    first_frame_s: float | None
    """Seconds from the start (open included) to the first frame."""
    error: str | None = None
    """Why no frame came (open error, read error, timeout)."""
    stalled: bool = False
    """The source stopped delivering for longer than the timeout."""

    @property
    def fps(self) -> float | None:
        if self.frames < 2 or self.seconds <= 0:
            return None
        return (self.frames - 1) / self.seconds


def probe_camera(
    source: FrameSource,
    timeout: float = 5.0,
    seconds: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
) -> CameraProbe:
    """Open and read `source` on a daemon thread for ~`seconds` after its first frame.

    Waits at most `timeout` for the first frame (and between frames). A driver that blocks is
    abandoned, not closed from here: only the reader thread closes its source (closing a
    capture under a blocked read can crash), and it does so if the read ever returns."""
    items: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def read() -> None:
        try:
            source.open()
            while not stop.is_set():
                frame = source.read()
                items.put(("frame", frame))
                if frame is None:
                    return
        except Exception as exc:
            items.put(("error", exc))
        finally:
            with contextlib.suppress(Exception):
                source.close()

    start = clock()
    threading.Thread(target=read, name=f"doctor camera {source.name}", daemon=True).start()
    last: Frame | None = None
    count, first_at, last_at = 0, None, start
    error: str | None = None
    stalled = False
    try:
        while True:
            now = clock()
            if first_at is not None and now - first_at >= seconds:
                break
            wait = timeout - (now - last_at)
            if first_at is not None:
                wait = min(wait, seconds - (now - first_at) + 0.05)
            if wait <= 0:
                stalled = True
                error = f"no frame within {timeout:g} s" + (
                    f" (after {count} frames)" if count else ""
                )
                break
            try:
                kind, item = items.get(timeout=wait)
            except queue.Empty:
                continue
            if kind == "error":
                error = str(item) or type(item).__name__
                break
            if item is None:
                if count == 0:
                    error = "the source ended before delivering a frame"
                break  # a recording ended: measure on what came
            last, count, last_at = item, count + 1, clock()
            if first_at is None:
                first_at = last_at
    finally:
        stop.set()
    return CameraProbe(
        source=source.name,
        frame=last,
        frames=count,
        seconds=(last_at - first_at) if first_at is not None else 0.0,
        first_frame_s=(first_at - start) if first_at is not None else None,
        error=error,
        stalled=stalled,
    )


def _camera_advice(source: str, error: str) -> str:
    if "not installed" in error:
        return "run the install script (hardware/pi/install.sh), which sets this up"
    if source == "picamera":
        return (
            "check the ribbon cable (seated, contacts the right way round), that no other "
            "program holds the camera (`rpicam-hello --list-cameras` lists it), then reboot"
        )
    if source.startswith("usb:"):
        return (
            "plug the webcam in (a powered USB port), close programs using it, try another "
            "number (`ls /dev/video*`: usb:0, usb:1...)"
        )
    return "check that the recording or folder plays (a video player, an image viewer)"


def check_camera(probe: CameraProbe) -> Check:
    value: dict[str, Any] = {
        "source": probe.source,
        "frames": probe.frames,
        "seconds": round(probe.seconds, 2),
        "fps": None if probe.fps is None else round(probe.fps, 1),
        "first_frame_s": None if probe.first_frame_s is None else round(probe.first_frame_s, 2),
        "stalled": probe.stalled,
    }
    if probe.frame is None:
        return Check(
            "camera",
            FAIL,
            f"{probe.source}: {probe.error or 'no frame'}",
            _camera_advice(probe.source, probe.error or ""),
            value,
        )
    h, w = probe.frame.image.shape[:2]
    value.update(width=w, height=h)
    fps = probe.fps
    rate = f"{fps:.1f} fps" if fps is not None else "1 frame"
    msg = f"{probe.source}: {w}x{h}, {rate} ({probe.frames} frames in {probe.seconds:.1f} s)"
    if probe.stalled or probe.error:
        return Check(
            "camera",
            WARN,
            msg + f", then {probe.error}",
            "frames stopped: check the cable and the power supply (a weak supply starves "
            "the camera); the app reconnects, but a game loses those seconds",
            value,
        )
    if w < MIN_WIDTH:
        return Check(
            "camera",
            WARN,
            msg,
            f"low resolution: the index digits need >= {MIN_WIDTH} px across; use the Camera "
            "Module 3 or a 1080p webcam",
            value,
        )
    if fps is not None and fps < MIN_FPS and probe.frames > 2:
        return Check(
            "camera",
            WARN,
            msg,
            f"slow frames (< {MIN_FPS:g} fps): more light lets the camera shorten its exposure; "
            "close other programs",
            value,
        )
    return Check("camera", OK, msg, "", value)


# -- model ------------------------------------------------------------------------------------


def check_model(
    image: np.ndarray | None,
    cal: Any | None = None,
    backend: str | None = None,
    models_dir: Path | None = None,
    runs: int = 5,
    fps: float | None = None,
) -> Check:
    """Which backend loads (preferred order unless `backend`), its median latency on the
    rectified view of `image` (a blank table view when there is no frame), and the whole
    detection step against its budgets (STEP_BUDGET_X, READY_BUDGET_MS; WARN above), with
    `fps` the camera's frame rate (15 when unknown)."""
    from companion.vision.backends import (
        INPUT_SIZE,
        MODELS_DIR,
        ModelError,
        load_model,
        model_path,
        preferred_backends,
    )
    from companion.vision.detector import nominal_calibration
    from companion.vision.plane import rectify

    models_dir = MODELS_DIR if models_dir is None else models_dir
    order = (backend,) if backend else preferred_backends()
    present = [b for b in order if model_path(b, models_dir).exists()]
    try:
        t = time.perf_counter()
        model = load_model(backend, models_dir)
        load_ms = (time.perf_counter() - t) * 1000
    except (ModelError, ImportError, RuntimeError, OSError) as exc:
        return Check(
            "model",
            FAIL,
            f"no detector loads: {exc}",
            "restore models/ from git (`git checkout -- models`) or rerun the install "
            "script; `companion train` makes a new one",
            {"order": list(order), "present": present},
        )
    if image is not None:
        view = rectify(image, cal if cal is not None else nominal_calibration(image))
        on = "this frame"
    else:
        view = np.full((INPUT_SIZE[1], INPUT_SIZE[0], 3), 128, np.uint8)
        on = "a blank view (no frame)"
    model.predict(view)  # warm-up: first runs allocate
    samples = []
    for _ in range(max(1, runs)):
        t = time.perf_counter()
        dets = model.predict(view)
        samples.append((time.perf_counter() - t) * 1000)
    ms = statistics.median(samples)
    value: dict[str, Any] = {
        "backend": model.backend,
        "order": list(order),
        "present": present,
        "latency_ms": round(ms, 1),
        "load_ms": round(load_ms),
        "strips": len(dets),
    }
    value |= _detection_step(model, image, cal, max(1, runs), fps)
    msg = (
        f"{model.backend} loads; finder {ms:.0f} ms per inference on {on} (median of "
        f"{len(samples)}); detection step {value['step_ms']:.0f} ms (first read, "
        f"{value['strips']} strips named: {value['step_first_ms']:.0f} ms) = "
        f"{value['step_x']:.2f} x one YOLO11n 640 here (budget {STEP_BUDGET_X:g} x); a bowl "
        f"that becomes servable is announced ~{value['ready_ms']:.0f} ms after the table settles "
        f"(budget {READY_BUDGET_MS:.0f} ms)"
    )
    if ms > MAX_MODEL_MS:
        return Check(
            "model",
            WARN,
            msg,
            "slow detector: use the NCNN model on a Pi (install script), a Pi 5 rather than a "
            "Pi 4, and close other programs",
            value,
        )
    if value["step_x"] > STEP_BUDGET_X or value["ready_ms"] > READY_BUDGET_MS:
        return Check(
            "model",
            WARN,
            msg,
            "detection is over its budget on this machine: close other programs (a training "
            "job, a browser), use the NCNN model and a Pi 5; the game is followed, only later",
            value,
        )
    if not backend and model.backend != order[0]:
        return Check(
            "model",
            WARN,
            msg + f" ({order[0]} preferred here but not available)",
            f"install the {order[0]} runtime and its model (rerun the install script) for "
            "faster detection",
            value,
        )
    return Check("model", OK, msg, "", value)


def _detection_step(
    model: Any,
    image: np.ndarray | None,
    cal: Any | None,
    runs: int,
    fps: float | None,
) -> dict[str, Any]:
    """The whole detection step as the pipeline runs it: markers, warp, finder, naming. The
    first read names every strip; the next ones (the finder over the whole view, as when
    something moved) name only strips that changed: none here. The finder alone is timed
    between them (a busy machine slows both alike) and stands for the reference (x
    1 / FINDER_PER_REFERENCE). A ready bowl: one camera frame, then two reads of the whole view
    that name the card laid (two strips at most)."""
    from companion.vision.calibration import MarkerWatch, calibrate
    from companion.vision.detector import CardDetector, nominal_calibration
    from companion.vision.plane import rectify

    detector = CardDetector(model)
    detector.prepare()  # as `companion run`: the first read is not timed with it
    frame = image if image is not None else np.full((720, 1280, 3), 128, np.uint8)
    markers = MarkerWatch()

    def step() -> tuple[float, int]:
        t = time.perf_counter()
        # markers looked for, as the pipeline does when they are not known to be unchanged
        if not markers.same(frame, cal) and calibrate(frame) is not None and cal is not None:
            markers.watch(cal, frame)
        reading = detector.detect(frame, cal if cal is not None else nominal_calibration(frame))
        return (time.perf_counter() - t) * 1000, reading.named

    first_ms, named = step()
    view = rectify(frame, cal if cal is not None else nominal_calibration(frame))
    warm_ms, alone_ms = [], []
    for _ in range(max(runs, 5)):
        t = time.perf_counter()
        model.predict(view)
        alone_ms.append((time.perf_counter() - t) * 1000)
        detector.forget_view()  # the finder runs, as when anything moved; names are kept
        warm_ms.append(step()[0])
    warm = statistics.median(warm_ms)
    reference = statistics.median(alone_ms) / FINDER_PER_REFERENCE
    per_strip = max(0.0, first_ms - warm) / max(1, named)
    frame_ms = 1000.0 / min(fps, 30.0) if fps else 1000.0 / 15  # a folder reads at any rate
    return {
        "step_ms": round(warm, 1),
        "step_first_ms": round(first_ms, 1),
        "strips": named,
        "reference_ms": round(reference, 1),
        "step_x": round(warm / reference, 2),
        "ready_ms": round(frame_ms + 2 * warm + 2 * per_strip),
    }


# -- markers ----------------------------------------------------------------------------------

_CORNER = {0: "top-left", 1: "top-right", 2: "bottom-right", 3: "bottom-left"}


def check_markers(image: np.ndarray) -> tuple[Check, Any]:
    """(check, calibration or None): how many of the 4 markers the frame shows."""
    from companion.vision.calibration import MIN_MARKERS, calibrate, find_markers

    found = sorted(find_markers(image))
    cal = calibrate(image)
    missing = [m for m in layout.MARKER_IDS if m not in found]
    where = ", ".join(f"{m} ({_CORNER.get(m, '?')})" for m in missing)
    value: dict[str, Any] = {
        "found": found,
        "missing": missing,
        "error_px": None if cal is None else round(cal.error_px, 2),
    }
    n = len(layout.MARKER_IDS)
    if cal is None:
        return Check(
            "markers",
            FAIL,
            f"{len(found)} of {n} markers visible (missing {where}): regions unknown",
            f"at least {MIN_MARKERS} needed: move the camera so the 4 corner markers are in "
            "view, uncover them, focus the camera if the picture is blurred, print the table "
            "kit if lost",
            value,
        ), None
    msg = f"{len(found)} of {n} markers visible, reprojection error {cal.error_px:.2f} px"
    if missing:
        return Check(
            "markers",
            WARN,
            msg + f" (missing {where})",
            "it works with 3, but uncover the hidden marker: a bumped camera is then noticed "
            "and the far edge is more accurate",
            value,
        ), cal
    if cal.error_px > MAX_REPROJECTION_PX:
        return Check(
            "markers",
            WARN,
            msg,
            "markers do not fit one plane: tape the kit flat, check the print was at 100 % "
            "scale, refocus the camera",
            value,
        ), cal
    return Check("markers", OK, msg, "", value), cal


# -- light ------------------------------------------------------------------------------------


def check_light(image: np.ndarray, cal: Any | None = None) -> Check:
    """Exposure of the play area: too dark (noise eats the digits) or clipped (white lost)."""
    from companion.vision.table_light import (
        CLIPPED_WARN,
        DARK_FAIL,
        DARK_WARN,
        exposure,
        play_view,
    )

    view, where = play_view(image, cal)
    e = exposure(view)
    value = {
        "mean": round(e.mean, 1),
        "p5": e.p5,
        "p50": e.p50,
        "p95": e.p95,
        "clipped": round(e.clipped, 4),
        "area": where,
    }
    msg = f"{where}: mean grey {e.mean:.0f}, 5-95 % {e.p5:.0f}-{e.p95:.0f}, clipped {e.clipped:.1%}"
    if e.mean < DARK_FAIL:
        return Check(
            "light",
            FAIL,
            msg + ": too dark",
            "turn on a lamp: aim for even, indirect light over the whole table",
            value,
        )
    if e.mean < DARK_WARN:
        return Check(
            "light",
            WARN,
            msg + ": dark",
            "more light: a lamp bounced off a wall or ceiling lights the table evenly",
            value,
        )
    if e.clipped > CLIPPED_WARN:
        return Check(
            "light",
            WARN,
            msg + ": overexposed",
            "too bright: dim the lamp or move it away, avoid direct sun on the table",
            value,
        )
    return Check("light", OK, msg, "", value)


def check_glare(image: np.ndarray, cal: Any | None = None) -> Check:
    """Reflections: saturated, colourless blobs (a lamp mirrored in glossy cards)."""
    from companion.vision.table_light import GLARE_WARN, glare, play_view

    view, where = play_view(image, cal)
    g = glare(view, rectified=cal is not None)
    value = {
        "fraction": round(g.fraction, 4),
        "blobs": g.blobs,
        "largest_px": g.largest_px,
        "area": where,
    }
    msg = f"{where}: {g.blobs} saturated white blobs covering {g.fraction:.1%}"
    if g.fraction > GLARE_WARN:
        return Check(
            "glare",
            WARN,
            msg + ": reflections will hide card corners",
            "dim the lamp, use indirect light (bounce it off a wall or ceiling), move it "
            "away from straight above, or fit a polarising filter on the camera",
            value,
        )
    return Check("glare", OK, msg, "", value)


def check_focus(image: np.ndarray, cal: Any | None) -> Check:
    """Lens blur on the markers' edges (`vision.focus`): a camera out of focus still finds the
    cards, then misnames or drops the ones with small numerals, and says nothing of why."""
    if cal is None:
        return _skip("focus", "no markers to measure the focus on")
    from companion.vision.focus import lens_blur

    sharp = lens_blur(image, cal)
    if sharp is None:
        return Check(
            "focus",
            WARN,
            "the markers' edges are too covered or faint to measure the focus on",
            "uncover the markers and light them evenly, then run the doctor again",
        )
    value = {
        "sigma_mm": round(sharp.sigma_mm, 3),
        "sigma_px": round(sharp.sigma_px, 2),
        "profiles": sharp.profiles,
    }
    msg = (
        f"lens blur {sharp.sigma_mm:.2f} mm on the table ({sharp.sigma_px:.1f} camera px), "
        f"from {sharp.profiles} marker edges"
    )
    if sharp.out_of_focus:
        return Check(
            "focus",
            WARN,
            msg + ": out of focus, small numerals will be missed",
            "focus the camera on the table (turn the lens of a fixed-focus module, or set the "
            "focus distance to the mount height), clean the lens, and hold the camera still",
            value,
        )
    return Check("focus", OK, msg, "", value)


# -- disk -------------------------------------------------------------------------------------


def _existing_parent(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_disk_space(log_path: Path) -> Check:
    folder = _existing_parent(log_path.parent)
    try:
        usage = shutil.disk_usage(folder)
    except OSError as exc:
        return Check(
            "disk space",
            FAIL,
            f"{folder}: {exc}",
            "check that the disk is mounted",
            {"folder": str(folder)},
        )
    free_mb = usage.free / 1e6
    value = {"folder": str(folder), "free_mb": round(free_mb), "total_mb": round(usage.total / 1e6)}
    msg = (
        f"{free_mb / 1000:.1f} GB free of {usage.total / 1e9:.1f} GB "
        f"where the game log lives ({log_path})"
    )
    if free_mb < FREE_FAIL_MB:
        return Check(
            "disk space",
            FAIL,
            msg,
            "the disk is full: delete old recordings or move the log with --log",
            value,
        )
    if free_mb < FREE_WARN_MB:
        return Check(
            "disk space",
            WARN,
            msg,
            "under 1 GB free: make room (old recordings, `sudo apt clean`)",
            value,
        )
    return Check("disk space", OK, msg, "", value)


def check_game_log(log_path: Path) -> Check:
    """The game log itself, read-only: a file that is not a readable game log (random bytes,
    another program's database, a damaged one) fails, since the game could not be kept."""
    if not log_path.exists():
        return Check("game log", OK, f"a new game log will be made at {log_path}", "")
    advice = f"move {log_path} aside (or give another place with --log); a new log is then made"
    if not log_path.is_file():
        return Check("game log", FAIL, f"{log_path} is a folder, not a game log", advice)
    try:
        conn = sqlite3.connect(f"file:{log_path}?mode=ro", uri=True, timeout=2.0)
        try:
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise sqlite3.DatabaseError(f"damaged: {check[0] if check else 'empty'}")
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if not {"games", "events"} <= tables:
                raise sqlite3.DatabaseError("a database, but not a game log")
            unfinished = conn.execute(
                "SELECT count(*) FROM games WHERE finished IS NULL"
            ).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return Check("game log", FAIL, f"{log_path} is not a readable game log ({exc})", advice)
    msg = f"{log_path} reads" + (f", {unfinished} unfinished game(s)" if unfinished else "")
    return Check("game log", OK, msg, "", {"unfinished": int(unfinished)})


def check_disk_writes(log_path: Path, events: int = 20) -> Check:
    """Time `events` appends the way the game log makes them (WAL, synchronous=FULL, one
    fsynced transaction each) in a throw-away database beside the log, then remove it."""
    folder = log_path.parent
    value: dict[str, Any] = {"folder": str(folder), "events": events}
    db: Path | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".doctor-", suffix=".sqlite", dir=folder)
        os.close(fd)
        db = Path(name)
        conn = sqlite3.connect(str(db), isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, t REAL, payload TEXT)")
            samples = []
            for i in range(events):
                t = time.perf_counter()
                conn.execute("BEGIN")
                conn.execute(
                    "INSERT INTO events (t, payload) VALUES (?, ?)",
                    (i * 0.1, '{"type": "card_added", "card": "nori-4", "region": "bowl-1"}'),
                )
                conn.execute("COMMIT")
                samples.append((time.perf_counter() - t) * 1000)
            count = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        finally:
            conn.close()
    except (OSError, sqlite3.Error) as exc:
        return Check(
            "disk writes",
            FAIL,
            f"cannot write a test log in {folder}: {exc}",
            "check permissions and that the disk is not read-only (`dmesg` shows SD errors); "
            "or give another place with --log",
            value,
        )
    finally:
        if db is not None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    Path(str(db) + suffix).unlink()
    ms = statistics.median(samples)
    worst = max(samples)
    value.update(ms_per_event=round(ms, 2), worst_ms=round(worst, 1), written=count)
    msg = f"{ms:.1f} ms per fsynced event (median of {events}, worst {worst:.0f} ms) in {folder}"
    if count != events:
        return Check("disk writes", FAIL, msg + f": {count} of {events} read back", "", value)
    if ms > SLOW_COMMIT_MS:
        return Check(
            "disk writes",
            WARN,
            msg,
            "SD card is slow: use an SSD or a high-endurance card (each event is synced to "
            "survive a power cut)",
            value,
        )
    return Check("disk writes", OK, msg, "", value)


# -- all together -----------------------------------------------------------------------------


def run_checks(
    source: FrameSource,
    log_path: Path,
    timeout: float = 5.0,
    seconds: float = 2.0,
    backend: str | None = None,
    models_dir: Path | None = None,
) -> list[Check]:
    """Every check in order; later ones skip (not fail) when there is no frame."""
    probe = probe_camera(source, timeout, seconds)
    checks = [check_camera(probe)]
    image = probe.frame.image if probe.frame is not None else None
    cal = None
    if image is not None:
        markers, cal = check_markers(image)
    checks.append(check_model(image, cal, backend, models_dir, fps=probe.fps))
    if image is None:
        checks += [
            _skip(n, "no frame from the camera") for n in ("markers", "light", "glare", "focus")
        ]
    else:
        checks += [markers, check_light(image, cal), check_glare(image, cal)]
        checks.append(check_focus(image, cal))
    checks += [check_game_log(log_path), check_disk_space(log_path), check_disk_writes(log_path)]
    return checks


def exit_code(checks: list[Check]) -> int:
    """0 when nothing failed, 1 otherwise."""
    return 1 if any(c.status == FAIL for c in checks) else 0
