"""The learned band comparison: trained on generated designs only, usable on any deck."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from companion.deck.designs import HELD_OUT_FAMILIES, design_deck
from companion.training.band_embed import pool_specs
from companion.training.band_views import camera_view, deck_bands, reference_views
from companion.vision.band_embedding import EMBED_H, EMBED_W, BandEmbedder


def test_training_decks_never_include_a_held_out_design():
    """The designs the benchmarks judge it on are never drawn for training."""
    families = {f for f, _ in pool_specs(300)}
    assert not families & set(HELD_OUT_FAMILIES)
    assert "default" in families and len(families) >= 5


def test_camera_views_are_the_card_not_another():
    """A drawn camera view of a card (light, blur, a millimetre or so off) still matches its
    own band better than the other values of its ingredient in most draws: the training signal
    is there and not drowned."""
    import cv2

    bands = deck_bands(design_deck("corner", 11))
    refs = reference_views(bands)
    rng = np.random.default_rng(0)
    wins = 0
    cards = range(0, 56, 3)
    for card in cards:
        view = camera_view(bands, card, rng, hard=0.0)
        ing = card // 8 * 8
        scores = [
            cv2.matchTemplate(view, refs[ing + v][5:-5, 10:-10], cv2.TM_CCOEFF_NORMED).max()
            for v in range(8)
        ]
        wins += int(np.argmax(scores)) == card - ing
    assert view.shape == (EMBED_H, EMBED_W, 3)
    assert wins >= 0.8 * len(cards), wins


@pytest.mark.slow
def test_training_runs_from_scratch_and_exports(tmp_path: Path):
    """`python -m companion.training.band_embed` trains, validates on the held-out designs and
    writes an ONNX model and its NCNN copy that the namer loads (a few seconds of training)."""
    out = tmp_path / "bandnet.onnx"
    cmd = [
        sys.executable, "-m", "companion.training.band_embed", "--decks", "3",
        "--minutes", "0.15", "--val-every", "5", "--run-dir", str(tmp_path / "run"),
        "--out", str(out), "--scene-crops", str(tmp_path / "none.npz"),
        "--val-scene-frames", "0", "--workers", "1", "--queries", "8",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    history = json.loads((tmp_path / "run" / "history.json").read_text())
    assert set(HELD_OUT_FAMILIES) <= set(history[-1])
    emb = BandEmbedder(out)
    z = emb.embed(np.random.default_rng(0).uniform(0, 255, (3, EMBED_H, EMBED_W, 3)))
    assert z.shape == (3, 128)
    assert np.allclose(np.linalg.norm(z, axis=1), 1.0, atol=1e-4)
    assert 4.0 <= emb.scale <= 64.0
    # and the Pi's copy beside it, the same embedding without ONNX Runtime
    from companion.vision.band_embedding import NcnnBandEmbedder

    pi = NcnnBandEmbedder(tmp_path / "bandnet_ncnn_model")
    bands = np.random.default_rng(0).uniform(0, 255, (3, EMBED_H, EMBED_W, 3))
    assert np.abs(pi.embed(bands) - emb.embed(bands)).max() < 1e-3
    assert pi.scale == pytest.approx(emb.scale, rel=1e-5)


def _dark_deck_readings() -> tuple[int, dict[bool, list[tuple[str, str]]]]:
    """(bands, {learned: [(truth, read) past the detector's gate]}) on one scene of the
    held-out `foil` design (dark cards, light numerals)."""
    from companion.vision.band_naming import BandNamer
    from companion.vision.detector import MIN_CONFIDENCE
    from tests.test_band_naming import scene

    sc = scene("foil")
    sure = {}
    for learned in (False, True):
        names = BandNamer(sc.deck, embedder=learned).name_boxes(sc.image, sc.cal, sc.boxes)
        sure[learned] = [(c, n.card) for (c, _, _), n in zip(sc.strips, names, strict=True)
                         if n is not None and n.confidence >= MIN_CONFIDENCE]  # fmt: skip
    return len(sc.strips), sure


@pytest.mark.slow
def test_an_unseen_dark_deck_is_read_with_and_without_the_learned_comparison():
    """On a scene of the held-out `foil` design (dark cards, light numerals, a sheen that
    differs from card to card) nine bands in ten pass the detector's gate, none wrong, whether
    the learned comparison has a say or not, and it never takes a band away. Measured: 32 of
    33 both ways, none wrong (the hand-made scores alone passed 23 before the value was
    judged on outlines, and the learned comparison brought that to 33 with one wrong)."""
    from companion.vision.band_embedding import load_embedder

    assert load_embedder() is not None, "models/bandnet.onnx is not shipped"
    bands, sure = _dark_deck_readings()
    for learned in (False, True):
        assert all(c == read for c, read in sure[learned]), sure[learned]
        assert len(sure[learned]) >= 0.9 * bands, sure
    assert len(sure[True]) >= len(sure[False]), sure


def test_ncnn_export_gives_the_onnx_embedding():
    """`models/bandnet_ncnn_model` (the Pi's runtime) is the same network: unit vectors within
    1e-4 of ONNX Runtime's, the same scale, any number of bands (one at a time inside)."""
    import cv2

    from companion.vision.band_embedding import NcnnBandEmbedder, load_embedder

    onnx_emb = load_embedder(backend="onnx")
    ncnn_emb = load_embedder(backend="ncnn")
    if onnx_emb is None or ncnn_emb is None:
        pytest.skip("models/bandnet.onnx or its NCNN export is not shipped")
    assert isinstance(onnx_emb, BandEmbedder) and isinstance(ncnn_emb, NcnnBandEmbedder)
    rng = np.random.default_rng(0)
    bands = rng.integers(0, 256, (12, EMBED_H, EMBED_W, 3)).astype(np.uint8)
    bands[6:] = np.stack([cv2.GaussianBlur(b, (0, 0), 3) for b in bands[6:]])
    a, b = onnx_emb.embed(bands), ncnn_emb.embed(bands)
    assert a.shape == b.shape == (12, 128)
    assert np.abs(a - b).max() < 1e-4
    assert ncnn_emb.scale == pytest.approx(onnx_emb.scale, rel=1e-6)
    assert ncnn_emb.embed(bands[:0]).shape[0] == 0


def test_ncnn_embedding_never_loads_onnx_runtime():
    """With the finder on NCNN (the Pi) the band embedding is NCNN too: no ONNX Runtime."""
    code = (
        "import sys; from companion.vision.band_embedding import load_embedder; "
        "e = load_embedder(backend='ncnn'); assert e is not None and e.backend == 'ncnn'; "
        "print('onnxruntime' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_both_runtimes_read_a_scene_alike():
    """The namer reads every band of one held-out scene the same on NCNN as on ONNX Runtime
    (same card, runner-up, way up; confidence within 1e-3)."""
    from companion.vision.band_embedding import load_embedder
    from companion.vision.band_naming import BandNamer
    from tests.test_band_naming import scene

    onnx_emb, ncnn_emb = load_embedder(backend="onnx"), load_embedder(backend="ncnn")
    if onnx_emb is None or ncnn_emb is None:
        pytest.skip("models/bandnet.onnx or its NCNN export is not shipped")
    sc = scene("tarot")
    onnx_read = BandNamer(sc.deck, embedder=onnx_emb).name_boxes(sc.image, sc.cal, sc.boxes)
    ncnn_read = BandNamer(sc.deck, embedder=ncnn_emb).name_boxes(sc.image, sc.cal, sc.boxes)
    assert sum(n is not None for n in onnx_read) >= len(sc.boxes) // 2
    for a, b in zip(onnx_read, ncnn_read, strict=True):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert (a.card, a.runner_up, a.flipped) == (b.card, b.runner_up, b.flipped)
            assert a.confidence == pytest.approx(b.confidence, abs=1e-3)
