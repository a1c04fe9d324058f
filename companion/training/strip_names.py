"""Train the strip classifier (YOLO classify, 56 cards) on the namer's own crops.

Frames are rendered exactly like the detector's (any deck, `--deck`); each ground-truth strip's
box, jittered like a detector's box, goes through the namer's locate-and-sample step, and the
upright patch it reads is saved under its true card id. So the classifier learns the crops it
will see at run time, misalignments included. Layout is ultralytics' classify folders:
`train/<card>/*.png`, `val/<card>/*.png`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, dataclass
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.cards import CARD_IDS
from companion.training.yolo_env import ROOT, train_resumable
from companion.vision.strip_classifier import CLS_NAME, CLS_SIZE, fold

BOX_JITTER_MM = 1.0
"""Per box edge: about what the strip detector's boxes are off by."""
MIN_VISIBLE = 0.4


@dataclass(frozen=True)
class NamesConfig:
    run_dir: Path = ROOT / "runs" / "strip_names"
    deck: Path | None = None
    frames: int = 900
    seed: int = 5000
    val_fraction: float = 0.1
    epochs: int = 30
    budget_minutes: float = 30.0
    batch: int = 64
    workers: int = 2
    threads: int = 2


_STATE: dict[str, Any] = {}


def _init(deck_path: str | None) -> None:
    from companion.deck.deckdir import load_deck
    from companion.vision.naming import StripNamer

    deck = load_deck(Path(deck_path) if deck_path else None)
    _STATE["deck"] = deck
    _STATE["namer"] = StripNamer(deck)


def _frame_crops(args: tuple[int, int, int]) -> list[tuple[str, bytes]]:
    """Render frame i; (card id, png bytes) of every strip the namer reads in it."""
    from companion.synth.frame import FrameSpec, render_frame
    from companion.vision.calibration import STILL_MIN_MARKERS, calibrate

    seed, i, _ = args
    frame = render_frame(_STATE["deck"], seed, i, FrameSpec(split="train"))
    cal = calibrate(frame.image, STILL_MIN_MARKERS)
    if cal is None:
        return []
    rng = np.random.default_rng([seed, i, 11])
    cards, boxes = [], []
    for c in frame.truth["cards"]:
        if not c["face_up"]:
            continue
        for s in c["strips"]:
            if s["visible_fraction"] < MIN_VISIBLE or s["hand_fraction"] > 0.5:
                continue
            box = np.asarray(s["visible_bbox_mm"], np.float64)
            box += rng.uniform(-BOX_JITTER_MM, BOX_JITTER_MM, 4)
            cards.append(c["card"])
            boxes.append(tuple(float(v) for v in box))
    out = []
    for cid, m in zip(cards, _STATE["namer"].match_boxes(frame.image, cal, boxes), strict=True):
        if m is None:
            continue
        ok, buf = cv2.imencode(".png", fold(m[1]))
        if ok:
            out.append((cid, buf.tobytes()))
    return out


def render_crops(cfg: NamesConfig) -> Path:
    """Render (or reuse) the classify data set; returns its folder."""
    from tqdm import tqdm

    data = cfg.run_dir / "data"
    stamp = data / "spec.json"
    wanted = json.dumps(
        {"frames": cfg.frames, "seed": cfg.seed, "val": cfg.val_fraction, "deck": str(cfg.deck)},
        sort_keys=True,
    )
    if stamp.exists() and stamp.read_text() == wanted:
        print(f"[names] reusing rendered crops in {data}")
        return data
    if data.exists():
        shutil.rmtree(data)
    for part in ("train", "val"):
        for cid in CARD_IDS:
            (data / part / cid).mkdir(parents=True, exist_ok=True)
    n_val = max(1, round(cfg.frames * cfg.val_fraction))
    jobs = [(cfg.seed, i, 0) for i in range(cfg.frames)]
    deck = str(cfg.deck) if cfg.deck else None
    count = 0
    with Pool(max(1, cfg.workers), initializer=_init, initargs=(deck,)) as pool:
        results = pool.imap(_frame_crops, jobs)
        for i, crops in enumerate(tqdm(results, total=len(jobs), desc="crops", unit="frame")):
            part = "val" if i >= cfg.frames - n_val else "train"
            for j, (cid, png) in enumerate(crops):
                (data / part / cid / f"{i:06d}_{j:02d}.png").write_bytes(png)
                count += 1
    # ultralytics needs every class in both splits: a class a small run missed gets one copy
    for cid in CARD_IDS:
        for part, other in (("val", "train"), ("train", "val")):
            if not any((data / part / cid).iterdir()):
                src = next((data / other / cid).iterdir(), None)
                if src is None:
                    _write_reference(data / part / cid, cid, cfg)
                else:
                    shutil.copyfile(src, data / part / cid / f"copy_{src.name}")
    print(f"[names] {count} strip crops from {cfg.frames} frames -> {data}")
    stamp.write_text(wanted)
    return data


def _write_reference(folder: Path, cid: str, cfg: NamesConfig) -> None:
    """The deck's own strip as a last resort for a class no rendered frame showed."""
    from companion.deck.deckdir import load_deck
    from companion.layout import CARD_W_MM, INDEX_STRIP_MM
    from companion.vision.naming import DESC_PX_PER_MM, REFINE_X_MM, REFINE_Y_MM

    strip = load_deck(cfg.deck).strip(cid)
    w = round((CARD_W_MM + 2 * REFINE_X_MM) * DESC_PX_PER_MM)
    h = round((INDEX_STRIP_MM + 2 * REFINE_Y_MM) * DESC_PX_PER_MM)
    cv2.imwrite(str(folder / "reference.png"), fold(cv2.resize(strip, (w, h))))


def train_names(cfg: NamesConfig, data: Path, models_dir: Path) -> dict[str, Any]:
    """Train yolo11n-cls from scratch on the crops; export ONNX to models_dir."""
    best = train_resumable(
        cfg.run_dir,
        "yolo11n-cls.yaml",
        "names",
        cfg.threads,
        data=str(data),
        imgsz=CLS_SIZE,
        epochs=cfg.epochs,
        time=cfg.budget_minutes / 60.0,
        batch=cfg.batch,
        seed=cfg.seed,
        # digits and pips must not be mirrored; the crops are already upright and scaled
        fliplr=0.0,
        flipud=0.0,
        scale=0.1,
        erasing=0.2,
        auto_augment=None,
        hsv_h=0.02,
        hsv_s=0.5,
        hsv_v=0.4,
    )
    from ultralytics import YOLO

    model = YOLO(str(best))
    names = [model.names[i] for i in range(len(model.names))]
    if names != list(CARD_IDS):
        raise RuntimeError(f"classifier classes are not the 56 cards in order: {names[:5]}...")
    models_dir.mkdir(parents=True, exist_ok=True)
    pt = models_dir / f"{CLS_NAME}.pt"
    shutil.copyfile(best, pt)
    onnx = Path(YOLO(str(pt)).export(format="onnx", imgsz=CLS_SIZE, dynamic=True, simplify=True))
    return {"pt": str(pt), "onnx": str(onnx), "config": {k: str(v) for k, v in asdict(cfg).items()}}
