"""The strip detector's inference backends: NCNN, ONNX Runtime, PyTorch (ultralytics).

All take the rectified table view padded to INPUT_SIZE, so boxes come back in its pixels with no
rescaling. ONNX and NCNN are run directly (thread count under our control, no per-call framework
overhead); PyTorch goes through ultralytics. Nothing is ever downloaded: a missing model file is
a clear error.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import cv2
import numpy as np

from companion.errors import CompanionError
from companion.vision.detections import Detections
from companion.vision.plane import RECT_SIZE

MODELS_DIR: Final = Path(__file__).resolve().parents[2] / "models"
MODEL_NAME: Final = "strips"
"""The default deck's strip finder."""
ANY_DECK_MODEL_NAME: Final = "bands"
"""The finder trained across generated deck designs, for every other deck: on the default deck
it reads one golden-frame card fewer than its own finder, so each deck keeps its best."""
"""models/strips.pt, models/strips.onnx, models/strips_ncnn_model/."""
INPUT_SIZE: Final = (
    (RECT_SIZE[0] + 31) // 32 * 32,
    (RECT_SIZE[1] + 31) // 32 * 32,
)
"""(width, height) the exported models take: the rectified view padded to a multiple of 32."""
CROP_SIZE: Final = 320
"""The NCNN finder's second export takes this square: the part of the view around a change
(an export's input size is fixed: another size corrupts memory inside NCNN)."""
BACKENDS: Final = ("ncnn", "onnx", "torch")
PAD_VALUE: Final = 114


class ModelError(CompanionError, FileNotFoundError):
    """The detector model is missing or unreadable."""


class StripModel(Protocol):
    backend: str

    def predict(self, view: np.ndarray) -> Detections: ...


def pad_view(view: np.ndarray, size: tuple[int, int] = INPUT_SIZE) -> np.ndarray:
    """Place the rectified view top-left on a `size` (width, height) canvas (no scaling)."""
    w, h = size
    out = np.full((h, w, 3), PAD_VALUE, np.uint8)
    vh, vw = view.shape[:2]
    out[: min(h, vh), : min(w, vw)] = view[:h, :w]
    return out


def _blob(view: np.ndarray, size: tuple[int, int] = INPUT_SIZE) -> np.ndarray:
    img = pad_view(view, size)[:, :, ::-1]  # BGR -> RGB
    return np.ascontiguousarray(img.transpose(2, 0, 1)[None], dtype=np.float32) / 255.0


def onnx_session(path: Path, threads: int, mem_pattern: bool = True):
    """An ONNX Runtime CPU session with our thread count (one inter-op thread).
    `mem_pattern` False: no memory plan kept per input shape (a model run on batches of many
    sizes keeps less; the same results)."""
    from companion.offline import onnxruntime

    ort = onnxruntime()  # telemetry off

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.enable_mem_pattern = mem_pattern
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


def decode(raw: np.ndarray, conf: float, iou: float) -> Detections:
    """YOLO head output (4 + classes, anchors) -> boxes after NMS."""
    raw = raw.reshape(raw.shape[-2], raw.shape[-1]) if raw.ndim == 3 else raw
    scores = raw[4:]
    cls = scores.argmax(axis=0)
    best = scores[cls, np.arange(scores.shape[1])]
    keep = best >= conf
    if not keep.any():
        return Detections.empty()
    cx, cy, w, h = raw[:4, keep]
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1).astype(np.float32)
    conf_k, cls_k = best[keep].astype(np.float32), cls[keep]
    idx = cv2.dnn.NMSBoxes(
        [[float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])] for b in xyxy],
        conf_k.tolist(),
        conf,
        iou,
    )
    keep = np.asarray(idx, int).ravel()
    return Detections(xyxy[keep], conf_k[keep], cls_k[keep].astype(int))


@dataclass
class OnnxModel:
    path: Path
    threads: int = 2
    conf: float = 0.25
    iou: float = 0.5
    backend: str = "onnx"

    def __post_init__(self) -> None:
        self._session = onnx_session(self.path, self.threads)
        self._input = self._session.get_inputs()[0].name

    def predict(self, view: np.ndarray) -> Detections:
        raw = self._session.run(None, {self._input: _blob(view)})[0]
        return decode(raw[0], self.conf, self.iou)


_NCNN_POOLS: list[Any] = []
"""(blob, workspace) pool allocators the process's NCNN nets share, made with the first."""


class PooledNet:
    """An NCNN net whose blobs and working memory come from the process's shared pool
    allocators. It holds the pools itself and lets its net go first: a pool destroyed while a
    net still holds its memory aborts the process (NCNN's "pool allocator destroyed too
    early"), as module globals would at interpreter exit."""

    def __init__(self, folder: Path, threads: int) -> None:
        import ncnn

        if not _NCNN_POOLS:
            _NCNN_POOLS.extend((ncnn.PoolAllocator(), ncnn.PoolAllocator()))
        self.net: Any = ncnn.Net()
        self._pools = tuple(_NCNN_POOLS)
        self.net.opt.num_threads = threads
        self.net.opt.blob_allocator, self.net.opt.workspace_allocator = self._pools
        self.net.load_param(str(folder / "model.ncnn.param"))
        self.net.load_model(str(folder / "model.ncnn.bin"))

    def create_extractor(self) -> Any:
        return self.net.create_extractor()

    def __del__(self) -> None:
        self.net = None  # before self._pools


def ncnn_net(folder: Path, threads: int) -> PooledNet:
    """An NCNN net loaded from an exported `*_ncnn_model` folder, sharing the process's pool
    allocators. Each net would otherwise keep a pool of its own as large as its biggest
    inference ever needed (on x86 the finder 60-70 MB, its crop export and the strip
    classifier 10-17 MB more each); they run one after the other on the pipeline's thread, so
    one pool serves them all (`companion run` on the 15 fps demo: 17 MB less at its peak)."""
    return PooledNet(folder, threads)


@dataclass
class NcnnModel:
    path: Path
    """The `*_ncnn_model` folder ultralytics exports."""
    threads: int = 2
    conf: float = 0.25
    iou: float = 0.5
    backend: str = "ncnn"
    crop_path: Path | None = None
    """The same finder exported at CROP_SIZE (`*_crop320_ncnn_model`), when there is one."""

    def __post_init__(self) -> None:
        import ncnn

        self._ncnn = ncnn
        self._net = self._load(self.path)
        self._crop_net = None
        self.crop_size: int | None = None
        """Side of the square predict_crop() takes, None without the crop export."""
        if self.crop_path is not None and (self.crop_path / "model.ncnn.param").exists():
            self._crop_net = self._load(self.crop_path)
            self.crop_size = CROP_SIZE

    def _load(self, folder: Path) -> Any:
        return ncnn_net(folder, self.threads)

    def predict(self, view: np.ndarray) -> Detections:
        return self._run(self._net, _blob(view)[0])

    def predict_crop(self, crop: np.ndarray) -> Detections:
        """Boxes in a part of the view at most crop_size square (crop pixels), by the crop
        export: a fifth of the pixels of the whole view."""
        h, w = crop.shape[:2]
        if self._crop_net is None or h > CROP_SIZE or w > CROP_SIZE:
            raise ValueError(f"predict_crop takes at most {CROP_SIZE} x {CROP_SIZE}, got {w} x {h}")
        return self._run(self._crop_net, _blob(crop, (CROP_SIZE, CROP_SIZE))[0])

    def _run(self, net: Any, blob: np.ndarray) -> Detections:
        # ncnn.Mat wraps the array without copying: both must outlive extract(), or a large
        # blob is freed (unmapped) under ncnn and the process segfaults.
        mat = self._ncnn.Mat(blob)
        ex = net.create_extractor()
        ex.input("in0", mat)
        _, out = ex.extract("out0")
        return decode(np.array(out), self.conf, self.iou)


@dataclass
class TorchModel:
    path: Path
    threads: int = 2
    conf: float = 0.25
    iou: float = 0.5
    backend: str = "torch"

    def __post_init__(self) -> None:
        import torch
        from ultralytics import YOLO

        torch.set_num_threads(self.threads)
        self._yolo = YOLO(str(self.path), task="detect")

    def predict(self, view: np.ndarray) -> Detections:
        w, h = INPUT_SIZE
        results: Any = self._yolo.predict(
            pad_view(view), imgsz=(h, w), conf=self.conf, iou=self.iou, verbose=False
        )
        result = results[0]
        return Detections.from_ultralytics(result)


def crop_model_path(models_dir: Path = MODELS_DIR, name: str = MODEL_NAME) -> Path:
    """The NCNN finder exported at CROP_SIZE (optional)."""
    return models_dir / f"{name}_crop{CROP_SIZE}_ncnn_model"


def model_path(backend: str, models_dir: Path = MODELS_DIR, name: str = MODEL_NAME) -> Path:
    return {
        "ncnn": models_dir / f"{name}_ncnn_model",
        "onnx": models_dir / f"{name}.onnx",
        "torch": models_dir / f"{name}.pt",
    }[backend]


def preferred_backends() -> tuple[str, ...]:
    """NCNN first on ARM (ultralytics' Pi recommendation), ONNX Runtime first on x86."""
    if platform.machine().lower() in ("aarch64", "arm64", "armv7l"):
        return ("ncnn", "onnx", "torch")
    return ("onnx", "ncnn", "torch")


def load_model(
    backend: str | None = None,
    models_dir: Path = MODELS_DIR,
    threads: int | None = None,
    conf: float = 0.25,
    name: str = MODEL_NAME,
) -> StripModel:
    """The strip detector on the requested backend, or the best one whose files exist."""
    # one core is left to the camera and the UI: NCNN with as many threads as cores slows
    # twenty-fold when anything else runs (measured here: 128 ms with 1 thread, ~3 s with 2)
    threads = threads or max(1, min(4, (os.cpu_count() or 2) - 1))
    order = (backend,) if backend else preferred_backends()
    for b in order:
        if b not in BACKENDS:
            raise ModelError(f"unknown backend {b!r}: choose one of {', '.join(BACKENDS)}")
        path = model_path(b, models_dir, name)
        if not path.exists():
            continue
        try:
            if b == "onnx":
                return OnnxModel(path, threads, conf)
            if b == "ncnn":
                return NcnnModel(path, threads, conf, crop_path=crop_model_path(models_dir, name))
            return TorchModel(path, threads, conf)
        except ImportError:
            if backend:
                raise ModelError(f"backend {b!r} is not installed") from None
        except Exception as exc:  # a damaged or foreign file: the runtimes raise their own types
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError(f"{path} is not a usable {b} model ({first[:200]})") from None
    raise ModelError(
        f"no detector model in {models_dir} for backend(s) {', '.join(order)}: "
        "run `companion train` or restore models/ from git"
    )
