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
        description="Render a training set from seeds (companion render), train the YOLO11n "
        "strip detector from scratch with ultralytics on the CPU within a time budget and export "
        "PyTorch, ONNX and NCNN models to models/; then render strip crops and train the "
        "YOLO11n-cls "
        "strip classifier (56 cards) the same way. Resumable: re-running continues an interrupted "
        "run. With --deck, the same for an enrolled deck; its classifier goes into the deck "
        "folder. An enrolled deck is named at once without training (matching its own faces); "
        "the classifier makes the names surer.",
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
    p.add_argument(
        "--names-frames",
        type=int,
        default=d.names_frames,
        help=f"frames rendered for the strip classifier (default {d.names_frames}; 0 skips it)",
    )
    p.add_argument(
        "--names-budget-minutes",
        type=float,
        default=d.names_budget_minutes,
        help=f"strip classifier training budget (default {d.names_budget_minutes:g})",
    )
    p.add_argument("--names-epochs", type=int, default=d.names_epochs)
    p.add_argument(
        "--designs",
        type=float,
        default=d.designs,
        help="share of frames drawn with generated deck designs, 0..1 (a finder for any deck)",
    )
    p.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start the detector from these weights (e.g. models/strips.pt) instead of scratch",
    )
    p.add_argument("--lr0", type=float, default=d.lr0, help="initial learning rate")
    p.add_argument(
        "--names-only",
        action="store_true",
        help="keep the strip detector; train only the default deck's strip classifier",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from companion.errors import BadInputError
    from companion.training.train import TrainConfig, run_training

    if not 0.0 <= args.designs <= 1.0:
        raise BadInputError(f"--designs {args.designs:g} is out of range (0..1)")
    if args.names_only and args.deck is not None:
        raise BadInputError(
            "an enrolled deck is named from its own faces and needs no classifier: "
            "`companion deck check DIR` shows how well it is read; --names-only trains the "
            "default deck's classifier only"
        )
    if args.init is not None and not args.init.is_file():
        raise BadInputError(f"--init {args.init}: no such weights file")

    cfg = TrainConfig(
        run_dir=args.run_dir.resolve(),  # ultralytics puts a relative project under runs/detect
        deck=args.deck,
        budget_minutes=args.budget_minutes,
        frames=args.frames,
        crops_per_frame=args.crops_per_frame,
        seed=args.seed,
        epochs=args.epochs,
        export_to=args.export_to.resolve(),
        workers=args.workers,
        # an enrolled deck is named from its faces: only the default deck has a classifier
        names_frames=0 if args.deck is not None else args.names_frames,
        names_budget_minutes=args.names_budget_minutes,
        names_epochs=args.names_epochs,
        names_only=args.names_only,
        designs=args.designs,
        init=args.init,
        lr0=args.lr0,
    )
    summary = run_training(cfg)
    print(json.dumps(summary, indent=2))
    return 0
