"""`companion deck faces|print|enroll`: the default deck's art, the printable kit, enrolment."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from companion.inputs import integer, real, seed

NAME = "deck"


def _enroll_guide() -> str:
    from companion.deck.guide import guide_text  # no OpenCV: --help stays quick

    return guide_text()


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="default deck faces, printable PDFs, enrol your own deck",
        description="The default deck's 56 faces, the printable deck and table kit, and "
        "enrolment of a published deck from seven photos.",
    )
    deck_sub = p.add_subparsers(dest="deck_command", metavar="ACTION", required=True)

    faces = deck_sub.add_parser(
        "faces",
        help="write the 56 default faces as <card>.png",
        description="Write the default deck's 56 faces as OUT_DIR/<card>.png (and back.png).",
    )
    faces.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    faces.add_argument(
        "--dpi", type=real(50, 1200), default=305.0, help="resolution, 50..1200 (default 305)"
    )
    faces.set_defaults(func=run_faces)

    pr = deck_sub.add_parser(
        "print",
        help="write deck.pdf and table-kit.pdf",
        description="Write OUT_DIR/deck.pdf (56 faces at 63 x 88 mm, 9 a page with cut marks, "
        "then a page of backs) and OUT_DIR/table-kit.pdf (the four ArUco markers, the layout "
        "diagram, set-up instructions). Print both at 100 %% (actual size).",
    )
    pr.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    pr.add_argument("--paper", choices=("a4", "letter"), default="a4")
    pr.add_argument("--no-backs", action="store_true", help="leave out the page of card backs")
    pr.add_argument(
        "--deck", type=Path, help="print an enrolled deck folder instead of the default deck"
    )
    pr.set_defaults(func=run_print)

    en = deck_sub.add_parser(
        "enroll",
        help="build a deck folder from 7 photos of your own cards",
        description="Build a deck folder (56 rectified faces + deck.json) from seven photos "
        "of the published game's cards, one photo per ingredient.",
        epilog=_enroll_guide(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    en.add_argument(
        "photos", nargs="+", type=Path, metavar="PHOTO", help="7 photos, or 1 folder of 7"
    )
    en.add_argument("--out", type=Path, required=True, metavar="DIR", help="deck folder to write")
    en.add_argument("--name", default=None, help="deck name (default: the folder's name)")
    en.set_defaults(func=run_enroll)

    ck = deck_sub.add_parser(
        "check",
        help="how confusable a deck is and how well it is read on rendered tables",
        description="Before playing with a deck: its most confusable pairs of cards from the "
        "faces alone, then table scenes rendered with its faces, every band at least half "
        "visible named as at play time. Verdict: ready, usable, or hard to tell apart (with "
        "what to do). Exit code 0 for ready or usable, 1 otherwise.",
    )
    ck.add_argument("deck", metavar="DIR", help="deck folder (from `deck enroll`), or `default`")
    ck.add_argument(
        "--frames", type=integer(1, 500), default=None, help="table scenes to render (default 6)"
    )
    ck.add_argument("--seed", type=seed, default=None, help="scenes' random seed")
    ck.add_argument("--json", action="store_true", help="print one JSON object")
    ck.set_defaults(func=run_check)

    tu = deck_sub.add_parser(
        "tune",
        help="make an enrolled deck surer to read: a few minutes of learning its own cards",
        description="Optional, after `deck enroll`: fine-tune the band comparison on camera "
        "views of the deck's own enrolled faces and on table scenes drawn with them (5-8 "
        "minutes on a 2-core CPU, never more than --minutes; needs the train extra, torch). "
        "Writes DIR/bandnet.onnx and DIR/bandnet_ncnn_model, which detect, run and check use "
        "from then on for that deck; delete them to go back to the shipped comparison. A deck "
        "is read without it.",
    )
    tu.add_argument("deck", type=Path, metavar="DIR", help="deck folder (from `deck enroll`)")
    tu.add_argument(
        "--steps",
        type=integer(1, 20000),
        default=None,
        help="training steps, 1..20000 (default 450: 4-9 minutes on a 2-core x86 CPU)",
    )
    tu.add_argument(
        "--minutes",
        type=real(0, 600),
        default=None,
        help="wall time to end within (default 8; 0: none): on a slower machine fewer steps "
        "are taken, planned every 10 at the pace of the last ones",
    )
    tu.add_argument(
        "--scenes",
        type=integer(0, 500),
        default=None,
        help="table scenes drawn with your faces to learn from, 0..500 (default 24; 0: single "
        "cards drawn only)",
    )
    tu.add_argument("--seed", type=seed, default=0, help="random seed of the drawn views")
    tu.set_defaults(func=run_tune)


def run_faces(args: argparse.Namespace) -> int:
    from companion.deck.faces import write_faces
    from companion.inputs import output_dir

    paths = write_faces(output_dir(args.out_dir), args.dpi / 25.4)
    print(f"wrote {len(paths)} faces to {args.out_dir}")
    return 0


def run_print(args: argparse.Namespace) -> int:
    import sys

    from companion.deck.pdf import write_deck_pdf, write_kit_pdf
    from companion.inputs import output_dir

    faces = back = None
    if args.deck is not None:
        from companion.deck.deckdir import load_deck

        deck = load_deck(args.deck)
        faces, back = deck.faces, deck.back
    output_dir(args.out_dir)
    deck_pdf = write_deck_pdf(
        args.out_dir / "deck.pdf",
        args.paper,
        faces=faces,
        back=back,
        backs=not args.no_backs,
        progress=sys.stderr.isatty(),
    )
    kit_pdf = write_kit_pdf(args.out_dir / "table-kit.pdf", args.paper)
    print(f"wrote {deck_pdf} and {kit_pdf}: print at 100 % (actual size)")
    return 0


def run_enroll(args: argparse.Namespace) -> int:
    import sys

    from companion.deck.deckdir import save_deck
    from companion.deck.enroll import enroll
    from companion.inputs import output_dir

    t0 = time.perf_counter()
    output_dir(args.out, "deck folder", create=False)  # before minutes of work, not after
    name = args.name or args.out.name
    deck, readings = enroll(args.photos, name, progress=sys.stderr.isatty())
    stale = _drop_tuned(args.out)  # learned on the faces being replaced
    save_deck(deck, args.out)
    worst = min(o.fill for r in readings for o in r.outlines)
    print(
        f"enrolled {len(deck.faces)} cards from {len(readings)} photos into {args.out} "
        f"({time.perf_counter() - t0:.1f} s; worst outline fill {worst:.3f})"
    )
    if stale:
        print(f"removed the old faces' tuned comparison: `companion deck tune {args.out}` again")
    # ingredients cannot be told from an unknown deck's art: show what was taken for what
    print(
        "photos read as: "
        + ", ".join(f"{r.ingredient} = {Path(r.source).name}" for r in readings)
        + " (a photo of another ingredient: enrol again in the guide's order)"
    )
    return 0


def _drop_tuned(folder: Path) -> bool:
    """Remove a `deck tune` result from a deck folder about to get new faces."""
    import shutil

    from companion.vision.band_embedding import MODEL_NAME, NCNN_DIR

    onnx, ncnn = folder / f"{MODEL_NAME}.onnx", folder / NCNN_DIR
    found = onnx.is_file() or ncnn.is_dir()
    onnx.unlink(missing_ok=True)
    shutil.rmtree(ncnn, ignore_errors=True)
    return found


def run_check(args: argparse.Namespace) -> int:
    import json
    import sys

    from companion.deck.check import (
        DEFAULT_FRAMES,
        DEFAULT_SEED,
        check_deck,
        format_report,
        load_checked_deck,
    )

    frames = DEFAULT_FRAMES if args.frames is None else args.frames
    deck = load_checked_deck(args.deck)
    seed = DEFAULT_SEED if args.seed is None else args.seed
    report = check_deck(deck, frames, seed, progress=sys.stderr.isatty())
    print(json.dumps(report.to_json()) if args.json else format_report(report))
    return 0 if report.ok else 1


def run_tune(args: argparse.Namespace) -> int:
    import sys

    from companion.deck.deckdir import load_deck
    from companion.errors import BadInputError
    from companion.inputs import output_dir, require_modules

    require_modules(("torch", "onnx"), "tuning", "train,export")
    deck = load_deck(args.deck)
    if deck.folder is None:
        raise BadInputError("the default deck has its own classifier: tune an enrolled deck")
    output_dir(deck.folder, "deck folder", create=False)
    from tqdm import tqdm

    from companion.training.deck_tune import DEFAULT_STEPS, MINUTES, SCENE_FRAMES, tune_deck

    steps = DEFAULT_STEPS if args.steps is None else args.steps
    minutes = MINUTES if args.minutes is None else (args.minutes or None)
    scenes = SCENE_FRAMES if args.scenes is None else args.scenes
    quiet = not sys.stderr.isatty()
    t0 = time.perf_counter()
    with (
        tqdm(total=scenes, desc="scenes", unit="frame", disable=quiet, leave=False) as frames,
        tqdm(total=steps, desc="tuning", unit="step", disable=quiet, leave=False) as bar,
    ):

        def on_step(step: int, loss: float) -> None:
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.3f}", refresh=False)

        report = tune_deck(
            deck, deck.folder, steps, args.seed, on_step, scenes, lambda: frames.update(1), minutes
        )
    took = f"{report.steps} steps"
    if report.steps < report.asked:
        took = f"{report.steps} of {report.asked} steps: the {minutes:g}-minute limit"
    print(
        f"tuned the band comparison for {deck.name} in {(time.perf_counter() - t0) / 60:.1f} min "
        f"({took}): drawn views of its cards named right "
        f"{report.before:.3f} -> {report.after:.3f}; wrote {report.onnx} and {report.ncnn} "
        "(detect, run and check use them for this deck; delete them to go back)"
    )
    return 0
