"""Shared test set-up: keep Kivy and ultralytics inside the checkout and offline."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("KIVY_NO_ARGS", "1")
os.environ.setdefault("KIVY_HOME", str(ROOT / ".kivy"))
os.environ.setdefault("KIVY_LOG_MODE", "PYTHON")
os.environ.setdefault("YOLO_OFFLINE", "1")
os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".yolo"))
