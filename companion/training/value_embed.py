"""Train the value comparison (`models/valuenet.onnx`) from scratch on generated deck designs.

Each step takes a few ingredients of a few decks: the 8 references of one ingredient's band
(as enrolment gives them) and camera views of its cards, every one with the ingredient's value
mask beside it (`band_naming.value_masks`: where its 8 faces differ); the loss is a softmax
over those 8 values of the scaled cosine similarity. So the network is only asked what the
namer asks it once the ingredient is read — which of these 8 values — and learns numerals,
pips and icon counts under blur, shadow and glare for designs it has never seen. The same
network as the band embedding (`band_embed.BandNet`), with the mask as a fourth channel.

    python -m companion.training.value_embed --minutes 30 --decks 120 --run-dir runs/valuenet
    python -m companion.training.value_embed --minutes 10 --resume   # continue a run
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import torch
from torch.nn import functional as F
from tqdm import tqdm

from companion.cards import CARD_IDS, INGREDIENTS
from companion.deck.designs import HELD_OUT_FAMILIES
from companion.training.band_embed import (
    VAL_SEEDS,
    BandNet,
    build_pool,
    export_ncnn,
    export_onnx,
    pool_specs,
)
from companion.training.band_views import (
    DeckBands,
    camera_view,
    enrolled_view,
    reference_views,
)
from companion.vision.backends import MODELS_DIR
from companion.vision.band_embedding import to_input
from companion.vision.band_naming import value_masks
from companion.vision.value_embedding import VALUE_DIM, VALUE_MODEL_NAME, value_input

N_ING: Final = len(INGREDIENTS)
N_VAL: Final = len(CARD_IDS) // N_ING
N_CARDS: Final = len(CARD_IDS)
HARD: Final = 0.7
"""Share of views drawn with the hard light, blur and exposure (`camera_view`): the value is
what a blurred or shaded band loses first."""


@dataclass(frozen=True)
class DeckValues:
    """One deck's ends and, per (end, ingredient), where its values differ."""

    bands: DeckBands
    masks: np.ndarray
    """(2 * 7, H, W) 0..1, from the deck's references as the namer builds them."""


def with_masks(bands: DeckBands) -> DeckValues:
    return DeckValues(bands, value_masks(list(reference_views(bands))))


def _masks_of(pool: Sequence[DeckBands], workers: int) -> list[DeckValues]:
    with ProcessPoolExecutor(workers) as ex:
        return list(tqdm(ex.map(with_masks, pool, chunksize=4), total=len(pool), desc="masks"))


def _pick_groups(rng: np.random.Generator, n: int) -> np.ndarray:
    """n random (end, ingredient) groups end * 7 + ingredient, top ends more often."""
    ing = rng.choice(N_ING, n, replace=False)
    end = (rng.random(n) >= 0.6).astype(np.int64)
    return end * N_ING + ing


def group_batch(
    deck: DeckValues, group: int, rng: np.random.Generator, queries: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One ingredient's 8 enrolled references and `queries` camera views of its cards, each
    with the group's mask: (8, H, W, 4), (Q, H, W, 4), (Q,) values."""
    end, ing = divmod(group, N_ING)
    base = end * N_CARDS + ing * N_VAL
    refs = np.stack([enrolled_view(deck.bands, base + v, rng) for v in range(N_VAL)])
    values = rng.integers(0, N_VAL, queries)
    views = np.stack([camera_view(deck.bands, base + int(v), rng, HARD) for v in values])
    mask = deck.masks[group]
    return value_input(refs, mask), value_input(views, mask), values.astype(np.int64)


def value_logits(net: BandNet, q: torch.Tensor, refs: torch.Tensor) -> torch.Tensor:
    """(Q, D) x (8, D) -> (Q, 8) scaled similarities."""
    return net.scale() * (q @ refs.T)


class _Batches(torch.utils.data.IterableDataset):
    def __init__(
        self, pool: list[DeckValues], decks: int, groups: int, queries: int, seed: int
    ) -> None:
        self.pool, self.decks, self.groups, self.queries, self.seed = (
            pool,
            decks,
            groups,
            queries,
            seed,
        )

    def __iter__(self) -> Iterator[list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]]:
        info = torch.utils.data.get_worker_info()
        rng = np.random.default_rng(self.seed + (info.id if info else 0))
        while True:
            batch = []
            for k in rng.choice(len(self.pool), self.decks, replace=False):
                for g in _pick_groups(rng, self.groups):
                    refs, views, values = group_batch(self.pool[int(k)], int(g), rng, self.queries)
                    batch.append(
                        (
                            torch.from_numpy(to_input(refs)),
                            torch.from_numpy(to_input(views)),
                            torch.from_numpy(values),
                        )
                    )
            yield batch


def validation(
    pool: Sequence[DeckValues], per_group: int
) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Per held-out deck and group: (family, references as the namer builds them, views,
    values)."""
    rng = np.random.default_rng(7)
    out = []
    for deck in pool:
        refs = reference_views(deck.bands)
        for g in range(2 * N_ING):
            end, ing = divmod(g, N_ING)
            base = end * N_CARDS + ing * N_VAL
            values = rng.integers(0, N_VAL, per_group)
            views = np.stack([camera_view(deck.bands, base + int(v), rng, HARD) for v in values])
            mask = deck.masks[g]
            out.append(
                (
                    deck.bands.name.split("-")[0],
                    value_input(refs[base : base + N_VAL], mask),
                    value_input(views, mask),
                    values,
                )
            )
    return out


@torch.no_grad()
def evaluate(
    net: BandNet, val: Sequence[tuple[str, np.ndarray, np.ndarray, np.ndarray]]
) -> dict[str, float]:
    net.eval()
    right: dict[str, list[bool]] = {}
    for family, refs, views, values in val:
        r = net(torch.from_numpy(to_input(refs)))
        q = net(torch.from_numpy(to_input(views)))
        pred = value_logits(net, q, r).argmax(1).numpy()
        right.setdefault(family, []).extend((pred == values).tolist())
    net.train()
    return {k: float(np.mean(v)) for k, v in right.items()}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m companion.training.value_embed",
        description="Train the value comparison (models/valuenet.onnx) on generated decks.",
    )
    ap.add_argument("--minutes", type=float, default=30.0, help="training time budget")
    ap.add_argument("--decks", type=int, default=120, help="training decks (seeds x families)")
    ap.add_argument("--batch-decks", type=int, default=2)
    ap.add_argument("--groups", type=int, default=4, help="ingredients per deck per step")
    ap.add_argument("--queries", type=int, default=8, help="camera views per ingredient")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--run-dir", type=Path, default=Path("runs/valuenet"))
    ap.add_argument("--out", type=Path, default=MODELS_DIR / f"{VALUE_MODEL_NAME}.onnx")
    ap.add_argument("--resume", action="store_true", help="continue from RUN_DIR/last.pt")
    ap.add_argument("--val-every", type=int, default=250)
    ap.add_argument("--workers", type=int, default=2)
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
        bands = [DeckBands(f"{f}-{s}", ends[i]) for i, (f, s) in enumerate(specs)]
    else:
        bands = build_pool(specs, args.workers, "training decks")
        np.save(cached, np.stack([b.ends for b in bands]))
    pool = _masks_of(bands, args.workers)
    held = build_pool(
        [(f, s) for f in HELD_OUT_FAMILIES for s in VAL_SEEDS], args.workers, "held-out decks"
    )
    val = validation(_masks_of(held, args.workers), 8)
    print(f"decks ready in {time.monotonic() - t0:.0f} s", flush=True)

    net = BandNet(VALUE_DIM, channels=4)
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
        _Batches(pool, args.batch_decks, args.groups, args.queries, seed=step),
        batch_size=None,
        num_workers=1,
        prefetch_factor=4,
    )
    budget = args.minutes * 60.0
    start = time.monotonic()
    bar = tqdm(desc="steps", unit="step")
    losses: list[float] = []
    for batch in loader:
        # the learning rate decays on a cosine over the time budget, not a step count
        frac = min(1.0, (time.monotonic() - start) / budget)
        for g in opt.param_groups:
            g["lr"] = args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * frac)))
        refs = torch.cat([r for r, _, _ in batch])
        views = torch.cat([v for _, v, _ in batch])
        emb_r, emb_v = net(refs), net(views)
        loss = torch.zeros(())
        r0 = v0 = 0
        for r, v, values in batch:
            logits = value_logits(net, emb_v[v0 : v0 + len(v)], emb_r[r0 : r0 + len(r)])
            loss = loss + F.cross_entropy(logits, values)
            r0, v0 = r0 + len(r), v0 + len(v)
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
                f"step {step}: held-out value top-1 "
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
        args.out,
        args.out.with_name(f"{args.out.stem}_ncnn_model"),
        float(net.scale()),
        channels=4,
        dim=VALUE_DIM,
    )
    print(
        f"trained {step} steps in {(time.monotonic() - start) / 60:.1f} min "
        f"(total {(time.monotonic() - t0) / 60:.1f} min); wrote {args.out} and {ncnn_dir}",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
