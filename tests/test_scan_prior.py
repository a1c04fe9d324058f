"""The end-game scan: a pile spread in the scan area is read with what the game saw served."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.camera import Frame
from companion.session import TablePipeline
from companion.tracking.scan_prior import with_pile
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
    assert surer["negi-7"] > 0.95
    assert "menma-7" not in surer  # read surely: nothing to add


def test_the_prior_weakens_with_every_card_the_pile_still_misses() -> None:
    pile = ("menma-7", "negi-7", "nori-1", "chashu-3", "ajitama-2", "shiitake-5")
    one = with_pile(pile[:2], [("negi-7", "scan", 0.07, "chashu-7")])["negi-7"]
    six = with_pile(pile, [("negi-7", "scan", 0.07, "chashu-7")])["negi-7"]
    assert 0.07 < six < one  # 6 missing: 0.44; 2 missing: 0.79


@pytest.mark.parametrize(
    "reading",
    [
        ("shiitake-5", "scan", 0.07, "chashu-5"),  # a card the pile was not served with
        ("negi-7", "scan", 0.07, "menma-7"),  # its doubt is between two cards the pile misses
        ("negi-7", "fridge", 0.07, "chashu-7"),  # not in the scan area
    ],
)
def test_a_reading_the_pile_says_nothing_of_is_left_as_it_is(reading) -> None:
    assert with_pile(PILE, [reading]) == {}


def test_the_pile_being_spread_is_the_served_one_it_shares_cards_with() -> None:
    tb = Table()
    tb.first_turns()
    assert tb.f.pile_in_scan(["menma-7"]) == PILE
    assert tb.f.pile_in_scan(["kamaboko-1"]) == ()  # in no served pile


class ScanDetector:
    """Tests only: reads the table `Table` keeps, and in the scan area the pile `scan` (card ->
    confidence, those under the gate as doubtful), so what is under test is the pipeline's use
    of the game, not detection."""

    def __init__(self, table: Table, scan: dict[str, float]) -> None:
        self.table, self.scan = table, scan

    def detect(self, image: np.ndarray, calibration: object) -> FrameReading:
        sure = {c: 0.9 for c in self.table.cards} | {c: p for c, p in self.scan.items() if p >= 0.3}
        doubtful = {c: p for c, p in self.scan.items() if p < 0.3}
        regions = dict(self.table.cards) | dict.fromkeys(self.scan, "scan")

        def reading(card: str, p: float) -> CardReading:
            naming = Naming(card, 0.9, 0.0, "chashu-0", False, 0.0, (600.0, 100.0), p)
            return CardReading(card, p, (0, 0, 1, 1), regions[card], (600.0, 100.0), naming)

        return FrameReading(
            tuple(reading(c, p) for c, p in sure.items()),
            True,
            doubtful=tuple(reading(c, p) for c, p in doubtful.items()),
        )


def scan_bobs_pile(read: dict[str, float]) -> list[dict[str, Any]]:
    """Bob's served pile spread in the scan area, read as `read` for 2 s at 4 frames a second,
    then taken away: the events."""
    tb = Table()
    tb.first_turns()
    tb.f.begin_scoring()
    detector = ScanDetector(tb, read)
    pipeline = TablePipeline(detector, tb.f)  # type: ignore[arg-type]
    cap = cv2.VideoCapture(str(DEMO_VIDEO))
    ok, image = cap.read()
    cap.release()
    assert ok
    out: list[dict[str, Any]] = []
    for i in range(16):
        if i == 8:
            detector.scan = {}
        out += pipeline.process(Frame(image, i / 4, i))
    return out


def test_a_pale_card_read_only_doubtfully_in_its_pile_is_not_a_difference() -> None:
    out = scan_bobs_pile({"menma-7": 0.85, "negi-7": 0.07})
    assert [e["cards"] for e in kinds(out, "pile_scanned")] == [["menma-7", "negi-7"]]
    assert not kinds(out, "scan_mismatch")


def test_a_doubtful_reading_of_another_card_is_still_a_difference() -> None:
    out = scan_bobs_pile({"menma-7": 0.85, "negi-5": 0.07})
    assert [e["cards"] for e in kinds(out, "pile_scanned")] == [["menma-7"]]
    assert kinds(out, "scan_mismatch")
