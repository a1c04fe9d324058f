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
    save_deck(deck, args.out)
    worst = min(o.fill for r in readings for o in r.outlines)
    print(
        f"enrolled {len(deck.faces)} cards from {len(readings)} photos into {args.out} "
        f"({time.perf_counter() - t0:.1f} s; worst outline fill {worst:.3f})"
    )
    # ingredients cannot be told from an unknown deck's art: show what was taken for what
    print(
        "photos read as: "
        + ", ".join(f"{r.ingredient} = {Path(r.source).name}" for r in readings)
        + " (a photo of another ingredient: enrol again in the guide's order)"
    )
    return 0


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
