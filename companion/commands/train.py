"""`companion train`: render data, train the strip detector, export it to models/."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "train"


def add_parser(sub: argparse._SubParsersAction) -> None:
    from companion.training.train import TrainConfig

    d = TrainConfig()
    p = sub.add_parser(
        NAME,
        help="render data, train, evaluate and export the card detector",
        description="Render a training set from seeds (companion render), train YOLO11n from "
        "scratch with ultralytics on the CPU within a time budget, and export PyTorch, ONNX and "
        "NCNN models to models/. Resumable: re-running continues an interrupted run. "
        "With --deck, the same for an enrolled deck (naming needs no training: it matches the "
        "deck's own faces).",
    )
    p.add_argument("--deck", type=Path, help="deck folder from `companion deck enroll`")
    p.add_argument(
        "--budget-minutes",
        type=float,
        default=d.budget_minutes,
        help=f"training time budget (default {d.budget_minutes:g})",
    )
    p.add_argument(
        "--frames", type=int, default=d.frames, help=f"camera frames to render (default {d.frames})"
    )
    p.add_argument("--crops-per-frame", type=int, default=d.crops_per_frame)
    p.add_argument("--epochs", type=int, default=d.epochs, help="upper bound on epochs")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument(
        "--run-dir",
        type=Path,
        default=d.run_dir,
        help="where data, checkpoints and logs go (not committed)",
    )
    p.add_argument(
        "--export-to",
        type=Path,
        default=d.export_to,
        help="where the final models are written (default models/)",
    )
    p.add_argument("--workers", type=int, default=d.workers, help="rendering processes")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from companion.training.train import TrainConfig, run_training

    cfg = TrainConfig(
        run_dir=args.run_dir,
        deck=args.deck,
        budget_minutes=args.budget_minutes,
        frames=args.frames,
        crops_per_frame=args.crops_per_frame,
        seed=args.seed,
        epochs=args.epochs,
        export_to=args.export_to,
        workers=args.workers,
    )
    summary = run_training(cfg)
    print(json.dumps(summary, indent=2))
    return 0
