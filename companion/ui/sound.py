"""The ready-bowl chime and spoken line. Both are optional comforts: a failure is silent on the
table (and said once in the log, so a kiosk without sound can be told why).

The chime is generated (numpy + wave) on first use into a cache folder rather than shipped,
so no binary asset lives in the repository. The voice is `espeak-ng` when installed (Raspberry
Pi OS has it in apt), started without waiting so the UI thread never blocks.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import wave
from pathlib import Path
from typing import Any, Final

import numpy as np

SAMPLE_RATE: Final = 22050
CHIME_NAME: Final = "ready-chime.wav"

log = logging.getLogger(__name__)


def cache_dir() -> Path:
    """KIVY_HOME when set (the checkout's .kivy in tests), else ~/.cache/ramen-companion."""
    home = os.environ.get("KIVY_HOME")
    base = Path(home) if home else Path.home() / ".cache" / "ramen-companion"
    return base / "sounds"


def chime_samples(rate: int = SAMPLE_RATE) -> np.ndarray:
    """Two bell-like notes (E6 then A6, with a soft octave), 0.7 s, int16 mono."""
    out = np.zeros(int(rate * 0.7), dtype=np.float64)
    for start, freq in ((0.0, 1318.5), (0.16, 1760.0)):
        n = int(rate * 0.5)
        t = np.arange(n) / rate
        env = np.exp(-t * 7.0) * np.minimum(1.0, t * 200.0)  # 5 ms attack, bell decay
        note = (np.sin(2 * np.pi * freq * t) + 0.3 * np.sin(4 * np.pi * freq * t)) * env
        i = int(rate * start)
        out[i : i + n] += note[: len(out) - i]
    out *= 0.5 / max(1e-9, float(np.abs(out).max()))
    return (out * 32767).astype(np.int16)


def write_chime(path: Path, rate: int = SAMPLE_RATE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(chime_samples(rate).tobytes())
    return path


def chime_path() -> Path:
    """The chime WAV, written on first use."""
    path = cache_dir() / CHIME_NAME
    if not path.exists():
        write_chime(path)
    return path


def espeak_command(text: str, lang: str) -> list[str] | None:
    """The espeak-ng command line for text, or None when espeak-ng is not installed."""
    exe = shutil.which("espeak-ng")
    if exe is None:
        return None
    return [exe, "-v", "fr" if lang == "fr" else "en", "-s", "150", text]


class Speaker:
    """Chime and voice, each switchable; never raises."""

    def __init__(self, sound: bool = True, voice: bool = False) -> None:
        self.sound = sound
        self.voice = voice
        self._chime: Any = None
        self._warned = False
        self._loaded = False
        self._voice_proc: subprocess.Popen[bytes] | None = None

    def chime(self) -> bool:
        """Play the chime; True if a sound was started."""
        if not self.sound:
            return False
        try:
            if not self._loaded:
                self._loaded = True
                from kivy.core.audio import SoundLoader

                self._chime = SoundLoader.load(str(chime_path()))
                if self._chime is not None and not getattr(self._chime, "length", 1):
                    self._chime = None  # loaded without an audio device: nothing to play
            if self._chime is None:
                return False
            self._chime.stop()
            self._chime.play()
            return True
        except Exception as exc:  # no audio device, no provider: a silent table is fine
            if not self._warned:
                log.warning("no chime: %s", exc)
                self._warned = True
            return False

    def say(self, text: str, lang: str) -> bool:
        """Speak text in the background; True if espeak-ng was started."""
        if not self.voice:
            return False
        cmd = espeak_command(text, lang)
        if cmd is None:
            return False
        if self._voice_proc is not None and self._voice_proc.poll() is None:
            return False  # still speaking the last line: do not talk over it
        try:
            self._voice_proc = subprocess.Popen(
                cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
            return True
        except OSError as exc:
            log.warning("no voice: %s", exc)
            return False
