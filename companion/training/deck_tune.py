"""Make the band embedding surer of one enrolled deck: a few minutes of fine-tuning on camera
views drawn from that deck's own enrolled faces (`companion deck tune DIR`).

The shipped embedding (`models/bandnet.onnx`) names any deck with no training; what it has not
seen is *this* deck's particular look-alikes (two browns, an icon that differs by a corner).
The tune starts from the shipped weights and asks the one question the namer asks — which of
this deck's 56 cards is this band — on views drawn as in training (casts, glare, hands, blur,
other camera resolutions), so it learns what separates these cards without forgetting what a
camera does to a band. Only the deck's folder gets the result; the shipped model is untouched.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import torch
from torch.nn import functional as F

from companion.deck.deckdir import Deck
from companion.training.band_embed import (
    BandNet,
    card_logits,
    deck_batch,
    export_ncnn,
    export_onnx,
)
from companion.training.band_views import DeckBands, deck_bands
from companion.vision.backends import MODELS_DIR
from companion.vision.band_embedding import MODEL_NAME, NCNN_DIR, to_input

DEFAULT_STEPS: Final = 450
"""Steps of QUERIES views (a count, not a time, so the same seed gives the same model, unless
MINUTES runs out first)."""
LR: Final = 3e-4
"""A tenth of training's: a nudge from the shipped weights, not a new model."""
QUERIES: Final = 96
"""Camera views a step (the deck's 112 references are embedded every step too)."""
SCENE_FRAMES: Final = 24
"""Table scenes rendered with the deck's faces (half hard) whose bands, cut out as the namer
cuts them at run time, are half of every step's views (0: drawn views only)."""
SCENE_SEED: Final = 91_000
"""Scenes of the renderer's training split, away from every benchmark's seeds."""
MINUTES: Final = 8.0
"""A tune ends within about this much wall time: every PACE_STEPS steps it plans no more steps
than the time left allows at the pace of the last ones (the scenes, export and checks
included), so a slow or busy machine gets fewer steps rather than a longer wait. 450 steps
took 4.1-4.8 min on this 2-core machine in one session and 6.7-9.2 min in another."""
PACE_STEPS: Final = 10
"""Steps timed between two plans against MINUTES."""
FINISH_SECONDS: Final = 30.0
"""Kept for the check after the steps and the ONNX and NCNN exports."""
CHECK_VIEWS: Final = 448
"""Views of the deck, drawn with a fixed seed, scored before and after (4 per end)."""


@dataclass(frozen=True)
class TuneReport:
    steps: int
    asked: int
    """Steps asked for; `steps` is fewer when MINUTES ran out."""
    before: float
    """Top-1 of the shipped embedding on CHECK_VIEWS drawn views of the deck's cards."""
    after: float
    onnx: Path
    ncnn: Path


def shipped_bandnet(path: Path = MODELS_DIR / f"{MODEL_NAME}.onnx") -> BandNet:
    """The shipped embedding as a trainable network, from its ONNX file (no other copy of the
    weights ships): the export folded each batch norm into its convolution, so each norm
    becomes an identity plus that bias and is kept in eval mode while tuning."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {t.name: numpy_helper.to_array(t).copy() for t in graph.initializer}
    convs = [n for n in graph.node if n.op_type == "Conv"]
    net = BandNet()
    mods = list(net.features.modules())
    pairs = list(
        zip(
            [m for m in mods if isinstance(m, torch.nn.Conv2d)],
            [m for m in mods if isinstance(m, torch.nn.BatchNorm2d)],
            strict=True,
        )
    )
    if len(convs) != len(pairs):
        raise ValueError(f"{path}: {len(convs)} convolutions, the network has {len(pairs)}")
    with torch.no_grad():
        for node, (conv, bn) in zip(convs, pairs, strict=True):
            conv.weight.copy_(torch.from_numpy(weights[node.input[1]]))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(weights[node.input[2]]))
            assert bn.running_mean is not None and bn.running_var is not None
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        net.project.weight.copy_(torch.from_numpy(weights["net.project.weight"]))
        net.project.bias.copy_(torch.from_numpy(weights["net.project.bias"]))
        net.log_scale.copy_(torch.from_numpy(np.asarray(weights["net.log_scale"])))
    return net


def _train_mode(net: BandNet) -> None:
    """Training mode with every batch norm frozen (its statistics are the folded identity)."""
    net.train()
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.eval()


@torch.no_grad()
def top1(net: BandNet, bands: DeckBands, views: int = CHECK_VIEWS, seed: int = 123) -> float:
    """Share of drawn camera views of the deck's cards the network names right."""
    net.eval()
    refs, q, labels = deck_batch(bands, np.random.default_rng(seed), views)
    r = net(torch.from_numpy(to_input(refs)))
    pred = card_logits(net, net(torch.from_numpy(to_input(q))), r).argmax(1).numpy()
    return float(np.mean(pred == labels))


def tune_deck(
    deck: Deck,
    out_dir: Path,
    steps: int = DEFAULT_STEPS,
    seed: int = 0,
    on_step: Callable[[int, float], None] | None = None,
    scene_frames: int = SCENE_FRAMES,
    on_frame: Callable[[], None] | None = None,
    minutes: float | None = MINUTES,
) -> TuneReport:
    """Fine-tune the shipped embedding on `deck` for `steps` (fewer if `minutes` of wall time
    would not hold them) and write it to `out_dir` (`bandnet.onnx`, and
    `bandnet_ncnn_model/` for the Pi), where the namer looks first. `on_step(step, loss)`
    after every step."""
    t0 = time.perf_counter()
    torch.set_num_threads(2)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = shipped_bandnet()
    bands = deck_bands(deck)
    scenes = None
    if scene_frames > 0:
        from companion.training.band_scenes import deck_scene_crops

        scenes = deck_scene_crops(deck, SCENE_SEED + seed, scene_frames, on_frame=on_frame)
    before = top1(net, bands)
    opt = torch.optim.AdamW(net.parameters(), lr=LR, weight_decay=1e-4)
    _train_mode(net)
    planned = steps
    step = 0
    t_pace = time.perf_counter()
    while step < planned:
        step += 1
        for g in opt.param_groups:
            g["lr"] = LR * 0.5 * (1 + math.cos(math.pi * (step - 1) / planned))
        refs, views, labels = deck_batch(bands, rng, QUERIES, scenes)
        q = net(torch.from_numpy(to_input(views)))
        loss = F.cross_entropy(
            card_logits(net, q, net(torch.from_numpy(to_input(refs)))),
            torch.from_numpy(labels),
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
        if on_step is not None:
            on_step(step, loss.item())
        if minutes is not None and step % PACE_STEPS == 0:
            # planned again at the pace of the last PACE_STEPS: a machine that was busy at
            # first (measured: 163 of 450 steps in 6.0 of 8 minutes when planned once) is
            # given the steps its freed cores then hold
            now = time.perf_counter()
            left = minutes * 60 - (now - t0) - FINISH_SECONDS
            planned = min(steps, step + max(0, int(left / ((now - t_pace) / PACE_STEPS))))
            t_pace = now
    after = top1(net, bands)
    onnx_path = out_dir / f"{MODEL_NAME}.onnx"
    export_onnx(net, onnx_path)
    ncnn = export_ncnn(onnx_path, out_dir / NCNN_DIR, net.scale().item())
    return TuneReport(step, steps, before, after, onnx_path, ncnn)
