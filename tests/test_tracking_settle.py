"""The settler: what a person watching the table would trust, frame by frame."""

from __future__ import annotations

import pytest

from companion.tracking.settle import SettleConfig, TableSettler, TableState, readings_of

FPS = 5.0


class Clock:
    """Feeds frames at FPS and records every committed change."""

    def __init__(self, config: SettleConfig | None = None) -> None:
        self.settler = TableSettler(config or SettleConfig())
        self.t = 0.0
        self.commits: list[TableState] = []

    def frame(self, readings: object, motion: float = 0.0, hand: bool = False) -> None:
        s = self.settler.update(self.t, readings, motion, hand)  # type: ignore[arg-type]
        assert s.hand == hand
        if s.changed:
            self.commits.append(s.table)
        self.t += 1 / FPS

    def still(self, readings: object, n: int = 8) -> None:
        for _ in range(n):
            self.frame(readings)

    def moving(self, readings: object, n: int) -> None:
        for _ in range(n):
            self.frame(readings, motion=0.5)

    def resting_hand(self, readings: object, n: int) -> None:
        """A hand perfectly still over the table: no motion at all, but a hand."""
        for _ in range(n):
            self.frame(readings, hand=True)


FRIDGE = {"nori-4": ("fridge", 0.9), "negi-2": ("fridge", 0.9)}


def test_a_steady_table_is_committed_once() -> None:
    c = Clock()
    c.still(FRIDGE, 10)
    assert c.commits == [TableState.of({"nori-4": "fridge", "negi-2": "fridge"})]


def test_a_card_seen_for_one_frame_never_appears() -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    c.frame({**FRIDGE, "menma-7": ("bowl-1", 0.99)})
    c.still(FRIDGE, 8)
    assert len(c.commits) == 1
    assert c.settler.table.get("menma-7") is None


def test_a_card_missing_for_one_frame_is_not_removed() -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    c.frame({"nori-4": ("fridge", 0.9)})
    c.still(FRIDGE, 8)
    assert len(c.commits) == 1


def test_hovering_hand_commits_nothing_until_still() -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    played = {**FRIDGE, "ajitama-5": ("bowl-2", 0.9)}
    c.moving(played, 40)  # eight seconds of hands over the table
    assert len(c.commits) == 1
    c.still(played, 8)
    assert len(c.commits) == 2
    assert c.commits[-1].get("ajitama-5") == "bowl-2"


def test_card_under_a_moving_hand_is_not_removed() -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    c.moving({"negi-2": ("fridge", 0.9)}, 6)  # nori-4 hidden while the hand moves
    c.still(FRIDGE, 8)
    assert len(c.commits) == 1
    assert c.settler.table.get("nori-4") == "fridge"


def test_a_card_under_a_resting_hand_is_hidden_not_removed() -> None:
    """Three seconds of a perfectly still hand over the Fridge hiding nori-4: still frames
    by motion, yet nothing is committed, and nori-4 is there when the hand leaves."""
    c = Clock()
    c.still(FRIDGE, 8)
    c.resting_hand({"negi-2": ("fridge", 0.9)}, 15)
    assert len(c.commits) == 1
    assert c.settler.table.get("nori-4") == "fridge"
    c.still(FRIDGE, 8)
    assert len(c.commits) == 1
    assert c.settler.table.get("nori-4") == "fridge"


def test_the_same_frames_without_the_hand_flag_would_remove_the_card() -> None:
    """The case above is a real test: still frames without nori-4 do remove it."""
    c = Clock()
    c.still(FRIDGE, 8)
    c.still({"negi-2": ("fridge", 0.9)}, 15)
    assert c.settler.table.get("nori-4") is None


def test_nothing_is_committed_while_a_hand_rests_and_the_change_lands_after() -> None:
    """A card laid, the hand resting on it: the play is committed once the hand has gone and
    the table has been still (with no hand) for still_frames / still_seconds."""
    c = Clock(SettleConfig(certain_frames=0))  # the still time alone
    c.still(FRIDGE, 8)
    played = {**FRIDGE, "ajitama-5": ("bowl-2", 0.9)}
    c.moving(played, 2)
    c.resting_hand(FRIDGE, 12)  # the hand covers the new card
    assert len(c.commits) == 1
    c.frame(played)
    c.frame(played)
    assert len(c.commits) == 1  # not yet still long enough
    c.still(played, 6)
    assert len(c.commits) == 2 and c.commits[-1].get("ajitama-5") == "bowl-2"


def test_after_a_resting_hand_two_certain_frames_commit_the_play() -> None:
    """The same with the default settler: once the hand has gone, one frame is no agreement,
    the second agreeing certain frame commits the play (before the still time is up)."""
    c = Clock()
    c.still(FRIDGE, 8)
    played = {**FRIDGE, "ajitama-5": ("bowl-2", 0.9)}
    c.moving(played, 2)
    c.resting_hand(FRIDGE, 12)  # the hand covers the new card
    assert len(c.commits) == 1
    c.frame(played)
    assert len(c.commits) == 1  # one frame is no agreement
    c.frame(played)
    assert len(c.commits) == 2 and c.commits[-1].get("ajitama-5") == "bowl-2"
    c.still(played, 6)
    assert len(c.commits) == 2  # the full vote later agrees: nothing withdrawn


@pytest.mark.parametrize(
    ("second", "early"),
    [
        ({**FRIDGE, "ajitama-5": ("bowl-2", 0.95)}, True),  # two agreeing certain frames
        ({**FRIDGE, "ajitama-6": ("bowl-2", 0.95)}, False),  # the two frames disagree
        ({**FRIDGE, "ajitama-5": ("bowl-1", 0.95)}, False),  # ... on the region
        ({**FRIDGE, "ajitama-5": ("bowl-2", 0.7)}, False),  # one reading not certain
        ({"negi-2": ("fridge", 0.9), "ajitama-5": ("bowl-2", 0.95)}, False),  # a card gone
        ({**FRIDGE, "ajitama-5": ("bowl-2", 0.95), "menma-1": ("bowl-1", 0.4)}, False),
    ],
)
def test_a_play_is_committed_early_only_when_the_votes_are_certain(
    second: dict[str, tuple[str, float]], early: bool
) -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    first = {**FRIDGE, "ajitama-5": ("bowl-2", 0.95)}
    c.moving(first, 2)
    c.frame(first)
    c.frame(second)
    assert len(c.commits) == (2 if early else 1)


def test_a_card_covered_as_another_lands_is_left_to_the_full_vote() -> None:
    """A card laid over the bowl's last card, hiding it: no early commit (a committed card is
    gone from sight), so the change is committed exactly as the still-time settler does."""
    bowl = {**FRIDGE, "menma-3": ("bowl-1", 0.9)}
    covered = {**FRIDGE, "negi-5": ("bowl-1", 0.95)}
    runs = []
    for config in (SettleConfig(), SettleConfig(certain_frames=0)):
        c = Clock(config)
        c.still(bowl, 8)
        c.moving(covered, 2)
        c.still(covered, 2)
        assert len(c.commits) == 1
        c.still(covered, 8)
        assert c.commits[-1].get("negi-5") == "bowl-1" and c.commits[-1].get("menma-3") is None
        runs.append(c.commits)
    assert runs[0] == runs[1]


def test_lost_camera_frames_change_nothing() -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    for _ in range(20):
        c.frame(None)
    c.still(FRIDGE, 8)
    assert len(c.commits) == 1


def test_region_flicker_does_not_move_a_card() -> None:
    c = Clock()
    table = {"chashu-3": ("bowl-1", 0.9)}
    c.still(table, 8)
    c.frame({"chashu-3": ("bowl-2", 0.9)})
    c.still(table, 8)
    assert len(c.commits) == 1
    assert c.settler.table.get("chashu-3") == "bowl-1"


def test_a_real_move_is_committed() -> None:
    c = Clock()
    c.still({"chashu-3": ("fridge", 0.9)}, 8)
    c.moving({}, 3)
    c.still({"chashu-3": ("bowl-3", 0.9)}, 8)
    assert [t.get("chashu-3") for t in c.commits] == ["fridge", "bowl-3"]


def test_removal_is_committed_after_the_scene_settles() -> None:
    c = Clock()
    c.still(FRIDGE, 8)
    c.moving({}, 3)
    c.still({"negi-2": ("fridge", 0.9)}, 8)
    assert c.commits[-1] == TableState.of({"negi-2": "fridge"})


def test_card_read_in_two_regions_keeps_the_consistent_one() -> None:
    c = Clock()
    c.still(
        [("kamaboko-1", "bowl-1", 0.9), ("kamaboko-1", "scan", 0.4)],
        8,
    )
    assert c.settler.table.as_dict() == {"kamaboko-1": "bowl-1"}


@pytest.mark.parametrize(("confidence", "moved"), [(0.9, True), (0.35, False)])
def test_low_confidence_votes_less(confidence: float, moved: bool) -> None:
    c = Clock()
    c.still({"menma-1": ("bowl-1", 0.9)}, 8)
    c.moving({}, 2)
    c.still({"menma-1": ("bowl-2", confidence)}, 3)
    assert (c.settler.table.get("menma-1") == "bowl-2") is moved


def test_readings_below_min_confidence_never_add_a_card() -> None:
    c = Clock()
    c.still({"menma-1": ("bowl-1", 0.2)}, 20)
    assert c.commits == []


def test_readings_of_a_frame_without_markers_is_no_reading() -> None:
    class F:
        calibrated = False
        cards = ()

    assert readings_of(F()) is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window": 5, "add_share": 0.2},  # one frame could add a card
        {"keep_share": 0.7, "add_share": 0.6},
        {"window": 0},
        {"certain_frames": 1},  # one frame would be taken for agreement
        {"certain_frames": -1},
    ],
)
def test_config_rejects_settings_that_break_the_promises(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        SettleConfig(**kwargs)  # type: ignore[arg-type]
