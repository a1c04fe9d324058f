"""`companion train`: render data, train the strip detector from scratch, export for the Pi.

Resumable: the rendered data set is kept (and reused when its settings match), and an
interrupted training resumes from its last checkpoint. Runs and checkpoints live in runs/
(ignored by git); only the final weights and exports are copied to models/.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from companion.training.yolo_env import ROOT, prepare_offline_ultralytics, train_resumable
from companion.vision.backends import (
    ANY_DECK_MODEL_NAME,
    CROP_SIZE,
    INPUT_SIZE,
    MODEL_NAME,
    MODELS_DIR,
    crop_model_path,
)


@dataclass(frozen=True)
class TrainConfig:
    run_dir: Path = ROOT / "runs" / "strips"
    deck: Path | None = None
    budget_minutes: float = 55.0
    """Wall-clock budget for training itself (rendering and export are extra, printed apart)."""
    frames: int = 600
    """Camera frames rendered; each gives several 320 px crops of the top-down view."""
    crops_per_frame: int = 4
    seed: int = 1000
    imgsz: int = 320
    epochs: int = 30
    """Upper bound; ultralytics' `time` argument ends training inside the budget."""
    batch: int = 16
    export_to: Path = MODELS_DIR
    threads: int = 2
    workers: int = 1
    """Rendering processes."""
    names_frames: int = 600
    """Frames rendered for the strip classifier (about 20 strip crops each); 0 skips it."""
    names_budget_minutes: float = 35.0
    names_epochs: int = 12
    """Upper bound only: ultralytics' `time` stretches or cuts the epochs to fit the budget."""
    designs: float = 0.0
    """Share of training frames drawn with generated deck designs (deck-agnostic finder)."""
    hard_share: float = 0.0
    """Share of training frames drawn hard (glare, blur, hands, long bowls)."""
    alike_share: float = 0.0
    """Share of training frames with like-coloured neighbours and table top (DatasetSpec)."""
    init: Path | None = None
    """Start the detector from these weights (trained and committed here) instead of scratch."""
    lr0: float = 0.002
    names_only: bool = False
    """Keep the strip detector, train only the deck's strip classifier (an enrolled deck whose
    strips the shipped detector already finds: about 40 minutes instead of 95)."""


def render_data(cfg: TrainConfig) -> Path:
    """Render (or reuse) the training set; returns its data.yaml."""
    from companion.synth.dataset import DatasetSpec, write_dataset

    data_dir = cfg.run_dir / "data"
    spec = DatasetSpec(
        frames=cfg.frames,
        seed=cfg.seed,
        crop=cfg.imgsz,
        crops_per_frame=cfg.crops_per_frame,
        classes="index",
        val_fraction=0.1,
        split="train",
        workers=cfg.workers,
        designs=cfg.designs,
        hard_share=cfg.hard_share,
        alike_share=cfg.alike_share,
    )
    stamp = data_dir / "spec.json"
    wanted = json.dumps({**asdict(spec), "deck": str(cfg.deck)}, sort_keys=True, default=str)
    if stamp.exists() and stamp.read_text() == wanted and (data_dir / "data.yaml").exists():
        print(f"[train] reusing rendered data in {data_dir}")
        return data_dir / "data.yaml"
    if data_dir.exists():
        shutil.rmtree(data_dir)
    write_dataset(data_dir, spec, deck=cfg.deck)
    stamp.write_text(wanted)
    return data_dir / "data.yaml"


def train(cfg: TrainConfig, data_yaml: Path) -> Path:
    """Train (or resume) YOLO11n from scratch; returns the best weights."""
    return train_resumable(
        cfg.run_dir,
        "yolo11n.yaml",
        "train",
        cfg.threads,
        init=cfg.init,
        data=str(data_yaml),
        lr0=cfg.lr0,
        warmup_epochs=0.5 if cfg.init else 3.0,
        # ultralytics warms biases up from lr 0.1: from trained weights that knocks the head
        # out (a fine-tune collapsed to mAP50 0.07 in its first epoch), so start them at lr0
        warmup_bias_lr=cfg.lr0 if cfg.init else 0.1,
        imgsz=cfg.imgsz,
        epochs=cfg.epochs,
        time=cfg.budget_minutes / 60.0,
        batch=cfg.batch,
        patience=100,
        seed=cfg.seed,
        # the view is rectified to a fixed scale and cards lie roughly upright:
        # keep scale and rotation augmentation small, colour augmentation strong
        scale=0.15,
        degrees=3.0,
        translate=0.1,
        fliplr=0.5,
        flipud=0.0,
        mosaic=1.0,
        close_mosaic=3,
        hsv_h=0.03,
        hsv_s=0.6,
        hsv_v=0.5,
    )


def export(best: Path, export_to: Path = MODELS_DIR, name: str = MODEL_NAME) -> dict[str, Path]:
    """Copy the weights to models/ and export ONNX and NCNN at the rectified view's size."""
    prepare_offline_ultralytics()
    from ultralytics import YOLO

    export_to.mkdir(parents=True, exist_ok=True)
    pt = export_to / f"{name}.pt"
    shutil.copyfile(best, pt)
    w, h = INPUT_SIZE
    out = {"torch": pt}
    onnx = Path(YOLO(str(pt)).export(format="onnx", imgsz=(h, w), simplify=True, dynamic=False))
    out["onnx"] = onnx
    # fp16 NCNN (the Pi's): no recall lost on the held-out set, half the file. The crop export
    # first, moved aside: both land in <name>_ncnn_model, and an NCNN export's input size is
    # fixed, so the 320 x 320 search of a change needs its own
    crop = crop_model_path(export_to, name)
    shutil.rmtree(crop, ignore_errors=True)
    made = Path(YOLO(str(pt)).export(format="ncnn", imgsz=CROP_SIZE, half=True))
    made.rename(crop)
    out["ncnn_crop"] = crop
    ncnn = Path(YOLO(str(pt)).export(format="ncnn", imgsz=(h, w), half=True))
    out["ncnn"] = ncnn
    for leftover in export_to.glob(f"{name}.torchscript"):
        leftover.unlink()
    return out


def train_strip_names(cfg: TrainConfig) -> dict:
    """The strip classifier for the same deck: into models/ for the default deck, into the
    deck folder for an enrolled one (it is that deck's own)."""
    from companion.training.strip_names import NamesConfig, render_crops, train_names

    names = NamesConfig(
        run_dir=cfg.run_dir / "names",
        deck=cfg.deck,
        frames=cfg.names_frames,
        seed=cfg.seed + 4000,
        epochs=cfg.names_epochs,
        budget_minutes=cfg.names_budget_minutes,
        workers=max(1, cfg.workers),
        threads=cfg.threads,
    )
    t0 = time.monotonic()
    data = render_crops(names)
    t_render = time.monotonic() - t0
    out = train_names(names, data, cfg.deck or cfg.export_to)
    return {
        **out,
        "render_s": round(t_render, 1),
        "train_s": round(time.monotonic() - t0 - t_render, 1),
    }


def run_training(cfg: TrainConfig) -> dict:
    if cfg.names_only:
        cfg.run_dir.mkdir(parents=True, exist_ok=True)
        names_only = {"names": train_strip_names(cfg)}
        (cfg.run_dir / "summary.json").write_text(json.dumps(names_only, indent=2))
        return names_only
    t0 = time.monotonic()
    data_yaml = render_data(cfg)
    t_render = time.monotonic() - t0
    best = train(cfg, data_yaml)
    t_train = time.monotonic() - t0 - t_render
    # trained across designs it is the any-deck finder; the default deck keeps its own
    paths = export(best, cfg.export_to, ANY_DECK_MODEL_NAME if cfg.designs > 0 else MODEL_NAME)
    t_export = time.monotonic() - t0 - t_render - t_train
    summary: dict[str, Any] = {
        "render_s": round(t_render, 1),
        "train_s": round(t_train, 1),
        "export_s": round(t_export, 1),
        "models": {k: str(v) for k, v in paths.items()},
        "config": {k: str(v) for k, v in asdict(cfg).items()},
    }
    if cfg.names_frames > 0:
        summary["names"] = train_strip_names(cfg)
    (cfg.run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary
