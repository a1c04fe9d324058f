"""The learned value comparison: trained on generated designs only, it judges a band's value
where the deck's own faces say the values differ."""

from __future__ import annotations

import numpy as np
import pytest

from companion.deck.designs import design_deck
from companion.training.band_views import deck_bands, reference_views
from companion.vision.band_embedding import EMBED_H, EMBED_W, BandEmbedder, NcnnBandEmbedder
from companion.vision.band_naming import PPM, value_masks
from companion.vision.value_embedding import VALUE_DIM, load_value_embedder, value_input


def test_the_value_mask_lies_on_the_numerals():
    """What the comparison is shown beside a band is where its ingredient's 8 cards differ:
    on a design with the numeral and icon in the top-left corner only, the mask's weight lies
    in that corner (its top 20 mm by 12 mm), and on a bordered design with a numeral in both
    top corners, in both corners rather than the shared middle."""
    corner = value_masks(list(reference_views(deck_bands(design_deck("corner", 3)))))
    left = round(20 * PPM)
    assert corner.shape == (14, EMBED_H, EMBED_W)
    tops = corner[:7]
    assert (tops[:, :, :left].sum(axis=(1, 2)) >= 0.8 * tops.sum(axis=(1, 2))).all()
    both = value_masks(list(reference_views(deck_bands(design_deck("bordered", 3)))))[:7]
    third = EMBED_W // 3
    sides = both[:, :, :third].sum(axis=(1, 2)), both[:, :, -third:].sum(axis=(1, 2))
    middle = both[:, :, third:-third].sum(axis=(1, 2))
    assert (np.minimum(*sides) > middle).all()


def test_the_mask_is_a_fourth_channel_on_the_camera_scale():
    """`value_input` keeps the band's BGR and adds the mask at 0..255, as the bands are."""
    bands = np.full((2, EMBED_H, EMBED_W, 3), 100.0, np.float32)
    mask = np.zeros((EMBED_H, EMBED_W), np.float32)
    mask[3, 4] = 1.0
    x = value_input(bands, mask)
    assert x.shape == (2, EMBED_H, EMBED_W, 4)
    assert (x[..., :3] == 100.0).all()
    assert x[1, 3, 4, 3] == 255.0 and x[..., 3].sum() == 2 * 255.0


def test_value_ncnn_export_gives_the_onnx_embedding():
    """`models/valuenet_ncnn_model` (the Pi's runtime) is the same network: unit vectors
    within 1e-4 of ONNX Runtime's, the same scale."""
    onnx_emb = load_value_embedder(backend="onnx")
    ncnn_emb = load_value_embedder(backend="ncnn")
    assert onnx_emb is not None, "models/valuenet.onnx is not shipped"
    assert ncnn_emb is not None and isinstance(ncnn_emb, NcnnBandEmbedder)
    assert isinstance(onnx_emb, BandEmbedder)
    rng = np.random.default_rng(0)
    bands = rng.integers(0, 256, (6, EMBED_H, EMBED_W, 3)).astype(np.float32)
    x = value_input(bands, rng.random((EMBED_H, EMBED_W)).astype(np.float32))
    a, b = onnx_emb.embed(x), ncnn_emb.embed(x)
    assert a.shape == b.shape == (6, VALUE_DIM)
    assert np.abs(a - b).max() < 1e-4
    assert ncnn_emb.scale == pytest.approx(onnx_emb.scale, rel=1e-6)
