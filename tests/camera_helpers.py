"""Real recordings for camera tests: small videos and image folders written with OpenCV."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

W, H = 96, 64


def frame_image(i: int) -> np.ndarray:
    """Frame i: a flat grey level 20*i (+10) that survives lossy codecs well enough to order."""
    return np.full((H, W, 3), 10 + 20 * i, np.uint8)


def grey_level(image: np.ndarray) -> int:
    """Which frame_image() an (approximately decoded) picture was: inverse of the grey level."""
    return round((float(image.mean()) - 10) / 20)


def write_video(path: Path, n: int = 8, fps: float = 10.0, fourcc: str = "MJPG") -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), fps, (W, H))
    assert writer.isOpened(), f"OpenCV cannot write {fourcc}"
    for i in range(n):
        writer.write(frame_image(i))
    writer.release()
    return path


def write_folder(folder: Path, names: list[str], corrupt: tuple[str, ...] = ()) -> Path:
    """PNG files named `names` (frame i = names[i]); `corrupt` ones hold garbage bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        path = folder / name
        if name in corrupt:
            path.write_bytes(b"\x89PNG\r\n\x1a\n this is not really a png")
        else:
            assert cv2.imwrite(str(path), frame_image(i))
    return folder
