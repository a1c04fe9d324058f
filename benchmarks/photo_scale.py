"""Marker-less photos: the kit camera guessed (nominal) v. the scale taken from the cards.

`companion detect photo.jpg` on a photo without markers and without --calibration used to
assume the kit's camera (700 mm straight above the table); it now measures the table plane on
the whole cards in the photo (vision/card_scale.py) and falls back to that guess only when no
two whole cards agree. Rendered marker-less tables (the test split's scenes, tables and light)
through cameras at several heights and tilts; the default deck; scored as eval_detector.py
(a card must be read when an index strip shows >= 50 % and is not half under a hand).

    .venv/bin/python benchmarks/photo_scale.py --frames 4
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from eval_detector import expected_cards  # noqa: E402

HEIGHTS_MM = (450.0, 700.0, 900.0)
TILTS_DEG = (0.0, 20.0, 35.0)
WIDTH = 1920


@dataclass
class Score:
    """Counts of one way of calibrating over some frames."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    frames_ok: int = 0
    frames: int = 0

    def add(self, must: dict, may: set[str], got: set[str]) -> None:
        wrong, missed = got - may, set(must) - got
        self.tp += len(got & set(must))
        self.fp += len(wrong)
        self.fn += len(missed)
        self.frames += 1
        self.frames_ok += not wrong and not missed

    def __str__(self) -> str:
        recall = self.tp / max(1, self.tp + self.fn)
        precision = self.tp / max(1, self.tp + self.fp)
        return (
            f"recall {recall:.3f} precision {precision:.3f} all right "
            f"{self.frames_ok}/{self.frames} (TP {self.tp}, FP {self.fp}, FN {self.fn})"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=4, help="frames per camera set-up")
    ap.add_argument("--seed", type=int, default=70_000)
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"))
    args = ap.parse_args()

    from companion.deck.deckdir import load_deck
    from companion.synth.camera import look_at_camera
    from companion.synth.frame import FrameSpec, frame_rng, render_frame
    from companion.synth.scene import random_scene
    from companion.vision.backends import load_model
    from companion.vision.card_scale import calibration_from_cards
    from companion.vision.detector import CardDetector, nominal_calibration

    deck = load_deck(None)
    detector = CardDetector(load_model(args.backend), deck, reuse_names=False)
    spec = FrameSpec(split="test")
    totals = {"nominal": Score(), "from cards": Score()}
    scaled = frames = 0
    t_scale = 0.0
    index = 0
    for height in HEIGHTS_MM:
        for tilt in TILTS_DEG:
            setup = {"nominal": Score(), "from cards": Score()}
            got_scale = 0
            for _ in range(args.frames):
                rng = frame_rng(args.seed, index, spec)
                index += 1
                scene = replace(random_scene(rng, spec.style()), markers=False)
                camera = look_at_camera(
                    WIDTH,
                    (390 + float(rng.normal(0, 20)), 220 + float(rng.normal(0, 15))),
                    height,
                    tilt,
                    float(rng.uniform(0, 360)),
                    float(rng.normal(0, 3)),
                )
                frame = render_frame(deck, args.seed, index, spec, scene=scene, camera=camera)
                must, may = expected_cards(frame.truth)
                nominal = nominal_calibration(frame.image)
                t = time.perf_counter()
                cal = calibration_from_cards(frame.image)
                t_scale += time.perf_counter() - t
                got_scale += cal is not None
                for name, use in (("nominal", nominal), ("from cards", cal or nominal)):
                    reading = detector.detect(frame.image, use)
                    got = {r.card for r in reading.cards}
                    setup[name].add(must, may, got)
                    totals[name].add(must, may, got)
            scaled += got_scale
            frames += args.frames
            print(
                f"camera {height:.0f} mm, tilt {tilt:.0f} deg: "
                f"scale from cards {got_scale}/{args.frames}"
            )
            for name, score in setup.items():
                print(f"  {name:<10} {score}")
    print(f"\nall {frames} frames ({WIDTH} px wide, default deck, no markers):")
    for name, score in totals.items():
        print(f"  {name:<10} {score}")
    print(f"scale taken from the cards in {scaled}/{frames} frames (else the nominal guess)")
    print(f"calibration_from_cards {1000 * t_scale / max(1, frames):.0f} ms per photo")
    return 0


if __name__ == "__main__":
    sys.exit(main())
