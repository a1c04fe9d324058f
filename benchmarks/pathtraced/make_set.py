"""Write path-traced table frames of a deck, with ground truth (runs in the project's .venv).

For each frame: a scene JSON (`scenes.random_scene`, the same scenes for every deck), the deck's
face PNGs and the kit's marker tiles as textures, a Blender render through
`.venv-bpy/bin/python scene_bpy.py` (a subprocess, `nice -n 10`), then the camera's part: a
little sensor noise and JPEG 92. Truth JSON beside each JPEG (`scenes.ground_truth`).

Cache: runs/pathtraced/frames/<deck>-<fingerprint>/<slice>-s<seed>/NNNNN.jpg; the fingerprint
covers the deck's art and scenes.RENDER_VERSION, so a rerun renders only missing frames.

    .venv/bin/python benchmarks/pathtraced/make_set.py --deck default --frames 6 --hard-frames 4
    .venv/bin/python benchmarks/pathtraced/make_set.py --deck ornate-1 --frames 2 --scale 0.25
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.pathtraced import scenes  # noqa: E402

OUT = ROOT / "runs" / "pathtraced"
BPY_PYTHON = ROOT / ".venv-bpy" / "bin" / "python"
SCENE_BPY = Path(__file__).with_name("scene_bpy.py")
JPEG_QUALITY = 92
DEFAULT_SEED = 70_000


def load_deck(name: str) -> Any:
    """`default` or `family-seed` (a generated design, companion.deck.designs)."""
    from benchmarks.foreign_decks import load_design

    return load_design(name)


def deck_key(deck: Any) -> str:
    """8 hex digits over the deck's faces and back, and the render recipe's version."""
    h = hashlib.sha1(f"v{scenes.RENDER_VERSION}".encode())
    for cid in sorted(deck.faces):
        h.update(cid.encode())
        h.update(deck.faces[cid].tobytes())
    h.update(deck.back_image().tobytes())
    return h.hexdigest()[:8]


def write_textures(deck: Any, folder: Path) -> dict[str, str]:
    """Face PNGs, the back and the four marker tiles; card id (or `back`, `marker<N>`) -> path."""
    from companion import layout

    folder.mkdir(parents=True, exist_ok=True)
    out: dict[str, str] = {}
    items: list[tuple[str, np.ndarray]] = [(c, deck.face(c)) for c in sorted(deck.faces)]
    items.append(("back", deck.back_image()))
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.ARUCO_DICT))
    px = 10  # per mm
    for mid in layout.MARKER_IDS:
        square = cv2.aruco.generateImageMarker(dictionary, mid, round(layout.MARKER_MM * px))
        q = round(scenes.QUIET_MM * px)
        tile = cv2.copyMakeBorder(square, q, q, q, q, cv2.BORDER_CONSTANT, value=255)
        tile = np.where(tile < 128, 18, 240).astype(np.uint8)  # ink and paper, not 0 and 255
        items.append((f"marker{mid}", cv2.cvtColor(tile, cv2.COLOR_GRAY2BGR)))
    for name, img in items:
        path = folder / f"{name}.png"
        if not path.exists():
            cv2.imwrite(str(path), img)
        out[name] = str(path)
    return out


def camera_finish(png: Path, jpg: Path, noise: float, seed: Sequence[Any]) -> None:
    """Sensor noise (a little more in the dark) and the camera's JPEG."""
    img = cv2.imread(str(png)).astype(np.float32)
    rng = np.random.default_rng([hash_int(seed), 7])
    sigma = noise * (0.6 + 0.8 * np.sqrt(np.clip(img, 1, 255) / 255.0))
    img += rng.normal(0, 1, img.shape).astype(np.float32) * sigma
    out = np.clip(img, 0, 255).astype(np.uint8)
    if not cv2.imwrite(str(jpg), out, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]):
        raise OSError(f"could not write {jpg}")


def hash_int(parts: Sequence[Any]) -> int:
    return int(hashlib.sha1(json.dumps(list(parts)).encode()).hexdigest()[:8], 16)


def frame_paths(name: str, deck: Any, slice_: str, n: int, seed: int, out: Path) -> list[Path]:
    folder = out / "frames" / f"{name}-{deck_key(deck)}" / f"{slice_}-s{seed}"
    return [folder / f"{i:05d}.jpg" for i in range(n)]


def ensure_frames(
    name: str,
    slice_: str,
    n: int,
    seed: int = DEFAULT_SEED,
    out: Path = OUT,
    scale: float = 1.0,
    samples: int | None = None,
) -> list[Path]:
    """The slice's first `n` frames of deck `name`, rendering only those not cached."""
    deck = load_deck(name)
    paths = frame_paths(name, deck, slice_, n, seed, out)
    todo = [p for p in paths if not (p.exists() and p.with_suffix(".json").exists())]
    if not todo:
        return paths
    tex = write_textures(deck, out / "textures" / f"{name}-{deck_key(deck)}")
    jobs: list[tuple[Path, Path, dict[str, Any]]] = []
    for path in todo:
        path.parent.mkdir(parents=True, exist_ok=True)
        scene = scenes.random_scene(seed, slice_, int(path.stem))
        scene["deck"] = name
        scene["back_png"] = tex["back"]
        for m in scene["markers"]:
            m["png"] = tex[f"marker{m['id']}"]
        for c in scene["cards"]:
            c["png"] = tex[c["card"]] if c["face_up"] and c["card"] else tex["back"]
        png = path.with_suffix(".render.png")
        scene["output"] = str(png)
        spath = path.with_suffix(".scene.json")
        spath.write_text(json.dumps(scene, indent=1))
        jobs.append((path, spath, scene))
    cmd = ["nice", "-n", "10", str(BPY_PYTHON), str(SCENE_BPY), *(str(j[1]) for j in jobs)]
    cmd += ["--scale", str(scale)] + (["--samples", str(samples)] if samples else [])
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    done = 0
    for line in proc.stdout:
        if line.startswith("rendered "):
            path, spath, scene = jobs[done]
            png = Path(scene["output"])
            camera_finish(png, path, scene["noise"], scene["seed"])
            png.unlink()
            truth = scenes.ground_truth(scene)
            truth["deck"] = name
            path.with_suffix(".json").write_text(json.dumps(truth))
            done += 1
            print(f"{name} {slice_} {path.name}: {line.split(' in ')[-1].strip()}", flush=True)
    if proc.wait() != 0 or done != len(jobs):
        raise RuntimeError(f"Blender render failed ({proc.returncode}) after {done} frames")
    per = (time.perf_counter() - t) / max(1, done)
    print(f"{name} {slice_}: {done} frames rendered, {per:.1f} s a frame", flush=True)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--deck", default="default", help="default, or family-seed (ornate-1)")
    ap.add_argument("--frames", type=int, default=6, help="plain frames (6)")
    ap.add_argument("--hard-frames", type=int, default=4, help="hard frames (4)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--scale", type=float, default=1.0, help="resolution scale (previews only)")
    ap.add_argument("--samples", type=int, help="samples per pixel (default the scene's: 6)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    out = args.out if args.scale == 1.0 and not args.samples else args.out / "preview"
    for slice_, n in (("plain", args.frames), ("hard", args.hard_frames)):
        if n > 0:
            paths = ensure_frames(args.deck, slice_, n, args.seed, out, args.scale, args.samples)
            print(f"{slice_}: {paths[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
