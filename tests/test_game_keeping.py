"""Keeps the game whatever happens (issue 11), the quick part: a video cut short, resuming a
recording where it was, a camera unplugged under the running app, a full disk under the game
log, two companions on one log, a start that fails, the calibration view, saved settings.

Recordings and image folders are real OpenCV sources; the cameras that stall or come unplugged
(`UnpluggableCamera`) and the pipeline that plays a scripted table (`ScriptedPipeline`) are
test stand-ins, because no camera can be unplugged on demand here and a full disk is about the
Session, not about detection. The whole-pipeline replays are in test_session_faults.py.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np
import pytest

from companion.camera import (
    LOST,
    RECONNECTING,
    CameraError,
    Frame,
    FrameSource,
    ImageFolderSource,
    VideoFileSource,
    WatchedSource,
)
from companion.commands import run as run_command
from companion.session import REGION_COLOURS, EventSinks, Session, TablePipeline
from companion.tracking.follower import GameFollower
from companion.tracking.gamelog import GameLog, GameLogBusyError, LogLock, lock_path
from companion.ui import viewmodels as vm
from companion.ui.controller import Settings
from companion.ui.settings_store import SettingsStore
from tests.camera_helpers import grey_level, write_folder, write_video
from tests.plane_helpers import NoCards

ROOT = Path(__file__).resolve().parents[1]
DEMO_VIDEO = ROOT / "companion" / "assets" / "demo" / "recording.mp4"


def write_noise_video(path: Path, n: int, fps: float = 10.0) -> Path:
    """A longer recording than camera_helpers' grey levels allow: frame i is noise of seed i."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (96, 64))
    assert writer.isOpened()
    for i in range(n):
        writer.write(np.random.default_rng(i).integers(0, 256, (64, 96, 3), np.uint8))
    writer.release()
    return path


def wait_for(predicate, timeout: float, step: float = 0.02) -> float:
    """Seconds until predicate() held; fails after timeout."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return time.monotonic() - start
        time.sleep(step)
    raise AssertionError(f"not within {timeout} s")


# -- a recording cut short, a recording resumed ------------------------------------------------


@pytest.mark.parametrize("cut", [None, 0.5, 0.85], ids=["whole", "half", "most"])
def test_a_video_cut_short_is_an_error_where_it_stops_not_an_end(tmp_path, cut):
    video = write_noise_video(tmp_path / "game.avi", 60)
    if cut is not None:
        data = video.read_bytes()
        video.write_bytes(data[: int(len(data) * cut)])
    frames: list[Frame] = []
    with VideoFileSource(video) as source:
        if cut is None:
            frames = list(source)
        else:
            with pytest.raises(CameraError, match=r"ended at frame (\d+) of 60: the file is cut"):
                frames.extend(source)
    if cut is None:
        assert [f.index for f in frames] == list(range(60))
    else:
        assert 0 < len(frames) < 60


@pytest.mark.parametrize("kind", ["video", "folder"])
def test_start_after_continues_at_the_next_frame(tmp_path, kind):
    if kind == "video":
        path = write_video(tmp_path / "game.avi", 12, fps=10.0)

        def make(after: float) -> FrameSource:
            return VideoFileSource(path, start_after=after)
    else:
        path = write_folder(tmp_path / "shots", [f"f{i}.png" for i in range(12)])

        def make(after: float) -> FrameSource:
            return ImageFolderSource(path, fps=10.0, start_after=after)

    with make(0.45) as source:
        frames = list(source)
    assert [f.index for f in frames] == list(range(5, 12))
    assert [grey_level(f.image) for f in frames] == list(range(5, 12))
    assert frames[0].t == pytest.approx(0.5)
    with make(5.0) as source:  # everything was seen already
        assert source.read() is None


def test_a_resumed_recording_in_the_app_does_not_wait_through_the_skipped_part(tmp_path):
    video = write_noise_video(tmp_path / "game.avi", 40)
    now = [100.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    with VideoFileSource(
        video, realtime=True, start_after=3.0, clock=lambda: now[0], sleep=sleep
    ) as source:
        first = source.read()
        second = source.read()
    assert first is not None and first.index == 31
    assert second is not None and second.index == 32
    assert sum(slept) == pytest.approx(0.1)  # one frame time, not the 3 s skipped


# -- two companions on one log -----------------------------------------------------------------

HOLDER = """
import sys, time
from companion.tracking.gamelog import LogLock
lock = LogLock.acquire(sys.argv[1], "companion run --source usb:0")
print("locked", flush=True)
time.sleep(60)
"""


def test_a_second_companion_on_the_log_is_refused_and_told_who_holds_it(tmp_path):
    log = tmp_path / "games.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(log)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(GameLogBusyError) as refused:
            LogLock.acquire(log, "companion run --source picamera")
        message = str(refused.value)
        assert "\n" not in message
        assert (
            f"in use by another companion (pid {holder.pid}, `companion run --source usb:0`, since"
            in message
        )
    finally:
        holder.kill()  # kill -9: the kernel drops the lock with the process
        holder.wait()
    with LogLock.acquire(log, "companion run --source picamera"):
        assert json.loads(lock_path(log).read_text())["pid"] == os.getpid()
        with pytest.raises(GameLogBusyError):
            LogLock.acquire(log, "companion demo")
    assert not lock_path(log).exists(), "a clean exit leaves no lock file behind"


# -- the camera lost under the running app -----------------------------------------------------


class UnpluggableCamera(FrameSource):
    """Tests only: a live camera that delivers while `plugged` is set; unplugged, its read
    blocks (as V4L2 does) then fails, and it cannot be opened again until plugged back."""

    is_live = True

    def __init__(self, plugged: threading.Event) -> None:
        self.name = "usb:7"
        self.plugged = plugged
        self.index = 0

    def open(self) -> None:
        if not self.plugged.is_set():
            raise CameraError("camera usb:7 did not open (is it plugged in and free?)")
        self.t0 = time.monotonic()

    def read(self) -> Frame | None:
        if not self.plugged.is_set():
            time.sleep(0.5)
            raise CameraError("camera usb:7 delivered no frame")
        time.sleep(0.02)
        self.index += 1
        return Frame(np.full((48, 64, 3), 90, np.uint8), time.monotonic() - self.t0, self.index)

    def close(self) -> None:
        pass


def test_camera_lost_is_on_screen_within_3_s_and_goes_when_it_comes_back(caplog):
    caplog.set_level(logging.INFO, logger="companion")
    plugged = threading.Event()
    plugged.set()
    source = WatchedSource(
        lambda: UnpluggableCamera(plugged),
        stall_seconds=run_command.STALL_SECONDS,
        backoff=0.1,
        max_backoff=0.2,
    )
    pipeline = TablePipeline(cast(Any, None), GameFollower("2p", ["Alice", "Bob"]))
    source.open()
    session = Session(source, pipeline)
    session.start()
    try:
        wait_for(lambda: pipeline.frames >= 5, 5.0)
        assert session.view().camera == "markers not found"  # a grey picture: no table yet
        plugged.clear()
        shown = wait_for(lambda: session.view().camera in (LOST, RECONNECTING), 5.0)
        assert shown <= 3.0, f"camera lost shown after {shown:.2f} s"
        model = vm.table_model(session.view(), "en")
        assert model.camera_text in ("Camera lost", "Camera lost: reconnecting…")
        assert not model.camera_ok
        assert vm.table_model(session.view(), "fr").camera_text.startswith("Caméra perdue")
        frames_while_lost = pipeline.frames
        time.sleep(1.0)
        assert session.view().camera in (LOST, RECONNECTING)
        plugged.set()
        wait_for(lambda: session.view().camera not in (LOST, RECONNECTING), 5.0)
        wait_for(lambda: pipeline.frames > frames_while_lost + 3, 5.0)
        assert session.error is None and not session.ended.is_set()
    finally:
        session.stop()
        source.close()
    logged = [r.getMessage() for r in caplog.records if r.name == "companion.camera.watchdog"]
    assert any("no frame for 2.5 s" in m for m in logged), logged
    assert any("frames again" in m for m in logged), logged


# -- the pipeline stops: a full disk, a bug ----------------------------------------------------

FRIDGE = {"nori-4": "fridge", "negi-2": "fridge", "menma-5": "fridge", "chashu-1": "fridge"}


class ScriptedPipeline(TablePipeline):
    """Tests only: frame i shows table i (cards moving in and out of bowl 1), so what is
    under test is the Session around the pipeline, not detection."""

    def __init__(self, follower: GameFollower, fail_at: int | None = None) -> None:
        super().__init__(cast(Any, None), follower)
        self.fail_at = fail_at

    def process(self, frame: Frame) -> list[dict[str, Any]]:
        self.frames += 1
        if frame.index == self.fail_at:
            raise ValueError("a bug in the pipeline")
        table = dict(FRIDGE)
        if frame.index % 2:
            table["ajitama-7"] = "bowl-1"
        return self.follower.update(table, frame.t)


def test_a_full_disk_under_the_log_stops_the_pipeline_on_screen_and_loses_nothing(tmp_path, caplog):
    path = tmp_path / "games.sqlite"
    log = GameLog.open(path)
    follower = GameFollower("2p", ["Alice", "Bob"])
    games: list[str] = []

    def start() -> str:
        games.append(log.new_game("2p", ["Alice", "Bob"], "test"))
        # the disk is full from now on: SQLite cannot grow the file past its current pages
        pages = log._conn.execute("PRAGMA page_count").fetchone()[0]
        log._conn.execute(f"PRAGMA max_page_count = {pages}")
        return games[-1]

    follower.sink = EventSinks(log, None, start=start)
    source = VideoFileSource(write_noise_video(tmp_path / "table.avi", 400))
    source.open()
    session = Session(source, ScriptedPipeline(follower))
    session.start()
    try:
        assert session.ended.wait(30), "the pipeline thread must end, not hang"
    finally:
        session.stop()
        source.close()
    assert session.error is not None and "full" in session.error
    assert not session.source_ended
    view = session.view()
    assert view.error == session.error
    model = vm.table_model(view, "en")
    assert model.camera_text == f"Stopped: {session.error}" and not model.camera_ok
    assert any(
        r.levelno == logging.ERROR and "pipeline stopped" in r.getMessage() for r in caplog.records
    )
    log.close()
    with GameLog.open(path) as reopened:
        logged = reopened.events(games[0])
    assert len(logged) > 10, "events went in until the disk was full"
    # nothing lost: every event written is the follower's, in order; the one that did not fit
    # is the next one, and the game stays unfinished for --resume
    assert logged == [json.loads(json.dumps(e)) for e in follower.events[: len(logged)]]
    assert len(follower.events) > len(logged)


def test_a_bug_in_the_pipeline_is_logged_with_its_traceback_and_shown(tmp_path, caplog):
    follower = GameFollower("2p", ["Alice", "Bob"])
    source = VideoFileSource(write_noise_video(tmp_path / "table.avi", 20))
    source.open()
    session = Session(source, ScriptedPipeline(follower, fail_at=6))
    session.start()
    try:
        assert session.ended.wait(10)
    finally:
        session.stop()
        source.close()
    assert session.error == "ValueError: a bug in the pipeline"
    assert session.view().error == session.error
    (record,) = [r for r in caplog.records if r.name == "companion.session"]
    assert record.levelno == logging.ERROR and record.exc_info is not None


# -- a start that fails leaves no game ---------------------------------------------------------


def _interrupted_game(path: Path) -> tuple[str, int]:
    with GameLog.open(path) as log:
        gid = log.new_game("2p", ["Alice", "Bob"], "usb:0")
        follower = GameFollower("2p", ["Alice", "Bob"], sink=lambda e: log.append(gid, e))
        follower.update(FRIDGE, 1.0)
        follower.update({**FRIDGE, "ajitama-7": "bowl-1"}, 2.0)
        return gid, len(follower.events)


@pytest.mark.parametrize(
    "source",
    ["usb:97", "missing.avi", "empty-folder", "garbage.avi", "picamera"],
)
def test_a_run_whose_source_fails_logs_no_game_and_resume_finds_the_real_one(tmp_path, source):
    log = tmp_path / "games.sqlite"
    gid, n = _interrupted_game(log)
    (tmp_path / "empty-folder").mkdir()
    (tmp_path / "garbage.avi").write_bytes(os.urandom(4000))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["run", "--headless", "--source", source, "--log", str(log)]
    proc = subprocess.run(
        [sys.executable, "-m", "companion", *argv],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    with GameLog.open(log) as reopened:
        assert [g.id for g in reopened.games()] == [gid]
        resumable = reopened.last_unfinished_game()
    assert resumable is not None and (resumable.id, resumable.events) == (gid, n)
    assert not lock_path(log).exists()


# -- the calibration view, saved settings ------------------------------------------------------


@pytest.fixture(scope="module")
def table_frames(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("table")
    cap = cv2.VideoCapture(str(DEMO_VIDEO))
    for i in range(3):
        ok, image = cap.read()
        assert ok
        cv2.imwrite(str(folder / f"f{i}.png"), image)
    cap.release()
    return folder


@pytest.mark.parametrize("on", [False, True])
def test_the_calibration_view_draws_the_regions_on_the_preview(table_frames, on):
    pipeline = TablePipeline(cast(Any, NoCards()), GameFollower("2p", ["Alice", "Bob"]))
    with ImageFolderSource(table_frames) as source:
        session = Session(source, pipeline)
        session.apply_settings(Settings(calibration_view=on))
        session.start()
        assert session.ended.wait(30)
    frame = session.latest_frame()
    assert frame is not None and pipeline.calibration is not None
    drawn = 0
    for region in ("fridge", "bowl-1", "scan"):
        drawn += int(np.all(frame == np.array(REGION_COLOURS[region], np.uint8), axis=2).sum())
    if on:
        assert drawn > 300
    else:
        assert drawn < 20
    assert pipeline.last_reading is not None  # the frame the pipeline read is never drawn on


def test_settings_are_kept_between_runs(tmp_path):
    path = tmp_path / "cfg" / "settings.json"
    SettingsStore(path).save(
        Settings(source="usb:0", language="fr", sound=False, voice=True, calibration_view=True)
    )
    loaded = SettingsStore(path).load(Settings(source="picamera"))
    assert loaded == Settings(
        source="picamera", language="fr", sound=False, voice=True, calibration_view=True
    )
    assert "source" not in json.loads(path.read_text())  # the camera is the session's own


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe not json", b"[1, 2]", b'{"language": "de", "sound": "yes", "voice": true}'],
    ids=["garbage", "not-an-object", "bad-values"],
)
def test_a_bad_settings_file_gives_the_defaults_and_never_stops_the_kiosk(
    tmp_path, content, caplog
):
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    loaded = SettingsStore(path).load(Settings(source="picamera"))
    expected_voice = content.startswith(b"{")  # the one good value of the third file is kept
    assert loaded == Settings(source="picamera", voice=expected_voice)
    assert any(r.levelno == logging.WARNING for r in caplog.records)


# -- nothing phones home -----------------------------------------------------------------------

OFFLINE_PROBE = """
import json, socket, sys
import numpy as np
looked_up = []
def no_network(host, *args, **kwargs):
    looked_up.append(str(host))
    raise OSError("no network in this test")
socket.getaddrinfo = no_network
import onnxruntime
telemetry_off = []
onnxruntime.disable_telemetry_events = lambda: telemetry_off.append(True)
from companion.vision.backends import load_model
for backend in sys.argv[1:]:
    load_model(backend, threads=1).predict(np.zeros((440, 780, 3), np.uint8))
print(json.dumps({"looked_up": looked_up, "telemetry_off": len(telemetry_off)}))
"""


@pytest.mark.slow
def test_no_backend_looks_anything_up_on_the_network_and_onnx_telemetry_is_off():
    """Without the kiosk unit's YOLO_OFFLINE: importing the companion is enough."""
    env = {k: v for k, v in os.environ.items() if k != "YOLO_OFFLINE"}
    env["YOLO_CONFIG_DIR"] = str(ROOT / ".yolo")
    proc = subprocess.run(
        [sys.executable, "-c", OFFLINE_PROBE, "onnx", "torch", "ncnn"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"looked_up": [], "telemetry_off": 1}


def test_a_correction_the_follower_refuses_does_not_stop_following(tmp_path, caplog):
    follower = GameFollower("2p", ["Alice", "Bob"])
    source = VideoFileSource(write_noise_video(tmp_path / "table.avi", 30))
    source.open()
    session = Session(source, ScriptedPipeline(follower))
    session.correct_card("shiitake-6", "shiitake-5")  # never seen in this game
    session.start()
    try:
        assert session.ended.wait(10)
        session.reassign_served(3, "Bob")  # after the end: run at once, on this thread
    finally:
        session.stop()
        source.close()
    assert session.error is None and session.source_ended
    # every frame was followed: the four Fridge cards, then the card in bowl 1 on 15 odd frames
    assert len([e for e in follower.events if e["type"] == "card_added"]) == 4 + 15
    refused = [r.getMessage() for r in caplog.records if "correction refused" in r.getMessage()]
    assert len(refused) == 2, refused


# -- a step is logged whole or not at all ------------------------------------------------------

STEPS_CHILD = """
import sys
from companion.session import EventSinks
from companion.tracking.gamelog import GameLog

log = GameLog.open(sys.argv[1])
gid = log.new_game("2p", ["Alice", "Bob"], "usb:0")
print(gid, flush=True)
sinks = EventSinks(log, gid)
for step in range(1_000_000):
    with sinks.atomic():  # one settled change: its observations and what they made happen
        for k in range(6):
            sinks({"t": step / 10, "type": "card_added", "card": "nori-4", "step": step, "k": k})
    print(step, flush=True)
"""


@pytest.mark.parametrize("kill_after", [1, 5, 12, 25, 40])
def test_a_kill_mid_step_leaves_whole_steps_only(tmp_path, kill_after):
    """What --resume starts from: never half a step (e.g. a card taken from the Fridge logged
    without the turn it ended)."""
    import signal

    path = tmp_path / "games.sqlite"
    child = subprocess.Popen(
        [sys.executable, "-c", STEPS_CHILD, str(path)], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    assert child.stdout is not None
    gid = child.stdout.readline().strip()
    acked = -1
    while acked < kill_after:
        acked = int(child.stdout.readline())
    child.send_signal(signal.SIGKILL)  # mid-stream: the child is busy writing steps
    acked = max([acked, *(int(x) for x in child.stdout.read().split())])
    child.wait()
    with GameLog.open(path) as log:
        events = log.events(gid)
    assert len(events) % 6 == 0, f"{len(events)} events: a step was cut"
    steps = [(e["step"], e["k"]) for e in events]
    assert steps == [(s, k) for s in range(len(events) // 6) for k in range(6)]
    assert len(events) // 6 >= acked + 1, "an acknowledged step was lost"
