"""Nothing phones home: a table companion in someone's home makes no network request.

Two libraries would: ultralytics looks up DNS names (online checks, usage events when its
`sync` setting is on) and ONNX Runtime sends usage telemetry where the platform supports it
(Windows). `companion/__init__.py` calls `stay_offline()` before anything else is imported, so
every path (run, detect, doctor, training, any backend) is covered, not only the kiosk unit;
ONNX Runtime sessions are made through `onnxruntime()`.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Final

OFFLINE_ENV: Final = {"YOLO_OFFLINE": "1"}
"""ultralytics: `is_online()` is False without a DNS lookup, so no check or event is sent."""


def stay_offline() -> None:
    """Set the environment switches (unless the user set them): before ultralytics imports."""
    for name, value in OFFLINE_ENV.items():
        os.environ.setdefault(name, value)


def onnxruntime() -> ModuleType:
    """`import onnxruntime` with its telemetry events switched off."""
    import onnxruntime as ort

    ort.disable_telemetry_events()
    return ort
