"""Reading a still image safely: size limits checked in the header, damaged files refused.

OpenCV decodes whatever it is given: a 20 000 px photo becomes gigabytes, and a truncated or
corrupt JPEG comes back "read" (the missing part grey) while libjpeg prints a warning on the
process's stderr. `read_image` reads the width and height from the file's header first and
refuses anything past MAX_IMAGE_PIXELS before decoding, then decodes with the C libraries'
stderr captured (on the main thread: fd 2 is the process's): a warning of damage refuses the
image, other chatter is dropped. A JPEG without its end marker or a PNG without IEND is refused
before decoding, on any thread.
"""

from __future__ import annotations

import os
import re
import struct
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Final

import numpy as np

from companion.errors import BadInputError

MAX_IMAGE_PIXELS: Final = 50_000_000
"""Largest image decoded: a 50 MP phone photo (8160 x 6120). Decoded it takes 150 MB."""
MAX_IMAGE_SIDE: Final = 16384
"""Longest side accepted, whatever the pixel count."""
MAX_IMAGE_BYTES: Final = 200 * 1024 * 1024
FORMATS: Final = "PNG, JPEG, BMP, WEBP or TIFF"

_DAMAGE = re.compile(r"premature end|corrupt|error|invalid|bad |truncat|not a jpeg", re.I)


class ImageError(BadInputError):
    """An image that cannot be used: missing, not an image, too large, damaged."""


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from the first bytes of a PNG, JPEG, BMP, WEBP or TIFF; None if none."""
    try:
        if head.startswith(b"\x89PNG\r\n\x1a\n") and head[12:16] == b"IHDR":
            w, h = struct.unpack(">II", head[16:24])
            return int(w), int(h)
        if head.startswith(b"\xff\xd8"):
            return _jpeg_size(head)
        if head.startswith(b"BM"):
            w, h = struct.unpack("<ii", head[18:26])
            return abs(int(w)), abs(int(h))
        if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
            return _webp_size(head)
        if head[:4] in (b"II*\x00", b"MM\x00*"):
            return _tiff_size(head)
    except (struct.error, IndexError):
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):
            i += 2
            continue
        if marker == 0xDA:  # start of scan before any frame header
            return None
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(w), int(h)
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        b = data[21:25]
        w = 1 + (((b[1] & 0x3F) << 8) | b[0])
        h = 1 + (((b[3] & 0x0F) << 10) | (b[2] << 2) | ((b[1] & 0xC0) >> 6))
        return w, h
    if chunk == b"VP8X":
        w = 1 + int.from_bytes(data[24:27], "little")
        h = 1 + int.from_bytes(data[27:30], "little")
        return w, h
    return None


def _tiff_size(data: bytes) -> tuple[int, int] | None:
    end = "<" if data[:2] == b"II" else ">"
    (ifd,) = struct.unpack(end + "I", data[4:8])
    (count,) = struct.unpack(end + "H", data[ifd : ifd + 2])
    found: dict[int, int] = {}
    for k in range(count):
        off = ifd + 2 + 12 * k
        tag, kind = struct.unpack(end + "HH", data[off : off + 4])
        if tag in (256, 257):
            fmt = end + ("H" if kind == 3 else "I")
            (found[tag],) = struct.unpack(fmt, data[off + 8 : off + 8 + struct.calcsize(fmt)])
    if 256 in found and 257 in found:
        return found[256], found[257]
    return None


def check_size(size: tuple[int, int], where: str) -> None:
    w, h = size
    if w <= 0 or h <= 0:
        raise ImageError(f"{where}: the image is {w} x {h} px, empty")
    if w * h > MAX_IMAGE_PIXELS or max(w, h) > MAX_IMAGE_SIDE:
        raise ImageError(
            f"{where}: the image is {w} x {h} px, over the limit of "
            f"{MAX_IMAGE_PIXELS / 1e6:.0f} megapixels and {MAX_IMAGE_SIDE} px a side: "
            "scale it down first"
        )


def _read_bytes(path: Path, what: str) -> bytes:
    if path.is_dir():
        raise ImageError(f"{what} {path} is a folder, not an image")
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise ImageError(
                f"{what} {path} is {size / 1e6:.0f} MB, over the {MAX_IMAGE_BYTES >> 20} MiB limit"
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{what} {path} not found") from None
    except OSError as exc:
        raise ImageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def probe_image(path: Path | str, what: str = "image") -> tuple[int, int]:
    """(width, height) of an image file from its header, checked against the limits."""
    p = Path(path)
    if p.is_dir():
        raise ImageError(f"{what} {p} is a folder, not an image")
    try:
        with p.open("rb") as f:
            head = f.read(1 << 16)
    except FileNotFoundError:
        raise ImageError(f"{what} {p} not found") from None
    except OSError as exc:
        raise ImageError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    size = image_size(head)
    if size is None:
        raise ImageError(f"{what} {p} is not a readable image ({FORMATS} expected)")
    check_size(size, f"{what} {p}")
    return size


def read_image(path: Path | str, what: str = "image") -> np.ndarray:
    """A BGR uint8 image from a file; ImageError (one line) when it cannot be used whole."""
    p = Path(path)
    return decode_image(_read_bytes(p, what), f"{what} {p}")


def decode_image(data: bytes, where: str) -> np.ndarray:
    """Decode encoded image bytes to BGR uint8, refusing oversized and damaged images."""
    import cv2

    size = image_size(data[: 1 << 16])
    if size is None:
        raise ImageError(f"{where} is not a readable image ({FORMATS} expected)")
    check_size(size, where)
    if not complete(data):
        raise ImageError(f"{where} is damaged (truncated: its end is missing)")
    if threading.current_thread() is threading.main_thread():
        with captured_stderr() as chatter:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    else:  # fd 2 is the whole process's: another thread's lines must not vanish into ours
        chatter = []
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    damage = next((line for line in chatter if _DAMAGE.search(line)), None)
    if image is None or image.size == 0:
        raise ImageError(f"{where} does not decode (damaged{': ' + damage if damage else ''})")
    if damage is not None:
        raise ImageError(f"{where} is damaged (truncated or corrupt: {damage.strip()})")
    return image


def complete(data: bytes) -> bool:
    """False for a JPEG or PNG whose end is missing (a truncated file or download): a JPEG's
    last scan must be followed by its end marker, a PNG must close with IEND."""
    if data.startswith(b"\xff\xd8"):
        return data.rfind(b"\xff\xd9") > data.rfind(b"\xff\xda")
    if data.startswith(b"\x89PNG"):
        return b"IEND" in data[-64:]
    return True


@contextmanager
def captured_stderr() -> Iterator[list[str]]:
    """Collect what C libraries write to file descriptor 2 meanwhile (libjpeg, libpng).

    The descriptor is process-wide: use it around short calls on the main thread.
    """
    lines: list[str] = []
    with suppress(AttributeError, ValueError, OSError):
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all: nothing to capture
        yield lines
        return
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            lines.extend(tmp.read(1 << 16).decode("utf-8", "replace").splitlines())
