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
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.foreign_decks import SliceScore, score_frame  # noqa: E402


def score_deck(out: Path, name: str, backend: str) -> list[SliceScore]:
    """Each cached slice of one deck, read by `companion detect --deck` of this checkout."""
    scores = []
    for part in sorted((out / "frames" / name).iterdir()):
        paths = sorted(part.glob("*.jpg"))
        cmd = [sys.executable, "-m", "companion", "detect", "--json", "--backend", backend]
        cmd += ["--deck", str(out / "decks" / name), *map(str, paths)]
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"error: detect failed on {part}: {proc.stderr.strip()[-300:]}")
        found = {}
        for line in proc.stdout.splitlines():
            reading = json.loads(line)
            found[reading["image"]] = reading["cards"]
        score = SliceScore(name, part.name.split("-")[0])
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
    ap.add_argument("--backend", default="ncnn", choices=("ncnn", "onnx", "torch"))
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="the cache")
    args = ap.parse_args(argv)
    for name in args.decks:
        if not (args.out / "decks" / name / "deck.json").exists():
            ap.error(f"no enrolled deck {name} under {args.out / 'decks'}")
        if not (args.out / "frames" / name).is_dir():
            ap.error(f"no cached frames of {name} under {args.out / 'frames'}")
    scores = [s for name in args.decks for s in score_deck(args.out, name, args.backend)]
    for slice_ in ("plain", "hard"):
        rows = [s for s in scores if s.slice == slice_]
        if rows:
            print(
                f"{'total':<12}{slice_:<7}misses {sum(s.fn for s in rows):>4}"
                f"  false {sum(s.fp for s in rows):>3}  of {sum(s.must for s in rows)} cards"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
