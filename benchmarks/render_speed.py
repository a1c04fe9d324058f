"""How fast the table-scene renderer runs on this machine (one process).

Prints images/s for full camera frames (with ground truth) at each output width, and for the
detector's training set (320 px crops and whole 780 x 440 views), as the dataset writer makes
them. Usage: .venv/bin/python benchmarks/render_speed.py [--frames 6] [--seed 0]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from companion.deck.deckdir import load_deck
from companion.synth.camera import WIDTHS
from companion.synth.dataset import DatasetSpec, write_dataset
from companion.synth.frame import FrameSpec, render_frame


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--frames", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    deck = load_deck(None)
    render_frame(deck, args.seed, 0)  # warm the face cache
    print(f"frames (camera frame + ground truth), {args.frames} per row:")
    for width in WIDTHS:
        t0 = time.perf_counter()
        for i in range(args.frames):
            render_frame(deck, args.seed, i, FrameSpec(width=width))
        dt = time.perf_counter() - t0
        print(f"  {width:>5} x {round(width * 9 / 16):<5} {args.frames / dt:6.2f} frames/s")
    for label, spec in (
        ("crops 320, 4/frame, mixed widths", DatasetSpec(args.frames, args.seed, crop=320)),
        ("whole views 780x440, mixed widths", DatasetSpec(args.frames, args.seed)),
        ("crops 320, hard slice", DatasetSpec(args.frames, args.seed, crop=320, hard=True)),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            s = write_dataset(tmp, spec, deck=deck, progress=False)
        print(
            f"dataset {label}: {s.images_per_s:6.2f} images/s "
            f"({s.frames / s.seconds:.2f} frames/s, {s.boxes / max(1, s.images):.1f} boxes/image)"
        )


if __name__ == "__main__":
    main()
