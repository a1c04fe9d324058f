"""`companion deck check`: a deck's confusable pairs and how well rendered scenes of it read."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from companion.cards import CARD_IDS
from companion.deck.check import (
    GATE,
    Pair,
    advise,
    confusable_pairs,
    judge,
    nearest_pairs,
    render_readings,
    tally,
)
from companion.deck.deckdir import save_deck
from companion.deck.designs import design_deck
from companion.vision.naming import Naming

ROOT = Path(__file__).resolve().parents[1]
KEYS = {
    "deck",
    "namer",
    "cards",
    "nearest_pairs",
    "frames",
    "frames_calibrated",
    "seed",
    "width",
    "gate",
    "bands",
    "read",
    "right",
    "passed",
    "right_passed",
    "wrong_passed",
    "right_share",
    "recall",
    "ingredient_recall",
    "confusions",
    "verdict",
    "verdict_line",
    "advice",
    "seconds",
    "index_mm",
}


def check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "companion", "deck", "check", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def naming(card: str, confidence: float) -> Naming:
    return Naming(card, 0.8, 0.1, card, False, 0.0, (0.0, 0.0), confidence)


@pytest.fixture(scope="module")
def tarot(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tarot")
    save_deck(design_deck("tarot", 1), folder)
    return folder


def test_command_reports_every_figure_as_json(tarot):
    """The whole check on a generated deck: one JSON object with the documented keys, bands
    named, and an exit code that matches the verdict."""
    out = check(str(tarot), "--frames", "2", "--json")
    assert out.returncode in (0, 1), out.stderr
    report = json.loads(out.stdout)
    assert set(report) == KEYS
    assert report["bands"] > 0 and report["read"] > 0
    assert report["frames"] == 2 and report["gate"] == GATE
    assert len(report["nearest_pairs"]) == 5
    assert report["verdict"] in ("ready", "usable", "hard")
    assert out.returncode == (1 if report["verdict"] == "hard" else 0)
    assert report["index_mm"] == 12.0  # its numeral in a half-disc at the very top


def test_identical_ingredients_are_reported(tmp_path):
    """Negi printed with nori's faces: the faces alone show the pair, the scenes cannot tell
    them apart, and the deck is not passed as ready."""
    deck = design_deck("tarot", 1)
    faces = dict(deck.faces)
    for v in range(8):
        faces[f"negi-{v}"] = faces[f"nori-{v}"]
    save_deck(replace(deck, faces=faces, name="confusable"), tmp_path)
    out = check(str(tmp_path), "--frames", "2", "--json")
    assert out.returncode == 1, out.stderr
    report = json.loads(out.stdout)
    pairs = [{p["a"].split("-")[0], p["b"].split("-")[0]} for p in report["nearest_pairs"]]
    assert {"negi", "nori"} in pairs
    assert report["verdict"] == "hard"
    assert "re-enrol" in report["verdict_line"] and "negi" in report["verdict_line"]


def test_missing_folder_is_one_line_exit_2(tmp_path):
    out = check(str(tmp_path / "nope"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "not a deck folder" in out.stderr


def test_tally_counts_dangerous_readings():
    """Right, gated, wrong above the gate (announced wrongly), recall per ingredient."""
    readings = [
        ("nori-1", naming("nori-1", 0.9)),
        ("nori-2", naming("nori-2", 0.1)),  # right but doubted
        ("nori-3", naming("nori-5", 0.9)),  # dangerous
        ("negi-4", naming("nori-4", 0.1)),  # wrong and doubted
        ("negi-5", None),
    ]
    t = tally(readings)
    assert (t.bands, t.read, t.right, t.passed) == (5, 4, 2, 2)
    assert (t.right_passed, t.wrong_passed) == (1, 1)
    assert t.ingredient_recall["nori"] == pytest.approx(1 / 3)
    assert t.ingredient_recall["negi"] == 0.0 and t.ingredient_recall["menma"] is None
    assert (t.confusions[0].truth, t.confusions[0].read, t.confusions[0].passed) == (
        "nori-3",
        "nori-5",
        1,
    )


def test_verdict_thresholds():
    right = [(c, naming(c, 0.9)) for c in CARD_IDS] * 2
    assert judge(tally(right), ())[0] == "ready"
    one_wrong = [*right[:-1], ("nori-1", naming("nori-2", 0.9))]
    assert judge(tally(one_wrong), ())[0] == "usable"
    doubted = right[:90] + [(c, naming(c, 0.1)) for c, _ in right[90:]]
    t = tally(doubted)
    verdict, line = judge(t, advise(t, (), enrolled=True))
    assert verdict == "hard" and "better light" in line


def test_nearest_pairs_put_values_and_ingredients_on_one_scale():
    """A value needs a smaller margin than an ingredient: each pair's gap is counted in the
    margin its own decision needs, identical bands come first."""
    sim = np.full((56, 56), -1.0)
    sim[0, 1] = sim[1, 0] = 0.95  # ajitama-0 ~ ajitama-1: numerals
    sim[0, 8] = sim[8, 0] = 0.95  # ajitama-0 ~ chashu-0: colours
    sim[16, 24] = sim[24, 16] = 1.0
    pairs = nearest_pairs(sim, 3)
    assert pairs[0] == Pair("kamaboko-0", "menma-0", 1.0, 0.0, "bands identical")
    assert [p.reason for p in pairs[1:]] == ["colours alike", "numerals alike"]


class _Recorder:
    """Tests only: a namer that reads nothing and keeps what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[list, list | None]] = []

    def name_boxes(self, image, cal, boxes_mm, light=None, found=None):
        self.calls.append((list(boxes_mm), None if found is None else list(found)))
        return [None] * len(boxes_mm)


def test_rendered_check_gives_the_namer_every_band_of_the_frame():
    """The check names bands as play does: with all the frame's boxes, so that a card seen
    whole is checked against its whole face (play passes the finder's boxes)."""
    namer = _Recorder()
    readings, calibrated = render_readings(design_deck("tarot", 1), namer, frames=1)
    assert calibrated == 1 and len(readings) > 0
    ((boxes, found),) = namer.calls
    assert found == boxes and len(boxes) == len(readings)


def test_ingredients_alike_in_colour_are_listed_once_and_a_lamp_that_washes_them_out_is_named():
    """minimal-1's pink ajitama and pale yellow nori, and ornate-1's two browns (nori and
    shiitake), are the ingredients each deck confuses in play; on the faces alone the card
    pairs of one value did not make the list. Now each pair is listed once for all values, the
    pale one as alike under a bright lamp; a deck without such a pair lists numerals only."""
    minimal = confusable_pairs(design_deck("minimal", 1))
    pale = [p for p in minimal if {p.a.split("-")[0], p.b.split("-")[0]} == {"ajitama", "nori"}]
    assert len(pale) == 1 and "bright lamp" in pale[0].reason, [str(p) for p in minimal]
    ornate = confusable_pairs(design_deck("ornate", 1))
    browns = [p for p in ornate if {p.a.split("-")[0], p.b.split("-")[0]} == {"nori", "shiitake"}]
    assert len(browns) == 1 and "bright lamp" not in browns[0].reason, [str(p) for p in ornate]
    tarot = confusable_pairs(design_deck("tarot", 1))
    assert all(p.reason == "numerals alike" for p in tarot), [str(p) for p in tarot]
