"""Where the companion's own log lines go: stderr (the journal, under systemd), one per line.

Every module logs through `logging.getLogger(__name__)`; `configure()` is called by the
long-running commands (`run`, `demo`). The level is `$RAMEN_COMPANION_LOG_LEVEL` (the kiosk unit
sets INFO), WARNING by default so a headless run prints its events and little else.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Final

ENV_VAR: Final = "RAMEN_COMPANION_LOG_LEVEL"
FORMAT: Final = "%(levelname)s %(name)s: %(message)s"


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Ours, so configure() can tell it is already installed."""


def configure(env: Mapping[str, str] | None = None) -> None:
    env = os.environ if env is None else env
    name = env.get(ENV_VAR, "WARNING").strip().upper()
    level = logging.getLevelName(name)
    if not isinstance(level, int):
        level = logging.WARNING
    logger = logging.getLogger("companion")
    logger.setLevel(level)
    if not any(isinstance(h, _Handler) for h in logger.handlers):
        handler = _Handler()
        handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(handler)
    logger.propagate = False  # Kivy may own the root logger: never print a line twice
