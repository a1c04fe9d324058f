"""`companion render`: rendered table frames, detector training sets and game recordings."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from companion.inputs import integer, real, seed

NAME = "render"

MIN_WIDTH, MAX_WIDTH = 320, 4608
"""Camera widths rendered: up to the Camera Module 3's full 4608 px (a 30000 px frame would
take tens of GB)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        NAME,
        help="render synthetic table frames, training sets and game recordings",
        description="Render what the camera over the table would see, with exact ground truth. "
        "Everything is reproduced from --seed; rendered data is not committed.",
    )
    rs = p.add_subparsers(dest="what", metavar="WHAT", required=True)

    d = rs.add_parser(
        "dataset",
        help="a training set for the strip detector (ultralytics layout)",
        description="Render N camera frames, warp each to the top-down view the detector sees "
        "(780 x 440 px) and write images/{train,val}, labels/{train,val} and data.yaml.",
    )
    d.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    d.add_argument(
        "--count", type=integer(1, 100_000), default=200, help="camera frames (default 200)"
    )
    d.add_argument("--seed", type=seed, default=0)
    d.add_argument(
        "--crop", type=integer(32, 440), default=None, help="write N x N crops instead of the view"
    )
    d.add_argument("--crops-per-frame", type=integer(1, 64), default=4)
    d.add_argument("--classes", choices=("index", "ingredient", "card"), default="index")
    d.add_argument("--val-fraction", type=real(0, 0.9), default=0.1)
    d.add_argument(
        "--split",
        choices=("train", "test"),
        default="train",
        help="test: another random stream, plus table textures and light training never sees",
    )
    d.add_argument("--hard", action="store_true", help="glare, blur, hands, 8-10 card bowls")
    d.add_argument("--keep-frames", action="store_true", help="also write frames/*.jpg + *.json")
    d.add_argument(
        "--width",
        type=integer(MIN_WIDTH, MAX_WIDTH),
        default=None,
        help=f"fixed camera width, {MIN_WIDTH}..{MAX_WIDTH} (default: varied)",
    )
    d.add_argument("--deck", type=Path, help="deck folder (enrolled deck); default deck if omitted")
    d.add_argument("--workers", type=integer(1, 64), default=1)
    d.set_defaults(func=run_dataset)

    f = rs.add_parser(
        "frame",
        help="one camera frame and its ground truth (OUT.json beside OUT.jpg)",
    )
    f.add_argument("out", type=Path, metavar="OUT.jpg")
    f.add_argument("--seed", type=seed, default=0)
    f.add_argument("--index", type=seed, default=0, help="frame number within the seed's stream")
    f.add_argument("--split", choices=("train", "test"), default="train")
    f.add_argument("--hard", action="store_true")
    f.add_argument(
        "--width",
        type=integer(MIN_WIDTH, MAX_WIDTH),
        default=None,
        help=f"camera width, {MIN_WIDTH}..{MAX_WIDTH}",
    )
    f.add_argument("--deck", type=Path)
    f.set_defaults(func=run_frame)

    r = rs.add_parser(
        "recording",
        help="a simulated game (companion simulate --json) as a video with true events",
        description="Render a game record as OUT_DIR/recording.mp4 (or .avi), with "
        "OUT_DIR/truth.jsonl (the events as they happen) and OUT_DIR/record.json.",
    )
    r.add_argument("record", type=Path, metavar="RECORD.json")
    r.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    r.add_argument("--fps", type=real(0.5, 60), default=4.0, help="0.5..60 (default 4)")
    r.add_argument(
        "--width",
        type=integer(MIN_WIDTH, MAX_WIDTH),
        default=1280,
        help=f"{MIN_WIDTH}..{MAX_WIDTH} (default 1280)",
    )
    r.add_argument("--seed", type=seed, default=None, help="look of the table (default: record's)")
    r.add_argument("--bump", action="store_true", help="shift the camera once, mid-game")
    r.add_argument("--no-scoring", action="store_true", help="skip the end-of-game scan")
    r.add_argument(
        "--cascade-mm",
        type=_span(8, 40),
        default=(14.0, 20.0),
        metavar="LO,HI",
        help="step between cascaded bowl cards, mm (default 14,20; sloppy: 12,22)",
    )
    r.add_argument(
        "--hand-rest",
        type=_span(0, 30),
        default=(0.0, 0.0),
        metavar="LO,HI",
        help="after about half the actions the hand rests still over the table for LO..HI s "
        "(default 0,0: it leaves at once)",
    )
    r.add_argument("--warm", action="store_true", help="warm indoor light (2700-3200 K)")
    r.add_argument("--deck", type=Path)
    r.set_defaults(func=run_recording)


def _span(lo: float, hi: float) -> Callable[[str], tuple[float, float]]:
    """An argparse type: `A,B` with lo <= A <= B <= hi."""
    one = real(lo, hi)

    def parse(text: str) -> tuple[float, float]:
        parts = text.split(",")
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(f"must be two numbers LO,HI, got {text!r}")
        a, b = one(parts[0]), one(parts[1])
        if a > b:
            raise argparse.ArgumentTypeError(f"LO must not exceed HI, got {text!r}")
        return a, b

    parse.__name__ = "range"
    return parse


def run_dataset(args: argparse.Namespace) -> int:
    from companion.deck.deckdir import load_deck
    from companion.inputs import output_dir
    from companion.synth.dataset import DatasetSpec, write_dataset

    load_deck(args.deck)  # a bad deck is one line here, not one traceback per worker
    output_dir(args.out_dir, create=False)
    spec = DatasetSpec(
        frames=args.count,
        seed=args.seed,
        crop=args.crop,
        crops_per_frame=args.crops_per_frame,
        classes=args.classes,
        val_fraction=args.val_fraction,
        split=args.split,
        hard=args.hard,
        keep_frames=args.keep_frames,
        width=args.width,
        workers=args.workers,
    )
    s = write_dataset(args.out_dir, spec, deck=args.deck)
    print(
        f"{s.images} images ({s.boxes} boxes) from {s.frames} frames in {s.seconds:.1f} s: "
        f"{s.images_per_s:.2f} images/s, {s.frames / max(s.seconds, 1e-9):.2f} frames/s -> "
        f"{s.out_dir / 'data.yaml'}"
    )
    return 0


def run_frame(args: argparse.Namespace) -> int:
    import cv2

    from companion.deck.deckdir import load_deck
    from companion.errors import BadInputError
    from companion.inputs import output_file
    from companion.synth.frame import FrameSpec, render_frame

    if args.out.suffix.lower() not in (".jpg", ".jpeg", ".png"):
        raise BadInputError(f"{args.out}: the frame is written as .jpg or .png")
    deck = load_deck(args.deck)
    output_file(args.out, "frame", create=False)
    output_file(args.out.with_suffix(".json"), "truth file", create=False)
    frame = render_frame(
        deck,
        args.seed,
        args.index,
        FrameSpec(hard=args.hard, split=args.split, width=args.width),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(args.out), frame.image, [cv2.IMWRITE_JPEG_QUALITY, 95]):
        raise BadInputError(f"cannot write {args.out}")
    truth_path = args.out.with_suffix(".json")
    truth_path.write_text(json.dumps(frame.truth, indent=1) + "\n", encoding="utf-8")
    n = sum(1 for c in frame.truth["cards"] if c["visible_fraction"] > 0)
    print(f"{args.out} ({frame.image.shape[1]}x{frame.image.shape[0]}, {n} cards) + {truth_path}")
    return 0


def run_recording(args: argparse.Namespace) -> int:
    from companion.deck.deckdir import load_deck
    from companion.inputs import output_dir
    from companion.synth.recording import RecordingSpec, render_recording

    output_dir(args.out_dir, create=False)
    spec = RecordingSpec(
        fps=args.fps,
        width=args.width,
        seed=args.seed,
        bump=args.bump,
        scoring=not args.no_scoring,
        cascade_mm=args.cascade_mm,
        rest_s=args.hand_rest,
        warm=args.warm,
    )
    summary = render_recording(args.record, args.out_dir, spec, load_deck(args.deck))
    print(summary)
    return 0
