"""The detector's training set: rendered camera frames warped to the top-down view it sees.

Each frame is rendered, undistorted with its known lens and warped to the play area at
layout.RECTIFIED_PX_PER_MM through a homography fitted to marker corners jittered by up to
MARKER_NOISE_PX (what a marker detector gives), exactly like the live pipeline's view. Targets
are the visible index strips: one axis-aligned box around each strip's visible part, when at
least `min_visible` of it shows. Layout is ultralytics': images/{train,val}, labels/{train,val},
data.yaml. With `crop`, square crops of the view are written instead of the whole view.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import cv2
import numpy as np

from companion import layout
from companion.cards import CARD_IDS, INGREDIENTS, parse_card
from companion.deck.deckdir import Deck, load_deck
from companion.errors import BadInputError
from companion.synth.camera import Camera
from companion.synth.frame import Frame, FrameSpec, render_frame

MARKER_NOISE_PX: Final = 1.5
RECT_W: Final = round(layout.PLAY_W_MM * layout.RECTIFIED_PX_PER_MM)
RECT_H: Final = round(layout.PLAY_H_MM * layout.RECTIFIED_PX_PER_MM)
CLASSES: Final[dict[str, tuple[str, ...]]] = {
    "index": ("index",),
    "ingredient": INGREDIENTS,
    "card": CARD_IDS,
}
MIN_CROP_KEEP: Final = 0.45
"""A box cut by a crop's edge is kept when this share of it stays inside."""


@dataclass(frozen=True)
class DatasetSpec:
    frames: int = 200
    """Camera frames rendered (each gives one view, or `crops_per_frame` crops)."""
    seed: int = 0
    crop: int | None = None
    """Square crop side in px of the rectified view, or None for the whole 780 x 440 view."""
    crops_per_frame: int = 4
    classes: str = "index"
    """`index` (one class), `ingredient` (7) or `card` (56)."""
    val_fraction: float = 0.1
    split: str = "train"
    """`train` or `test` (other random stream, held-out tables and light)."""
    hard: bool = False
    keep_frames: bool = False
    width: int | None = None
    min_visible: float = 0.5
    workers: int = 1
    designs: float = 0.0
    """Share of frames drawn with a generated deck design (designs.TRAIN_FAMILIES, or
    HELD_OUT_FAMILIES on the test split) instead of the given deck: a finder trained on many
    designs finds the top band of any card, not only of the default deck's."""
    design_pool: int = 60
    """Distinct generated decks (each is reused for DESIGN_RUN consecutive frames)."""
    hard_share: float = 0.0
    """Share of frames drawn hard (glare, strong blur, hands over the bowls, long bowls) when
    `hard` is off: the finder then learns bands half washed out or half under a hand."""
    alike_share: float = 0.0
    """Share of frames whose cascades hold runs of one ingredient on a table top of a card's
    colour (FrameSpec.alike): bands found by their edges and index, not by colour contrast."""


@dataclass(frozen=True)
class DatasetSummary:
    out_dir: Path
    frames: int
    images: int
    boxes: int
    seconds: float

    @property
    def images_per_s(self) -> float:
        return self.images / max(self.seconds, 1e-9)


def class_of(card: str, classes: str) -> int:
    if classes == "index":
        return 0
    c = parse_card(card)
    return INGREDIENTS.index(c.ingredient) if classes == "ingredient" else c.index


def noisy_homography(frame: Frame, rng: np.random.Generator) -> np.ndarray:
    """image(ideal px) <- plane(mm) fitted to visible marker corners with detector-like noise."""
    cam = frame.camera
    mm, px = [], []
    visible = [m for m in frame.truth["markers"] if m["visible_fraction"] > 0.9]
    if len(visible) < 3:
        visible = frame.truth["markers"]
    squares = layout.marker_squares()
    for m in visible:
        r = squares[m["id"]]
        sq = np.array([[r.x0, r.y0], [r.x1, r.y0], [r.x1, r.y1], [r.x0, r.y1]])
        mm.append(sq)
        px.append(cam.project(sq) + rng.uniform(-MARKER_NOISE_PX, MARKER_NOISE_PX, (4, 2)))
    h, _ = cv2.findHomography(np.concatenate(mm), np.concatenate(px), 0)
    return h if h is not None else cam.image_from_plane


def rectify_frame(image: np.ndarray, cam: Camera, image_from_plane: np.ndarray) -> np.ndarray:
    """Top-down view at RECTIFIED_PX_PER_MM: undistort with the lens, unwarp with the homography."""
    ppm = layout.RECTIFIED_PX_PER_MM
    xx, yy = np.meshgrid(np.arange(RECT_W), np.arange(RECT_H))
    mm = np.column_stack([(xx.ravel() + 0.5) / ppm, (yy.ravel() + 0.5) / ppm])
    q = np.hstack([mm, np.ones((len(mm), 1))]) @ image_from_plane.T
    ideal = q[:, :2] / q[:, 2:3]
    d = cam.distort(ideal).astype(np.float32)
    mx = d[:, 0].reshape(RECT_H, RECT_W)
    my = d[:, 1].reshape(RECT_H, RECT_W)
    return cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def strip_boxes(
    frame: Frame, image_from_plane: np.ndarray, classes: str, min_visible: float = 0.5
) -> list[tuple[int, float, float, float, float]]:
    """(class, x0, y0, x1, y1) in rectified-view pixels (edges), one per visible index strip.

    The visible polygon (true plane mm) goes through the true camera and back through the
    noisy homography, so a box sits where the strip appears in the (slightly off) view.
    """
    ppm = layout.RECTIFIED_PX_PER_MM
    to_view = np.linalg.inv(image_from_plane) @ frame.camera.image_from_plane
    out = []
    for c in frame.truth["cards"]:
        if not c["face_up"]:
            continue
        for s in c["strips"]:
            if s["visible_fraction"] < min_visible or s["hand_fraction"] > 0.5:
                continue
            pts = np.concatenate([np.asarray(p, np.float64) for p in s["visible_polygons_mm"]])
            q = np.hstack([pts, np.ones((len(pts), 1))]) @ to_view.T
            v = q[:, :2] / q[:, 2:3] * ppm
            x0, y0 = v.min(axis=0) - 0.3
            x1, y1 = v.max(axis=0) + 0.3
            full = (x1 - x0) * (y1 - y0)
            cx0, cy0 = max(0.0, x0), max(0.0, y0)
            cx1, cy1 = min(float(RECT_W), x1), min(float(RECT_H), y1)
            if cx1 <= cx0 or cy1 <= cy0 or (cx1 - cx0) * (cy1 - cy0) < 0.5 * full:
                continue
            out.append((class_of(c["card"], classes), cx0, cy0, cx1, cy1))
    return out


def _yolo_lines(boxes, w: int, h: int) -> str:
    lines = []
    for k, x0, y0, x1, y1 in boxes:
        lines.append(
            f"{k} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} {(x1 - x0) / w:.6f} "
            f"{(y1 - y0) / h:.6f}"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def crops(
    view: np.ndarray, boxes, size: int, n: int, rng: np.random.Generator
) -> list[tuple[np.ndarray, list]]:
    """n square crops: most centred near a random strip (so they hold targets), some anywhere."""
    h, w = view.shape[:2]
    out = []
    for _ in range(n):
        if boxes and rng.random() < 0.8:
            _, x0, y0, x1, y1 = boxes[int(rng.integers(len(boxes)))]
            cx = (x0 + x1) / 2 + rng.uniform(-0.4, 0.4) * size
            cy = (y0 + y1) / 2 + rng.uniform(-0.4, 0.4) * size
            ox, oy = round(cx - size / 2), round(cy - size / 2)
        else:
            ox, oy = (
                int(rng.integers(0, max(1, w - size + 1))),
                int(rng.integers(0, max(1, h - size + 1))),
            )
        ox = min(max(0, ox), max(0, w - size))
        oy = min(max(0, oy), max(0, h - size))
        img = view[oy : oy + size, ox : ox + size]
        kept = []
        for k, x0, y0, x1, y1 in boxes:
            a = (x1 - x0) * (y1 - y0)
            cx0, cy0 = max(x0 - ox, 0.0), max(y0 - oy, 0.0)
            cx1, cy1 = min(x1 - ox, float(size)), min(y1 - oy, float(size))
            if cx1 - cx0 < 3 or cy1 - cy0 < 3:
                continue
            if (cx1 - cx0) * (cy1 - cy0) >= MIN_CROP_KEEP * a:
                kept.append((k, cx0, cy0, cx1, cy1))
        out.append((img, kept))
    return out


DESIGN_RUN: Final = 4
MIXED_SHARE: Final = 0.5
"""Of the frames drawn with a generated design, this share use a `mixed` deck (composed at
random from parts, a new one per group of frames); the rest the hand-written families."""


def frame_deck(deck: Deck, spec: DatasetSpec, i: int) -> Deck:
    """The deck frame i is drawn with: the given one, or a generated design."""
    if spec.designs <= 0:
        return deck
    from companion.deck.designs import HELD_OUT_FAMILIES, TRAIN_FAMILIES, design_deck

    group = i // DESIGN_RUN
    rng = np.random.default_rng([spec.seed, group, 31])
    if rng.random() >= spec.designs:
        return deck
    if spec.split == "train" and rng.random() < MIXED_SHARE:
        return design_deck("mixed", spec.seed * 1000 + group)  # every group another deck
    families = TRAIN_FAMILIES if spec.split == "train" else HELD_OUT_FAMILIES
    families = tuple(f for f in families if f != "mixed")
    k = group % (len(families) * spec.design_pool)
    return design_deck(families[k % len(families)], spec.seed * 1000 + k // len(families))


def is_hard(spec: DatasetSpec, i: int) -> bool:
    """Frame i is drawn hard: all of them with `hard`, else a `hard_share` of them at random."""
    if spec.hard or spec.hard_share >= 1.0:
        return True
    return _drawn(spec, i, 53, spec.hard_share)


def is_alike(spec: DatasetSpec, i: int) -> bool:
    """Frame i is drawn `alike` (FrameSpec.alike): an `alike_share` of them at random."""
    return _drawn(spec, i, 59, spec.alike_share)


def _drawn(spec: DatasetSpec, i: int, stream: int, share: float) -> bool:
    """Frame i falls in a `share` of the frames, drawn from its own random `stream`."""
    return bool(np.random.default_rng([spec.seed, i, stream]).random() < share)


def _frame_job(args: tuple[Any, ...]) -> tuple[int, list[tuple[str, bytes, str]], int]:
    """Render frame i; return the files to write (relative path, bytes) and its box count."""
    deck, spec, i, n_val, prefix = args
    deck = frame_deck(deck, spec, i)
    fs = FrameSpec(
        hard=is_hard(spec, i), split=spec.split, width=spec.width, alike=is_alike(spec, i)
    )
    frame = render_frame(deck, spec.seed, i, fs)
    rng = np.random.default_rng([spec.seed, i, fs.stream, 7])
    h_noisy = noisy_homography(frame, rng)
    view = rectify_frame(frame.image, frame.camera, h_noisy)
    boxes = strip_boxes(frame, h_noisy, spec.classes, spec.min_visible)
    part = "val" if i >= spec.frames - n_val else "train"
    name = f"{prefix}{i:06d}"
    files: list[tuple[str, bytes, str]] = []
    if spec.crop:
        items = crops(view, boxes, spec.crop, spec.crops_per_frame, rng)
        names = [f"{name}_{j}" for j in range(len(items))]
    else:
        items = [(view, boxes)]
        names = [name]
    n_boxes = 0
    for nm, (img, bx) in zip(names, items, strict=True):
        _, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 95])
        files.append((f"images/{part}/{nm}.jpg", buf.tobytes(), ""))
        ih, iw = img.shape[:2]
        files.append((f"labels/{part}/{nm}.txt", b"", _yolo_lines(bx, iw, ih)))
        n_boxes += len(bx)
    if spec.keep_frames:
        _, buf = cv2.imencode(".jpg", frame.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        files.append((f"frames/{name}.jpg", buf.tobytes(), ""))
        truth = {**frame.truth, "rectify_image_from_plane": np.round(h_noisy, 9).tolist()}
        files.append((f"frames/{name}.json", b"", json.dumps(truth)))
    return len(items), files, n_boxes


_WORKER_DECK: Deck | None = None


def _init_worker(deck_path: str | None) -> None:
    global _WORKER_DECK
    _WORKER_DECK = load_deck(Path(deck_path) if deck_path else None)


def _worker_job(args: tuple[Any, ...]):
    return _frame_job((_WORKER_DECK, *args))


def write_dataset(
    out_dir: Path | str,
    spec: DatasetSpec,
    deck: Deck | Path | str | None = None,
    progress: bool = True,
) -> DatasetSummary:
    """Render spec.frames frames into an ultralytics data set at out_dir; returns counts."""
    from tqdm import tqdm

    if spec.classes not in CLASSES:
        raise BadInputError(
            f"unknown classes {spec.classes!r}: expected one of {', '.join(CLASSES)}"
        )
    if spec.split not in ("train", "test"):
        raise BadInputError(f"unknown split {spec.split!r}: expected train or test")
    if spec.frames < 1:
        raise BadInputError("--count must be at least 1")
    if not 0 <= spec.val_fraction < 1:
        raise BadInputError("--val-fraction must be in [0, 1)")
    out = Path(out_dir).resolve()
    deck_path = None if deck is None or isinstance(deck, Deck) else str(deck)
    deck_obj = deck if isinstance(deck, Deck) else load_deck(Path(deck) if deck else None)
    for part in ("train", "val"):
        (out / "images" / part).mkdir(parents=True, exist_ok=True)
        (out / "labels" / part).mkdir(parents=True, exist_ok=True)
    if spec.keep_frames:
        (out / "frames").mkdir(parents=True, exist_ok=True)
    n_val = (
        min(spec.frames - 1, math.ceil(spec.frames * spec.val_fraction)) if spec.frames > 1 else 0
    )
    n_val = max(0, n_val)
    prefix = "h" if spec.hard else ""
    prefix += "t" if spec.split == "test" else "f"
    t0 = time.monotonic()
    images = boxes = 0
    bar = tqdm(total=spec.frames, desc="render", unit="frame", disable=not progress)

    def consume(result) -> None:
        nonlocal images, boxes
        n_img, files, n_boxes = result
        for rel, data, text in files:
            p = out / rel
            if text or rel.endswith((".txt", ".json")):
                p.write_text(text, encoding="utf-8")
            else:
                p.write_bytes(data)
        images += n_img
        boxes += n_boxes
        bar.update(1)

    jobs = [(spec, i, n_val, prefix) for i in range(spec.frames)]
    if spec.workers > 1 and isinstance(deck, Deck) and deck.name != "default":
        raise BadInputError("--workers > 1 needs the deck as a folder path")
    if spec.workers > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(
            spec.workers, initializer=_init_worker, initargs=(deck_path,)
        ) as pool:
            for result in pool.imap(_worker_job, jobs, chunksize=DESIGN_RUN):
                consume(result)
    else:
        for job in jobs:
            consume(_frame_job((deck_obj, *job)))
    bar.close()
    seconds = time.monotonic() - t0
    names = CLASSES[spec.classes]
    yaml_lines = [
        f"path: {out}",
        "train: images/train",
        "val: images/val",
        f"nc: {len(names)}",
        "names:",
        *[f"  {k}: {n}" for k, n in enumerate(names)],
    ]
    (out / "data.yaml").write_text("\n".join(yaml_lines) + "\n", encoding="utf-8")
    return DatasetSummary(out, spec.frames, images, boxes, seconds)
