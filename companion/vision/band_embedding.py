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
from typing import Final

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
BATCH: Final = 9
"""Bands per inference (one band's 9 crops): ONNX Runtime keeps the memory of its largest
batch for good (and, with its memory patterns on, a plan per batch size): a deck's 112
references at once kept 47 MB, nines with no patterns 21 MB. Each band's embedding is the
same, bit for bit, whatever the batch."""


def to_input(bands: np.ndarray) -> np.ndarray:
    """(N, EMBED_H, EMBED_W, 3) BGR 0..255 -> the network's (N, 3, H, W) input."""
    x = np.asarray(bands, np.float32).reshape(-1, EMBED_H, EMBED_W, 3)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2) / 255.0 - 0.5, dtype=np.float32)


class BandEmbedder:
    """The exported embedding network (ONNX Runtime, CPU)."""

    def __init__(self, path: Path, threads: int = 2) -> None:
        try:
            self._session = onnx_session(path, threads, mem_pattern=False)
        except Exception as exc:  # onnxruntime raises its own types for a bad file
            raise ModelError(f"cannot load the band embedding {path}: {exc}") from None
        self._input = self._session.get_inputs()[0].name
        zeros = to_input(np.zeros((1, EMBED_H, EMBED_W, 3)))
        self.scale = float(self._session.run(["scale"], {self._input: zeros})[0].ravel()[0])

    def card_logits(self, sims: np.ndarray) -> np.ndarray:
        """(112,) similarities to both ends of each card -> (56,) scaled card logits, as in
        training (`band_embed.card_logits`)."""
        ends = sims.reshape(2, -1) * END_SHARPNESS
        return self.scale * np.logaddexp(ends[0], ends[1]) / END_SHARPNESS

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


@cache
def load_embedder(models_dir: Path = MODELS_DIR) -> BandEmbedder | None:
    """The shipped embedding, or None where it is absent (the namer then uses its own scores)."""
    path = models_dir / f"{MODEL_NAME}.onnx"
    return BandEmbedder(path) if path.is_file() else None
