"""A second opinion on a located strip: a YOLO classify model over the 56 cards.

Matching against the deck's faces needs no training (an enrolled deck is named at once), but it
confuses neighbouring values (5 and 6 differ by one pip and a stroke) and strips half under
another card. A small classifier trained on the namer's own upright crops of rendered frames
learns exactly those looks. Its input is the upright strip patch the namer samples (2 px/mm,
with the refinement margins), folded into a square: the left half (numeral and glyph) above
the right half (pips), padded to CLS_SIZE.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from companion.cards import CARD_IDS

CLS_SIZE: Final = 96
CLS_NAME: Final = "strip_names"
"""models/strip_names.pt (training, resume) and models/strip_names.onnx (inference)."""
PAD_VALUE: Final = 114


def fold(patch: np.ndarray) -> np.ndarray:
    """Upright strip patch (h x w x 3) -> CLS_SIZE square: left half over right half."""
    w = patch.shape[1]
    half = (w + 1) // 2
    left, right = patch[:, :half], patch[:, half : half * 2]
    if right.shape[1] < half:
        right = np.pad(right, ((0, 0), (0, half - right.shape[1]), (0, 0)), mode="edge")
    stacked = np.concatenate([left, right], axis=0)[:CLS_SIZE, :CLS_SIZE]
    out = np.full((CLS_SIZE, CLS_SIZE, 3), PAD_VALUE, np.uint8)
    sh, sw = stacked.shape[:2]
    y0, x0 = (CLS_SIZE - sh) // 2, (CLS_SIZE - sw) // 2
    out[y0 : y0 + sh, x0 : x0 + sw] = stacked
    return out


@dataclass
class StripClassifier:
    """ONNX Runtime over the exported classify model (the same file runs on x86 and the Pi)."""

    path: Path
    threads: int = 1

    def __post_init__(self) -> None:
        from companion.vision.backends import onnx_session

        self._session = onnx_session(self.path, self.threads)
        self._input = self._session.get_inputs()[0].name
        self._batch = self._session.get_inputs()[0].shape[0]

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        """(n, 56) class probabilities for upright BGR strip patches, in CARD_IDS order."""
        if not patches:
            return np.zeros((0, len(CARD_IDS)), np.float32)
        blob = np.stack([fold(p)[:, :, ::-1] for p in patches]).transpose(0, 3, 1, 2)
        blob = np.ascontiguousarray(blob, dtype=np.float32) / 255.0
        if isinstance(self._batch, int):  # a fixed-batch export: run one at a time
            outs = [self._session.run(None, {self._input: b[None]})[0] for b in blob]
            return np.concatenate(outs).astype(np.float32)
        return self._session.run(None, {self._input: blob})[0].astype(np.float32)


@dataclass
class NcnnStripClassifier:
    """The same classify model exported to NCNN (fp16 weights, batch 1: one strip at a time).
    On the Pi the whole pipeline then runs without ONNX Runtime (56 MB less memory)."""

    path: Path
    """The `strip_names_ncnn_model` folder."""
    threads: int = 1

    def __post_init__(self) -> None:
        import ncnn

        from companion.vision.backends import ncnn_net

        self._ncnn = ncnn
        self._net = ncnn_net(self.path, self.threads)

    def probabilities(self, patches: list[np.ndarray]) -> np.ndarray:
        """(n, 56) class probabilities for upright BGR strip patches, in CARD_IDS order."""
        out = np.zeros((len(patches), len(CARD_IDS)), np.float32)
        for k, patch in enumerate(patches):
            # ncnn.Mat wraps the array without copying: it must outlive extract()
            blob = np.ascontiguousarray(fold(patch)[:, :, ::-1].transpose(2, 0, 1), np.float32)
            blob /= 255.0
            mat = self._ncnn.Mat(blob)
            ex = self._net.create_extractor()
            ex.input("in0", mat)
            _, probs = ex.extract("out0")
            out[k] = np.array(probs, np.float32).reshape(-1)[: len(CARD_IDS)]
        return out


AnyStripClassifier = StripClassifier | NcnnStripClassifier
"""Either runtime: both give `probabilities(patches)`."""


def classifier_path(models_dir: Path) -> Path:
    return models_dir / f"{CLS_NAME}.onnx"


def ncnn_classifier_path(models_dir: Path) -> Path:
    return models_dir / f"{CLS_NAME}_ncnn_model"


def load_classifier(
    models_dir: Path, threads: int | None = None, backend: str | None = None
) -> StripClassifier | NcnnStripClassifier | None:
    """The classifier in `models_dir`, or None when it has not been trained there: NCNN when
    `backend` is "ncnn" (the finder's, so ONNX Runtime is never loaded on the Pi) and its
    export is there, else ONNX Runtime."""
    threads = threads or max(1, min(4, (os.cpu_count() or 2) - 1))
    folder = ncnn_classifier_path(models_dir)
    if backend == "ncnn" and (folder / "model.ncnn.param").exists():
        try:
            return NcnnStripClassifier(folder, threads)
        except ImportError:
            pass
    path = classifier_path(models_dir)
    if not path.exists():
        return None
    return StripClassifier(path, threads)
