"""`companion deck tune`: an enrolled deck's own band comparison, learned in minutes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from companion.vision.band_embedding import EMBED_H, EMBED_W, load_embedder, to_input


def test_tuning_starts_from_the_shipped_comparison():
    """The network a tune starts from is the shipped one to the last digit (its weights are
    read back out of models/bandnet.onnx, batch norms folded), so a tune refines what already
    reads any deck rather than starting over."""
    import torch

    from companion.training.deck_tune import shipped_bandnet

    shipped = load_embedder(backend="onnx")
    assert shipped is not None, "models/bandnet.onnx is not shipped"
    net = shipped_bandnet().eval()
    bands = np.random.default_rng(1).uniform(0, 255, (5, EMBED_H, EMBED_W, 3))
    with torch.no_grad():
        mine = net(torch.from_numpy(to_input(bands))).numpy()
    assert np.abs(mine - shipped.embed(bands)).max() < 1e-5
    assert net.scale().item() == pytest.approx(shipped.scale, rel=1e-6)


@pytest.mark.slow
def test_a_tuned_deck_reads_its_cards_better_and_is_used_from_then_on(tmp_path: Path):
    """`deck tune DIR` on a deck of a design no model was trained on: the drawn views of its
    cards it names right rise (60 steps, 4 scenes), it writes the deck's own comparison (ONNX
    and the Pi's NCNN copy, the same embedding), and loading the deck picks that one up."""
    from companion.deck.deckdir import load_deck, save_deck
    from companion.deck.designs import design_deck
    from companion.vision.band_embedding import BandEmbedder, NcnnBandEmbedder, embedding_dir

    folder = tmp_path / "minimal-7"
    save_deck(design_deck("minimal", 7), folder)
    assert embedding_dir(folder) != folder  # enrolled only: the shipped comparison
    cmd = [
        sys.executable, "-m", "companion", "deck", "tune", str(folder),
        "--steps", "60", "--scenes", "4",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    m = re.search(r"named right (\d\.\d+) -> (\d\.\d+)", done.stdout)
    assert m, done.stdout
    before, after = float(m.group(1)), float(m.group(2))
    assert after >= before + 0.03, done.stdout
    assert embedding_dir(load_deck(folder).folder) == folder
    onnx_emb = BandEmbedder(folder / "bandnet.onnx")
    pi = NcnnBandEmbedder(folder / "bandnet_ncnn_model")
    bands = np.random.default_rng(0).uniform(0, 255, (4, EMBED_H, EMBED_W, 3))
    assert np.abs(pi.embed(bands) - onnx_emb.embed(bands)).max() < 1e-3
    shipped = load_embedder(backend="onnx")
    assert shipped is not None
    assert np.abs(onnx_emb.embed(bands) - shipped.embed(bands)).max() > 1e-3  # it did learn


@pytest.mark.slow
def test_a_tune_takes_fewer_steps_rather_than_more_time_than_it_is_given(tmp_path: Path):
    """`--minutes` bounds the wall time: on a machine too slow for the steps asked within it,
    fewer are taken (planned every ten steps) and the tune says so; the deck still gets
    its own comparison."""
    from companion.deck.deckdir import save_deck
    from companion.deck.designs import design_deck
    from companion.training.deck_tune import PACE_STEPS

    folder = tmp_path / "tarot-7"
    save_deck(design_deck("tarot", 7), folder)
    cmd = [
        sys.executable, "-m", "companion", "deck", "tune", str(folder),
        "--steps", "5000", "--scenes", "0", "--minutes", "1",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    m = re.search(r"\((\d+) of 5000 steps: the 1-minute limit\)", done.stdout)
    assert m, done.stdout
    assert PACE_STEPS <= int(m.group(1)) < 5000
    assert (folder / "bandnet.onnx").is_file() and (folder / "bandnet_ncnn_model").is_dir()
