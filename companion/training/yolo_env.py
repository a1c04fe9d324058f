"""Make ultralytics run offline and keep its files inside the checkout.

ultralytics looks up a DNS name at import, fetches Arial.ttf for plots and would download
weights for a name like `yolo11n.pt`. We build from `yolo11n.yaml`, point its config dir into the
checkout, and hand it a font we already have, so nothing is ever fetched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFIG_DIR = ROOT / ".yolo"


def prepare_offline_ultralytics() -> None:
    """Call before importing ultralytics."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(CONFIG_DIR))
    font_dir = Path(os.environ["YOLO_CONFIG_DIR"]) / "Ultralytics"
    font = font_dir / "Arial.ttf"
    if not font.exists():
        font_dir.mkdir(parents=True, exist_ok=True)
        try:
            import matplotlib

            src = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
            shutil.copyfile(src, font)
        except (ImportError, OSError):
            pass  # plots fall back to PIL's default font


COMMON_TRAIN_ARGS: dict[str, Any] = {
    "workers": 0,
    "device": "cpu",
    "exist_ok": True,
    "pretrained": False,
    "optimizer": "AdamW",
    "lr0": 0.002,
    "cos_lr": True,
    "deterministic": False,
    "plots": False,
    "verbose": True,
}
"""From scratch on the CPU, the same way for every model we train."""


def train_resumable(
    run_dir: Path,
    model_yaml: str,
    tag: str,
    threads: int,
    init: Path | None = None,
    **train_args: Any,
) -> Path:
    """Train `model_yaml` from scratch (or from `init`, weights this project trained and
    committed) into run_dir/train, or resume an interrupted run there; returns the best weights.
    A finished run is marked so the next call starts afresh."""
    prepare_offline_ultralytics()
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(threads)
    weights = run_dir / "train" / "weights"
    last = weights / "last.pt"
    if last.exists() and not (weights / "done").exists():
        print(f"[{tag}] resuming from {last}")
        YOLO(str(last)).train(resume=True)
    else:
        if (run_dir / "train").exists():
            shutil.rmtree(run_dir / "train")
        model: Any
        if init is not None:
            # the checkpoint itself, not yaml + load(): every tensor transfers, the class head
            # too (through a freshly built 80-class yaml it was re-initialised)
            print(f"[{tag}] starting from {init}")
            model = YOLO(str(init))
        else:
            model = YOLO(model_yaml)
        # pretrained=False (COMMON_TRAIN_ARGS) makes ultralytics build the model afresh, so a
        # start from weights must name them here, or it silently trains from scratch
        start = {"pretrained": str(init)} if init is not None else {}
        model.train(
            **{
                **COMMON_TRAIN_ARGS,
                "project": str(run_dir),
                "name": "train",
                **train_args,
                **start,
            }
        )
    weights.mkdir(parents=True, exist_ok=True)
    (weights / "done").touch()
    return weights / "best.pt"
