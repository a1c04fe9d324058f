"""Train the band embedding (`models/bandnet.onnx`) from scratch on generated deck designs.

Each step takes whole decks: the 112 references of a deck (both ends of its 56 faces, as
enrolment gives them) and camera views of its cards; the loss is a softmax over that deck's 56
cards of the scaled cosine similarity (the better-matching end counts). So the network is only
ever asked the question the namer asks — which card of *this* deck is it — and learns what
separates cards within a deck (numerals, icons, colours) for designs it has never seen.
Validated every few hundred steps on the held-out design families.

The shipped model (stop 17; 2 cores shared with other jobs, 17.0 + 10.5 + 60.2 min):

    python -m companion.training.band_scenes --decks 48 --frames 5 \
        --out runs/bandnet3/scene-crops.npz
    python -m companion.training.band_embed --minutes 60 --decks 300 --run-dir runs/bandnet3 \
        --scene-crops runs/bandnet3/scene-crops.npz --out runs/bandnet3/bandnet.onnx
    python -m companion.training.band_embed --minutes 45 --resume   # continue an interrupted run
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Final

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from tqdm import tqdm

from companion.cards import CARD_IDS
from companion.deck.deckdir import default_deck
from companion.deck.designs import HELD_OUT_FAMILIES, TRAIN_FAMILIES, design_deck
from companion.training.band_views import (
    DeckBands,
    camera_view,
    deck_bands,
    enrolled_view,
    reference_views,
)
from companion.vision.backends import MODELS_DIR
from companion.vision.band_embedding import (
    EMBED_H,
    EMBED_W,
    END_SHARPNESS,
    MODEL_NAME,
    to_input,
)

N_CARDS = len(CARD_IDS)
EMBED_DIM = 128
VAL_SEEDS = (101, 102)
"""Held-out families at these seeds are the validation decks."""


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class BandNet(nn.Module):
    """~27 M multiply-adds a band: a few ms each on a Pi core. The map keeps a coarse layout
    (3 x 8 cells) before the projection, since where a mark sits is part of what it says."""

    def __init__(self, dim: int = EMBED_DIM) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _block(3, 24, 2),
            _block(24, 32),
            nn.MaxPool2d(2),
            _block(32, 64),
            _block(64, 64),
            nn.MaxPool2d(2),
            _block(64, 96),
            nn.AvgPool2d((1, 5), (1, 2)),  # 3 x 19 -> 3 x 8 cells (exports to ONNX)
        )
        self.project = nn.Linear(96 * 24, dim)
        self.log_scale = nn.Parameter(torch.tensor(math.log(16.0)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.project(self.features(x).flatten(1))
        return F.normalize(z, dim=1)

    def scale(self) -> torch.Tensor:
        return self.log_scale.exp().clamp(4.0, 64.0)


class _Export(nn.Module):
    """What ONNX carries: the unit embedding and the trained similarity scale."""

    def __init__(self, net: BandNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.net(x), self.net.scale().reshape(1)


def card_logits(net: BandNet, q: torch.Tensor, refs: torch.Tensor) -> torch.Tensor:
    """(Q, D) x (112, D) -> (Q, 56): the better end of each card, softly."""
    sims = (q @ refs.T).reshape(len(q), 2, N_CARDS)
    return net.scale() * torch.logsumexp(sims * END_SHARPNESS, dim=1) / END_SHARPNESS


def pool_specs(decks: int) -> list[tuple[str, int]]:
    """The training decks: the default one, then every other one a `mixed` deck (each seed
    another look) and the hand-written training families in turn between them."""
    hand = [f for f in TRAIN_FAMILIES if f != "mixed"]
    return [("default", 0)] + [
        ("mixed", 1000 + i) if i % 2 else (hand[(i // 2) % len(hand)], 1000 + i)
        for i in range(decks - 1)
    ]


def _one_deck(spec: tuple[str, int]) -> DeckBands:
    family, seed = spec
    deck = default_deck() if family == "default" else design_deck(family, seed)
    return deck_bands(deck)


def build_pool(specs: Sequence[tuple[str, int]], workers: int, desc: str) -> list[DeckBands]:
    with ProcessPoolExecutor(workers) as ex:
        return list(tqdm(ex.map(_one_deck, specs, chunksize=2), total=len(specs), desc=desc))


def _pick_ends(rng: np.random.Generator, n: int) -> np.ndarray:
    """n random ends [end * 56 + card], top ends more often (cascades show tops)."""
    idx = rng.integers(0, 2 * N_CARDS, n)
    return np.where(rng.random(n) < 0.6, idx % N_CARDS, idx)


SCENE_SHARE = 0.5
"""Share of a deck's queries taken from its rendered-scene crops, when it has some."""


def deck_batch(
    bands: DeckBands,
    rng: np.random.Generator,
    queries: int,
    scenes: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    refs = np.stack([enrolled_view(bands, i, rng) for i in range(2 * N_CARDS)])
    n_scene = round(queries * SCENE_SHARE) if scenes is not None and len(scenes[1]) else 0
    idx = _pick_ends(rng, queries - n_scene)
    views = [camera_view(bands, int(i), rng) for i in idx]
    labels = list(idx % N_CARDS)
    if n_scene and scenes is not None:
        pick = rng.integers(0, len(scenes[1]), n_scene)
        for k in pick:
            # a little more light and exposure on top of the scene's own
            gain = rng.uniform(0.85, 1.15) * rng.uniform(0.93, 1.07, 3)
            views.append(np.clip(scenes[0][k].astype(np.float32) * gain, 0, 255))
            labels.append(int(scenes[1][k]))
    return refs, np.stack(views).astype(np.float32), np.asarray(labels, np.int64)


class _Batches(torch.utils.data.IterableDataset):
    def __init__(
        self,
        pool: list[DeckBands],
        decks: int,
        queries: int,
        seed: int,
        scenes: dict[int, tuple[np.ndarray, np.ndarray]],
    ) -> None:
        self.pool, self.decks, self.queries, self.seed = pool, decks, queries, seed
        self.scenes = scenes

    def __iter__(self) -> Iterator[list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng(self.seed + (info.id if info else 0))
        while True:
            chosen = rng.choice(len(self.pool), self.decks, replace=False)
            if self.scenes and rng.random() < 0.5:  # half the steps on decks seen in scenes
                chosen = rng.choice(sorted(self.scenes), self.decks, replace=False)
            batch = []
            for k in chosen:
                scenes = self.scenes.get(int(k))
                refs, views, labels = deck_batch(self.pool[int(k)], rng, self.queries, scenes)
                batch.append(
                    (
                        torch.from_numpy(to_input(refs)),
                        torch.from_numpy(to_input(views)),
                        torch.from_numpy(labels),
                    )
                )
            yield batch


def _validation(
    pool: list[DeckBands], per_deck: int
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    out = []
    for bands in pool:
        idx = _pick_ends(rng, per_deck)
        views = np.stack([camera_view(bands, int(i), rng) for i in idx])
        out.append((bands.name, reference_views(bands), views, idx % N_CARDS))
    return out


@torch.no_grad()
def evaluate(
    net: BandNet, val: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]
) -> dict[str, float]:
    net.eval()
    right: dict[str, list[float]] = {}
    for name, refs, views, labels in val:
        r = net(torch.from_numpy(to_input(refs)))
        q = net(torch.from_numpy(to_input(views)))
        pred = card_logits(net, q, r).argmax(1).numpy()
        key = name if name.startswith("scene:") else name.split("-")[0]
        right.setdefault(key, []).extend((pred == labels).tolist())
    net.train()
    return {k: float(np.mean(v)) for k, v in right.items()}


def export_onnx(net: BandNet, path: Path) -> None:
    net.eval()
    dummy = torch.zeros(1, 3, EMBED_H, EMBED_W)
    torch.onnx.export(
        _Export(net),
        (dummy,),
        str(path),
        input_names=["bands"],
        output_names=["embedding", "scale"],
        dynamic_axes={"bands": {0: "n"}, "embedding": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )


_NCNN_DROPPED: Final = ("pnnx.Expression", "Constant", "Clip", "Tensor.reshape")
"""Layers of pnnx's conversion that only compute the constant `scale` output: NCNN cannot
run them, and the scale is a trained number, so it goes to metadata.yaml instead."""


def export_ncnn(onnx_path: Path, folder: Path, scale: float) -> Path:
    """The ONNX model converted for the Pi (`<name>_ncnn_model`: model.ncnn.param/.bin, fp32,
    one band at a time), so ONNX Runtime need not be loaded where the finder runs on NCNN."""
    import shutil
    import subprocess
    import tempfile

    pnnx = Path(sys.executable).with_name("pnnx")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "bandnet.onnx"
        shutil.copyfile(onnx_path, src)
        subprocess.run(
            [str(pnnx), src.name, f"inputshape=[1,3,{EMBED_H},{EMBED_W}]", "fp16=0"],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        lines = (Path(tmp) / "bandnet.ncnn.param").read_text().splitlines()
        keep = [ln for ln in lines[2:] if ln.split()[0] not in _NCNN_DROPPED]
        blobs: set[str] = set()
        for ln in keep:
            f = ln.split()
            n_in, n_out = int(f[2]), int(f[3])
            blobs.update(f[4 : 4 + n_in + n_out])
        folder.mkdir(parents=True, exist_ok=True)
        param = "\n".join([lines[0], f"{len(keep)} {len(blobs)}", *keep]) + "\n"
        (folder / "model.ncnn.param").write_text(param)
        shutil.copyfile(Path(tmp) / "bandnet.ncnn.bin", folder / "model.ncnn.bin")
    (folder / "metadata.yaml").write_text(
        f"# {onnx_path.name} converted to NCNN: pnnx {onnx_path.name} "
        f"inputshape=[1,3,{EMBED_H},{EMBED_W}] fp16=0,\n"
        "# the constant `scale` branch dropped from the param (its value below), one band at a "
        "time.\n"
        f"source: {onnx_path.name}\n"
        f"input: in0 (1 x 3 x {EMBED_H} x {EMBED_W}, BGR / 255 - 0.5)\n"
        "output: out0 (128, unit vector: the ONNX `embedding`)\n"
        f"scale: {scale!r}\n"
    )
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m companion.training.band_embed",
        description="Train the band embedding (models/bandnet.onnx) on generated deck designs.",
    )
    ap.add_argument("--minutes", type=float, default=45.0, help="training time budget")
    ap.add_argument("--decks", type=int, default=160, help="training decks (seeds x families)")
    ap.add_argument("--batch-decks", type=int, default=2)
    ap.add_argument("--queries", type=int, default=48, help="camera views per deck per step")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--run-dir", type=Path, default=Path("runs/bandnet"))
    ap.add_argument("--out", type=Path, default=MODELS_DIR / f"{MODEL_NAME}.onnx")
    ap.add_argument("--resume", action="store_true", help="continue from RUN_DIR/last.pt")
    ap.add_argument("--val-every", type=int, default=250)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--scene-crops",
        type=Path,
        default=Path("runs/bandnet/scene-crops.npz"),
        help="run-time crops of rendered scenes (python -m companion.training.band_scenes)",
    )
    ap.add_argument(
        "--val-scene-frames",
        type=int,
        default=3,
        help="rendered scenes per held-out design to validate on (0: drawn views only)",
    )
    args = ap.parse_args(argv)

    torch.set_num_threads(2)
    torch.manual_seed(0)
    run_dir = args.run_dir.resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    specs = pool_specs(args.decks)
    cached = run_dir / f"pool-{args.decks}.npy"
    if cached.is_file():
        ends = np.load(cached, mmap_mode="r")
        pool = [DeckBands(f"{f}-{s}", ends[i]) for i, (f, s) in enumerate(specs)]
    else:
        pool = build_pool(specs, args.workers, "training decks")
        np.save(cached, np.stack([b.ends for b in pool]))
    val_pool = build_pool(
        [(f, s) for f in HELD_OUT_FAMILIES for s in VAL_SEEDS], args.workers, "held-out decks"
    )
    val = _validation(val_pool, 112)
    from companion.training.band_scenes import build_scene_crops

    held = [(f, VAL_SEEDS[0]) for f in HELD_OUT_FAMILIES] if args.val_scene_frames else []
    scene_parts = build_scene_crops(held, args.val_scene_frames, args.workers) if held else []
    for (family, seed), (crops, labels) in zip(held, scene_parts, strict=True):
        bands = val_pool[[b.name for b in val_pool].index(f"{family}-{seed}")]
        val.append((f"scene:{family}", reference_views(bands), crops.astype(np.float32), labels))
    scenes: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if args.scene_crops.is_file():
        data = np.load(args.scene_crops)
        for k in np.unique(data["decks"]):
            sel = data["decks"] == k
            scenes[int(k)] = (data["crops"][sel], data["labels"][sel])
        print(f"{len(data['labels'])} scene crops of {len(scenes)} decks", flush=True)
    print(f"decks ready in {time.monotonic() - t0:.0f} s", flush=True)

    net = BandNet()
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    step, history = 0, []
    last = run_dir / "last.pt"
    if args.resume and last.is_file():
        state = torch.load(last, weights_only=True)
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["opt"])
        step = int(state["step"])
        print(f"resumed at step {step}", flush=True)
    loader = torch.utils.data.DataLoader(
        _Batches(pool, args.batch_decks, args.queries, seed=step, scenes=scenes),
        batch_size=None,
        num_workers=1,
        prefetch_factor=4,
    )
    budget = args.minutes * 60.0
    start = time.monotonic()
    # the learning rate decays on a cosine over the time budget, not a step count
    bar = tqdm(desc="steps", unit="step")
    losses: list[float] = []
    for batch in loader:
        frac = min(1.0, (time.monotonic() - start) / budget)
        for g in opt.param_groups:
            g["lr"] = args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * frac)))
        loss = torch.zeros(())
        for refs, views, labels in batch:
            loss = loss + F.cross_entropy(card_logits(net, net(views), net(refs)), labels)
        loss = loss / len(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        losses.append(float(loss))
        bar.update(1)
        bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}", lr=f"{opt.param_groups[0]['lr']:.1e}")
        done = frac >= 1.0
        if step % args.val_every == 0 or done:
            acc = evaluate(net, val)
            history.append({"step": step, "minutes": (time.monotonic() - start) / 60, **acc})
            tqdm.write(
                f"step {step}: held-out top-1 "
                + json.dumps({k: round(v, 3) for k, v in acc.items()})
            )
            torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "step": step}, last)
            (run_dir / "history.json").write_text(json.dumps(history, indent=1))
        if done:
            break
    bar.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    export_onnx(net, args.out)
    ncnn_dir = export_ncnn(
        args.out, args.out.with_name(f"{args.out.stem}_ncnn_model"), float(net.scale())
    )
    print(
        f"trained {step} steps in {(time.monotonic() - start) / 60:.1f} min "
        f"(total {(time.monotonic() - t0) / 60:.1f} min); wrote {args.out} and {ncnn_dir}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
