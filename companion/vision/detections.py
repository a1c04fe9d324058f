"""Column-oriented detector output (after roboflow/supervision's Detections)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Detections:
    xyxy: np.ndarray
    """(n, 4) float32 boxes in the pixels of the image the model saw."""
    confidence: np.ndarray
    """(n,) float32."""
    class_id: np.ndarray
    """(n,) int."""

    def __post_init__(self) -> None:
        n = len(self.xyxy)
        if (
            self.xyxy.shape != (n, 4)
            or self.confidence.shape != (n,)
            or self.class_id.shape != (n,)
        ):
            raise ValueError(
                f"Detections shapes disagree: xyxy {self.xyxy.shape}, confidence "
                f"{self.confidence.shape}, class_id {self.class_id.shape}"
            )

    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, mask: np.ndarray | slice) -> Detections:
        return Detections(self.xyxy[mask], self.confidence[mask], self.class_id[mask])

    @classmethod
    def empty(cls) -> Detections:
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, int))

    @classmethod
    def from_ultralytics(cls, result) -> Detections:
        """From one ultralytics `Results` (read by attribute; nothing else imports ultralytics)."""
        boxes = result.boxes
        return cls(
            boxes.xyxy.cpu().numpy().astype(np.float32),
            boxes.conf.cpu().numpy().astype(np.float32),
            boxes.cls.cpu().numpy().astype(int),
        )
