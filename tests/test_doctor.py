"""`companion doctor` on real recordings written here from the golden frames, on a stalled camera
(a test-only source that blocks in read(), as a hung driver does) and on a throw-away game log."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion import doctor
from companion.camera import CameraError, Frame, FrameSource, VideoFileSource
from companion.cli import main
from companion.doctor import FAIL, OK, SKIP, WARN
from companion.vision.backends import MODELS_DIR, model_path, preferred_backends

GOLDEN = Path(__file__).parent / "data" / "golden"


def golden(name: str) -> np.ndarray:
    image = cv2.imread(str(GOLDEN / f"{name}.jpg"))
    assert image is not None
    return image


def write_video(path: Path, image: np.ndarray, frames: int = 12, fps: float = 10.0) -> Path:
    h, w = image.shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    assert writer.isOpened()
    for _ in range(frames):
        writer.write(image)
    writer.release()
    return path


def has_model() -> bool:
    return any(model_path(b).exists() for b in preferred_backends())


class StalledSource(FrameSource):
    """Delivers `frames` frames, then blocks in read() until released (a hung driver)."""

    is_live = True

    def __init__(self, frames: int = 0, fail_open: bool = False) -> None:
        self.name = "stalled-camera"
        self.frames = frames
        self.fail_open = fail_open
        self.release = threading.Event()
        self.closed = threading.Event()
        self._n = 0

    def open(self) -> None:
        if self.fail_open:
            raise CameraError("camera stalled-camera did not open (is it plugged in and free?)")

    def read(self) -> Frame | None:
        if self._n < self.frames:
            self._n += 1
            return Frame(golden("table-3"), self._n * 0.1, self._n - 1)
        self.release.wait()
        return None

    def close(self) -> None:
        self.closed.set()


@pytest.fixture
def stalled() -> Iterator[StalledSource]:
    source = StalledSource()
    yield source
    source.release.set()  # let the abandoned reader thread finish


def run_doctor(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["doctor", "--json", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out)


def by_name(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


# -- a golden-frame recording ------------------------------------------------------------------


def test_golden_video_is_ready_except_what_the_model_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    video = write_video(tmp_path / "table.avi", golden("table-3"))
    log = tmp_path / "logs" / "games.sqlite"
    code, report = run_doctor(capsys, "--source", str(video), "--log", str(log))
    checks = by_name(report)
    assert list(checks) == [
        "camera",
        "model",
        "markers",
        "light",
        "glare",
        "focus",
        "game log",
        "disk space",
        "disk writes",
    ]
    assert checks["camera"]["status"] == OK
    assert checks["camera"]["value"]["width"] == 1280
    assert checks["camera"]["value"]["frames"] >= 2
    assert checks["markers"]["status"] == OK
    assert checks["markers"]["value"]["found"] == [0, 1, 2, 3]
    assert checks["markers"]["value"]["error_px"] < doctor.MAX_REPROJECTION_PX
    assert checks["light"]["status"] == OK
    assert checks["glare"]["status"] == OK
    assert checks["focus"]["status"] == OK
    assert checks["disk writes"]["status"] in (OK, WARN)
    assert checks["disk writes"]["value"]["written"] == 20
    assert list(log.parent.iterdir()) == []  # the test database is gone
    assert not log.exists()  # the doctor never creates the game log itself
    model_failed = checks["model"]["status"] == FAIL
    assert model_failed == (not has_model())
    assert code == (1 if model_failed else 0)
    assert report["ok"] == (code == 0)


def test_text_report_has_one_line_per_check_and_advice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dark = (golden("table-3") * 0.15).astype(np.uint8)
    video = write_video(tmp_path / "dark.avi", dark, frames=4)
    code = main(["doctor", "--source", str(video), "--log", str(tmp_path / "g.sqlite")])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    light = next(line for line in lines if line.split()[1:2] == ["light"])
    assert light.startswith(FAIL)
    advice = lines[lines.index(light) + 1]
    assert "->" in advice and "lamp" in advice
    assert "failed" in lines[-1]


@pytest.mark.parametrize(
    ("scale", "expected"),
    [(1.0, OK), (0.33, WARN), (0.15, FAIL)],
)
def test_light_verdict_follows_exposure(tmp_path: Path, scale: float, expected: str) -> None:
    image = np.clip(golden("table-3") * scale, 0, 255).astype(np.uint8)
    probe = doctor.probe_camera(VideoFileSource(write_video(tmp_path / "v.avi", image, 3)))
    assert probe.frame is not None
    _, cal = doctor.check_markers(probe.frame.image)
    check = doctor.check_light(probe.frame.image, cal)
    assert check.status == expected, check.message
    assert (check.advice == "") == (expected == OK)


def with_glare(image: np.ndarray, spots: int) -> np.ndarray:
    """Lamp reflections: saturated white ellipses over the middle of the table."""
    out = image.copy()
    h, w = out.shape[:2]
    for k in range(spots):
        centre = (w // 4 + k * w // 8, h // 2 + (k % 2) * h // 8)
        cv2.ellipse(out, centre, (w // 30, h // 40), 20, 0, 360, (255, 255, 255), -1)
    return out


def covered(image: np.ndarray, markers: tuple[int, ...]) -> np.ndarray:
    """`markers` hidden under a grey cloth (a cup, a hand)."""
    from companion.vision.calibration import find_markers

    out = image.copy()
    for mid, corners in find_markers(image).items():
        if mid in markers:
            centre = corners.mean(axis=0)
            big = centre + 1.6 * (corners - centre)
            cv2.fillConvexPoly(out, np.round(big).astype(np.int32), (110, 110, 110))
    return out


@pytest.mark.parametrize(("spots", "expected"), [(0, OK), (1, OK), (6, WARN)])
def test_glare_counts_saturated_blobs_in_the_play_area(spots: int, expected: str) -> None:
    image = with_glare(golden("table-3"), spots)
    _, cal = doctor.check_markers(image)
    check = doctor.check_glare(image, cal)
    assert check.status == expected, check.message
    assert check.value is not None and check.value["blobs"] >= spots
    if expected == WARN:
        assert "polarising filter" in check.advice and "indirect light" in check.advice


def test_overexposed_frame_warns() -> None:
    image = np.clip(golden("table-3") * 1.8, 0, 255).astype(np.uint8)  # white card faces clip
    _, cal = doctor.check_markers(image)
    assert doctor.check_light(image, cal).status == WARN


@pytest.mark.parametrize(
    ("hidden", "status"),
    [((), OK), ((2,), WARN), ((1, 3), FAIL)],
)
def test_markers_verdict_by_how_many_show(hidden: tuple[int, ...], status: str) -> None:
    check, cal = doctor.check_markers(covered(golden("table-3"), hidden))
    assert check.status == status, check.message
    assert check.value is not None
    assert check.value["missing"] == list(hidden)
    assert (cal is None) == (status == FAIL)
    for mid in hidden:
        assert f"{mid} (" in check.message


# -- stalled and missing cameras --------------------------------------------------------------


def test_stalled_camera_fails_after_the_timeout(stalled: StalledSource) -> None:
    result: list[doctor.CameraProbe] = []
    worker = threading.Thread(target=lambda: result.append(doctor.probe_camera(stalled, 0.5)))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the doctor hung on a stalled camera"
    check = doctor.check_camera(result[0])
    assert check.status == FAIL
    assert "no frame within 0.5 s" in check.message
    assert "ribbon cable" not in check.advice  # not a Pi camera
    assert check.advice
    assert not stalled.closed.is_set()  # never closed under a blocked read


def test_camera_that_stops_midway_is_a_warning() -> None:
    source = StalledSource(frames=3)
    try:
        probe = doctor.probe_camera(source, timeout=0.5, seconds=5.0)
    finally:
        source.release.set()
    check = doctor.check_camera(probe)
    assert probe.frames == 3 and probe.frame is not None
    assert check.status == WARN
    assert "after 3 frames" in check.message


def test_camera_that_errors_midway_is_a_warning() -> None:
    class Failing(StalledSource):
        def read(self) -> Frame | None:
            if self._n >= self.frames:
                raise CameraError("camera stalled-camera delivered no frame")
            return super().read()

    check = doctor.check_camera(doctor.probe_camera(Failing(frames=2), timeout=0.5))
    assert check.status == WARN
    assert "delivered no frame" in check.message


def test_camera_that_does_not_open_fails_with_its_message() -> None:
    check = doctor.check_camera(doctor.probe_camera(StalledSource(fail_open=True), 0.5))
    assert check.status == FAIL
    assert "did not open" in check.message


def test_stalled_camera_through_the_cli_does_not_hang(
    stalled: StalledSource,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("companion.camera.open_source", lambda spec, **_: stalled)
    code, report = run_doctor(
        capsys, "--source", "usb:7", "--timeout", "0.5", "--log", str(tmp_path / "g.sqlite")
    )
    checks = by_name(report)
    assert code == 1 and report["ok"] is False
    assert checks["camera"]["status"] == FAIL
    assert [checks[n]["status"] for n in ("markers", "light", "glare", "focus")] == [SKIP] * 4
    assert checks["disk writes"]["status"] in (OK, WARN)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--source", "no/such/video.mp4"], "not found"),
        (["--source", "usb:x"], "expected usb:N"),
        (["--source", "usb:0", "--timeout", "0"], "--timeout must be positive"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("companion doctor: error:")
    assert says in err[0]


# -- disk -------------------------------------------------------------------------------------


def test_disk_writes_time_fsynced_events_and_clean_up(tmp_path: Path) -> None:
    log = tmp_path / "new" / "games.sqlite"
    check = doctor.check_disk_writes(log, events=5)
    assert check.status in (OK, WARN)
    assert check.value is not None and check.value["written"] == 5
    assert check.value["ms_per_event"] > 0
    assert list(log.parent.iterdir()) == []


def test_disk_writes_fail_where_nothing_can_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    check = doctor.check_disk_writes(blocker / "games.sqlite")
    assert check.status == FAIL
    assert "--log" in check.advice


def test_slow_commits_warn_about_the_sd_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doctor, "SLOW_COMMIT_MS", 0.0)
    check = doctor.check_disk_writes(tmp_path / "games.sqlite", events=3)
    assert check.status == WARN
    assert "SSD or a high-endurance card" in check.advice


@pytest.mark.parametrize(("free_mb", "status"), [(50_000, OK), (500, WARN), (20, FAIL)])
def test_disk_space_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, free_mb: int, status: str
) -> None:
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    fake = usage(64_000 * 10**6, 0, free_mb * 10**6)
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda _: fake)
    check = doctor.check_disk_space(tmp_path / "missing" / "games.sqlite")
    assert check.status == status
    assert check.value is not None and check.value["folder"] == str(tmp_path)


# -- model ------------------------------------------------------------------------------------


def test_missing_model_fails_with_what_to_do(tmp_path: Path) -> None:
    check = doctor.check_model(golden("table-3"), models_dir=tmp_path)
    assert check.status == FAIL
    assert "models/" in check.advice


@pytest.mark.skipif(not has_model(), reason=f"no detector model in {MODELS_DIR} yet")
def test_model_loads_on_the_best_backend_and_is_timed() -> None:
    image = golden("table-3")
    _, cal = doctor.check_markers(image)
    check = doctor.check_model(image, cal, runs=2)
    assert check.status in (OK, WARN), check.message
    assert check.value is not None
    present = [b for b in preferred_backends() if model_path(b).exists()]
    assert check.value["backend"] == present[0]
    assert check.value["latency_ms"] > 0


@pytest.mark.skipif(not has_model(), reason=f"no detector model in {MODELS_DIR} yet")
def test_model_check_times_the_whole_detection_step_against_its_budgets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    image = golden("table-3")
    _, cal = doctor.check_markers(image)
    check = doctor.check_model(image, cal, runs=2, fps=15.0)
    assert check.value is not None
    value = check.value
    assert value["strips"] > 10  # the first read names every strip of the golden table
    assert value["step_first_ms"] > 0 and value["step_ms"] > 0
    assert value["step_x"] == pytest.approx(value["step_ms"] / value["reference_ms"], abs=0.02)
    assert value["ready_ms"] >= 1000 / 15
    assert "detection step" in check.message and "budget" in check.message
    monkeypatch.setattr(doctor, "STEP_BUDGET_X", 1e-6)  # any machine is over this budget
    over = doctor.check_model(image, cal, runs=1)
    assert over.status == WARN and over.advice


@pytest.mark.parametrize("backend", ["ncnn", "onnx", "torch"])
def test_each_exported_backend_runs_on_a_frame(backend: str) -> None:
    if not model_path(backend).exists():
        pytest.skip(f"no {backend} model in {MODELS_DIR}")
    image = golden("table-3")
    _, cal = doctor.check_markers(image)
    check = doctor.check_model(image, cal, backend=backend, runs=1)
    assert check.status in (OK, WARN), check.message
    assert check.value is not None and check.value["backend"] == backend
