"""The ready chime is a real, audible WAV; the voice is optional and never blocks or raises."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from companion.ui import sound


def test_chime_is_a_short_audible_mono_wav(tmp_path: Path) -> None:
    path = sound.write_chime(tmp_path / "c.wav")
    with wave.open(str(path)) as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22050)
        seconds = w.getnframes() / w.getframerate()
        samples = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    assert 0.3 < seconds < 1.5
    peak = int(np.abs(samples).max())
    assert 8000 < peak < 32767  # loud enough, never clipped
    assert abs(int(samples[-1])) < 200  # fades out: no click at the end


def test_chime_is_written_once_into_kivy_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KIVY_HOME", str(tmp_path))
    first = sound.chime_path()
    assert first == tmp_path / "sounds" / sound.CHIME_NAME and first.exists()
    stamp = first.stat().st_mtime_ns
    assert sound.chime_path().stat().st_mtime_ns == stamp


def test_voice_is_silent_without_espeak(monkeypatch) -> None:
    monkeypatch.setattr(sound.shutil, "which", lambda name: None)
    assert sound.espeak_command("Bowl 2 is ready to serve", "en") is None
    assert not sound.Speaker(voice=True).say("Bowl 2 is ready to serve", "en")


@pytest.mark.parametrize(("lang", "voice"), [("en", "en"), ("fr", "fr")])
def test_voice_uses_espeak_in_the_game_language(monkeypatch, lang: str, voice: str) -> None:
    monkeypatch.setattr(sound.shutil, "which", lambda name: "/usr/bin/espeak-ng")
    cmd = sound.espeak_command("Le bol 2 est prêt à servir", lang)
    assert cmd is not None and cmd[:3] == ["/usr/bin/espeak-ng", "-v", voice]
    assert cmd[-1] == "Le bol 2 est prêt à servir"


def test_voice_starts_in_the_background_and_does_not_talk_over_itself(monkeypatch) -> None:
    started: list[list[str]] = []

    class FakeProc:
        def __init__(self, cmd: list[str], **_: object) -> None:
            started.append(cmd)

        def poll(self) -> None:
            return None  # still speaking

    monkeypatch.setattr(sound.shutil, "which", lambda name: "/usr/bin/espeak-ng")
    monkeypatch.setattr(sound.subprocess, "Popen", FakeProc)
    speaker = sound.Speaker(voice=True)
    assert speaker.say("one", "en")
    assert not speaker.say("two", "en")
    assert [c[-1] for c in started] == ["one"]


def test_switched_off_sound_and_voice_do_nothing(monkeypatch) -> None:
    monkeypatch.setattr(sound.shutil, "which", lambda name: "/usr/bin/espeak-ng")
    speaker = sound.Speaker(sound=False, voice=False)
    assert not speaker.chime() and not speaker.say("x", "en")
