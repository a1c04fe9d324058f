"""Keep a camera alive: a capture that stalls is closed and reopened, the app is told meanwhile.

The watchdog only delivers frames. It never touches the game: while the camera is lost the
follower simply receives nothing, and resumes from the next frame after the reconnection.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Final

from companion.camera.base import CameraError, Frame, FrameSource

OK: Final = "ok"
LOST: Final = "camera lost"
RECONNECTING: Final = "reconnecting"
STATUSES: Final = (OK, LOST, RECONNECTING)

_END: Final = object()

log = logging.getLogger(__name__)


class WatchedSource(FrameSource):
    """Reads `factory()`'s source on a background thread and reopens it when it stalls.

    - A stall is `stall_seconds` without a frame, whether the driver blocks in read() or keeps
      raising CameraError. The source is closed, `status` goes "camera lost", then
      "reconnecting" while `factory()` + open() are retried with exponential backoff
      (`backoff` .. `max_backoff` seconds), and "ok" again at the first new frame.
    - `on_status(status)` is called on every change (from the watchdog thread; marshal it to
      the UI thread yourself, e.g. Kivy's Clock.schedule_once).
    - Live sources: only the newest `max_queue` frames wait for the consumer (older ones are
      dropped, as the driver would); `t` and `index` continue across reconnections (t is
      seconds since this watched source opened), the image is untouched.
    - Recordings: every frame is delivered in order (the reader waits for the consumer), end of
      stream is not a stall, and a reopened file resumes after the last delivered frame.
    - The first open() happens in the caller's thread, so a missing camera is an immediate
      CameraError rather than an endless "reconnecting".
    """

    def __init__(
        self,
        factory: Callable[[], FrameSource],
        *,
        stall_seconds: float = 3.0,
        backoff: float = 0.5,
        max_backoff: float = 5.0,
        max_queue: int = 2,
        on_status: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if stall_seconds <= 0 or backoff <= 0 or max_backoff < backoff or max_queue < 1:
            raise ValueError("stall_seconds, backoff, max_backoff, max_queue must be positive")
        self._factory = factory
        self.stall_seconds = stall_seconds
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.on_status = on_status
        self._clock = clock
        self._max_queue = max_queue
        self._queue: queue.Queue[object] = queue.Queue()
        self._stop = threading.Event()
        self._status = OK
        self._thread: threading.Thread | None = None
        self._reader: threading.Thread | None = None
        self._ended = False
        self._ended_reader = False
        self._last_frame_at = 0.0
        self._origin = 0.0
        self._generation = 0
        self._offset = 0.0
        self._delivered = 0
        self._last_index = -1
        self.reconnects = 0
        """How many times the source was reopened after a stall."""
        self.name = "watched"
        self.is_live = True

    # -- public -------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        """ "ok", "camera lost" or "reconnecting"."""
        return self._status

    @property
    def ended(self) -> bool:
        """True once a recording reached its end and every frame was read."""
        return self._ended

    def open(self) -> None:
        source = self._factory()
        source.open()  # CameraError reaches the caller: nothing to watch yet
        self.name, self.is_live = source.name, source.is_live
        self._queue = queue.Queue(maxsize=0 if self.is_live else self._max_queue)
        self._stop.clear()
        self._ended = self._ended_reader = False
        self._origin = self._clock()
        self._last_frame_at = self._origin
        self._thread = threading.Thread(
            target=self._run, args=(source,), name=f"watchdog {self.name}", daemon=True
        )
        self._thread.start()

    def poll(self, timeout: float | None = 0.0) -> Frame | None:
        """The next frame if one arrives within `timeout` seconds, else None (see `ended`)."""
        if self._ended:
            return None
        try:
            if timeout is None:
                item = self._queue.get()
            elif timeout > 0:
                item = self._queue.get(timeout=timeout)
            else:
                item = self._queue.get_nowait()
        except queue.Empty:
            return None
        if item is _END:
            self._ended = True
            return None
        assert isinstance(item, Frame)
        return item

    def read(self) -> Frame | None:
        """Blocks until a frame arrives (through any outage); None only at a recording's end."""
        while not self._ended:
            if self._thread is None:
                raise CameraError(f"camera {self.name} is not open")
            frame = self.poll(0.1)
            if frame is not None:
                return frame
        return None

    def close(self) -> None:
        """Stop watching and release the source (a driver hung inside read() releases it
        when that read finally returns: closing a capture under a blocked read can crash)."""
        self._stop.set()
        threads = [t for t in (self._thread, self._reader) if t is not None]
        self._thread = self._reader = None
        # Unblock a reader waiting on a full queue.
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        for thread in threads:
            thread.join(timeout=1.0)

    # -- watchdog thread ----------------------------------------------------------------------

    def _set_status(self, status: str) -> None:
        if status == self._status:
            return
        self._status = status
        if status == OK:
            log.info("camera %s: frames again (reopened %d times)", self.name, self.reconnects)
        elif status == LOST:
            log.warning("camera %s: no frame for %.1f s, reopening", self.name, self.stall_seconds)
        if self.on_status is not None:
            try:
                self.on_status(status)
            except Exception:  # a broken UI callback must not kill the camera
                log.exception("camera %s: the status callback failed", self.name)

    def _run(self, source: FrameSource) -> None:
        """Supervise: one reader thread per (re)opened source; reopen when it goes quiet.

        Only the reader thread touches its source (read, then close), because OpenCV and
        picamera2 captures are not safe to close from another thread during a read."""
        poll = min(max(self.stall_seconds / 10, 0.01), 0.25)
        while not self._stop.is_set():
            generation = self._generation
            reader = threading.Thread(
                target=self._read_loop,
                args=(generation, source),
                name=f"camera reader {self.name}",
                daemon=True,
            )
            self._reader = reader
            reader.start()
            while not self._stop.is_set() and reader.is_alive():
                if self._clock() - self._last_frame_at > self.stall_seconds:
                    break
                self._stop.wait(poll)
            if self._stop.is_set() or self._ended_reader:
                return
            # Stalled (or the reader died): the reader drops and closes this source as soon as
            # its read returns; a new one is opened meanwhile, with backoff.
            self._generation += 1
            self._set_status(LOST)
            new_source = self._reconnect()
            if new_source is None:
                return
            source = new_source

    def _reconnect(self) -> FrameSource | None:
        delay = self.backoff
        while not self._stop.is_set():
            self._set_status(RECONNECTING)
            try:
                source = self._factory()
                source.open()
            except Exception as exc:
                log.warning("camera %s: reopen failed (%s), next in %.1f s", self.name, exc, delay)
                self._stop.wait(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            self.reconnects += 1
            now = self._clock()
            self._offset = now - self._origin
            self._last_frame_at = now
            return source
        return None

    def _read_loop(self, generation: int, source: FrameSource) -> None:
        try:
            self._deliver(generation, source)
        finally:
            try:
                source.close()
            except Exception as exc:  # the device may already be gone
                log.debug("camera %s: close failed: %s", self.name, exc)

    def _deliver(self, generation: int, source: FrameSource) -> None:
        offset = self._offset
        failing = False
        while not self._stop.is_set() and generation == self._generation:
            try:
                frame = source.read()
            except Exception as exc:
                # A live camera that errors is handled like one that hangs: the supervisor
                # reopens it once stall_seconds passed without a frame.
                if not failing:
                    log.warning("camera %s: read failed: %s", self.name, exc)
                failing = True
                self._stop.wait(min(0.05, self.stall_seconds / 10))
                continue
            failing = False
            if generation != self._generation or self._stop.is_set():
                return  # a late frame from a source we already gave up on
            if frame is None:
                if not self.is_live:
                    self._ended_reader = True
                    self._put(_END)
                    return
                continue
            if self.is_live:
                frame = replace(frame, t=frame.t + offset, index=self._delivered)
            elif frame.index <= self._last_index:
                continue  # a reopened recording replays what was already delivered
            self._last_index = frame.index
            self._delivered += 1
            self._last_frame_at = self._clock()
            self._set_status(OK)
            self._put(frame)

    def _put(self, item: object) -> None:
        if self.is_live:
            self._queue.put(item)
            while self._queue.qsize() > self._max_queue:
                try:
                    self._queue.get_nowait()  # the consumer is behind: keep the newest
                except queue.Empty:
                    break
            return
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                # A consumer that is slow to take frames is not a stalled camera.
                self._last_frame_at = self._clock()
