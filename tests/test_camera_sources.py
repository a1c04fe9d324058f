"""Frame sources on real OpenCV files; the Pi adapter with a stand-in for the missing hardware."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

from companion.camera import (
    CameraError,
    ImageFolderSource,
    OpenCVDeviceSource,
    PiCameraSource,
    VideoFileSource,
    open_source,
)
from companion.camera.picamera import NOT_INSTALLED
from companion.errors import CompanionError
from tests.camera_helpers import H, W, grey_level, write_folder, write_video


@pytest.mark.parametrize(("fourcc", "suffix"), [("MJPG", ".avi"), ("mp4v", ".mp4")])
def test_video_file_delivers_every_frame_in_order_then_ends(tmp_path, fourcc, suffix):
    video = write_video(tmp_path / f"game{suffix}", n=8, fps=10.0, fourcc=fourcc)
    with VideoFileSource(video) as source:
        frames = list(source)
        assert source.read() is None  # stays ended
    assert [f.index for f in frames] == list(range(8))
    assert [f.t for f in frames] == pytest.approx([i / 10.0 for i in range(8)])
    assert [grey_level(f.image) for f in frames] == list(range(8))
    assert all(f.image.shape == (H, W, 3) and f.image.dtype == np.uint8 for f in frames)
    assert source.is_live is False


def test_video_realtime_paces_at_recorded_fps(tmp_path):
    video = write_video(tmp_path / "game.avi", n=4, fps=5.0)
    now = [100.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    with VideoFileSource(video, realtime=True, clock=lambda: now[0], sleep=sleep) as source:
        frames = list(source)
    assert len(frames) == 4
    assert sum(sleeps) == pytest.approx(3 / 5.0)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "video file not found"), (b"garbage" * 200, "cannot decode video file")],
)
def test_missing_or_corrupt_video_is_one_line_camera_error(tmp_path, content, message):
    path = tmp_path / "game.mp4"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CameraError, match=message) as info:
        VideoFileSource(path).open()
    assert "\n" not in str(info.value)
    assert isinstance(info.value, CompanionError) and isinstance(info.value, OSError)


def test_image_folder_natural_order_and_corrupt_image_skipped(tmp_path):
    names = ["img1.png", "img2.png", "img10.png", "img11.png"]
    # written in natural order: frame i has grey level i, and img10 is corrupt
    folder = write_folder(tmp_path / "shots", names, corrupt=("img10.png",))
    (folder / "notes.txt").write_text("not an image")
    skipped: list[Path] = []
    with ImageFolderSource(folder, fps=2.0, on_skip=lambda p, why: skipped.append(p)) as source:
        frames = list(source)
    assert [f.index for f in frames] == [0, 1, 3]
    assert [grey_level(f.image) for f in frames] == [0, 1, 3]
    assert [f.t for f in frames] == [0.0, 0.5, 1.5]
    assert skipped == [folder / "img10.png"]
    assert source.skipped == 1


@pytest.mark.parametrize(
    ("names", "corrupt", "message"),
    [([], (), "no images in folder"), (["a.png", "b.png"], ("a.png", "b.png"), "no readable")],
)
def test_folder_without_readable_images_is_camera_error(tmp_path, names, corrupt, message):
    folder = write_folder(tmp_path / "shots", names, corrupt=corrupt)
    with pytest.raises(CameraError, match=message):
        ImageFolderSource(folder).open()


def test_open_source_picks_the_backend(tmp_path):
    video = write_video(tmp_path / "game.avi", n=2)
    folder = write_folder(tmp_path / "shots", ["a.png"])
    assert isinstance(open_source(str(video)), VideoFileSource)
    assert isinstance(open_source(str(folder), fps=5.0), ImageFolderSource)
    assert isinstance(open_source("usb:3"), OpenCVDeviceSource)
    assert open_source("usb:3").name == "usb:3"
    assert isinstance(open_source("picamera"), PiCameraSource)
    assert open_source(str(video), realtime=True).realtime is True


@pytest.mark.parametrize("spec", ["usb:x", "webcam", "/no/such/game.mp4", ""])
def test_unknown_source_is_one_line_camera_error(spec):
    with pytest.raises(CameraError) as info:
        open_source(spec)
    assert "\n" not in str(info.value)


def test_absent_usb_camera_is_camera_error():
    with pytest.raises(CameraError, match=r"camera usb:97 did not open"):
        OpenCVDeviceSource(97).open()


# -- Pi camera: no Pi here, so the picamera2 module is replaced inside these tests only --------


def test_picamera_without_picamera2_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # makes `import picamera2` fail
    with pytest.raises(CameraError) as info:
        PiCameraSource().open()
    assert str(info.value) == NOT_INSTALLED


class _FakeRequest:
    def __init__(self, cam: _FakePicamera2, fail: bool) -> None:
        self.cam, self.fail = cam, fail

    def make_array(self, stream: str) -> np.ndarray:
        assert stream == "main"
        if self.fail:
            raise RuntimeError("dma buffer gone")
        return self.cam.buffer

    def release(self) -> None:
        self.cam.released += 1


class _FakePicamera2:
    instances: list[_FakePicamera2] = []  # noqa: RUF012

    def __init__(self, camera_num: int = 0) -> None:
        self.buffer = np.zeros((1296, 2304, 3), np.uint8)
        self.config: dict | None = None
        self.controls: list[dict] = []
        self.released = 0
        self.fail_next = False
        self.started = self.closed = False
        self.af_cycles = 0
        _FakePicamera2.instances.append(self)

    def create_video_configuration(self, **kwargs):
        return kwargs

    def configure(self, config):
        self.config = config

    def start(self):
        self.started = True

    def autofocus_cycle(self):
        self.af_cycles += 1
        return True

    def capture_metadata(self):
        return {"LensPosition": 1.7}

    def set_controls(self, controls):
        self.controls.append(controls)

    def capture_request(self):
        fail, self.fail_next = self.fail_next, False
        return _FakeRequest(self, fail)

    def stop(self):
        self.started = False

    def close(self):
        self.closed = True


@pytest.fixture
def fake_picamera2(monkeypatch):
    module = types.ModuleType("picamera2")
    module.Picamera2 = _FakePicamera2  # type: ignore[attr-defined]
    _FakePicamera2.instances = []
    monkeypatch.setitem(sys.modules, "picamera2", module)
    return _FakePicamera2


def test_picamera_configures_binned_bgr_stream_with_focus_locked_at_table(fake_picamera2):
    with PiCameraSource(table_distance_mm=700) as source:
        cam = fake_picamera2.instances[0]
        config = cam.config
        assert config["main"] == {"size": (2304, 1296), "format": "RGB888"}
        assert config["sensor"] == {"output_size": (2304, 1296)}
        assert 2 <= config["buffer_count"] <= 4
        controls = config["controls"]
        assert controls["AfMode"] == 0  # manual
        assert controls["LensPosition"] == pytest.approx(1 / 0.7)
        assert controls["AeEnable"] is True
        assert controls["FrameDurationLimits"] == (33333, 33333)
        frame = source.read()
        cam.buffer[:] = 255  # picamera2 reuses the buffer once released
    assert frame is not None and frame.image.shape == (1296, 2304, 3)
    assert frame.image.max() == 0
    assert cam.released == 1 and cam.closed


def test_picamera_releases_the_request_even_when_reading_fails(fake_picamera2):
    with PiCameraSource() as source:
        cam = fake_picamera2.instances[0]
        cam.fail_next = True
        with pytest.raises(CameraError, match="dma buffer gone"):
            source.read()
        assert cam.released == 1
        assert source.read() is not None
        assert cam.released == 2


def test_picamera_autofocus_once_then_locks(fake_picamera2):
    with PiCameraSource(autofocus="once"):
        cam = fake_picamera2.instances[0]
        assert cam.af_cycles == 1
        assert "AfMode" not in cam.config["controls"]
        assert cam.controls[-1] == {"AfMode": 0, "LensPosition": 1.7}
