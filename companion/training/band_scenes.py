"""Bands cut out of rendered table scenes exactly as the namer cuts them at run time.

The drawn views of `band_views` cover light, blur and hands broadly; what they cannot know is
where the namer's own alignment puts the crop and how the scene renderer's camera (noise,
lens, JPEG, the warp onto the table plane) looks. So part of every training batch is real
run-time crops of the training families' scenes: the namer's hand-made pass aligns each
ground-truth band and its crop is kept with the card's label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from companion.cards import CARD_IDS
from companion.deck.check import bands_to_check
from companion.deck.deckdir import Deck, default_deck
from companion.deck.designs import design_deck
from companion.synth.frame import FrameSpec, render_frame
from companion.vision.band_embedding import EMBED_H, EMBED_W
from companion.vision.band_naming import BandNamer, frame_white_gains
from companion.vision.calibration import calibrate

SCENE_SEED = 77_000


def scene_crops(
    family: str, seed: int, frames: int, hard_share: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """(crops (N, H, W, 3) uint8, card indices (N,)) of `frames` training-split scenes."""
    deck = default_deck() if family == "default" else design_deck(family, seed)
    return deck_scene_crops(deck, SCENE_SEED + seed, frames, hard_share)


def deck_scene_crops(
    deck: Deck,
    seed: int,
    frames: int,
    hard_share: float = 0.5,
    on_frame: Callable[[], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """`scene_crops` of any deck (an enrolled one: its own faces drawn on the tables)."""
    namer = BandNamer(deck, embedder=False)
    crops: list[np.ndarray] = []
    labels: list[int] = []
    index = {c: i for i, c in enumerate(CARD_IDS)}
    for i in range(frames):
        spec = FrameSpec(hard=i < round(frames * hard_share), split="train", width=2304)
        f = render_frame(deck, seed, i, spec)
        cal = calibrate(f.image)
        if on_frame is not None:
            on_frame()
        if cal is None:
            continue
        gains = frame_white_gains(f.image, cal)
        for card, box in bands_to_check(f.truth):
            crop = namer.crop_for_box(f.image, cal, box, gains)
            if crop is not None:
                crops.append(np.clip(crop, 0, 255).astype(np.uint8))
                labels.append(index[card])
    if not crops:
        return np.zeros((0, EMBED_H, EMBED_W, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(crops), np.asarray(labels, np.int64)


def _one(spec: tuple[str, int, int]) -> tuple[np.ndarray, np.ndarray]:
    return scene_crops(*spec)


def build_scene_crops(
    specs: Sequence[tuple[str, int]], frames: int, workers: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    from concurrent.futures import ProcessPoolExecutor

    from tqdm import tqdm

    jobs = [(f, s, frames) for f, s in specs]
    with ProcessPoolExecutor(workers) as ex:
        return list(tqdm(ex.map(_one, jobs), total=len(jobs), desc="scene crops"))


def main(argv: Sequence[str] | None = None) -> int:
    """Render the scene crops of the first DECKS training decks into one .npz."""
    import argparse
    from pathlib import Path

    from companion.training.band_embed import pool_specs

    ap = argparse.ArgumentParser(
        prog="python -m companion.training.band_scenes",
        description="Cut run-time band crops out of rendered scenes of the training decks.",
    )
    ap.add_argument("--decks", type=int, default=80, help="first N decks of the training pool")
    ap.add_argument("--frames", type=int, default=5, help="scenes per deck (half hard)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("runs/bandnet/scene-crops.npz"))
    args = ap.parse_args(argv)
    specs = pool_specs(args.decks)
    parts = build_scene_crops(specs, args.frames, args.workers)
    crops = np.concatenate([c for c, _ in parts])
    labels = np.concatenate([lab for _, lab in parts])
    decks = np.concatenate([np.full(len(lab), i) for i, (_, lab) in enumerate(parts)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, crops=crops, labels=labels, decks=decks)
    print(f"{len(crops)} crops of {len(specs)} decks -> {args.out}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
