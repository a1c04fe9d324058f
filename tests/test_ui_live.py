"""The app in a real window on the real pipeline (a recording), not on a scripted controller."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_session_faults import DEMO, extract

ROOT = Path(__file__).resolve().parents[1]
pytestmark = [pytest.mark.slow, pytest.mark.gui]


def test_app_shows_what_the_pipeline_follows(tmp_path):
    frames = extract(DEMO / "recording.mp4", tmp_path / "frames", 0, 200)
    out = tmp_path / "result.json"
    cmd = [sys.executable, "-m", "tests.ui_live_scenario", str(frames), "--out", str(out)]
    if not os.environ.get("DISPLAY"):
        if not shutil.which("xvfb-run"):
            pytest.skip("no display and no xvfb-run (CI installs xvfb)")
        cmd = ["xvfb-run", "-a", "-s", "-screen 0 800x480x24", *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert out.exists(), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["ok"], result.get("error")
    view = result["view"]
    text = " | ".join(result["table_labels"])
    assert view["turn"] >= 2, "the opening frames hold several turns"
    assert view["current_player"] in text
    for region, (cards, value_sum, types) in view["bowls"].items():
        if cards:
            assert f"{value_sum}/14" in text, region
            assert f"{types}/7" in text, region
    assert result["chips"] >= len(view["fridge"])
    assert result["screen_after_tap"] == "fix", "tapping a card opens the correction picker"
    assert Path(result["screenshot"]).exists()
