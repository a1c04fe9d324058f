"""The light's colour as the enrolled-deck namer sees it, against the renderer's (figures).

`band_naming.frame_white_gains` balances every frame on the printed markers' white. A bright
frame clips that white (255 in two or three channels), which alone would read any lamp as
neutral; the light's colour then comes from the markers' edges (`_edge_shares`). Rendered
held-out tables (the test split's scenes and light: 2700-6500 K, auto white balance leaving
20-70 % of the cast, exposure 0.65-1.25) at the Pi camera's 2304 x 1296, plain and hard; the
true cast is the renderer's (`synth.camera.develop`). Error: the largest of the three channels'
|log(estimated share / true share)| of the light's colour (0.01 = 1 %).

    .venv/bin/python benchmarks/white_balance.py --frames 40
    .venv/bin/python benchmarks/white_balance.py --pathtraced runs/pathtraced/frames

`--pathtraced`: the path-traced frames of `benchmarks/pathtraced/` instead (another renderer:
Blender's sRGB output, a lamp mixed in on hard frames), their true cast the light's colour as
the camera's white balance records it (`scenes.light_colour`), sRGB-encoded near white.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def true_shares(light: dict) -> np.ndarray:
    """The renderer's cast (B, G, R shares of a white's colour)."""
    from companion.synth.camera import kelvin_bgr

    gains = (kelvin_bgr(light["kelvin"]) / kelvin_bgr(5500.0)) ** light["wb_error"]
    return gains / gains.sum()


def pathtraced_shares(light: dict) -> np.ndarray:
    """The cast of a path-traced frame (B, G, R shares of its white as the camera encodes it)."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "pathtraced"))
    from scenes import light_colour

    c = np.array(light_colour(light["kelvin"], light["white_balance_k"]))[::-1]
    lin = np.clip(0.8 * c / c.max(), 0.0, 1.0)
    enc = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * lin ** (1 / 2.4) - 0.055)
    return enc / enc.sum()


def error(white: np.ndarray, truth: np.ndarray) -> float:
    shares = np.maximum(white, 1e-6) / np.maximum(white, 1e-6).sum()
    return float(np.abs(np.log(shares / truth)).max())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=40, help="frames per slice (plain, hard)")
    ap.add_argument("--seed", type=int, default=95_000)
    ap.add_argument(
        "--pathtraced", type=Path, help="a folder of path-traced frames (runs/pathtraced/frames)"
    )
    args = ap.parse_args()

    from companion.deck.designs import design_deck
    from companion.synth.frame import FrameSpec, render_frame
    from companion.vision.band_naming import CLIPPED, WHITE, frame_white_gains, markers_white
    from companion.vision.calibration import calibrate

    rows: dict[tuple[str, bool], list[tuple[float, float]]] = {}

    def add(image: np.ndarray, truth: np.ndarray, name: str) -> None:
        cal = calibrate(image)
        if cal is None:
            return
        seen = markers_white(image, cal)  # the estimate from the white alone
        now = WHITE / frame_white_gains(image, cal)
        key = (name, bool((seen >= CLIPPED).any()))
        rows.setdefault(key, []).append((error(seen, truth), error(now, truth)))

    if args.pathtraced:
        import cv2

        for path in tqdm(sorted(args.pathtraced.glob("*/*/*.jpg")), unit="frame"):
            truth = json.loads(path.with_suffix(".json").read_text())
            slice_name = path.parent.name.split("-")[0]
            add(cv2.imread(str(path)), pathtraced_shares(truth["light"]), slice_name)
    else:
        deck = design_deck("tarot", 1)
        for hard in (False, True):
            spec = FrameSpec(split="test", width=2304, hard=hard)
            for i in tqdm(range(args.frames), desc="hard" if hard else "plain", unit="frame"):
                f = render_frame(deck, args.seed, i, spec)
                add(f.image, true_shares(f.truth["light"]), "hard" if hard else "plain")
    print()
    print(f"{'slice':6} {'white':8} {'frames':>6}  {'markers white alone':>22}  {'now':>22}")
    print(f"{'':6} {'':8} {'':>6}  {'median    p90    max':>22}  {'median    p90    max':>22}")
    for (name, clipped), errs in sorted(rows.items()):
        e = np.array(errs)
        cells = [
            " ".join(f"{q:6.3f}" for q in np.percentile(e[:, k], (50, 90, 100))) for k in (0, 1)
        ]
        label = "clipped" if clipped else "not"
        print(f"{name:6} {label:8} {len(e):6d}  {cells[0]:>22}  {cells[1]:>22}")
    print("\nerror = max over B, G, R of |log(estimated share / true share)| of the light's colour")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
