"""Settings kept between runs: a small JSON file, read at start, written on Apply.

Where it lives: `$RAMEN_COMPANION_SETTINGS`, else `$XDG_CONFIG_HOME/ramen-companion/settings.json`
(`~/.config/...` by default, beside the kiosk's Kivy config). The camera source is not kept: it
is the session's own (`companion run --source`), shown on screen for information. A missing,
unreadable or malformed file gives the defaults (and a warning in the log): a settings file must
never stop the kiosk. Pure Python: no Kivy.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Final

from companion.ui.controller import Settings
from companion.ui.i18n import LANGUAGES

ENV_VAR: Final = "RAMEN_COMPANION_SETTINGS"
KEPT: Final = ("language", "sound", "voice", "calibration_view", "fullscreen", "hide_cursor")
"""The Settings fields written to the file."""
MAX_BYTES: Final = 64 * 1024
"""A settings file is a few hundred bytes; anything bigger is not ours."""

log = logging.getLogger(__name__)


def default_settings_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]).expanduser()
    config = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config).expanduser() / "ramen-companion" / "settings.json"


class SettingsStore:
    """Loads and saves the kept Settings fields at `path` (default: default_settings_path())."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = default_settings_path() if path is None else Path(path).expanduser()

    def load(self, base: Settings | None = None) -> Settings:
        """`base` (default Settings()) with the saved fields over it."""
        base = base or Settings()
        try:
            if not self.path.exists():
                return base
            if self.path.stat().st_size > MAX_BYTES:
                raise ValueError(f"larger than {MAX_BYTES} bytes")
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log.warning("settings %s ignored (%s): using the defaults", self.path, exc)
            return base
        if not isinstance(data, dict):
            log.warning("settings %s ignored (not a JSON object): using the defaults", self.path)
            return base
        return replace(base, **_valid(data))

    def save(self, settings: Settings) -> None:
        """Write the kept fields atomically (a power cut leaves the old file or the new one)."""
        data = {k: getattr(settings, k) for k in KEPT}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".settings-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, indent=2)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:  # a read-only or full disk: the settings apply, unsaved
            log.warning("settings not saved to %s: %s", self.path, exc)


def _valid(data: dict[str, Any]) -> dict[str, Any]:
    """The known, well-typed fields of a loaded file; anything else is dropped with a warning."""
    types = {f.name: f.type for f in fields(Settings)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in KEPT:
            continue
        if key == "language":
            ok = value in LANGUAGES
        else:
            ok = isinstance(value, bool) and types[key] in (bool, "bool")
        if ok:
            out[key] = value
        else:
            log.warning("settings: ignoring %s=%r", key, value)
    return out
