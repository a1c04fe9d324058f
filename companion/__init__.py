"""Ramen! Ramen! table companion: camera -> detection -> tracking -> rules -> screen."""

import os
import sys

from companion.offline import stay_offline

__version__ = "0.1.0"


def quiet_native_logs() -> None:
    """OpenCV's own log and FFmpeg's stay silent (unless OPENCV_LOG_LEVEL /
    OPENCV_FFMPEG_LOGLEVEL say otherwise): their lines would bury our one-line errors. They are
    read when OpenCV first opens an image or a video, so this runs before anything else."""
    os.environ.setdefault("OPENCV_LOG_LEVEL", "SILENT")
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # AV_LOG_QUIET
    os.environ.setdefault("OPENCV_VIDEOIO_DEBUG", "0")


def single_threaded_blas() -> None:
    """numpy's OpenBLAS on one thread (unless OPENBLAS_NUM_THREADS says otherwise). Naming
    multiplies small matrices; OpenBLAS's threads spin while they wait, and next to the
    detector, the camera and the UI (or any other busy process) they starve each other:
    measured on 2 cores at load 10, naming one strip took 420 ms with the default threads and
    20 ms with one (19 strips: 948 ms -> 202 ms). Read when numpy loads, so this runs first."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


MALLOC_ARENAS = 2
"""glibc's malloc arenas for the process (its default: up to 8 per core)."""


def few_malloc_arenas() -> None:
    """At most MALLOC_ARENAS malloc arenas (unless MALLOC_ARENA_MAX says otherwise): glibc gives
    a thread that allocates an arena of its own, up to 8 per core, and each keeps the memory
    its thread freed; the video decoder's, NCNN's, the camera's and the UI's threads all
    allocate. Measured with benchmarks/run_footprint.py (`companion run` on the 15 fps demo):
    peak 301-303 -> 298-299 MB. Set before any thread starts; nothing where glibc is not."""
    _mallopt("MALLOC_ARENA_MAX", -8, MALLOC_ARENAS)  # M_ARENA_MAX in glibc's malloc.h


def _mallopt(env: str, param: int, value: int) -> None:
    """glibc's mallopt(param, value), unless the environment variable `env` (glibc's own for
    that setting) says otherwise; nothing where glibc is not."""
    if env in os.environ or not sys.platform.startswith("linux"):
        return
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # another C library (musl)
        ctypes.CDLL("libc.so.6").mallopt(param, value)


MMAP_THRESHOLD = 4 * 1024 * 1024
"""Blocks from this size on are mapped on their own and given back to the system when freed."""


def frames_given_back() -> None:
    """A fixed MMAP_THRESHOLD (unless MALLOC_MMAP_THRESHOLD_ says otherwise). glibc raises its
    threshold past any large block freed, so the camera's frames (9 MB each at the Pi camera's
    2304 x 1296) are then carved from the heap, and the heap keeps what they freed: `companion
    run` on a 2304 x 1296 recording peaked at 300 MB (issue 12's limit), 286 MB with the
    threshold fixed (benchmarks/run_footprint.py). Mapping each frame costs its page faults
    (about 3 ms a frame here at that size); 720p frames (2.7 MB) stay under the threshold."""
    _mallopt("MALLOC_MMAP_THRESHOLD_", -3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD


stay_offline()  # before ultralytics can be imported by any path
quiet_native_logs()
single_threaded_blas()
few_malloc_arenas()
frames_given_back()
