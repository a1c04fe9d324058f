"""A learned comparison of card bands: `models/bandnet.onnx` maps the top 12 mm of a band to a
unit vector, so that a band seen by the camera lies nearest the enrolled band of its own card.

It was trained on decks of many generated designs (`python -m
companion.training.band_embed`), each step a
whole deck's 112 references against camera views of its cards, so it learned what tells two
cards of *one* deck apart (a numeral, an icon, a colour) rather than any one deck's art. Run
time needs only ONNX Runtime; the hand-made scores of the band namer stay as its fallback.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Final

import numpy as np

from companion.layout import CARD_W_MM
from companion.vision.backends import MODELS_DIR, ModelError, onnx_session

EMBED_PPM: Final = 2.5
TOP_MM: Final = 12.0
"""Only the top 12 mm of a band are compared: the tightest cascade (12 mm) still shows them."""
EMBED_W: Final = round(CARD_W_MM * EMBED_PPM)
EMBED_H: Final = round(TOP_MM * EMBED_PPM)
END_SHARPNESS: Final = 8.0
"""A card's similarity is a soft maximum over its two ends (top band, bottom band turned)."""
MODEL_NAME: Final = "bandnet"
NCNN_DIR: Final = f"{MODEL_NAME}_ncnn_model"
"""The NCNN export (pnnx from the ONNX file, fp32 weights, one band at a time): the
`embedding` output only; the trained `scale` (a constant) is in its metadata.yaml."""
BATCH: Final = 9
"""Bands per inference (one band's 9 crops): ONNX Runtime keeps the memory of its largest
batch for good (and, with its memory patterns on, a plan per batch size): a deck's 112
references at once kept 47 MB, nines with no patterns 21 MB. Each band's embedding is the
same, bit for bit, whatever the batch."""


def to_input(bands: np.ndarray) -> np.ndarray:
    """(N, EMBED_H, EMBED_W, 3) BGR 0..255 -> the network's (N, 3, H, W) input."""
    x = np.asarray(bands, np.float32).reshape(-1, EMBED_H, EMBED_W, 3)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2) / 255.0 - 0.5, dtype=np.float32)


class _Embedder:
    scale: float

    def card_logits(self, sims: np.ndarray) -> np.ndarray:
        """(112,) similarities to both ends of each card -> (56,) scaled card logits, as in
        training (`band_embed.card_logits`)."""
        ends = sims.reshape(2, -1) * END_SHARPNESS
        return self.scale * np.logaddexp(ends[0], ends[1]) / END_SHARPNESS


class BandEmbedder(_Embedder):
    """The exported embedding network (ONNX Runtime, CPU)."""

    backend: Final = "onnx"

    def __init__(self, path: Path, threads: int = 2) -> None:
        try:
            self._session = onnx_session(path, threads, mem_pattern=False)
        except Exception as exc:  # onnxruntime raises its own types for a bad file
            raise ModelError(f"cannot load the band embedding {path}: {exc}") from None
        self._input = self._session.get_inputs()[0].name
        zeros = to_input(np.zeros((1, EMBED_H, EMBED_W, 3)))
        self.scale = float(self._session.run(["scale"], {self._input: zeros})[0].ravel()[0])

    def embed(self, bands: np.ndarray) -> np.ndarray:
        """(N, EMBED_H, EMBED_W, 3) BGR -> (N, D) unit vectors."""
        if len(bands) == 0:
            return np.zeros((0, 1), np.float32)
        out = []
        for i in range(0, len(bands), BATCH):
            x = to_input(bands[i : i + BATCH])
            out.append(
                np.asarray(self._session.run(["embedding"], {self._input: x})[0], np.float32)
            )
        return np.concatenate(out)


def _ncnn_scale(folder: Path) -> float:
    for line in (folder / "metadata.yaml").read_text().splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "scale":
            return float(value)
    raise ValueError("no scale in metadata.yaml")


class NcnnBandEmbedder(_Embedder):
    """The same network exported to NCNN (one band at a time), sharing the process's NCNN
    pools with the finder: on the Pi the whole pipeline runs without ONNX Runtime. One thread:
    a band is too small to share (x86, 2 cores: 112 bands 41 ms on one thread, 462 ms on two
    while the pipeline's other threads run; ONNX Runtime in nines 91 ms)."""

    backend: Final = "ncnn"

    def __init__(self, folder: Path, threads: int = 1) -> None:
        import ncnn

        from companion.vision.backends import ncnn_net

        try:
            self._net = ncnn_net(folder, threads)
            self.scale = _ncnn_scale(folder)
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot load the band embedding {folder}: {exc}") from None
        self._ncnn: Any = ncnn

    def embed(self, bands: np.ndarray) -> np.ndarray:
        """(N, EMBED_H, EMBED_W, 3) BGR -> (N, D) unit vectors."""
        if len(bands) == 0:
            return np.zeros((0, 1), np.float32)
        x = to_input(bands)
        out = []
        for band in x:
            # ncnn.Mat wraps the array without copying: it must outlive extract()
            mat = self._ncnn.Mat(band)
            ex = self._net.create_extractor()
            ex.input("in0", mat)
            _, emb = ex.extract("out0")
            out.append(np.array(emb, np.float32).reshape(-1))
        return np.stack(out)


AnyBandEmbedder = BandEmbedder | NcnnBandEmbedder
"""Either runtime: both give `scale`, `embed(bands)` and `card_logits(sims)`."""


def embedding_dir(deck_folder: Path | None) -> Path:
    """Where a deck's band embedding lives: its own folder once `companion deck tune` has
    written one there (its ONNX file: the NCNN copy beside it is optional), else models/."""
    if deck_folder is not None and (deck_folder / f"{MODEL_NAME}.onnx").is_file():
        return deck_folder
    return MODELS_DIR


@cache
def load_embedder(
    models_dir: Path = MODELS_DIR, backend: str | None = None
) -> AnyBandEmbedder | None:
    """The shipped embedding, or None where it is absent (the namer then uses its own scores):
    NCNN when `backend` is "ncnn" (the finder's, so ONNX Runtime is never loaded on the Pi)
    and its export is there, else ONNX Runtime."""
    folder = models_dir / NCNN_DIR
    if backend == "ncnn" and (folder / "model.ncnn.param").is_file():
        try:
            return NcnnBandEmbedder(folder)
        except ImportError:
            pass
    path = models_dir / f"{MODEL_NAME}.onnx"
    return BandEmbedder(path) if path.is_file() else None
