"""The end-game scan: a pile spread in the scan area is read with what the game saw served."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.camera import Frame
from companion.session import TablePipeline
from companion.tracking.game_prior import instead_of_served, with_pile
from companion.vision.detector import CardReading, FrameReading
from companion.vision.naming import Naming
from tests.test_follower_faults import Table, kinds

DEMO_VIDEO = Path(__file__).resolve().parents[1] / "companion" / "assets" / "demo" / "recording.mp4"
PILE = ("menma-7", "negi-7")
"""Bob's served pile after `Table.first_turns`."""


def test_a_doubtful_reading_of_the_one_card_the_pile_misses_is_near_sure() -> None:
    surer = with_pile(
        PILE, [("menma-7", "scan", 0.85, "menma-5"), ("negi-7", "scan", 0.07, "chashu-7")]
    )
    assert surer["negi-7"][0] == "negi-7" and surer["negi-7"][1] > 0.95
    assert "menma-7" not in surer  # read surely: nothing to add


def test_the_prior_weakens_with_every_card_the_pile_still_misses() -> None:
    pile = ("menma-7", "negi-7", "nori-1", "chashu-3", "ajitama-2", "shiitake-5")
    one = with_pile(pile[:2], [("negi-7", "scan", 0.07, "chashu-7")])["negi-7"][1]
    six = with_pile(pile, [("negi-7", "scan", 0.07, "chashu-7")])["negi-7"][1]
    assert 0.07 < six < one  # 6 missing: 0.44; 2 missing: 0.79


@pytest.mark.parametrize(
    "reading",
    [
        ("shiitake-5", "scan", 0.07, "chashu-5"),  # a card the pile was not served with
        ("shiitake-5", "scan", 0.9, "negi-7"),  # ... read surely: its runner-up stays second
        ("negi-7", "scan", 0.07, "menma-7"),  # its doubt is between two cards the pile misses
        ("negi-7", "fridge", 0.07, "chashu-7"),  # not in the scan area
    ],
)
def test_a_reading_the_pile_says_nothing_of_is_left_as_it_is(reading) -> None:
    assert with_pile(PILE, [reading]) == {}


def test_a_card_the_pile_lacks_read_as_another_is_that_card() -> None:
    """A 6 read as a 0 (held-out ornate-1 sloppy: chashu-6 read chashu-0 in its pile's scan):
    the runner-up is the card the pile lacks."""
    surer = with_pile(
        PILE, [("menma-7", "scan", 0.85, "menma-5"), ("negi-0", "scan", 0.5, "negi-7")]
    )
    assert surer["negi-0"][0] == "negi-7" and surer["negi-0"][1] > 0.9


def test_the_pile_being_spread_is_the_served_one_it_shares_cards_with() -> None:
    tb = Table()
    tb.first_turns()
    assert tb.f.pile_in_scan(["menma-7"]) == PILE
    assert tb.f.pile_in_scan(["kamaboko-1"]) == ()  # in no served pile


class ScriptedDetector:
    """Tests only: reads the table `Table` keeps surely, and beside it `extra` readings ((card,
    region, confidence, runner-up), those under the gate as doubtful), so what is under test is
    the pipeline's use of the game, not detection."""

    def __init__(self, table: Table, extra: list[tuple[str, str, float, str]]) -> None:
        self.table, self.extra = table, extra

    def detect(self, image: np.ndarray, calibration: object) -> FrameReading:
        def reading(card: str, region: str, p: float, runner_up: str = "chashu-0") -> CardReading:
            naming = Naming(card, 0.9, 0.0, runner_up, False, 0.0, (600.0, 100.0), p)
            return CardReading(card, p, (0, 0, 1, 1), region, (600.0, 100.0), naming)

        table = [reading(c, r, 0.9) for c, r in self.table.cards.items()]
        return FrameReading(
            tuple(table + [reading(*e) for e in self.extra if e[2] >= 0.3]),
            True,
            doubtful=tuple(reading(*e) for e in self.extra if e[2] < 0.3),
        )


def played(tb: Table, detector: ScriptedDetector, frames: int, change_at: int, change) -> list:
    """`frames` frames at 4 a second through the pipeline with the scripted detector, `change`
    called before frame `change_at`: the events."""
    pipeline = TablePipeline(detector, tb.f)  # type: ignore[arg-type]
    cap = cv2.VideoCapture(str(DEMO_VIDEO))
    ok, image = cap.read()
    cap.release()
    assert ok
    out: list[dict[str, Any]] = []
    for i in range(frames):
        if i == change_at:
            change()
        out += pipeline.process(Frame(image, 100.0 + i / 4, i))
    return out


def scan_bobs_pile(read: dict[str, float], runner_up: str = "chashu-0") -> list[dict[str, Any]]:
    """Bob's served pile spread in the scan area, read as `read` for 2 s, then taken away: the
    events."""
    tb = Table()
    tb.first_turns()
    tb.f.begin_scoring()
    tb.cards = {}
    detector = ScriptedDetector(tb, [(c, "scan", p, runner_up) for c, p in read.items()])
    return played(tb, detector, 16, 8, lambda: detector.extra.clear())


def test_a_pale_card_read_only_doubtfully_in_its_pile_is_not_a_difference() -> None:
    out = scan_bobs_pile({"menma-7": 0.85, "negi-7": 0.07})
    assert [e["cards"] for e in kinds(out, "pile_scanned")] == [["menma-7", "negi-7"]]
    assert not kinds(out, "scan_mismatch")


def test_a_card_misread_as_one_of_no_pile_in_the_pile_is_not_a_difference() -> None:
    out = scan_bobs_pile({"menma-7": 0.85, "negi-0": 0.5}, runner_up="negi-7")
    assert [e["cards"] for e in kinds(out, "pile_scanned")] == [["menma-7", "negi-7"]]
    assert not kinds(out, "scan_mismatch")


def test_a_doubtful_reading_of_another_card_is_still_a_difference() -> None:
    out = scan_bobs_pile({"menma-7": 0.85, "negi-5": 0.07})
    assert [e["cards"] for e in kinds(out, "pile_scanned")] == [["menma-7"]]
    assert kinds(out, "scan_mismatch")


def refill_read_as_negi_7(runner_up: str) -> list[dict[str, Any]]:
    """Alice's turn: she plays twice, takes, and refills the Fridge with shiitake-5, which the
    camera reads as negi-7 (served by Bob in the turn before) with `runner_up` second: the
    events."""
    tb = Table()
    tb.first_turns()
    tb.play("menma-0", "bowl-1")
    tb.play("negi-1", "bowl-3")
    tb.remove("ajitama-2")
    detector = ScriptedDetector(tb, [])
    misread = [("negi-7", "fridge", 0.85, runner_up)]
    return played(tb, detector, 12, 2, lambda: detector.extra.extend(misread))


def test_a_refill_misread_as_a_served_card_is_its_runner_up() -> None:
    """Held-out game ornate-1 warm: a chashu-3 refill read as the served chashu-5 warned that
    chashu-5 was already served, then that the Fridge was not refilled."""
    out = refill_read_as_negi_7("shiitake-5")
    assert [(e["card"], e["region"]) for e in kinds(out, "card_added")] == [
        ("shiitake-5", "fridge")
    ]
    assert kinds(out, "rule_warning") == []


def test_a_served_card_read_whose_runner_up_is_served_too_is_still_warned() -> None:
    out = refill_read_as_negi_7("menma-7")
    assert [w["code"] for w in kinds(out, "rule_warning")] == ["already_served"]


def test_the_runner_up_of_a_served_card_read_is_half_as_sure() -> None:
    served = {"negi-7", "menma-7"}
    instead = instead_of_served(served, [("negi-7", "fridge", 0.8, "shiitake-5")])
    assert instead == {"negi-7": ("shiitake-5", "fridge", pytest.approx(0.4))}
    assert instead_of_served(served, [("negi-7", "scan", 0.8, "shiitake-5")]) == {}
    assert instead_of_served(served, [("negi-7", "fridge", 0.8, "menma-7")]) == {}
    both = [("negi-7", "fridge", 0.8, "shiitake-5"), ("shiitake-5", "bowl-1", 0.9, "nori-5")]
    assert instead_of_served(served, both) == {}  # the runner-up is read elsewhere
