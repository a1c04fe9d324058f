"""A game at the table: camera -> detector -> settler -> game follower -> log and screen.

`TablePipeline` turns one frame into events (synchronous, testable on a recording).
`Session` runs it on a background thread over a camera source, writes every event to the
durable game log (and an optional JSON-lines file) the moment it happens, and is the UI's
Controller: the Kivy app polls `view()` / `latest_frame()` and sends corrections, which are
queued to the pipeline thread so the follower is only ever touched by one thread.

Whatever stops the pipeline thread (a camera gone for good, a recording cut off, a full disk
under the game log, a bug) is logged through `logging` and kept in `Session.error`, which the
view carries to the screen; `companion run` then exits non-zero so systemd restarts the kiosk.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, TextIO

import cv2
import numpy as np

from companion.camera import OK, CameraError, Frame, FrameSource
from companion.errors import CompanionError
from companion.tracking.follower import GameFollower
from companion.tracking.game_prior import SCAN_REGION, instead_of_served, with_pile
from companion.tracking.settle import Reading, SettleConfig, TableSettler, readings_of
from companion.tracking.view import GameView, SeenCard
from companion.vision.calibration import MarkerWatch, TableCalibration, calibrate
from companion.vision.detector import SAME_VIEW_PX, CardDetector, CardReading, FrameReading
from companion.vision.hands import HandWatch
from companion.vision.motion import MotionGate
from companion.vision.table_light import camera_state

Event = dict[str, Any]

CAMERA_CHECK_EVERY: Final = 20
"""Readings between two looks at the light and the lens blur (`camera_state`, about 40 ms at
2304 px): a lamp switched off or a lens knocked out of focus mid-game is said on the screen
within a few seconds of play."""

log = logging.getLogger(__name__)


def _evidence(readings: Iterable[CardReading]) -> list[tuple[str, str, float, str]]:
    """(card, region, confidence, runner-up) of each reading: what `tracking/game_prior.py`
    weighs against the game."""
    return [(r.card, r.region or "", r.confidence, r.naming.runner_up) for r in readings]


@dataclass
class TablePipeline:
    """Frame in, events out. Detection runs only on still frames with no hand over the table
    (a hand resting still is seen by `HandWatch`: a change reaching in across the play area's
    edge)."""

    detector: CardDetector
    follower: GameFollower
    settle: SettleConfig = field(default_factory=SettleConfig)
    manual_calibration: TableCalibration | None = None
    """Used when the markers are hidden (e.g. `--calibration FILE`)."""
    on_frame: Callable[[TablePipeline, Frame, list[Event]], None] | None = None
    """Called after each frame with the events it gave (e.g. the recap's bowl cropper)."""
    t_offset: float = 0.0
    """Added to every frame's `t`: a resumed game watched from a camera (whose clock starts
    again at 0) goes on from the time it had reached, never back."""

    def __post_init__(self) -> None:
        self.settler = TableSettler(self.settle)
        self.motion = MotionGate()
        self.hands = HandWatch()
        self.hand_frames = 0
        self.calibration: TableCalibration | None = self.manual_calibration
        self.recalibrations = 0
        self.markers = MarkerWatch()
        self.last_reading: FrameReading | None = None
        self.frames = 0
        self.detections = 0
        self.camera_says = "ok"
        """What the last look at the light and the focus said (`camera_state`)."""

    def _calibrate(self, image: np.ndarray) -> TableCalibration | None:
        """Markers every still frame: a bumped camera re-calibrates by itself. While markers
        are hidden (hands, cups) the last good calibration stays in use. Markers whose
        surroundings did not change since the calibration was measured are not looked for
        again, and a calibration that moved by less than half a pixel is kept as it is (the same
        rectified view frame after frame: strips that did not change keep their names)."""
        if self.markers.same(image, self.calibration):
            return self.calibration
        # with no calibration to keep meanwhile, look for the markers something touches too
        found = calibrate(image, recover=self.calibration is None)
        if found is not None and len(found.markers) == 4:
            if self.calibration is not None and found.moved_from(self.calibration):
                self.recalibrations += 1
            if self.calibration is None or found.moved_from(self.calibration, SAME_VIEW_PX):
                self.calibration = found
            self.markers.watch(self.calibration, image)
        elif found is not None and self.calibration is None:
            self.calibration = found
        return self.calibration

    def _with_pile_in_scan(
        self, reading: FrameReading, readings: list[Reading] | None
    ) -> list[Reading] | None:
        """`readings`, those of the scan area made surer by what the game expects of the pile
        spread there (`tracking/game_prior.py`), doubtful ones included."""
        seen = [r for r in (*reading.cards, *reading.doubtful) if r.region == SCAN_REGION]
        if readings is None or not seen:
            return readings
        pile = self.follower.pile_in_scan(r.card for r in reading.cards if r.region == SCAN_REGION)
        if not pile:
            return readings
        surer = with_pile(pile, _evidence(seen))
        out: list[Reading] = []
        for c, region, p in readings:
            meant, p = surer.pop(c) if region == SCAN_REGION and c in surer else (c, p)
            out.append((meant, region, p))
        return out + [(meant, SCAN_REGION, p) for meant, p in surer.values()]

    def _instead_of_served(
        self, reading: FrameReading, readings: list[Reading] | None
    ) -> list[Reading] | None:
        """`readings` with a card already served, read on the table, replaced by the namer's
        runner-up where that is a card still in play (`tracking/game_prior.py`)."""
        served = self.follower.served_cards()
        if readings is None or not served:
            return readings
        instead = instead_of_served(served, _evidence(r for r in reading.cards if r.region))
        if not instead:
            return readings
        return [instead.get(c, (c, region, p)) for c, region, p in readings]

    def _bumped(self, image: np.ndarray) -> bool:
        """All four markers seen somewhere else than the calibration has them."""
        if self.calibration is None:
            return False
        found = calibrate(image)
        return found is not None and len(found.markers) == 4 and found.moved_from(self.calibration)

    def process(self, frame: Frame) -> list[Event]:
        if self.t_offset:
            frame = replace(frame, t=frame.t + self.t_offset)
        self.frames += 1
        score = self.motion.update(frame.image)
        still = score <= self.settle.motion_threshold
        hand = self.hands.update(frame.t, frame.image, self.calibration, still).hand
        if hand and still and self._bumped(frame.image):
            self.hands.adopt(frame.image)  # the whole view moved: not a hand
            hand = False
        self.hand_frames += hand and still
        readings = None
        if still and not hand:
            cal = self._calibrate(frame.image)
            if cal is None:
                self.follower.set_camera_status("markers not found")
            else:
                if self.detections % CAMERA_CHECK_EVERY == 0:
                    self.camera_says = camera_state(frame.image, cal)
                self.detections += 1
                reading = self.detector.detect(frame.image, cal)
                reading = replace(reading, calibrated=True)
                self.last_reading = reading
                readings = self._with_pile_in_scan(reading, readings_of(reading))
                readings = self._instead_of_served(reading, readings)
                self.follower.set_camera_status(
                    self.camera_says,
                    [
                        SeenCard(r.card, r.region or "table", r.confidence, r.box)
                        for r in reading.cards
                    ],
                )
        settled = self.settler.update(frame.t, readings, score, hand)
        events = self.follower.observe(settled)
        if self.on_frame is not None:
            self.on_frame(self, frame, events)
        return events


def describe(event: Event) -> str:
    """One readable line per event for the headless mode."""
    t = f"{event.get('t', 0.0):7.1f}s"
    kind = event.get("type", "?")
    if kind in ("card_added", "card_removed"):
        verb = "+" if kind == "card_added" else "-"
        return f"{t}  {verb} {event['card']:<11} {event['region']}"
    if kind == "bowl_ready":
        why = "sum" if event.get("reason") == "sum" else "all 7 types"
        return (
            f"{t}  ** {event['region']} is ready to serve ({why}: "
            f"sum {event['sum']}, {event['types']} types)"
        )
    if kind == "bowl_served":
        return f"{t}  {event['region']} served to {event['player']}: {', '.join(event['cards'])}"
    if kind == "turn":
        return f"{t}  turn {event['turn']}: {event['player']}"
    if kind == "rule_warning":
        return f"{t}  ! {event['message']}"
    if kind == "card_hidden":
        return f"{t}  ? {event['message']}"
    if kind == "game_over":
        return f"{t}  game over"
    extra = {k: v for k, v in event.items() if k not in ("t", "type", "step")}
    return f"{t}  {kind} {json.dumps(extra) if extra else ''}".rstrip()


def scoreboard(final: dict[str, Any]) -> str:
    lines = ["", "Final scoreboard", f"{'':<14}{'points':>7}{'bowls':>7}{'cards':>7}"]
    for name, s in final["scores"].items():
        lines.append(f"{name:<14}{s['points']:>7}{s['bowls']:>7}{s['cards']:>7}")
    winners = final.get("winners", [])
    if len(winners) == 1:
        lines.append(f"Winner: {winners[0]}")
    elif winners:
        lines.append(f"Shared victory: {', '.join(winners)}")
    if final.get("stars") is not None:
        lines.append(f"Critics: {final['stars']} stars")
    return "\n".join(lines)


class EventSinks:
    """Every event, as it happens, to the game log, a JSON-lines file and a callback.

    With `start` and no `game_id`, the game's log entry is made by `start()` at its first
    event: a game in which nothing happened (a camera that never opened, an app closed on
    the New game screen) leaves no empty game behind for `--resume` to pick up.

    Inside `with sinks.atomic():` events are held and logged in one transaction at the end:
    the pipeline wraps each frame (and each command) in it, so a settled change of the table
    and everything it made the game say are in the log together or not at all, and a game
    resumed after a power cut never starts from half a step."""

    def __init__(
        self,
        log: Any | None = None,
        game_id: str | None = None,
        jsonl: TextIO | None = None,
        echo: Callable[[Event], None] | None = None,
        start: Callable[[], str] | None = None,
    ) -> None:
        self.log, self.game_id, self.jsonl, self.echo = log, game_id, jsonl, echo
        self.start = start
        self._held: list[Event] | None = None

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        """Hold the events emitted inside and write them together when it ends."""
        if self._held is not None:  # already inside one
            yield
            return
        self._held = []
        try:
            yield
        finally:
            held, self._held = self._held, None
            self._write(held)

    def __call__(self, event: Event) -> None:
        if self._held is not None:
            self._held.append(event)
        else:
            self._write([event])

    def _write(self, events: list[Event]) -> None:
        if not events:
            return
        if self.log is not None and self.game_id is None and self.start is not None:
            self.game_id = self.start()
        if self.log is not None and self.game_id is not None:
            if len(events) == 1:
                self.log.append(self.game_id, events[0])
            else:
                self.log.append_many(self.game_id, events)
            for event in events:
                if event.get("type") == "game_over":  # over: no longer offered for --resume
                    final = {k: v for k, v in event.items() if k not in ("t", "type", "unserved")}
                    self.log.finish(self.game_id, final)
        if self.jsonl is not None:
            self.jsonl.write("".join(json.dumps(event) + "\n" for event in events))
            self.jsonl.flush()
        if self.echo is not None:
            for event in events:
                self.echo(event)


def atomic(follower: GameFollower) -> contextlib.AbstractContextManager[None]:
    """`follower.sink.atomic()` when its sink is an EventSinks, else nothing to hold."""
    sink = follower.sink
    return sink.atomic() if isinstance(sink, EventSinks) else contextlib.nullcontext()


_END: Final = object()
"""The source reached its end."""
_NOTHING: Final = object()
"""No frame arrived within the wait."""


class _Handoff:
    """Frames from the capture thread to the pipeline thread. Live: only the newest frame
    waits (the pipeline reads the table as it is now, never a backlog); a recording: up to
    `size` frames wait and the reader waits for room (every frame is processed, in order)."""

    def __init__(self, live: bool, size: int = 4) -> None:
        self.live = live
        self.size = 1 if live else size
        self._items: deque[object] = deque()
        self._cond = threading.Condition()
        self.dropped = 0
        """Live frames replaced by a newer one before the pipeline took them."""

    def put(self, item: object, stop: threading.Event) -> None:
        with self._cond:
            if self.live:
                while len(self._items) >= self.size and isinstance(self._items[0], Frame):
                    self._items.popleft()
                    self.dropped += 1
            else:
                while len(self._items) >= self.size and not stop.is_set():
                    self._cond.wait(0.1)
            self._items.append(item)
            self._cond.notify_all()

    def get(self, timeout: float) -> object:
        """The oldest waiting item, or _NOTHING after `timeout` seconds."""
        with self._cond:
            if not self._items:
                self._cond.wait(timeout)
            if not self._items:
                return _NOTHING
            item = self._items.popleft()
            self._cond.notify_all()
            return item


class Session:
    """The pipeline over a source: a capture thread (frames to the screen at once) and a
    pipeline thread (detection, game); the UI's Controller."""

    def __init__(
        self,
        source: FrameSource,
        pipeline: TablePipeline,
        preview_width: int = 640,
        on_end: Callable[[], None] | None = None,
        new_follower: Callable[[str, Sequence[str]], GameFollower] | None = None,
    ) -> None:
        self.source = source
        self.pipeline = pipeline
        self.preview_width = preview_width
        self.on_end = on_end
        self.new_follower = new_follower
        """Makes the follower of a new game (with its log entry) when the app starts one."""
        self.calibration_view = False
        self._commands: queue.Queue[Callable[[], Any]] = queue.Queue()
        self._lock = threading.Lock()
        self._view = pipeline.follower.view()
        self._frame: np.ndarray | None = None
        self._scale = 1.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._capture: threading.Thread | None = None
        self._frames = _Handoff(live=False)
        self.error: str | None = None
        """Why the pipeline stopped early (one line), None while it runs or after a clean end."""
        self.ended = threading.Event()
        self.source_ended = False
        """The source reached its end (a recording played through), not stopped or failed."""

    # -- worker ----------------------------------------------------------------------------
    def start(self) -> None:
        self._frames = _Handoff(live=bool(getattr(self.source, "is_live", False)))
        self._capture = threading.Thread(target=self._read_frames, name="capture", daemon=True)
        self._capture.start()
        self._thread = threading.Thread(target=self._run, name="pipeline", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop both threads; the source may be closed once this returns (the capture thread
        is out of `read()`, unless the driver hangs in it for more than 5 s)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._capture is not None:
            self._capture.join(timeout=5)

    def _read_frames(self) -> None:
        """The capture thread: each frame is on the screen as soon as it is read, whatever the
        detection is doing; the pipeline thread takes frames from the handoff (a live camera:
        only the newest waits, as a camera drops frames; a recording: every frame, in order)."""
        try:
            while not self._stop.is_set():
                frame = self.source.read()
                if frame is None:
                    self._frames.put(_END, self._stop)
                    return
                self._publish_preview(frame.image)
                self._frames.put(frame, self._stop)
        except BaseException as exc:  # raised again on the pipeline thread, in frame order
            self._frames.put(exc, self._stop)

    def _next_frame(self) -> Frame | None:
        """The next frame for the pipeline (commands run while waiting); None at the end."""
        while not self._stop.is_set():
            self._drain()
            item = self._frames.get(0.05)
            if item is _NOTHING:
                continue
            if item is _END:
                self.source_ended = True
                return None
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, Frame)
            return item
        return None

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                frame = self._next_frame()
                if frame is None:
                    break
                with atomic(self.pipeline.follower):
                    self.pipeline.process(frame)
                self._publish(None)
            self._drain()
        except CameraError as exc:
            self._fail(str(exc))
            self.pipeline.follower.set_camera_status("camera lost")
        except CompanionError as exc:  # e.g. the game log cannot be written (disk full)
            self._fail(str(exc))
        except Exception as exc:  # a bug: the traceback goes to the log, a line to the screen
            log.exception("the pipeline stopped")
            self._fail(f"{type(exc).__name__}: {exc}", logged=True)
        finally:
            self._stop.set()  # the capture thread too
            self._publish(None)
            self.ended.set()
            if self.on_end is not None:
                self.on_end()

    def _fail(self, message: str, logged: bool = False) -> None:
        self.error = " ".join(message.split()) or "the pipeline stopped"
        if not logged:
            log.error("the pipeline stopped: %s", self.error)

    def _drain(self) -> None:
        while True:
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                return
            self._command(command)

    def _command(self, command: Callable[[], Any]) -> None:
        """A correction the follower refuses (a card read again meanwhile, a pile that is no
        more) is logged and dropped: it must not stop following. A log that cannot be written
        still stops it (raised)."""
        try:
            with atomic(self.pipeline.follower):
                command()
        except CompanionError as exc:
            if not isinstance(exc, ValueError):
                raise
            log.warning("correction refused: %s", exc)
        self._publish(None)

    def _publish(self, image: np.ndarray | None) -> None:
        """The follower's view (and a preview of `image`) for the UI."""
        view = self.pipeline.follower.view()
        with self._lock:
            self._view = view
        if image is not None:
            self._publish_preview(image)

    def _publish_preview(self, image: np.ndarray) -> None:
        scale = min(1.0, self.preview_width / image.shape[1])
        preview = (
            cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
            if scale < 1.0
            else image
        )
        with self._lock:
            self._frame = preview
            self._scale = scale

    def submit(self, command: Callable[[], Any]) -> None:
        """Run on the pipeline thread (or now, when it has ended)."""
        if not self.ended.is_set():
            self._commands.put(command)
            return
        try:
            self._command(command)
        except CompanionError as exc:  # e.g. the disk is full: shown, as from the pipeline
            self._fail(str(exc))

    # -- Controller ------------------------------------------------------------------------
    def view(self) -> GameView:
        """The follower's latest view, with what the pipeline thread cannot publish itself:
        the watchdog's status while the camera is gone (that thread is then waiting for a
        frame) and why the pipeline stopped."""
        with self._lock:
            view = self._view
        status = getattr(self.source, "status", OK)
        if status != OK:
            view = replace(view, camera=status)
        if self.error is not None:
            view = replace(view, error=self.error)
        return view

    def latest_frame(self) -> np.ndarray | None:
        """The newest preview; with the calibration view on, the markers and regions are
        drawn on a copy when asked, with the calibration as it is now (the capture thread
        shows a frame before the pipeline thread has read it)."""
        with self._lock:
            frame, scale = self._frame, self._scale
        if frame is None or not self.calibration_view or self.pipeline.calibration is None:
            return frame
        preview = frame.copy()  # never draw on the frame the pipeline reads
        draw_table(preview, self.pipeline.calibration, scale)
        return preview

    def frame_scale(self) -> float:
        with self._lock:
            return self._scale

    def new_game(self, mode: str, players: Sequence[str], language: str, source: str) -> None:
        """Follow a new game from now on (the camera source stays the session's own)."""
        if self.new_follower is None:
            return

        def start() -> None:
            self.pipeline.follower = self.new_follower(mode, list(players))  # type: ignore[misc]
            self.pipeline.settler.reset()

        self.submit(start)

    def correct_card(self, old_id: str, new_id: str) -> None:
        self.submit(lambda: self.pipeline.follower.correct_card(old_id, new_id))

    def reassign_served(self, index: int, scorer: str) -> None:
        self.submit(lambda: self.pipeline.follower.reassign_served(index, scorer))

    def undo(self) -> None:
        self.submit(self.pipeline.follower.undo)

    def begin_scoring(self) -> None:
        self.submit(self.pipeline.follower.begin_scoring)

    def resolve_scan(self, scorer: str, cards: Sequence[str]) -> None:
        def resolve() -> None:
            f = self.pipeline.follower
            for scan in f.view().scans:
                if scan.scorer == scorer:
                    keep = "seen" if tuple(cards) == tuple(scan.seen) else "expected"
                    f.resolve_scan(scan.scan, keep, scorer)

        self.submit(resolve)

    def finish(self) -> None:
        self.submit(self.pipeline.follower.finish)

    def apply_settings(self, settings: Any) -> None:
        """Sound, voice and language are the app's; the calibration view draws the markers and
        regions on the preview from the next frame on."""
        self.calibration_view = bool(getattr(settings, "calibration_view", False))


REGION_COLOURS = {
    "fridge": (255, 200, 0),
    "bowl-1": (0, 200, 255),
    "bowl-2": (0, 255, 120),
    "bowl-3": (255, 0, 200),
    "scan": (200, 200, 200),
}


def draw_table(image: np.ndarray, cal: TableCalibration | None, scale: float = 1.0) -> None:
    """Markers and regions as the camera sees them (the pre-game check, the calibration view)."""
    from companion import layout

    if cal is None:
        cv2.putText(
            image,
            "markers not found",
            (10, 30),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.8,
            (0, 0, 255),
            2,
            cv2.LINE_AA,
        )
        return
    for region in layout.REGIONS:
        r = region.rect
        pts = cal.to_image(np.array([[r.x0, r.y0], [r.x1, r.y0], [r.x1, r.y1], [r.x0, r.y1]]))
        poly = np.round(pts * scale).astype(np.int32)
        cv2.polylines(image, [poly], True, REGION_COLOURS[region.id], 2, cv2.LINE_AA)
        cv2.putText(
            image,
            region.label,
            tuple(poly[0] + [4, 16]),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.5,
            REGION_COLOURS[region.id],
            1,
            cv2.LINE_AA,
        )
    for r in layout.marker_squares().values():
        pts = cal.to_image(np.array([[r.x0, r.y0], [r.x1, r.y0], [r.x1, r.y1], [r.x0, r.y1]]))
        cv2.polylines(image, [np.round(pts * scale).astype(np.int32)], True, (0, 255, 0), 2)
