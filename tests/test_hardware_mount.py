"""The camera mount and the geometry the README states: both must agree with companion/layout.py.

A person sets the mount's parameters from the README; if the layout's camera height, lens or
play area change, these tests point at the figures that went stale.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from companion import layout

ROOT = Path(__file__).resolve().parents[1]
SCAD = ROOT / "hardware" / "mount" / "camera_mount.scad"
README = ROOT / "hardware" / "README.md"
STREAM_W = 2304
"""Camera Module 3 full-field 16:9 stream width (2x2 binned), the one the README figures use."""

DOCUMENTED = (
    "camera_height",
    "layout_scale",
    "hfov_deg",
    "tilt_deg",
    "tube_d",
    "clamp_wall",
    "clamp_width",
    "bolt_d",
    "neck_len",
    "standoff_h",
    "hole_dx",
    "hole_dy",
)
needs_openscad = pytest.mark.skipif(
    shutil.which("openscad") is None, reason="openscad not installed"
)


def scad_parameters() -> dict[str, tuple[str, str]]:
    """Top-level `name = value;` assignments -> (value, the comment that documents it)."""
    params: dict[str, tuple[str, str]] = {}
    lines = SCAD.read_text().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\w+)\s*=\s*([^;]+);\s*(?://\s*(.*))?$", line)
        if not m:
            continue
        name, value, trailing = m.group(1), m.group(2).strip(), m.group(3) or ""
        above = lines[i - 1].strip() if i else ""
        comment = trailing or (above[2:].strip() if above.startswith("//") else "")
        params[name] = (value, comment)
    return params


def coverage(height_mm: float) -> tuple[float, float]:
    w = 2 * height_mm * math.tan(math.radians(layout.CAMERA_HFOV_DEG / 2))
    return w, w * 9 / 16


def run_openscad(tmp_path: Path, *defines: str, out: str = "check.echo") -> str:
    args = ["openscad"]
    for d in defines:
        args += ["-D", d]
    target = tmp_path / out
    proc = subprocess.run(
        [*args, "-o", str(target), str(SCAD)], capture_output=True, text=True, timeout=300
    )
    text = proc.stdout + proc.stderr + (target.read_text() if target.suffix == ".echo" else "")
    assert target.exists() or "ERROR" in text, text
    return text


def test_scad_defines_and_documents_its_parameters() -> None:
    params = scad_parameters()
    for name in DOCUMENTED:
        assert name in params, f"{name} missing from {SCAD.name}"
        assert params[name][1], f"{name} has no comment saying what it is"


def test_scad_defaults_match_the_table_layout() -> None:
    params = scad_parameters()
    assert float(params["camera_height"][0]) == layout.DEFAULT_CAMERA_HEIGHT_MM
    assert float(params["hfov_deg"][0]) == layout.CAMERA_HFOV_DEG
    assert float(params["play_w"][0]) == layout.PLAY_W_MM
    assert float(params["play_h"][0]) == layout.PLAY_H_MM
    assert float(params["tilt_deg"][0]) == 0, "the layout assumes the camera looks straight down"
    # Camera Module 3 mounting holes (Raspberry Pi mechanical drawing)
    assert (float(params["hole_dx"][0]), float(params["hole_dy"][0])) == (21, 12.5)


def test_readme_states_the_coverage_and_resolution_of_the_layout() -> None:
    text = README.read_text()
    w, h = coverage(layout.DEFAULT_CAMERA_HEIGHT_MM)
    assert f"{w:.0f} x {h:.0f} mm" in text
    px_per_mm = STREAM_W / w
    assert f"{px_per_mm:.2f} px/mm" in text
    assert f"{layout.INDEX_STRIP_MM * px_per_mm:.0f} px" in text
    assert f"{layout.PLAY_W_MM:.0f} x {layout.PLAY_H_MM:.0f} mm" in text


@needs_openscad
def test_scad_reports_the_coverage_at_the_default_height(tmp_path: Path) -> None:
    text = run_openscad(tmp_path)
    w, h = coverage(layout.DEFAULT_CAMERA_HEIGHT_MM)
    assert f"covers {w:.0f} x {h:.0f} mm" in text
    assert "ERROR" not in text and "WARNING" not in text, text


@needs_openscad
def test_scad_refuses_a_camera_too_low_for_the_play_area(tmp_path: Path) -> None:
    text = run_openscad(tmp_path, "camera_height=500")
    assert "too low" in text and "raise it to at least" in text


@needs_openscad
def test_scad_scales_with_the_layout(tmp_path: Path) -> None:
    # scale 1.2 needs the camera at 1.2 x 700 mm; 700 mm alone is too low for it
    assert "too low" in run_openscad(tmp_path, "layout_scale=1.2")
    text = run_openscad(tmp_path, "layout_scale=1.2", "camera_height=840")
    assert "too low" not in text and "ERROR" not in text


@needs_openscad
@pytest.mark.slow
@pytest.mark.parametrize("tilt", [0, 20])
def test_scad_renders_one_printable_solid(tmp_path: Path, tilt: int) -> None:
    text = run_openscad(tmp_path, f"tilt_deg={tilt}", out="mount.stl")
    stl = tmp_path / "mount.stl"
    assert stl.stat().st_size > 10_000, text
    assert "Simple:        yes" in text, "the mesh is not manifold"
    # CGAL counts the outside as one volume: 2 means exactly one solid piece
    assert re.search(r"Volumes:\s+2\b", text), text
