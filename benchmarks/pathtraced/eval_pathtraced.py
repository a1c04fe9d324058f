"""Detection figures on path-traced tables (issue 10): the product judged on another renderer.

The project's own renderer drew every frame the models were trained and measured on; a sprite
renderer's idea of light is easy to learn. Here the frames come from Blender Cycles
(`make_set.py`, `scene_bpy.py`): glossy coating, curl, contact shadows, light at 2700-6500 K
through a camera not white-balanced for it, a lamp's glare in the `hard` slice.

For every deck: the default deck as it ships, and held-out generated designs (ornate-1, foil-1,
tarot-1; never seen by any model) enrolled through the real `companion deck enroll` from the 7
row photos exactly as benchmarks/foreign_decks.py does (its functions, its cache layout under
runs/pathtraced/). Then `companion detect IMG... --json [--deck DIR]` on the deck's frames (the
same scenes for every deck, so rows compare), scored by foreign_decks' rules (`score_frame`:
a card must be read when one of its index bands shows >= 50 %; a reading of a face-up card
that shows at all is never a false positive; a card read twice counts once).

`placed` adds the place: of the cards read right, how many had their box's centre (detect's
boxes are camera-frame px; mapped to the table plane with the scene's true homography) on that
card: inside a showing band grown by PLACE_MARGIN_MM, or anywhere on the card when both bands
show (detect then boxes the whole card).

    .venv/bin/python benchmarks/pathtraced/eval_pathtraced.py --decks default,ornate-1
    .venv/bin/python benchmarks/pathtraced/eval_pathtraced.py --frames 6 --hard-frames 4 --json

Frames missing from the cache are rendered first (about a minute each on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.foreign_decks import (  # noqa: E402
    DEFAULT,
    Enrolment,
    SliceScore,
    detect,
    enrol,
    json_report,
    load_design,
    provenance,
    report,
    score_frame,
)
from benchmarks.pathtraced.make_set import DEFAULT_SEED, OUT, ensure_frames  # noqa: E402

HELD_OUT = ("ornate-1", "foil-1", "tarot-1")
PLACE_MARGIN_MM = 8.0


@dataclass
class PlacedScore(SliceScore):
    """foreign_decks' figures plus where the right readings were."""

    placed: int = 0
    misses: list[str] = field(default_factory=list)
    """`card (region, frame, light K / white balance K, lamp)` of each must-card not read."""

    def add(self, other: SliceScore) -> None:
        super().add(other)
        self.placed += getattr(other, "placed", 0)
        self.misses += getattr(other, "misses", [])

    def to_json(self) -> dict[str, Any]:
        d = super().to_json()
        d["placed"] = round(self.placed / max(1, self.tp), 5)
        d["misses"] = self.misses
        return d


def _inside(point: np.ndarray, poly: Sequence[Sequence[float]], margin: float) -> bool:
    contour = np.asarray(poly, np.float32).reshape(-1, 1, 2)
    d = cv2.pointPolygonTest(contour, (float(point[0]), float(point[1])), True)
    return bool(d >= -margin)


def placed_right(truth: dict[str, Any], reading: dict[str, Any]) -> bool:
    """The reading's box centre lies on the card it names (rule in the module docstring)."""
    card = next((c for c in truth["cards"] if c["card"] == reading["card"]), None)
    if card is None:
        return False
    x0, y0, x1, y1 = reading["box"]
    hom = np.asarray(truth["image_from_plane"], np.float64)
    centre = cv2.perspectiveTransform(
        np.array([[[(x0 + x1) / 2, (y0 + y1) / 2]]], np.float64), np.linalg.inv(hom)
    ).reshape(2)
    shown = [s for s in card["strips"] if s["visible_fraction"] > 0]
    if len(shown) == len(card["strips"]) and _inside(centre, card["polygon_mm"], 4.0):
        return True
    return any(_inside(centre, s["polygon_mm"], PLACE_MARGIN_MM) for s in shown)


def score(
    truth: dict[str, Any], readings: list[dict[str, Any]], out: PlacedScore, frame: str = ""
) -> None:
    """foreign_decks.score_frame, then the place of each card read right and what was missed."""
    tp0 = out.tp
    score_frame(truth, readings, out)
    must = {c["card"] for c in truth["cards"] if c["required"]}
    best: dict[str, dict[str, Any]] = {}
    for r in readings:
        if r["card"] not in best or r["confidence"] > best[r["card"]]["confidence"]:
            best[r["card"]] = r
    out.placed += sum(placed_right(truth, r) for cid, r in best.items() if cid in must)
    assert out.tp - tp0 == len(must & set(best))
    light = truth["light"]
    cond = f"{light['kelvin']}/{light['white_balance_k']} K{', lamp' if light['lamp'] else ''}"
    for c in truth["cards"]:
        if c["required"] and c["card"] not in best:
            out.misses.append(f"{c['card']} ({c['region']}, {frame}, {cond})")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--decks",
        default=",".join((DEFAULT, *HELD_OUT)),
        help="default and/or family-seed designs (default: default,ornate-1,foil-1,tarot-1)",
    )
    ap.add_argument("--frames", type=int, default=6, help="plain frames per deck (6)")
    ap.add_argument("--hard-frames", type=int, default=4, help="hard frames per deck (4)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="scene seed")
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"), help="detect's backend")
    ap.add_argument("--min-confidence", type=float, help="detect's reading gate")
    ap.add_argument("--models", type=Path, help="strip finder folder for detect")
    ap.add_argument("--out", type=Path, default=OUT, help="cache (runs/pathtraced)")
    ap.add_argument("--json", action="store_true", help="last line: one JSON object")
    args = ap.parse_args(argv)
    args.decks = [d.strip() for d in args.decks.split(",") if d.strip()]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    counts = {"plain": args.frames, "hard": args.hard_frames}
    scores: list[SliceScore] = []
    enrolments: dict[str, Enrolment] = {}
    for name in args.decks:
        deck_dir: Path | None = None
        if name != DEFAULT:
            print(f"enrolling {name} ...", file=sys.stderr, flush=True)
            enrolments[name], deck_dir = enrol(load_design(name), name, args.out)
        for slice_, n in counts.items():
            if n <= 0:
                continue
            paths = ensure_frames(name, slice_, n, args.seed, args.out)
            s = PlacedScore(name, slice_)
            found: dict[str, list[dict]] = {}
            if name == DEFAULT or enrolments[name].accepted:
                found, s.failed_images, s.detect_seconds, s.seconds_per_frame = detect(
                    paths, deck_dir, args.backend, f"{name} {slice_}", args.min_confidence,
                    args.models,
                )  # fmt: skip
            for p in paths:
                truth = json.loads(p.with_suffix(".json").read_text())
                score(truth, found.get(str(p), []), s, p.stem)
            scores.append(s)
    totals: list[SliceScore] = []
    for slice_ in counts:
        parts = [s for s in scores if s.slice == slice_ and s.design != DEFAULT]
        if parts:
            total = PlacedScore(f"total, {len(parts)} designs", slice_)
            for s in parts:
                total.add(s)
            totals.append(total)
    report(scores, enrolments, totals)
    print("\nplaced (cards read right whose box lies on that card):")
    for s in [*scores, *totals]:
        print(f"  {s.design:<18} {s.slice:<5} {getattr(s, 'placed', 0)}/{s.tp}")
    print("must-cards not read (card (region, frame, light / camera white balance)):")
    for s in scores:
        misses = getattr(s, "misses", [])
        if misses:
            print(f"  {s.design} {s.slice}: {'; '.join(misses[:12])}")
    elapsed = time.perf_counter() - t0
    source = provenance()
    print(f"\npath-traced frames, {len(args.decks)} decks, {elapsed:.0f} s; code {source}")
    if args.json:
        run_args = {
            "decks": args.decks,
            "frames": args.frames,
            "hard_frames": args.hard_frames,
            "seed": args.seed,
            "backend": args.backend,
            "min_confidence": args.min_confidence,
        }
        enrolled = {k: vars(v) for k, v in enrolments.items()}
        print(json_report(run_args, enrolled, scores, totals, elapsed, source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
