"""The training path end to end on a handful of rendered frames, so it cannot rot."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow


def test_train_renders_trains_exports_and_the_model_loads(tmp_path):
    models = tmp_path / "models"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "train",
            "--frames",
            "3",
            "--budget-minutes",
            "0.2",
            "--epochs",
            "1",
            "--run-dir",
            str(tmp_path / "run"),
            "--export-to",
            str(models),
            "--names-frames",
            "4",
            "--names-budget-minutes",
            "0.2",
            "--names-epochs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (models / "strips.pt").stat().st_size > 1_000_000
    assert (models / "strips.onnx").exists()
    assert (models / "strips_ncnn_model" / "model.ncnn.param").exists()
    assert (tmp_path / "run" / "summary.json").exists()

    from companion.vision.backends import load_model

    for backend in ("onnx", "ncnn", "torch"):
        model = load_model(backend, models)
        dets = model.predict(np.full((440, 780, 3), 128, np.uint8))
        assert dets.xyxy.shape[1] == 4, backend

    from companion.vision.strip_classifier import load_classifier

    classifier = load_classifier(models)
    assert classifier is not None
    probs = classifier.probabilities([np.full((40, 136, 3), 200, np.uint8)] * 3)
    assert probs.shape == (3, 56)
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-3)
