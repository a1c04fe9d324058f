"""What the Pi installs is enough: the play path runs without torch, torchvision and ultralytics
(the `train` extra), and the Pi's install pins every package it brings."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"
TRAIN_ONLY = ("torch", "torchvision", "ultralytics")

BLOCK = (
    "import sys\n"
    f"for name in {TRAIN_ONLY!r}:\n"
    "    sys.modules[name] = None  # importing it now raises ImportError\n"
    "from companion.cli import main\n"
    "code = main(sys.argv[1:])\n"
    f"loaded = [m for m in {TRAIN_ONLY!r} if sys.modules.get(m) is not None]\n"
    "print('LOADED', loaded, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _without_training_packages(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK, *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower().replace("_", "-")


def test_training_packages_are_an_extra_and_dev_installs_them() -> None:
    project = _pyproject()["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    extras = project["optional-dependencies"]
    assert not runtime & set(TRAIN_ONLY)
    assert set(TRAIN_ONLY) <= {_name(r) for r in extras["train"]}
    assert not {_name(r) for r in extras["pi"]} & set(TRAIN_ONLY)
    dev = (ROOT / ".ci" / "dev").read_text(encoding="utf-8")
    assert re.search(r'pip install .*-e "\.\[[^]]*\btrain\b[^]]*\]"', dev), "CI installs train"
    install = (ROOT / "hardware" / "pi" / "install.sh").read_text(encoding="utf-8")
    assert "[pi]" in install and "train" not in re.findall(r"\[([^]]*)\]\"", install)[0]


def test_the_pi_install_is_pinned() -> None:
    """Every runtime and pi dependency has an exact version in hardware/pi/constraints.txt, and
    install.sh installs with it (and no longer upgrades pip)."""
    pins = {}
    for line in (ROOT / "hardware" / "pi" / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pins[_name(line)] = line
    project = _pyproject()["project"]
    wanted = {_name(r) for r in [*project["dependencies"], *project["optional-dependencies"]["pi"]]}
    wanted -= {"picamera2"}  # from Raspberry Pi OS (python3-picamera2), not from pip
    missing = sorted(n for n in wanted if "==" not in pins.get(n, ""))
    assert not missing, f"not pinned: {missing}"
    assert not set(TRAIN_ONLY) & set(pins)
    install = (ROOT / "hardware" / "pi" / "install.sh").read_text(encoding="utf-8")
    assert "--upgrade pip" not in install
    for line in install.splitlines():
        if re.search(r"pip install (?!--help)", line) and "simplejpeg" not in line:
            assert "-c " in line or "--constraint" in line, line


@pytest.mark.slow
def test_detect_and_run_work_without_training_packages(tmp_path: Path) -> None:
    frames = sorted(GOLDEN.glob("table-*.jpg"))[:2]
    proc = _without_training_packages("detect", str(frames[0]), "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.splitlines()[0])["cards"]
    assert "LOADED []" in proc.stderr
    folder = tmp_path / "frames"
    folder.mkdir()
    for i, f in enumerate(frames):
        (folder / f"{i:03d}.jpg").write_bytes(f.read_bytes())
    proc = _without_training_packages(
        "run", "--source", str(folder), "--headless", "--log", str(tmp_path / "g.sqlite")
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "LOADED []" in proc.stderr
    assert "Traceback" not in proc.stderr
