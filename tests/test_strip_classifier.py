"""The shipped strip classifier and how its reading is combined with matching."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.cards import CARD_IDS
from companion.deck.deckdir import load_deck
from companion.layout import CARD_W_MM, INDEX_STRIP_MM
from companion.vision.backends import MODELS_DIR
from companion.vision.naming import DESC_PX_PER_MM, REFINE_X_MM, REFINE_Y_MM, Naming, _combine
from companion.vision.strip_classifier import (
    CLS_SIZE,
    NcnnStripClassifier,
    fold,
    load_classifier,
)

PATCH_W = round((CARD_W_MM + 2 * REFINE_X_MM) * DESC_PX_PER_MM)
PATCH_H = round((INDEX_STRIP_MM + 2 * REFINE_Y_MM) * DESC_PX_PER_MM)


def deck_patch(cid: str) -> np.ndarray:
    """The deck's own strip as the namer would sample it: 2 px/mm with the refine margins."""
    strip = cv2.resize(load_deck(None).strip(cid), (PATCH_W - 10, PATCH_H - 8))
    return cv2.copyMakeBorder(strip, 4, 4, 5, 5, cv2.BORDER_REPLICATE)


def test_fold_puts_numeral_half_over_pips_half():
    patch = np.zeros((PATCH_H, PATCH_W, 3), np.uint8)
    patch[:, : PATCH_W // 2] = 50  # left half
    patch[:, PATCH_W // 2 :] = 200  # right half
    out = fold(patch)
    assert out.shape == (CLS_SIZE, CLS_SIZE, 3)
    col = out[:, CLS_SIZE // 2, 0]
    assert 50 in col[: CLS_SIZE // 2] and 200 in col[CLS_SIZE // 2 :]


@pytest.fixture(scope="module", params=["onnx", "ncnn"])
def classifier(request):
    """The shipped classifier on each runtime: ONNX Runtime, and the NCNN export the Pi uses
    (no ONNX Runtime loaded there)."""
    cls = load_classifier(MODELS_DIR, backend=request.param)
    assert cls is not None, "models/strip_names.onnx is shipped"
    if request.param == "ncnn" and not isinstance(cls, NcnnStripClassifier):
        pytest.skip("no models/strip_names_ncnn_model or no ncnn")
    return cls


def test_the_ncnn_export_names_as_the_onnx_model():
    ncnn = load_classifier(MODELS_DIR, backend="ncnn")
    if not isinstance(ncnn, NcnnStripClassifier):
        pytest.skip("no models/strip_names_ncnn_model or no ncnn")
    onnx = load_classifier(MODELS_DIR)
    assert onnx is not None
    patches = [deck_patch(cid) for cid in CARD_IDS]
    a, b = onnx.probabilities(patches), ncnn.probabilities(patches)
    assert (a.argmax(axis=1) == b.argmax(axis=1)).all()
    assert np.abs(a - b).max() < 0.02  # fp16 weights


def test_shipped_classifier_names_the_decks_own_strips(classifier):
    probs = classifier.probabilities([deck_patch(cid) for cid in CARD_IDS])
    right = sum(CARD_IDS[int(np.argmax(p))] == cid for p, cid in zip(probs, CARD_IDS, strict=True))
    assert right >= 54, f"{right} of 56"


def test_shipped_classifier_tells_five_from_six(classifier):
    """The pair matching confused most (one pip and a stroke apart)."""
    for ingredient in ("shiitake", "kamaboko", "nori"):
        probs = classifier.probabilities([deck_patch(f"{ingredient}-{v}") for v in (5, 6)])
        assert [CARD_IDS[int(np.argmax(p))] for p in probs] == [
            f"{ingredient}-5",
            f"{ingredient}-6",
        ]


def matched(card: str, margin: float) -> Naming:
    return Naming(card, 0.9, margin, "nori-0", False, 0.0, (0.0, 0.0))


def probs_for(card: str, p: float) -> np.ndarray:
    out = np.full(len(CARD_IDS), (1 - p) / (len(CARD_IDS) - 1), np.float32)
    out[CARD_IDS.index(card)] = p
    return out


def test_agreeing_readings_are_sure_and_disagreeing_ones_doubtful():
    agree = _combine(matched("menma-2", 0.005), probs_for("menma-2", 0.8))
    assert agree.card == "menma-2" and agree.confidence > 0.8
    # a sure classifier overrules matching, but the doubt shows
    overrule = _combine(matched("nori-5", 0.03), probs_for("nori-6", 0.97))
    assert overrule.card == "nori-6" and overrule.runner_up == "nori-5"
    assert overrule.confidence < 0.5
    # an unsure classifier keeps matching's card, with its doubt
    keep = _combine(matched("chashu-2", 0.05), probs_for("menma-2", 0.6))
    assert keep.card == "chashu-2" and keep.confidence < 0.1
    assert replace(keep, probability=None).confidence > keep.confidence
