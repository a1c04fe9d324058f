"""A learned comparison of a band's value alone: `models/valuenet.onnx` maps the top 12 mm of a
band, with a fourth channel saying where its ingredient's 8 cards differ (`band_naming.
value_masks`), to a unit vector, so that a band lies nearest the enrolled band of its own value.

The hand-made value scores correlate a numeral's outline with each template; a script 6 and 0
or a 3 and 7 blurred by 2 px, or half in a shadow's edge, correlate almost alike with both.
Trained on decks of many generated designs (`python -m companion.training.value_embed`), each
step the 8 references of one ingredient against camera views of its cards, it learned what
tells numerals, pips and icon counts apart under such blur, whatever the design.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import numpy as np

from companion.vision.backends import MODELS_DIR
from companion.vision.band_embedding import AnyBandEmbedder, load_embedder

VALUE_MODEL_NAME: Final = "valuenet"
VALUE_DIM: Final = 64


def value_input(bands: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(N, H, W, 3) BGR bands and their ingredient's (H, W) 0..1 value mask -> (N, H, W, 4)
    0..255, as `band_embedding.to_input` takes it."""
    bands = np.asarray(bands, np.float32)
    m = np.broadcast_to((mask * 255.0).astype(np.float32)[None, ..., None], (*bands.shape[:3], 1))
    return np.concatenate([bands, m], axis=3)


def load_value_embedder(
    models_dir: Path = MODELS_DIR, backend: str | None = None
) -> AnyBandEmbedder | None:
    """The shipped value comparison (NCNN where the finder runs on it), None where absent."""
    return load_embedder(models_dir, backend, VALUE_MODEL_NAME)


def value_probabilities(embedder: AnyBandEmbedder, q: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """(K, D) embeddings of one band's crops and (8, D) of its ingredient's references -> (8,)
    softmax over the values at the crop that fits best."""
    sims = (q @ refs.T).max(axis=0)
    logits = embedder.scale * sims
    p = np.exp(logits - logits.max())
    return p / p.sum()
