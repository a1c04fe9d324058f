"""The piles the tally and the history count after the end-of-game scan."""

from companion.tracking.scored_piles import ScoredPile, scored_piles

SERVED = [(0, "Ann", ("nori-1", "negi-2")), (1, "Bo", ("menma-3", "nori-4"))]


def test_a_scan_replaces_its_bowl_in_served_order_and_may_change_its_scorer() -> None:
    scans = [(1, "Ann", None, ("negi-5", "nori-4", "menma-3"))]
    piles = scored_piles(SERVED, scans, ("Ann", "Bo"))
    assert piles == [
        ScoredPile(0, "Ann", ("nori-1", "negi-2")),
        ScoredPile(1, "Ann", ("menma-3", "nori-4", "negi-5")),
    ]


def test_kept_as_expected_changes_nothing_and_a_card_counts_once() -> None:
    scans = [
        (0, "Bo", "expected", ("chashu-7",)),
        (None, "Bo", None, ("nori-1", "chashu-7")),
        (None, None, None, ("naruto-2",)),
    ]
    piles = scored_piles(SERVED, scans, ("Ann", "Bo"))
    assert piles == [
        *(ScoredPile(i, w, c) for i, w, c in SERVED),
        ScoredPile(None, "Bo", ("chashu-7",)),
    ]


def test_piles_of_no_known_scorer_are_dropped() -> None:
    assert scored_piles(SERVED, [(0, None, "seen", ("nori-1",))], ("Ann", "Bo")) == [
        ScoredPile(1, "Bo", ("menma-3", "nori-4"))
    ]
