"""Checked reading of what a user hands the CLI: numbers, JSON and text files, output folders.

Everything here turns a bad input into a BadInputError (or an argparse error) that quotes it in
one line, before any work starts: a NaN `--dpi`, a JSON file nested 100 000 deep, a folder
where a file was expected, an output folder under a file.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from companion.errors import BadInputError

MAX_JSON_BYTES: Final = 64 * 1024 * 1024
"""Largest JSON input read (a game record is about 50 kB)."""
MAX_JSON_DEPTH: Final = 64
"""Deepest nesting accepted in a JSON input (the deepest real one, a record, is 5 levels)."""
SEED_MAX: Final = 2**32 - 1


def _bounds(lo: float | None, hi: float | None, above: bool = False) -> str:
    if above and lo == 0:
        low = "positive"
    elif above and lo is not None:
        low = f"above {lo:g}"
    else:
        low = ""
    if low:
        return low + (f" and at most {hi:g}" if hi is not None else "")
    if lo is not None and hi is not None:
        return f"from {lo:g} to {hi:g}"
    if lo is not None:
        return f"at least {lo:g}"
    if hi is not None:
        return f"at most {hi:g}"
    return "finite"


def real(
    lo: float | None = None, hi: float | None = None, *, above: bool = False
) -> Callable[[str], float]:
    """An argparse type: a finite float in [lo, hi] (in (lo, hi] with above=True)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if (
            not math.isfinite(value)
            or (lo is not None and (value <= lo if above else value < lo))
            or (hi is not None and value > hi)
        ):
            want = _bounds(lo, hi, above)
            what = "a number " if want.startswith(("from", "at ", "finite")) else ""
            raise argparse.ArgumentTypeError(f"must be {what}{want}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def integer(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            value: int | None = int(text.strip(), 10)
        except ValueError:
            value = None
        if value is None or (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(
                f"must be a whole number {_bounds(lo, hi)}, got {text!r}"
            )
        return value

    parse.__name__ = "integer"
    return parse


seed = integer(0, SEED_MAX)
"""An argparse type for --seed: 0 .. 2**32 - 1."""


def read_text(path: Path | str, what: str = "file") -> str:
    """The UTF-8 text of a file, or a BadInputError saying why it cannot be had."""
    p = Path(path)
    if p.is_dir():
        raise BadInputError(f"{what} {p} is a folder, not a file")
    try:
        size = p.stat().st_size
        if size > MAX_JSON_BYTES:
            raise BadInputError(
                f"{what} {p} is {size / 1e6:.0f} MB, more than the {MAX_JSON_BYTES >> 20} MiB limit"
            )
        data = p.read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"cannot read {what} {p}: not found") from None
    except OSError as exc:
        raise BadInputError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    return decode_text(data, f"{what} {p}")


def decode_text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(
            f"{where} is not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x})"
        ) from None


def parse_json(text: str, where: str) -> Any:
    """json.loads with a one-line error for malformed or absurdly nested input."""
    depth = _max_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise BadInputError(f"{where} is nested {depth} levels deep (at most {MAX_JSON_DEPTH})")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{where} is not valid JSON: {exc}") from None
    except RecursionError:  # pragma: no cover - _max_depth catches it first
        raise BadInputError(f"{where} is nested too deeply") from None


def read_json(path: Path | str, what: str = "file") -> Any:
    """Parsed JSON of a file (UTF-8, size- and depth-limited), or a one-line BadInputError."""
    return parse_json(read_text(path, what), f"{what} {path}")


def _max_depth(text: str) -> int:
    """Deepest bracket nesting of JSON text, ignoring brackets inside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def require_modules(modules: tuple[str, ...], doing: str, extras: str) -> None:
    """A one-line error naming what `doing` needs that playing does not (an optional extra),
    before the command imports it and fails with a traceback."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        names = " and ".join(f"the {e} extra" for e in extras.split(","))
        raise BadInputError(
            f"{doing} needs {' and '.join(missing)}, which playing does not: install "
            f"{names} (pip install -e '.[{extras}]')"
        )


def output_dir(path: Path | str, what: str = "output folder", create: bool = True) -> Path:
    """The folder to write into, created with its parents (with create=False only checked:
    its nearest existing ancestor must be a writable folder), or a BadInputError."""
    p = Path(path)
    existing = next((a for a in (p, *p.parents) if a.exists()), None)
    if existing is not None and not existing.is_dir():
        raise BadInputError(f"{what} {p}: {existing} is a file, not a folder")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise BadInputError(f"{what} {p}: {existing} is not writable")
    if create:
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInputError(f"cannot create {what} {p}: {exc.strerror or exc}") from None
    return p


def output_file(path: Path | str, what: str = "output file", create: bool = True) -> Path:
    """A file path whose folder exists (created unless create=False) and is writable; the file
    itself not a folder."""
    p = Path(path)
    if p.is_dir():
        raise BadInputError(f"{what} {p} is a folder, not a file")
    output_dir(p.parent, f"folder of {what} {p}", create)
    if p.exists() and not os.access(p, os.W_OK):
        raise BadInputError(f"{what} {p} is not writable")
    return p
