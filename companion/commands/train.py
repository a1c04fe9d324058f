"""`companion train`: render data, train the strip detector, export it to models/."""

from __future__ import annotations

import argparse
from pathlib import Path

from companion.inputs import integer, real, seed

NAME = "train"
RUN_MARK = ".companion-train-run"
"""Marks a --run-dir that `companion train` made: only such a folder is ever cleared or has its
checkpoints loaded (a checkpoint is a pickle: loading one from a folder someone else prepared
runs their code)."""


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
        type=real(0, 7 * 24 * 60, above=True),
        default=d.budget_minutes,
        help=f"training time budget (default {d.budget_minutes:g})",
    )
    p.add_argument(
        "--frames",
        type=integer(1, 1_000_000),
        default=d.frames,
        help=f"camera frames to render (default {d.frames})",
    )
    p.add_argument("--crops-per-frame", type=integer(1, 64), default=d.crops_per_frame)
    p.add_argument(
        "--epochs", type=integer(1, 10_000), default=d.epochs, help="upper bound on epochs"
    )
    p.add_argument("--seed", type=seed, default=d.seed)
    p.add_argument(
        "--run-dir",
        type=Path,
        default=d.run_dir,
        help="where data, checkpoints and logs go (not committed): a new or empty folder, or "
        "one an earlier `companion train` made (it clears and resumes only those)",
    )
    p.add_argument(
        "--export-to",
        type=Path,
        default=d.export_to,
        help="where the final models are written (default models/)",
    )
    p.add_argument("--workers", type=integer(1, 64), default=d.workers, help="rendering processes")
    p.add_argument(
        "--names-frames",
        type=integer(0, 1_000_000),
        default=d.names_frames,
        help=f"frames rendered for the strip classifier (default {d.names_frames}; 0 skips it)",
    )
    p.add_argument(
        "--names-budget-minutes",
        type=real(0, 7 * 24 * 60, above=True),
        default=d.names_budget_minutes,
        help=f"strip classifier training budget (default {d.names_budget_minutes:g})",
    )
    p.add_argument("--names-epochs", type=integer(1, 10_000), default=d.names_epochs)
    p.add_argument(
        "--designs",
        type=real(0, 1),
        default=d.designs,
        help="share of frames drawn with generated deck designs, 0..1 (a finder for any deck)",
    )
    p.add_argument(
        "--hard-share",
        type=real(0, 1),
        default=d.hard_share,
        help="share of frames drawn hard: glare, blur, hands, long bowls, 0..1 (default 0)",
    )
    p.add_argument(
        "--alike-share",
        type=real(0, 1),
        default=d.alike_share,
        help="share of frames with runs of one ingredient in the bowls on a table top of a "
        "card's colour, 0..1 (default 0)",
    )
    p.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start the detector from these weights (e.g. models/strips.pt) instead of scratch",
    )
    p.add_argument(
        "--lr0", type=real(0, 1, above=True), default=d.lr0, help="initial learning rate (0..1]"
    )
    p.add_argument(
        "--names-only",
        action="store_true",
        help="keep the strip detector; train only the default deck's strip classifier",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from companion.deck.deckdir import load_deck
    from companion.errors import BadInputError
    from companion.inputs import output_dir, require_modules
    from companion.training.train import TrainConfig, run_training

    require_modules(("torch", "ultralytics"), "training", "train")
    if args.names_only and args.deck is not None:
        raise BadInputError(
            "an enrolled deck is named from its own faces and needs no classifier: "
            "`companion deck check DIR` shows how well it is read; --names-only trains the "
            "default deck's classifier only"
        )
    if args.init is not None:
        check_weights(args.init)
    if args.deck is not None:
        load_deck(args.deck)  # here, once, not in every rendering worker
    output_dir(args.export_to, "--export-to folder", create=False)
    claim_run_dir(args.run_dir)

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
        hard_share=args.hard_share,
        alike_share=args.alike_share,
        init=args.init,
        lr0=args.lr0,
    )
    summary = run_training(cfg)
    print(json.dumps(summary, indent=2))
    return 0


def check_weights(path: Path) -> None:
    """--init: a PyTorch checkpoint file (a zip archive), else a one-line BadInputError."""
    import zipfile

    from companion.errors import BadInputError

    if not path.is_file():
        raise BadInputError(f"--init {path}: no such weights file")
    if path.suffix != ".pt" or not zipfile.is_zipfile(path):
        raise BadInputError(
            f"--init {path}: not PyTorch weights (a .pt file such as models/strips.pt)"
        )


def claim_run_dir(path: Path) -> None:
    """Use `path` as the run folder only if this command made it (it carries RUN_MARK) or it
    is new or empty; mark it. Training clears its data/ and train/ and loads the pickled
    checkpoint it finds there, so a folder made by anyone else is refused, untouched."""
    from companion.errors import BadInputError
    from companion.inputs import output_dir

    if path.exists() and not path.is_dir():
        raise BadInputError(f"--run-dir {path} is a file, not a folder")
    if path.is_dir() and not (path / RUN_MARK).is_file() and any(path.iterdir()):
        raise BadInputError(
            f"--run-dir {path} holds files that `companion train` did not make; training "
            "clears and reloads its run folder, so give a new or empty one (a run folder of "
            f"an older companion: create {path / RUN_MARK} to keep using it)"
        )
    output_dir(path, "--run-dir")
    mark = path / RUN_MARK
    if not mark.exists():
        mark.write_text("made by `companion train`: data/ and train/ here are its own\n")
