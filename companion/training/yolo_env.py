"""Make ultralytics run offline and keep its files inside the checkout.

ultralytics looks up a DNS name at import, fetches Arial.ttf for plots and would download
weights for a name like `yolo11n.pt`. We build from `yolo11n.yaml`, point its config dir into the
checkout, and hand it a font we already have, so nothing is ever fetched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

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
