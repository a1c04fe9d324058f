"""An enrolled deck's bands that its finder is unsure of or does not box are still read: a
fanned scan pile's turned cards, searched again in turned views of the scan area
(`detector.FAN_TURNS_DEG`), and a band the finder gives little confidence that the deck's own
faces name surely (`detector.FAINT_BOX`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import pytest

from companion import layout
from companion.deck.deckdir import Deck
from companion.deck.designs import design_deck
from companion.synth.frame import Frame
from companion.synth.scene import PlacedCard, Scene
from companion.vision import detector as det_module
from companion.vision.calibration import calibrate
from companion.vision.detections import Detections
from companion.vision.detector import CardDetector
from tests.plane_helpers import held_out_frame, kit_view

TURNS = det_module.FAN_TURNS_DEG


@cache
def _ornate() -> Deck:
    """A held-out design family (never in any model's training)."""
    return design_deck("ornate", 1)


@cache
def _benchmark_frame(i: int) -> Frame:
    """Frame i of the held-out benchmark's plain slice (`benchmarks/foreign_decks.py`)."""
    return held_out_frame(_ornate(), i)


def _top_of_fan(frame: Frame) -> str:
    """The fan's card turned 20-50 degrees that shows whole."""
    (card,) = [
        c["card"]
        for c in frame.truth["cards"]
        if c["region"] == "scan"
        and c["visible_fraction"] > 0.95
        and 20.0 < abs((c["angle_deg"] + 180.0) % 360.0 - 180.0) < 50.0
    ]
    return card


def _scan_cards(frame: Frame, monkeypatch: pytest.MonkeyPatch, turns: tuple[float, ...]) -> set:
    # the outline search (turned_cards) off: what the turned views read alone
    monkeypatch.setattr(det_module, "turned_cards", lambda *a, **k: [])
    monkeypatch.setattr(det_module, "FAN_TURNS_DEG", turns)
    cal = calibrate(frame.image)
    assert cal is not None
    reading = CardDetector(deck=_ornate(), reuse_names=False).detect(frame.image, cal)
    on_table = {c["card"] for c in frame.truth["cards"]}
    assert {c.card for c in reading.cards} <= on_table, "a card read that is not on the table"
    return {c.card for c in reading.cards if c.region == "scan"}


@pytest.mark.parametrize("frame_index", [7, 9])
def test_a_fanned_piles_turned_card_is_read_in_a_turned_view(monkeypatch, frame_index):
    """menma-1 at 46 degrees, menma-4 at 27: the finder, which boxes bands along the view's
    axes, finds them only in a view of the scan area turned with them."""
    frame = _benchmark_frame(frame_index)
    card = _top_of_fan(frame)
    assert card not in _scan_cards(frame, monkeypatch, ()), "premise: the upright view misses it"
    assert card in _scan_cards(frame, monkeypatch, TURNS)


@dataclass
class _Boxes:
    """Tests only: a finder that boxes given places of the view with given confidences."""

    boxes: list[tuple[tuple[float, float, float, float], float]]
    conf: float = 0.25

    def predict(self, view: np.ndarray) -> Detections:
        kept = [(b, c) for b, c in self.boxes if c >= self.conf]
        return Detections(
            np.array([b for b, _ in kept], np.float32).reshape(-1, 4),
            np.array([c for _, c in kept], np.float32),
            np.zeros(len(kept), int),
        )


def _one_card_reading(boxes: list[tuple[tuple[float, float, float, float], float]]) -> set:
    x, y = 200.0, 200.0
    scene = Scene((PlacedCard("negi-3", (x, y), 0.0, True, "fridge"),), "felt", 3)
    frame = kit_view(_ornate(), scene, 3)
    cal = calibrate(frame.image)
    assert cal is not None
    finder = _Boxes(boxes)
    reading = CardDetector(finder, _ornate(), reuse_names=False).detect(frame.image, cal)  # type: ignore[arg-type]
    assert finder.conf == det_module.FAINT_BOX, "an enrolled deck's finder keeps faint boxes"
    return {c.card for c in reading.cards}


def _band_box(x: float, y: float) -> tuple[float, float, float, float]:
    """The top band of a card centred at (x, y) mm, in view pixels."""
    ppm = layout.RECTIFIED_PX_PER_MM
    w, h = layout.CARD_W_MM, layout.CARD_H_MM
    return ((x - w / 2) * ppm, (y - h / 2) * ppm, (x + w / 2) * ppm, (y - h / 2 + 14) * ppm)


def test_a_band_the_finder_is_unsure_of_is_read_when_the_deck_names_it_surely():
    assert _one_card_reading([(_band_box(200.0, 200.0), 0.1)]) == {"negi-3"}


def test_a_band_the_finder_boxes_just_over_its_bar_is_read_when_the_deck_names_it_surely():
    """At 0.28 the finder times even a sure naming stays under the gate (0.3): the box counts
    as sure as `BOX_FLOOR` instead."""
    assert _one_card_reading([(_band_box(200.0, 200.0), 0.28)]) == {"negi-3"}


@pytest.mark.parametrize("box_conf", [0.1, 0.28])
def test_a_faint_box_on_the_bare_cloth_reads_nothing(box_conf):
    assert _one_card_reading([(_band_box(450.0, 330.0), box_conf)]) == set()


def test_the_turned_views_are_searched_again_only_when_the_scan_area_changed():
    """They cost two finder runs: in play the scan area stays empty until the end, so a whole
    search pays them only when its pixels changed."""
    import cv2

    from companion.vision.backends import load_model

    frame = _benchmark_frame(7)
    cal = calibrate(frame.image)
    assert cal is not None
    finder = load_model(name="bands")
    views: list[tuple[int, ...]] = []
    predict = finder.predict
    finder.predict = lambda view: (views.append(view.shape), predict(view))[1]  # type: ignore[method-assign]
    det = CardDetector(finder, _ornate())
    det.detect(frame.image, cal)
    assert len(views) == 1 + len(TURNS)
    det.forget_view()  # a whole search again, the scan area as it was
    det.detect(frame.image, cal)
    assert len(views) == 2 + len(TURNS)
    moved = frame.image.copy()  # a coin put down in the scan area
    centre = cal.to_image(np.array([[520.0, 400.0]]))[0]
    cv2.circle(moved, tuple(int(v) for v in centre), 25, (40, 120, 200), -1)
    det.forget_view()
    det.detect(moved, cal)
    assert len(views) == 3 + 2 * len(TURNS)


def test_a_change_elsewhere_searched_in_part_does_not_search_the_turned_views_again():
    """On NCNN a change is searched in part and confirmed by a whole search at the next frame:
    a coin put down in the Fridge leaves the scan area's reading standing (in the recorded
    15 fps game every confirming search paid the turned views before: 2.3 x the reference)."""
    import cv2

    from companion.vision.backends import load_model, model_path

    if not model_path("ncnn", name="bands").exists():
        pytest.skip("no NCNN model")
    frame = _benchmark_frame(7)
    cal = calibrate(frame.image)
    assert cal is not None
    finder = load_model("ncnn", threads=1, name="bands")
    views: list[tuple[int, ...]] = []
    predict = finder.predict
    finder.predict = lambda view: (views.append(view.shape), predict(view))[1]  # type: ignore[method-assign]
    det = CardDetector(finder, _ornate())
    first = det.detect(frame.image, cal)
    assert len(views) == 1 + len(TURNS)
    fan_card = _top_of_fan(frame)
    changed = frame.image.copy()
    centre = cal.to_image(np.array([[120.0, 60.0]]))[0]
    cv2.circle(changed, tuple(int(v) for v in centre), 25, (40, 120, 200), -1)
    part = det.detect(changed, cal)
    assert part.search_share < 1.0 and len(views) == 1 + len(TURNS)
    confirmed = det.detect(changed, cal)
    assert confirmed.search_share == 1.0 and len(views) == 2 + len(TURNS)
    for reading in (first, part, confirmed):
        assert fan_card in {c.card for c in reading.cards}
