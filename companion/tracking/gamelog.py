"""The durable game log: every event of every game, on disk the moment it is known.

Why SQLite in WAL mode with `synchronous=FULL`: each append is one transaction whose WAL frame
is fsync'ed before `append()` returns, so a power cut at any moment keeps every event that was
acknowledged and never leaves half a row (SQLite rolls an unfinished transaction back on the
next open). The follower appends, the UI may read at the same time, and `companion run --resume`
replays `events(last_unfinished_game().id)` to rebuild the game.

Where it lives: `--log PATH` on the command line, else `$RAMEN_COMPANION_LOG`, else
`$XDG_DATA_HOME/ramen-companion/games.sqlite` (`~/.local/share/...` by default); see
`default_log_path()`.

One follower at a time: `LogLock.acquire(path, holder)` takes an exclusive lock on
`<log>.lock` (fcntl), so a second `companion run` on the same log refuses in one line naming
the first one instead of interleaving two games. Readers need no lock.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

from companion.errors import BadInputError, CompanionError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one companion per log is then up to you
    fcntl = None  # type: ignore[assignment]

ENV_VAR: Final = "RAMEN_COMPANION_LOG"
SCHEMA_VERSION: Final = 1
CORRECTION_PREFIX: Final = "correction_"

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS games (
    id       TEXT PRIMARY KEY,
    mode     TEXT NOT NULL,
    players  TEXT NOT NULL,          -- JSON list of names
    started  REAL NOT NULL,          -- wall clock, seconds since the epoch
    finished REAL,                   -- NULL while the game is unfinished
    source   TEXT NOT NULL,          -- camera source spec the game was watched from
    final    TEXT                    -- JSON, e.g. the game_over scores
);
CREATE TABLE IF NOT EXISTS events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id  TEXT NOT NULL REFERENCES games(id),
    t        REAL NOT NULL,          -- seconds on the game's source clock (the event's "t")
    type     TEXT NOT NULL,
    payload  TEXT NOT NULL,          -- JSON object: the event minus "t" and "type"
    created  REAL NOT NULL           -- wall clock when it was logged
);
CREATE INDEX IF NOT EXISTS events_by_game ON events(game_id, seq);
"""


class GameLogError(CompanionError, OSError):
    """The game log cannot be opened, read or written (corrupt file, wrong file, disk error)."""


class GameLogBusyError(GameLogError):
    """Another companion is following games into this log."""


def default_log_path(env: Mapping[str, str] | None = None) -> Path:
    """`$RAMEN_COMPANION_LOG`, else `$XDG_DATA_HOME/ramen-companion/games.sqlite`
    (XDG_DATA_HOME defaults to ~/.local/share). A `--log` option overrides both."""
    env = os.environ if env is None else env
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser()
    data = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "ramen-companion" / "games.sqlite"


@dataclass(frozen=True, slots=True)
class GameInfo:
    """One game's row: what `--resume` needs to set the follower up again."""

    id: str
    mode: str
    """`solo`, `2p`, `3p`, `4p`."""
    players: tuple[str, ...]
    started: float
    """Wall clock (epoch seconds)."""
    finished: float | None
    """None while the game is unfinished."""
    source: str
    """Camera source spec, e.g. `picamera` or a recording's path."""
    final: dict[str, Any] | None = None
    """What finish() recorded (e.g. the game_over scores)."""
    events: int = 0
    """How many events are logged for it."""


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One logged event with its bookkeeping, for corrections that point at an earlier event."""

    seq: int
    """Log-wide, strictly increasing: the order of events."""
    game_id: str
    created: float
    """Wall clock when it was logged."""
    event: dict[str, Any]
    """The event as appended (`t`, `type`, fields), after a JSON round trip."""


class GameLog:
    """Append-only event log of games in one SQLite file; thread-safe, a context manager.

    Open with `GameLog.open(path)`. Every method raises GameLogError (one line) on a corrupt or
    unwritable file and BadInputError on a malformed event or unknown game id.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        """Use GameLog.open(path)."""
        self._conn = conn
        self.path = path
        self._lock = threading.Lock()

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path | None = None) -> GameLog:
        """Open or create the log at `path` (default: default_log_path())."""
        path = default_log_path() if path is None else Path(path).expanduser()
        if path.is_dir():
            raise GameLogError(f"game log {path} is a folder, not a file")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise GameLogError(f"cannot create the folder of game log {path}: {exc}") from exc
        try:
            conn = sqlite3.connect(
                str(path), isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except sqlite3.Error as exc:
            raise GameLogError(f"cannot open game log {path}: {exc}") from exc
        try:
            cls._prepare(conn, path)
        except sqlite3.Error as exc:
            conn.close()
            raise GameLogError(f"game log {path} is unreadable ({exc})") from exc
        except GameLogError:
            conn.close()
            raise
        return cls(conn, path)

    @staticmethod
    def _prepare(conn: sqlite3.Connection, path: Path) -> None:
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise GameLogError(f"game log {path} is damaged ({check[0] if check else 'empty'})")
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise GameLogError(f"game log {path}: cannot use WAL journal (got {mode})")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        tables.discard("sqlite_sequence")
        if version == 0 and not tables:
            conn.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
        elif version != SCHEMA_VERSION or not {"games", "events"} <= tables:
            raise GameLogError(f"{path} is not a game log of this version (schema {version})")

    # -- writing ------------------------------------------------------------------------------

    def new_game(self, mode: str, players: Sequence[str], source: str) -> str:
        """Start a game; returns its id (`YYYYmmdd-HHMMSS-xxxxxx`, sortable by start)."""
        if isinstance(players, str):
            raise BadInputError(f"players must be a list of names, got {players!r}")
        started = time.time()
        game_id = time.strftime("%Y%m%d-%H%M%S", time.localtime(started))
        game_id += f"-{secrets.token_hex(3)}"
        self._write(
            "INSERT INTO games (id, mode, players, started, source) VALUES (?, ?, ?, ?, ?)",
            (game_id, mode, json.dumps(list(players)), started, source),
        )
        return game_id

    def append(self, game_id: str, event: Mapping[str, Any]) -> int:
        """Log one event (`{"t": seconds, "type": ..., **fields}`) durably; returns its seq.

        When this returns, the event is on disk (fsync'ed). Corrections are ordinary events
        whose type starts with `correction_` (see append_correction)."""
        t, kind, payload = _split_event(event)
        with self._lock:
            try:
                cur = self._conn.execute(
                    "INSERT INTO events (game_id, t, type, payload, created) "
                    "SELECT id, ?, ?, ?, ? FROM games WHERE id = ?",
                    (t, kind, payload, time.time(), game_id),
                )
            except sqlite3.Error as exc:
                raise GameLogError(f"cannot write to game log {self.path}: {exc}") from exc
        if cur.rowcount != 1:
            raise BadInputError(f"unknown game id {game_id!r} in {self.path}")
        assert cur.lastrowid is not None
        return cur.lastrowid

    def append_many(self, game_id: str, events: Sequence[Mapping[str, Any]]) -> list[int]:
        """Log several events in one transaction: after a power cut either all of them are in
        the log or none is (one settled change of the table and what it made the game say, so
        a resumed game never finds a step half written). Returns their seqs."""
        rows = [_split_event(event) for event in events]
        if not rows:
            return []
        seqs: list[int] = []
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    for t, kind, payload in rows:
                        cur = self._conn.execute(
                            "INSERT INTO events (game_id, t, type, payload, created) "
                            "SELECT id, ?, ?, ?, ? FROM games WHERE id = ?",
                            (t, kind, payload, time.time(), game_id),
                        )
                        if cur.rowcount != 1:
                            raise BadInputError(f"unknown game id {game_id!r} in {self.path}")
                        assert cur.lastrowid is not None
                        seqs.append(cur.lastrowid)
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise GameLogError(f"cannot write to game log {self.path}: {exc}") from exc
        return seqs

    def append_correction(self, game_id: str, kind: str, t: float, **fields: Any) -> int:
        """Log a person's correction, type `correction_<kind>`: e.g.
        `append_correction(gid, "card", t, seq=41, card="nori-4")` or `("undo", t, seq=57)`."""
        if not kind or kind.startswith(CORRECTION_PREFIX):
            raise BadInputError(f"correction kind {kind!r}: give e.g. 'card', not the prefix")
        return self.append(game_id, {"t": t, "type": CORRECTION_PREFIX + kind, **fields})

    def finish(self, game_id: str, final: Mapping[str, Any] | None = None) -> None:
        """Mark the game over (it is no longer offered for --resume), storing e.g. the scores."""
        cur = self._write(
            "UPDATE games SET finished = ?, final = ? WHERE id = ?",
            (time.time(), _dumps(dict(final or {})), game_id),
        )
        if cur.rowcount != 1:
            raise BadInputError(f"unknown game id {game_id!r} in {self.path}")

    # -- reading ------------------------------------------------------------------------------

    def events(self, game_id: str) -> list[dict[str, Any]]:
        """The game's events in logged order, each `{"t", "type", **fields}` as appended."""
        return [entry.event for entry in self.entries(game_id)]

    def entries(self, game_id: str) -> list[LogEntry]:
        """Like events() with each event's seq and wall-clock time."""
        rows = self._read(
            "SELECT seq, game_id, t, type, payload, created FROM events "
            "WHERE game_id = ? ORDER BY seq",
            (game_id,),
        )
        out = []
        for seq, gid, t, kind, payload, created in rows:
            fields = self._loads(payload, f"event {seq}", dict)
            if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
                raise GameLogError(f"game log {self.path}: event {seq} has no time ({t!r})")
            out.append(LogEntry(seq, gid, created, {"t": t, "type": str(kind), **fields}))
        return out

    def game(self, game_id: str) -> GameInfo:
        games = self._games("WHERE g.id = ?", (game_id,))
        if not games:
            raise BadInputError(f"unknown game id {game_id!r} in {self.path}")
        return games[0]

    def games(self) -> list[GameInfo]:
        """Every game, oldest first."""
        return self._games("", ())

    def last_unfinished_game(self) -> GameInfo | None:
        """The most recently started game not finished: what `companion run --resume` continues.
        (`companion run` makes a game's entry at its first event, so a start that fails leaves
        no empty game to be picked here.)"""
        games = self._games("WHERE g.finished IS NULL", ())
        return games[-1] if games else None

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Raw rows of a read-only SELECT, for reports that must survive a malformed row (the
        history lists a damaged game instead of failing on it); GameLogError on failure."""
        if not sql.lstrip().upper().startswith("SELECT"):
            raise BadInputError(f"query() only reads: {sql[:40]!r}")
        return self._read(sql, params)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------

    def _games(self, where: str, params: tuple[Any, ...]) -> list[GameInfo]:
        rows = self._read(
            "SELECT g.id, g.mode, g.players, g.started, g.finished, g.source, g.final, "
            "(SELECT COUNT(*) FROM events e WHERE e.game_id = g.id) "
            f"FROM games g {where} ORDER BY g.started, g.rowid",
            params,
        )
        out = []
        for gid, mode, players, started, finished, source, final, count in rows:
            names = self._loads(players, f"game {gid}'s players", list)
            if not all(isinstance(n, str) for n in names):
                raise GameLogError(f"game log {self.path}: game {gid}'s players are not names")
            result = self._loads(final, f"game {gid}'s result", dict) if final is not None else None
            out.append(GameInfo(gid, mode, tuple(names), started, finished, source, result, count))
        return out

    def _loads(self, text: object, what: str, kind: type) -> Any:
        """A JSON column of a row, or GameLogError saying the row is damaged."""
        try:
            value = json.loads(text) if isinstance(text, str | bytes) else None
        except (ValueError, RecursionError) as exc:
            raise GameLogError(f"game log {self.path}: {what} is damaged ({exc})") from None
        if not isinstance(value, kind):
            raise GameLogError(
                f"game log {self.path}: {what} is damaged (not a JSON {kind.__name__})"
            )
        return value

    def _write(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        with self._lock:
            try:
                return self._conn.execute(sql, params)
            except sqlite3.Error as exc:
                raise GameLogError(f"cannot write to game log {self.path}: {exc}") from exc

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise GameLogError(f"cannot read game log {self.path}: {exc}") from exc


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise BadInputError(f"event is not plain JSON data: {exc}") from exc


def _split_event(event: Mapping[str, Any]) -> tuple[float, str, str]:
    """Validate an event and split it into its columns (t, type, JSON of the other fields)."""
    if not isinstance(event, Mapping):
        raise BadInputError(f"an event is a dict with 't' and 'type', got {event!r}")
    t, kind = event.get("t"), event.get("type")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise BadInputError(f"event 't' must be a finite number of seconds: {event!r}")
    if not isinstance(kind, str) or not kind:
        raise BadInputError(f"event 'type' must be a non-empty string: {event!r}")
    payload = {k: v for k, v in event.items() if k not in ("t", "type")}
    return float(t), kind, _dumps(payload)


def lock_path(log_path: str | Path) -> Path:
    """The lock file beside a game log: `games.sqlite` -> `games.sqlite.lock`."""
    path = Path(log_path)
    return path.with_name(path.name + ".lock")


class LogLock:
    """An exclusive, advisory lock on a game log for the process that follows games into it.

    The lock file holds who took it (pid, command, since when), for the refusal message; the
    kernel drops the lock when the process dies (kill -9, power cut), so a stale file never
    blocks. A context manager; `release()` removes the file.
    """

    def __init__(self, path: Path, fd: int | None) -> None:
        """Use LogLock.acquire()."""
        self.path = path
        self._fd = fd

    @classmethod
    def acquire(cls, log_path: str | Path, holder: str) -> LogLock:
        """Lock `log_path` for `holder` (e.g. `companion run --source picamera`) or raise
        GameLogBusyError saying who holds it."""
        path = lock_path(log_path)
        if fcntl is None:
            return cls(path, None)
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise GameLogError(f"cannot create the lock file {path}: {exc.strerror}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                who = _holder(fd)
                os.close(fd)
                raise GameLogBusyError(
                    f"game log {Path(log_path)} is in use by {who}: stop it first, or use "
                    "another --log"
                ) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the previous holder removed the file as we opened it: again
        info = {"pid": os.getpid(), "command": holder, "since": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        return cls(path, fd)

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _holder(fd: int) -> str:
    """`another companion (pid 4242, `companion run --source picamera`, since 14:02:11)`."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        pid, command, since = int(info["pid"]), str(info["command"]), float(info["since"])
        clock = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since))
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return "another companion"
    command = " ".join(command.split())[:200]
    return f"another companion (pid {pid}, `{command}`, since {clock})"
