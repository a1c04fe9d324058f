"""How a tuned deck's learned reading could join the hand-made one (figures, no change made).

For decks that `benchmarks/foreign_decks.py --tune STEPS` enrolled and tuned (their folders and
cached frames under runs/foreign-decks/), every band at least half visible is named from its
ground-truth box twice: by the hand-made reading alone and by the tuned comparison alone. Then
ways of fusing the two are scored per band at the reading gate: misses and wrong readings above
it. Choose a rule on the training families, never on the held-out ones.

    .venv/bin/python benchmarks/foreign_decks.py --seeds 5 --frames 15 --hard-frames 8 \\
        --families band,corner,bordered,photo,badge,mixed --no-default --tune 450
    .venv/bin/python benchmarks/tuned_fusion.py band-5 corner-5 bordered-5 photo-5 badge-5 mixed-5
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import cv2
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.deck.check import GATE, bands_to_check  # noqa: E402
from companion.deck.deckdir import load_deck  # noqa: E402
from companion.vision.band_naming import BandNamer  # noqa: E402
from companion.vision.calibration import calibrate  # noqa: E402

Row = dict[str, object]
Rule = Callable[[Row], tuple[object, float]]


def readings(deck_dir: Path, frames: Path) -> list[Row]:
    """Per band: truth, hand-made (card, confidence, runner-up), tuned learned (card, p)."""
    deck = load_deck(deck_dir)
    hand = BandNamer(deck, embedder=False)
    learned = BandNamer(deck, embedder=True, fuse=False)
    if not learned.tuned:
        raise SystemExit(f"{deck_dir} has no tuned comparison: run foreign_decks.py --tune")
    rows: list[Row] = []
    for jpg in tqdm(sorted(frames.glob("*/*.jpg")), desc=deck.name, unit="frame"):
        truth = json.loads(jpg.with_suffix(".json").read_text())
        image = cv2.imread(str(jpg))
        cal = calibrate(image)
        if cal is None:
            continue
        bands = bands_to_check(truth)
        boxes = [b for _, b in bands]
        for (card, _), h, lr in zip(
            bands,
            hand.name_boxes(image, cal, boxes),
            learned.name_boxes(image, cal, boxes),
            strict=True,
        ):
            rows.append({
                "slice": jpg.parent.name.split("-")[0], "truth": card,
                "hand": h.card if h else None, "hp": h.confidence if h else 0.0,
                "hr": h.runner_up if h else None,
                "learned": lr.card if lr else None, "lp": lr.confidence if lr else 0.0,
            })  # fmt: skip
    return rows


def _agree(r: Row) -> tuple[object, float] | None:
    if r["hand"] == r["learned"]:
        return r["hand"], 1 - (1 - float(r["hp"])) * (1 - float(r["lp"]))  # type: ignore[arg-type]
    return None


def win(t_learned: float, t_hand: float, runner_only: bool = False) -> Rule:
    """Confirm when they agree; the learned card wins when it is at t_learned or more, the
    hand-made one under t_hand (and, `runner_only`, the learned card is the hand's runner-up)."""

    def rule(r: Row) -> tuple[object, float]:
        same = _agree(r)
        if same is not None:
            return same
        lp, hp = float(r["lp"]), float(r["hp"])  # type: ignore[arg-type]
        if lp >= t_learned and hp < t_hand and (not runner_only or r["hr"] == r["learned"]):
            return r["learned"], lp * (1 - hp)
        return r["hand"], hp

    return rule


RULES: dict[str, Rule] = {
    "hand-made alone": lambda r: (r["hand"], float(r["hp"])),  # type: ignore[arg-type]
    "learned alone": lambda r: (r["learned"], float(r["lp"])),  # type: ignore[arg-type]
    "confirm only (shipped)": win(2.0, 0.0),
    "learned >= 0.9 wins over hand < 0.9": win(0.9, 0.9),
    "learned >= 0.9 wins over hand < 0.35": win(0.9, 0.35),
    "learned >= 0.97 wins over hand < 0.9": win(0.97, 0.9),
    "runner-up, learned >= 0.9": win(0.9, 2.0, runner_only=True),
    "runner-up, learned >= 0.8": win(0.8, 2.0, runner_only=True),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("decks", nargs="+", help="deck names under runs/foreign-decks/decks")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="cache")
    args = ap.parse_args()
    rows = [
        r for d in args.decks for r in readings(args.out / "decks" / d, args.out / "frames" / d)
    ]
    for slice_ in ("plain", "hard"):
        part = [r for r in rows if r["slice"] == slice_]
        print(f"{slice_}: {len(part)} bands of {len(args.decks)} decks (gate {GATE})")
        for name, rule in RULES.items():
            passed = [(c, r["truth"]) for r in part for c, p in [rule(r)] if p >= GATE]
            right = sum(c == t for c, t in passed)
            print(f"  {name:<40} missed {len(part) - right:4d}  wrong {len(passed) - right:3d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
