"""Score the decks and frames a `foreign_decks.py` run left in its cache, read again by this
checkout's `companion detect` (figures, nothing enrolled or tuned again).

`foreign_decks.py` enrols every design afresh (and tunes it with `--tune`, minutes a deck), so
two versions of the namer compared through it are compared on two different tunes. This reads
the deck folders as they are (tuned or not) and the cached frames, and prints misses and false
readings per deck and slice as `foreign_decks.py` scores them (`score_frame`: by card id), so
an A/B of two checkouts is one run in each:

    .venv/bin/python benchmarks/foreign_decks.py --backend ncnn --tune 450 --tune-scenes 24
    .venv/bin/python benchmarks/cached_decks.py ornate-1 foil-1 minimal-1 tarot-1
    cd ../other-checkout && PYTHONPATH=$PWD ../main/.venv/bin/python benchmarks/cached_decks.py \\
        --out ../main/runs/foreign-decks ornate-1
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.foreign_decks import SliceScore, detect, score_frame  # noqa: E402
from companion.vision.backends import BACKENDS  # noqa: E402

SLICES = ("plain", "hard")


def score_deck(
    out: Path, name: str, backend: str, slices: Sequence[str] = SLICES
) -> list[SliceScore]:
    """Each cached slice of one deck (of `slices`), read by `companion detect --deck`
    (`foreign_decks.detect`; another checkout's with PYTHONPATH set to it)."""
    scores = []
    for part in sorted((out / "frames" / name).iterdir()):
        slice_ = part.name.split("-")[0]
        if slice_ not in slices:
            continue
        paths = sorted(part.glob("*.jpg"))
        found, *_ = detect(paths, out / "decks" / name, backend, f"{name} {part.name}")
        score = SliceScore(name, slice_)
        for jpg in paths:
            truth = json.loads(jpg.with_suffix(".json").read_text())
            score_frame(truth, found.get(str(jpg), []), score)
        print(
            f"{name:<12}{score.slice:<7}misses {score.fn:>4}  false {score.fp:>3}"
            f"  frames all right {score.frames_ok:>3} of {score.frames}",
            flush=True,
        )
        scores.append(score)
    return scores


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("decks", nargs="+", help="deck names under OUT/decks, e.g. ornate-1")
    ap.add_argument("--backend", default="ncnn", choices=BACKENDS)
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="the cache")
    ap.add_argument("--slice", choices=SLICES, help="score this slice only (default: both)")
    args = ap.parse_args(argv)
    for name in args.decks:
        if not (args.out / "decks" / name / "deck.json").exists():
            ap.error(f"no enrolled deck {name} under {args.out / 'decks'}")
        if not (args.out / "frames" / name).is_dir():
            ap.error(f"no cached frames of {name} under {args.out / 'frames'}")
    try:
        slices = (args.slice,) if args.slice else SLICES
        scores = [
            s for name in args.decks for s in score_deck(args.out, name, args.backend, slices)
        ]
    except RuntimeError as e:  # detect failed: its own words, one line
        raise SystemExit(f"error: {e}") from None
    for slice_ in SLICES:
        rows = [s for s in scores if s.slice == slice_]
        if rows:
            print(
                f"{'total':<12}{slice_:<7}misses {sum(s.fn for s in rows):>4}"
                f"  false {sum(s.fp for s in rows):>3}  of {sum(s.must for s in rows)} cards"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
