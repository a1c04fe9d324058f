"""The Pi kiosk files: systemd unit, Kivy touchscreen config, install script.

None of this can run here (no Pi, no camera), so the tests check what would break the kiosk on
the device: the unit as install.sh renders it (systemd's own verifier when present), the Kivy
settings that stop double touches and hide the cursor, and shellcheck on the script.
"""

from __future__ import annotations

import configparser
import importlib.util
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PI = ROOT / "hardware" / "pi"
INSTALL = PI / "install.sh"
UNIT_TEMPLATE = PI / "ramen-companion.service"
KIVY_INI = PI / "kivy_config.ini"
VENV = Path(sys.prefix)
"""The venv running the tests stands in for the Pi's venv: its bin/companion exists."""


def render_unit() -> str:
    """The unit exactly as install.sh would install it, for the current user."""
    out = subprocess.run(
        ["bash", str(INSTALL), "--print-unit"],
        env={"PATH": "/usr/bin:/bin", "RAMEN_VENV": str(VENV)},
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return out.stdout


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """Sections -> (key, value) pairs in order; systemd allows repeated keys (Environment=)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, f"key outside a section: {line!r}"
        key, sep, value = line.partition("=")
        assert sep, f"not a key=value line: {line!r}"
        current.append((key.strip(), value.strip()))
    return sections


def values(unit: dict[str, list[tuple[str, str]]], section: str, key: str) -> list[str]:
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit: dict[str, list[tuple[str, str]]], section: str, key: str) -> str:
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= appears {len(found)} times"
    return found[0]


def environment(unit: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for value in values(unit, "Service", "Environment"):
        for item in shlex.split(value):
            name, _, val = item.partition("=")
            env[name] = val
    return env


@pytest.fixture(scope="module")
def unit_text() -> str:
    return render_unit()


@pytest.fixture(scope="module")
def unit(unit_text: str) -> dict[str, list[tuple[str, str]]]:
    return parse_unit(unit_text)


# ---- systemd unit ----


def test_template_placeholders_are_all_filled(unit_text: str) -> None:
    template = UNIT_TEMPLATE.read_text()
    assert set(re.findall(r"@[A-Z_]+@", template)) == {
        "@USER@",
        "@UID@",
        "@HOME@",
        "@APP_DIR@",
        "@VENV@",
    }
    assert re.findall(r"@[A-Z_]+@", unit_text) == []


def test_unit_starts_the_kiosk_on_the_pi_camera(unit) -> None:
    argv = shlex.split(one(unit, "Service", "ExecStart"))
    assert argv[0] == str(VENV / "bin" / "companion")
    assert argv[1:] == ["run", "--source", "picamera", "--fullscreen", "--resume-if-any"]
    assert one(unit, "Service", "WorkingDirectory") == str(ROOT)


def test_unit_command_line_is_one_the_cli_accepts_as_a_resuming_fullscreen_kiosk(unit) -> None:
    from companion.cli import build_parser

    args = build_parser().parse_args(shlex.split(one(unit, "Service", "ExecStart"))[1:])
    assert (args.command, args.source) == ("run", "picamera")
    assert args.fullscreen and args.resume_if_any and not args.resume
    assert not args.headless


def test_unit_is_hardened_and_may_write_only_the_log_and_settings(unit) -> None:
    from companion.tracking.gamelog import default_log_path
    from companion.ui.settings_store import default_settings_path

    service = dict(unit["Service"])
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "PrivateTmp": "yes",
        "ProtectKernelTunables": "yes",
        "ProtectKernelModules": "yes",
        "ProtectControlGroups": "yes",
        "RestrictSUIDSGID": "yes",
        "IPAddressDeny": "any",
    }.items():
        assert service.get(key) == value, key
    assert "AF_INET" not in service["RestrictAddressFamilies"]
    assert "PrivateDevices" not in service, "the camera, GPU and touchscreen are devices"
    writable = [Path(w.lstrip("-")) for w in one(unit, "Service", "ReadWritePaths").split()]
    home = {"HOME": pwd.getpwuid(os.getuid()).pw_dir}
    for needed in (default_log_path(home), default_settings_path(home)):
        assert any(needed.is_relative_to(w) for w in writable), needed
    assert "RAMEN_COMPANION_LOG" not in environment(unit)  # the log is where the paths say
    # PrivateTmp hides /tmp: the X socket that ExecStartPre waits for must be bound back in
    bound = [Path(b.lstrip("-").split(":")[0]) for b in one(unit, "Service", "BindPaths").split()]
    x_socket = Path(re.search(r"-S (\S+)", one(unit, "Service", "ExecStartPre")).group(1))
    assert any(x_socket.is_relative_to(b) for b in bound), (x_socket, bound)


def test_unit_runs_as_the_desktop_user_and_restarts_on_failure(unit) -> None:
    assert one(unit, "Service", "User") == pwd.getpwuid(os.getuid()).pw_name
    assert one(unit, "Service", "Restart") == "on-failure"
    restart_sec = one(unit, "Service", "RestartSec")
    assert 1 <= int(restart_sec.removesuffix("s")) <= 30
    # a crash loop must not be able to spin forever
    assert int(one(unit, "Unit", "StartLimitBurst")) > 1


def test_unit_starts_with_the_desktop_at_boot(unit) -> None:
    assert one(unit, "Install", "WantedBy") == "graphical.target"
    assert "graphical.target" in one(unit, "Unit", "After").split()


def test_unit_gives_kivy_its_display_and_config(unit) -> None:
    env = environment(unit)
    assert env["DISPLAY"] == ":0"
    assert env["KIVY_NO_ARGS"] == "1", "Kivy would swallow --source picamera"
    assert env["KIVY_HOME"].endswith("/.config/ramen-companion/kivy")
    assert env["XDG_RUNTIME_DIR"].startswith("/run/user/")
    assert env["YOLO_OFFLINE"] == "1"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_accepts_the_rendered_unit(unit_text: str, tmp_path: Path) -> None:
    path = tmp_path / "ramen-companion.service"
    path.write_text(unit_text)
    out = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    complaints = [
        line for line in (out.stdout + out.stderr).splitlines() if "ramen-companion" in line
    ]
    assert out.returncode == 0 and not complaints, out.stdout + out.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_catches_a_broken_unit(unit_text: str, tmp_path: Path) -> None:
    """The check above can fail: a unit whose program is missing is rejected."""
    path = tmp_path / "ramen-companion.service"
    path.write_text(unit_text.replace(str(VENV / "bin" / "companion"), "/nonexistent/companion"))
    out = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode != 0


# ---- Kivy configuration ----


def kivy_ini() -> configparser.ConfigParser:
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    cp.read_string(KIVY_INI.read_text())
    return cp


def installed_kivy_config_version() -> int:
    spec = importlib.util.find_spec("kivy")
    assert spec is not None and spec.origin is not None
    source = (Path(spec.origin).parent / "config.py").read_text()
    match = re.search(r"^KIVY_CONFIG_VERSION = (\d+)", source, re.MULTILINE)
    assert match
    return int(match.group(1))


def test_kivy_config_is_fullscreen_without_a_cursor() -> None:
    cp = kivy_ini()
    assert cp["graphics"]["fullscreen"] == "auto"
    assert cp["graphics"]["show_cursor"] == "0"
    assert cp["kivy"]["exit_on_escape"] == "0", "a clean exit is not restarted by systemd"


def test_kivy_config_reads_the_touchscreen_through_mtdev_once() -> None:
    inputs = dict(kivy_ini()["input"])
    probes = [v for v in inputs.values() if v.split(",")[0] == "probesysfs"]
    assert probes == ["probesysfs,provider=mtdev"], inputs
    mouse = inputs["mouse"].split(",")
    assert mouse[0] == "mouse"
    assert {"disable_multitouch", "disable_on_activity"} <= set(mouse[1:])


def test_kivy_config_version_is_current_so_kivy_adds_no_default_probe() -> None:
    """An older config_version makes Kivy 'upgrade' the file and add its default
    `%(name)s = probesysfs` line back: every touch would then arrive twice."""
    assert int(kivy_ini()["kivy"]["config_version"]) == installed_kivy_config_version()


def test_kivy_understands_the_mouse_tokens() -> None:
    from kivy.input.providers.mouse import MouseMotionEventProvider

    provider_id, _, args = kivy_ini()["input"]["mouse"].partition(",")
    provider = MouseMotionEventProvider(provider_id, args)
    assert provider.disable_multitouch
    assert provider.disable_on_activity


# ---- install script ----


def test_install_script_refuses_unknown_options() -> None:
    out = subprocess.run(
        ["bash", str(INSTALL), "--bogus"], capture_output=True, text=True, timeout=30
    )
    assert out.returncode != 0
    assert "unknown option --bogus" in out.stderr


def test_install_script_help_lists_its_options() -> None:
    out = subprocess.run(
        ["bash", str(INSTALL), "--help"], capture_output=True, text=True, timeout=30, check=True
    )
    assert "--print-unit" in out.stdout and "--no-service" in out.stdout
    assert "set -euo" not in out.stdout


def test_install_script_switches_screen_blanking_off_and_makes_the_writable_dirs() -> None:
    text = INSTALL.read_text()
    body = text[text.index("install_service() {") :]
    assert "disable_screen_blanking" in body and "make_writable_dirs" in body
    assert "raspi-config nonint do_blanking 1" in text
    assert '"$RUN_HOME/.local/share/ramen-companion" "$CONFIG_DIR"' in text


def test_install_script_installs_what_the_pi_needs() -> None:
    text = INSTALL.read_text()
    for package in ("python3-picamera2", "python3-venv", "libmtdev1", "espeak-ng", "sqlite3"):
        assert re.search(rf"^\s+{re.escape(package)}\b", text, re.MULTILINE), package
    assert "--system-site-packages" in text
    assert '"${APP_DIR}[pi]"' in text


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_shellcheck_passes_on_the_install_script() -> None:
    out = subprocess.run(
        ["shellcheck", "--shell=bash", "--severity=style", str(INSTALL)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout
