"""The lens blur measured on the markers' edges (`companion.vision.focus`) against the blur the
frames were rendered with (figures).

The frames are foreign_decks.py's held-out test scenes (its cache under runs/foreign-decks/,
rendered when missing): plain frames draw lens blur 0-1.3 camera px, hard ones 1.2-2.8, with
noise, JPEG, light gradients, hands and cards over the markers' margins. The measure includes
the camera's own softness (resampling, JPEG), so it is compared with hypot(blur, SOFTNESS_PX).
Printed: the error's median and 90th percentile, how often the doctor's verdict (out of focus
from OUT_OF_FOCUS_PX) agrees with the rendered blur's side of 1.5 px, and the time per measure.

    .venv/bin/python benchmarks/focus_measure.py
    .venv/bin/python benchmarks/focus_measure.py --families ornate,tarot --frames 10 --hard-frames 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOFTNESS_PX = 0.5
"""The camera's own blur (resampling, JPEG), added in quadrature to the lens's."""
LEGIBLE_PX = 1.5
"""Rendered lens blur under which held-out designs' hard frames read 94 % of their cards (89 %
over it): the side of it the doctor's verdict should tell."""


def main(argv: Sequence[str] | None = None) -> int:
    import cv2
    import numpy as np
    from tqdm import tqdm

    from benchmarks.foreign_decks import load_design, render_slice
    from companion.vision.calibration import STILL_MIN_MARKERS, calibrate
    from companion.vision.focus import OUT_OF_FOCUS_PX, lens_blur

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", default="ornate,foil,minimal,tarot")
    ap.add_argument("--frames", type=int, default=30, help="plain frames per design")
    ap.add_argument("--hard-frames", type=int, default=15, help="hard frames per design")
    ap.add_argument("--seed", type=int, default=90000)
    args = ap.parse_args(argv)
    out = ROOT / "runs" / "foreign-decks"
    rows: list[tuple[float, float | None, float]] = []
    for family in (f.strip() for f in args.families.split(",") if f.strip()):
        name = f"{family}-1"
        deck = load_design(name)
        for slice_, n in (("plain", args.frames), ("hard", args.hard_frames)):
            paths = render_slice(deck, name, slice_, n, args.seed, out, 2304)
            for path in tqdm(paths, desc=f"measure {name} {slice_}", unit="frame"):
                scene = json.loads(path.with_suffix(".json").read_text())
                image = cv2.imread(str(path))
                cal = calibrate(image, STILL_MIN_MARKERS, recover=True)
                t0 = time.perf_counter()
                sharp = None if cal is None else lens_blur(image, cal)
                dt = time.perf_counter() - t0
                measured = None if sharp is None else sharp.sigma_px
                rows.append((float(scene["light"]["blur_px"]), measured, dt))
    got = [(b, m, dt) for b, m, dt in rows if m is not None]
    if not got:
        print("no frame measured")
        return 1
    truth = np.array([b for b, _, _ in got])
    measured = np.array([m for _, m, _ in got])
    err = measured - np.hypot(truth, SOFTNESS_PX)
    agree = np.mean((measured >= OUT_OF_FOCUS_PX) == (truth >= LEGIBLE_PX))
    print(
        f"\nframes {len(rows)}, measured {len(got)} (the rest: too few marker edges showing)\n"
        f"error vs hypot(rendered blur, {SOFTNESS_PX} px): median {np.median(err):+.3f} px, "
        f"median |error| {np.median(np.abs(err)):.3f} px, 90th percentile |error| "
        f"{np.percentile(np.abs(err), 90):.3f} px\n"
        f"verdict (out of focus from {OUT_OF_FOCUS_PX} px measured) agrees with the rendered "
        f"blur's side of {LEGIBLE_PX} px on {agree:.1%} of the frames\n"
        f"time per measure: median {1000 * np.median([dt for *_, dt in got]):.1f} ms"
    )
    for lo, hi in ((0.0, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, 3.0)):
        sel = (truth >= lo) & (truth < hi)
        if sel.any():
            print(
                f"  rendered {lo:.1f}-{hi:.1f} px: {int(sel.sum()):3d} frames, measured "
                f"{np.median(measured[sel]):.2f} px median, out of focus "
                f"{np.mean(measured[sel] >= OUT_OF_FOCUS_PX):.0%}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
