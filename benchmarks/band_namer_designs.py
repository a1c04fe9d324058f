"""The band namer alone, per deck design: hand-made scores against the learned embedding.

Every checked band of held-out table scenes (plain and hard: hands, glare, warm light, blur) of
generated decks is named from its ground-truth box and the markers' calibration — what the
pipeline gets after the finder — by `BandNamer` with and without `models/bandnet.onnx`. The
references are the design's own faces (enrolment photos are measured end to end by
`benchmarks/foreign_decks.py`). Frames are cached under runs/band-namer/ by design, slice and
seed. Prints, per design and slice: bands, right, passing the gate, precision above the gate.

    .venv/bin/python benchmarks/band_namer_designs.py                      # held-out, 4+2 frames
    .venv/bin/python benchmarks/band_namer_designs.py --families ornate --frames 2 --hard-frames 0
    .venv/bin/python benchmarks/band_namer_designs.py --families band,corner --seeds 5
    .venv/bin/python benchmarks/band_namer_designs.py --backend ncnn   # models/bandnet_ncnn_model
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.deck.check import GATE, bands_to_check, tally  # noqa: E402
from companion.deck.designs import FAMILIES, HELD_OUT_FAMILIES, design_deck  # noqa: E402
from companion.synth.frame import FrameSpec, render_frame  # noqa: E402
from companion.vision.band_embedding import (  # noqa: E402
    NCNN_DIR,
    AnyBandEmbedder,
    BandEmbedder,
    NcnnBandEmbedder,
)
from companion.vision.band_naming import BandNamer  # noqa: E402
from companion.vision.calibration import calibrate  # noqa: E402

CACHE = ROOT / "runs" / "band-namer"


def _frames(family: str, seed: int, slice_: str, n: int, width: int):
    """(image, bands) per frame, rendered once and cached."""
    deck = design_deck(family, seed)
    out = []
    for i in range(n):
        key = CACHE / f"{family}-{seed}-{slice_}-{width}-{i}"
        if not (key.with_suffix(".jpg").is_file() and key.with_suffix(".json").is_file()):
            key.parent.mkdir(parents=True, exist_ok=True)
            f = render_frame(
                deck, 9_100 + seed, i, FrameSpec(hard=slice_ == "hard", split="test", width=width)
            )
            cv2.imwrite(str(key.with_suffix(".jpg")), f.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
            key.with_suffix(".json").write_text(json.dumps(bands_to_check(f.truth)))
        image = cv2.imread(str(key.with_suffix(".jpg")))
        bands = [(c, tuple(b)) for c, b in json.loads(key.with_suffix(".json").read_text())]
        out.append((image, bands))
    return deck, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--families", default=",".join(HELD_OUT_FAMILIES))
    ap.add_argument("--seeds", default="3", help="comma-separated design seeds")
    ap.add_argument("--frames", type=int, default=4, help="plain frames per design")
    ap.add_argument("--hard-frames", type=int, default=2, help="hard frames per design")
    ap.add_argument("--width", type=int, default=2304)
    ap.add_argument("--model", type=Path, default=ROOT / "models" / "bandnet.onnx")
    ap.add_argument(
        "--backend",
        choices=("onnx", "ncnn"),
        default="onnx",
        help="run the embedding on ONNX Runtime (--model) or NCNN (its export beside --model)",
    )
    ap.add_argument("--json", action="store_true", help="last line: one JSON object")
    ap.add_argument("--dump", type=Path, help="write every band's readings (JSON lines) here")
    args = ap.parse_args()
    families = [f for f in args.families.split(",") if f]
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        ap.error(f"unknown families {bad}: choose from {', '.join(FAMILIES)}")
    seeds = [int(s) for s in args.seeds.split(",") if s]
    embedder: AnyBandEmbedder | None = None
    if args.backend == "ncnn":
        folder = args.model.parent / NCNN_DIR
        embedder = NcnnBandEmbedder(folder) if (folder / "model.ncnn.param").is_file() else None
    elif args.model.is_file():
        embedder = BandEmbedder(args.model)
    namers: dict[str, tuple[AnyBandEmbedder | bool, bool]] = {"hand-made": (False, True)}
    if embedder:
        namers |= {"learned": (embedder, False), "fused": (embedder, True)}
    rows = []
    dump: list[dict] = []
    totals: dict[tuple[str, str], list] = {}
    for family in families:
        for seed in seeds:
            for slice_, n in (("plain", args.frames), ("hard", args.hard_frames)):
                if n == 0:
                    continue
                deck, frames = _frames(family, seed, slice_, n, args.width)
                for label, (emb, fuse) in namers.items():
                    namer = BandNamer(deck, embedder=emb, fuse=fuse)
                    readings = []
                    t0 = time.perf_counter()
                    for image, bands in frames:
                        cal = calibrate(image)
                        if cal is None:
                            continue
                        names = namer.name_boxes(image, cal, [b for _, b in bands])
                        readings.extend((c, nm) for (c, _), nm in zip(bands, names, strict=True))
                    ms = 1000 * (time.perf_counter() - t0) / max(1, len(readings))
                    for k, (truth, nm) in enumerate(readings):
                        dump.append(
                            {
                                "design": f"{family}-{seed}",
                                "slice": slice_,
                                "namer": label,
                                "k": k,
                                "truth": truth,
                                "card": nm.card if nm else None,
                                "p": nm.confidence if nm else 0.0,
                            }
                        )
                    t = tally(readings)
                    totals.setdefault((label, slice_), []).extend(readings)
                    row = {
                        "design": f"{family}-{seed}",
                        "slice": slice_,
                        "namer": label,
                        "bands": t.bands,
                        "right": t.right / max(1, t.bands),
                        "recall": t.right_passed / max(1, t.bands),
                        "precision": t.right_passed / max(1, t.passed),
                        "ms_per_band": ms,
                        "worst": [f"{c.truth}->{c.read} x{c.count}" for c in t.confusions[:3]],
                    }
                    rows.append(row)
                    print(
                        f"{row['design']:<12} {slice_:<5} {label:<10} bands {t.bands:>4}  "
                        f"right {row['right']:.3f}  recall@gate {row['recall']:.3f}  "
                        f"precision@gate {row['precision']:.3f}  {ms:.0f} ms/band  "
                        f"{' '.join(row['worst'])}",
                        flush=True,
                    )
    summary = {}
    for (label, slice_), readings in totals.items():
        t = tally(readings)
        summary[f"{label}/{slice_}"] = {
            "bands": t.bands,
            "right": round(t.right / max(1, t.bands), 4),
            "recall": round(t.right_passed / max(1, t.bands), 4),
            "precision": round(t.right_passed / max(1, t.passed), 4),
        }
        print(f"ALL {slice_:<5} {label:<10} {json.dumps(summary[f'{label}/{slice_}'])}")
    print(f"(gate {GATE}; {np.sum([r['bands'] for r in rows]) // max(1, len(namers))} bands)")
    if args.dump:
        args.dump.write_text("\n".join(json.dumps(d) for d in dump))
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
