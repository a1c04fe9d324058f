"""Quiet when the game is legal (issue 14): the follower reads a change as the legal move that
fits before it warns, warnings carry a code and parameters the UI translates, and a move no
legal reading explains is still warned every time."""

from __future__ import annotations

from typing import Any

import pytest

from companion.tracking.follower import COVER_S, HIDDEN_STEPS, GameFollower, hidden_returns
from companion.tracking.view import GameView
from companion.tracking.warnings import NOTICES, RULE_WARNINGS, Note, english
from companion.ui.i18n import STRINGS, warning_text
from companion.ui.viewmodels import Announcer
from tests.test_follower_faults import Table, kinds


def codes(events: list[dict[str, Any]]) -> list[str]:
    return [e["code"] for e in kinds(events, "rule_warning")]


def alice_plays_both() -> Table:
    tb = Table()
    tb.play("menma-7", "bowl-1")
    tb.play("nori-0", "bowl-2")
    return tb


# -- legal orderings of a real turn ----------------------------------------------------------
def test_a_fridge_card_hidden_by_a_hand_and_back_is_not_a_take() -> None:
    """A hand over the Fridge hid ajitama-3 long enough to be committed as gone; it comes
    back: nothing was taken, the real take and refill follow, and the turns stay right."""
    tb = alice_plays_both()
    tb.remove("ajitama-3")  # hidden, read as a take for now
    out = tb.refill("ajitama-3")  # back
    assert codes(out) == []
    assert tb.f.view().fridge.count("ajitama-3") == 1
    tb.remove("ajitama-0")  # the real take
    tb.refill("kamaboko-0")
    out = tb.play("negi-7", "bowl-1")
    assert codes(tb.sunk) == []
    v = tb.f.view()
    assert v.current_player == "Bob" and v.turn == 2
    assert set(v.fridge) == {"ajitama-1", "ajitama-2", "ajitama-3", "kamaboko-0"}
    # and the same reading when the game is rebuilt from its log
    assert GameFollower.from_events("2p", ("Alice", "Bob"), tb.sunk).view() == v


def _obs(step: int, kind: str, card: str, region: str) -> dict[str, Any]:
    return {"t": float(step), "type": kind, "card": card, "region": region, "step": step}


@pytest.mark.parametrize(
    ("between", "elsewhere", "paired"),
    [
        pytest.param(1, None, True, id="back at the next change"),
        pytest.param(HIDDEN_STEPS, None, True, id="back at the last change of the window"),
        pytest.param(HIDDEN_STEPS + 1, None, False, id="back too late: a refill"),
        pytest.param(2, "bowl-1", False, id="seen in a bowl between: played, not hidden"),
    ],
)
def test_a_fridge_card_gone_and_back_is_paired_only_within_the_window(
    between: int, elsewhere: str | None, paired: bool
) -> None:
    events = [_obs(1, "card_removed", "ajitama-3", "fridge")]
    if elsewhere is not None:
        events.append(_obs(2, "card_added", "ajitama-3", elsewhere))
        events.append(_obs(2 + between - 1, "card_removed", "ajitama-3", elsewhere))
    events.append(_obs(1 + between, "card_added", "ajitama-3", "fridge"))
    found = hidden_returns(events)
    assert found == ({0, len(events) - 1} if paired else set())


def test_the_card_a_new_card_lands_on_is_covered_quietly() -> None:
    """A cascade laid tight: as negi-1 lands in Bowl 1 the strip of menma-7 above it goes out
    of sight in the same settled change. menma-7 still counts, nobody is told off, and the
    bowl is served whole."""
    tb = alice_plays_both()
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    del tb.cards["menma-7"]
    out = tb.play("negi-1", "bowl-1")  # one change: negi-1 in, menma-7 out of sight
    assert kinds(out, "card_hidden") == [] and codes(out) == []
    assert tb.f.view().bowls[0].cards == ("menma-7", "negi-1")
    out = tb.play("shiitake-6", "bowl-1")  # Bob's second card into the same bowl
    assert codes(out) == ["same_bowl_twice"]  # a real fault is still warned


def test_a_lone_bowl_card_covered_in_the_change_that_ends_the_last_turn_stays() -> None:
    """One settled change holds Alice's take and refill and Bob's first card, laid tight on
    nori-0, Bowl 2's only card, whose strip goes out of sight: nori-0 is covered, not a bowl
    taken away unready (the take is applied first, before the card that covers it lands)."""
    tb = alice_plays_both()
    del tb.cards["ajitama-0"]
    tb.cards["kamaboko-0"] = "fridge"
    del tb.cards["nori-0"]
    tb.cards["negi-1"] = "bowl-2"
    out = tb.commit()
    assert codes(out) == [] and kinds(out, "card_hidden") == []
    v = tb.f.view()
    assert bowl_cards(tb, "bowl-2") == ("nori-0", "negi-1")
    assert (v.current_player, v.turn) == ("Bob", 2)


@pytest.mark.parametrize(
    ("extra", "warned"),
    [
        pytest.param("nori-5", [], id="of the covered card's kind: that card misread"),
        pytest.param("chashu-5", ["same_bowl_twice"], id="of another kind: warned"),
    ],
)
def test_a_covered_card_read_as_another_of_its_kind_is_not_a_second_card(
    extra: str, warned: list[str]
) -> None:
    """Bob lays negi-1 on nori-0, Bowl 2's only card, and in the same change a second card is
    seen landing there. Two cards landing in one bowl at once is never legal; one of the
    covered card's ingredient is that card's half-hidden strip misread: nori-0 stays,
    covered, the phantom is no play, and Bob's second card is still to come."""
    tb = alice_plays_both()
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    del tb.cards["nori-0"]
    tb.cards["negi-1"] = "bowl-2"
    tb.cards[extra] = "bowl-2"
    out = tb.commit()
    assert codes(out) == warned
    if warned:
        return
    assert kinds(out, "card_hidden") == []
    assert bowl_cards(tb, "bowl-2") == ("nori-0", "negi-1")
    assert tb.f.view().current_player == "Bob"
    out = tb.play("chashu-1", "bowl-1")  # Bob's second card
    assert codes(out) == []
    assert bowl_cards(tb, "bowl-1") == ("menma-7", "chashu-1")


@pytest.mark.parametrize(
    ("extra", "gone", "warned"),
    [
        pytest.param("nori-5", True, [], id="the covered card misread once covered"),
        pytest.param("chashu-5", True, ["same_bowl_twice"], id="of another kind: warned"),
        pytest.param("nori-5", False, ["same_bowl_twice"], id="covered card still seen: warned"),
    ],
)
def test_the_card_under_this_turns_play_read_as_another_of_its_kind_is_no_second_card(
    extra: str, gone: bool, warned: list[str]
) -> None:
    """Bob lays negi-1 on nori-0 in Bowl 2; a change later nori-0's strip, now half under
    negi-1, is read as nori-5 (outsider segment-1's sloppy game: a seven-segment 6 that lost
    its lower half read as a 5). A second card in one bowl in one turn is never legal, and it
    would cover negi-1, not the card under it: nori-0 stays, covered, the phantom is no play,
    and Bob's second card is still to come. Another ingredient, or nori-0 still in view, is
    a second card, warned as before."""
    tb = alice_plays_both()
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    tb.play("negi-1", "bowl-2")  # Bob's first card, on nori-0
    if gone:
        del tb.cards["nori-0"]
    tb.cards[extra] = "bowl-2"
    out = tb.commit()
    assert codes(out) == warned
    if warned:
        return
    assert bowl_cards(tb, "bowl-2") == ("nori-0", "negi-1")
    assert tb.f.view().current_player == "Bob"
    out = tb.play("chashu-1", "bowl-1")  # Bob's second card
    assert codes(out) == []
    assert bowl_cards(tb, "bowl-1") == ("menma-7", "chashu-1")
    assert tb.f.view().current_player == "Bob"  # his take and refill still to come


def test_the_card_under_this_turns_play_read_as_a_served_one_is_no_play() -> None:
    """Bob lays chashu-5 on negi-3 in Bowl 3; in one change his second card lands, he takes
    and refills, and negi-3, now half under chashu-5, is read as the served negi-7 (held-out
    game segment-1 bump: a kamaboko-5 read as the served kamaboko-3). A served card cannot
    land again: it is the covered card misread, no play, so it is not counted as Alice's
    first card of the next turn, and her turn takes two cards of her own."""
    tb = Table()
    tb.first_turns()  # negi-7 served with Bowl 1
    tb.play("negi-3", "bowl-3")
    tb.play("shiitake-4", "bowl-2")
    tb.remove("ajitama-2")
    tb.refill("kamaboko-2")
    tb.play("chashu-5", "bowl-3")  # Bob's first card, on negi-3
    tb.cards["negi-7"] = "bowl-3"
    tb.cards["kamaboko-6"] = "bowl-2"
    del tb.cards["ajitama-3"]
    tb.cards["menma-2"] = "fridge"
    out = tb.commit()
    assert codes(out) == []
    assert bowl_cards(tb, "bowl-3") == ("negi-3", "chashu-5")
    assert (tb.f.view().current_player, tb.f.view().turn) == ("Alice", 5)
    tb.play("nori-6", "bowl-1")
    tb.play("shiitake-6", "bowl-2")
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Alice", 5)  # her take and refill still to come
    assert codes(tb.sunk) == []


def test_a_card_laid_in_a_bowl_served_in_the_same_change_is_a_play() -> None:
    """Bob's negi-7 lands on menma-7 (Bowl 1: 14, ready); in one change Bowl 1 is served, Bob
    takes and refills, and Alice's first card, menma-2, of the ingredient under Bob's play,
    lands in the emptied bowl. Bob's play went with the bowl: nothing covers menma-7, and
    menma-2 is Alice's play (segment-1's warm game: read as a covered card misread, the turns
    went one seat on)."""
    tb = alice_plays_both()
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    tb.play("negi-7", "bowl-1")
    tb.play("chashu-1", "bowl-2")
    for card in ("menma-7", "negi-7", "ajitama-1"):
        del tb.cards[card]
    tb.cards["kamaboko-1"] = "fridge"
    tb.cards["menma-2"] = "bowl-1"
    out = tb.commit()
    assert [(e["region"], e["player"]) for e in kinds(out, "bowl_served")] == [("bowl-1", "Bob")]
    assert codes(out) == []
    assert bowl_cards(tb, "bowl-1") == ("menma-2",)
    out = tb.play("shiitake-3", "bowl-2")  # Alice's second card
    assert codes(out) == []
    assert tb.f.view().current_player == "Alice"


@pytest.mark.parametrize(("after", "noticed"), [(0.2, False), (COVER_S, False), (1.0, True)])
def test_the_card_landed_on_given_up_a_moment_later_is_covered(after: float, noticed: bool) -> None:
    """The settler may commit a laid card a frame before it gives up the card under it: that
    card going out of sight within COVER_S of the landing is covered, quietly; later it is a
    notice, as before (test_follower_faults: one change later, 1 s)."""
    tb = alice_plays_both()
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    tb.play("negi-1", "bowl-1")  # lands on menma-7
    tb.t += after - 1.0  # the next change comes `after` seconds later
    out = tb.remove("menma-7")
    assert [e["card"] for e in kinds(out, "card_hidden")] == (["menma-7"] if noticed else [])
    assert codes(out) == []
    assert tb.f.view().bowls[0].cards == ("menma-7", "negi-1")


def test_a_card_lost_elsewhere_in_the_bowl_is_still_noticed() -> None:
    """Only the card the new one landed on is read as covered: another card of the bowl gone
    in the same change is a notice (and alone in a change, as before)."""
    tb = Table()
    tb.play("menma-7", "bowl-1")
    tb.play("nori-0", "bowl-2")
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    tb.play("negi-1", "bowl-1")
    tb.play("chashu-1", "bowl-2")
    tb.remove("ajitama-1")
    tb.refill("kamaboko-1")
    del tb.cards["menma-7"]
    out = tb.play("shiitake-2", "bowl-1")  # landed on negi-1, yet menma-7 went
    assert [(e["card"], e["region"]) for e in kinds(out, "card_hidden")] == [("menma-7", "bowl-1")]


def test_a_take_seen_before_the_second_play_settles_is_quiet() -> None:
    tb = Table()
    tb.play("menma-7", "bowl-1")
    out = tb.remove("ajitama-0")  # the second card is still under the hand
    assert codes(out) == []
    tb.play("nori-0", "bowl-2")
    tb.refill("kamaboko-0")
    out = tb.play("negi-7", "bowl-1")
    assert codes(tb.sunk) == []
    assert tb.f.view().current_player == "Bob"


def test_a_refill_seen_before_the_take_is_quiet() -> None:
    tb = alice_plays_both()
    assert codes(tb.refill("kamaboko-0")) == []
    assert codes(tb.remove("ajitama-0")) == []
    tb.play("negi-7", "bowl-1")
    assert codes(tb.sunk) == []
    assert tb.f.view().current_player == "Bob"


def test_the_last_serve_seen_with_the_sweep_and_the_first_pile_is_a_serve() -> None:
    """Hands never left the table long enough between the last turn's serve, the sweep of the
    unserved bowls and the first pile spread for scoring: one change holds all three. The
    ready bowl was served (to the player whose turn made it ready); only the others were
    discarded."""
    tb = Table()
    tb.first_turns()
    tb.play("menma-6", "bowl-2")  # Alice: bowl 2 at 7
    tb.play("negi-2", "bowl-3")
    tb.remove("ajitama-2")
    tb.refill("kamaboko-2")
    tb.play("shiitake-7", "bowl-2")  # Bob: bowl 2 at 14, ready
    tb.play("negi-3", "bowl-1")
    for c in [c for c, r in tb.cards.items() if r.startswith("bowl-")]:
        del tb.cards[c]
    tb.cards.update({"menma-7": "scan", "negi-7": "scan"})
    out = tb.commit()
    served = kinds(out, "bowl_served")
    assert [(e["region"], e["player"], sorted(e["cards"])) for e in served] == [
        ("bowl-2", "Bob", ["chashu-1", "menma-6", "nori-0", "shiitake-7"])
    ]
    assert codes(out) == [] and kinds(out, "card_hidden") == []
    over = kinds(tb.f.finish(), "game_over")[0]
    assert over["unserved"] == {"bowl-1": ["negi-3"], "bowl-3": ["negi-2"]}


def test_a_served_card_read_in_another_bowl_in_the_serving_change_is_a_misread() -> None:
    """Bowl 1 (ready) is picked up and, in the same settled change, menma-7 of it is read in
    Bowl 2: a served pile goes face down to the player's side, so that is another card
    misread as menma-7. The pile is served whole, quietly; Bowl 2 is unchanged."""
    tb = Table()
    tb.play("menma-7", "bowl-1")
    tb.play("nori-0", "bowl-2")
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    tb.play("negi-7", "bowl-1")
    tb.play("chashu-1", "bowl-2")
    del tb.cards["negi-7"]
    tb.cards["menma-7"] = "bowl-2"
    out = tb.commit()
    assert [sorted(e["cards"]) for e in kinds(out, "bowl_served")] == [["menma-7", "negi-7"]]
    assert codes(out) == []
    assert tb.f.view().bowls[1].cards == ("nori-0", "chashu-1")
    out = tb.play("menma-7", "bowl-3")  # laid in a bowl in a later change: from outside
    assert codes(out) == ["already_served"]


def test_a_card_misread_as_a_served_one_still_counts_as_a_play() -> None:
    """Alice's first card of turn 3 is misread as menma-7, served with Bowl 1 in turn 2. It is
    warned about and kept out of the bowls, but a card did land: it is one of her two plays,
    so her turn ends with her take and Bob's serve is Bob's. (Ignored, as it was, her turn
    never ended and every later serve went to the wrong player: the ornate-1 demo scored
    Alice 1, Bob 29 for a true 20 to 19.)"""
    tb = Table()
    tb.first_turns()
    out = tb.play("menma-7", "bowl-3")  # a misread: menma-7 lies face down in Bob's pile
    assert codes(out) == ["already_served"]
    assert "menma-7" not in bowl_cards(tb, "bowl-3")
    tb.play("shiitake-3", "bowl-2")
    tb.remove("ajitama-2")
    tb.refill("kamaboko-2")
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Bob", 4)
    tb.play("shiitake-4", "bowl-2")  # nori-0, chashu-1, shiitake-3, shiitake-4: 8
    tb.play("negi-6", "bowl-2")  # 14: ready
    served = kinds(tb.serve("bowl-2"), "bowl_served")
    assert [(e["region"], e["player"]) for e in served] == [("bowl-2", "Bob")]


@pytest.mark.parametrize("second_first", [False, True])
def test_a_card_misread_as_a_served_one_then_read_right_is_one_play(second_first: bool) -> None:
    """Alice's first card of turn 3 lands in Bowl 3 misread as menma-7 (served in turn 2), and
    a later change reads it right, shiitake-3, while the misread id lingers. That is the same
    play read again, not a second card in Bowl 3: no warning, Alice's turn ends with her other
    card and her take, and Bob's serve is Bob's. Counted twice, every later turn and serve
    went to the other player (held-out games, lettered-1 in warm light: 6 of 12 bowls
    credited to the wrong player after one 4 read as a 3)."""
    tb = Table()
    tb.first_turns()
    tb.play("menma-7", "bowl-3")  # a misread: menma-7 lies face down in Bob's pile
    if second_first:
        tb.play("shiitake-7", "bowl-2")  # her other card first: the misread one ended the plays
    out = tb.play("shiitake-3", "bowl-3")  # the same card, read right at last
    assert codes(out) == []
    assert bowl_cards(tb, "bowl-3") == ("shiitake-3",)
    if not second_first:
        tb.play("shiitake-7", "bowl-2")
    tb.remove("ajitama-2")
    tb.refill("kamaboko-2")
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Bob", 4)
    tb.play("negi-6", "bowl-2")  # nori-0, chashu-1, shiitake-7, negi-6: 14, ready
    tb.play("negi-5", "bowl-1")
    served = kinds(tb.serve("bowl-2"), "bowl_served")
    assert [(e["region"], e["player"]) for e in served] == [("bowl-2", "Bob")]
    assert [c for c in codes(tb.sunk) if c != "already_served"] == []


@pytest.mark.parametrize("ghost_bowl", ["bowl-1", "bowl-3"])
def test_a_served_card_read_as_the_second_card_lands_elsewhere_is_no_play(ghost_bowl: str) -> None:
    """Alice has played shiitake-3; in one change her second card lands in Bowl 2 and a
    served card (menma-7) is read in another bowl. Her two plays are those two real cards:
    the misread is warned about, not counted, and her turn ends with her take. Counted
    first, it was her second play and shiitake-4 became Bob's first (held-out game
    segment-1, bump: every turn after went one seat on)."""
    tb = Table()
    tb.first_turns()
    tb.play("shiitake-3", "bowl-3" if ghost_bowl == "bowl-1" else "bowl-1")
    tb.cards["menma-7"] = ghost_bowl
    out = tb.play("shiitake-4", "bowl-2")
    assert codes(out) == ["already_served"]
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Alice", 3)  # her take is still to come
    tb.remove("ajitama-2")
    tb.refill("kamaboko-2")
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Bob", 4)
    assert [c for c in codes(tb.sunk) if c != "already_served"] == []


def test_a_served_card_read_beside_a_card_that_landed_is_that_card_read_twice() -> None:
    """Alice's first card of turn 3 lands in Bowl 1 and, in the same change, a served card
    (menma-7) is read in Bowl 1 too: that is the new card's far end read as another (a lone
    card shows both ends). It is not a play: her turn goes on to her second card."""
    tb = Table()
    tb.first_turns()
    tb.cards["shiitake-3"] = "bowl-1"
    out = tb.play("menma-7", "bowl-1")
    assert codes(out) == ["already_served"]
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Alice", 3)
    assert bowl_cards(tb, "bowl-1") == ("shiitake-3",)
    tb.play("shiitake-4", "bowl-2")
    tb.remove("ajitama-2")
    tb.refill("kamaboko-2")
    v = tb.f.view()
    assert (v.current_player, v.turn) == ("Bob", 4)


def bowl_cards(tb: Table, region: str) -> tuple[str, ...]:
    return next(b.cards for b in tb.f.view().bowls if b.region == region)


# -- what no legal reading explains: warned every time ---------------------------------------
@pytest.mark.parametrize(
    ("moves", "code", "params"),
    [
        pytest.param(
            [
                ("play", "menma-7", "bowl-1"),
                ("play", "nori-0", "bowl-2"),
                ("play", "shiitake-3", "bowl-3"),
                ("play", "negi-2", "bowl-1"),
                ("play", "chashu-4", "bowl-2"),
            ],
            "third_card",
            {"bowl": "bowl-2"},
            id="a third card played",
        ),
        pytest.param(
            [("play", "menma-7", "bowl-1"), ("play", "nori-0", "bowl-2"), ("serve", "bowl-2")],
            "bowl_taken_unready",
            {"bowl": "bowl-2", "sum": "0", "types": "1"},
            id="a bowl taken away unready",
        ),
        pytest.param(
            [("first_turns",), ("play", "menma-7", "bowl-3")],
            "already_served",
            {"card": "menma-7"},
            id="a card from outside the game (already served)",
        ),
        pytest.param(
            [("play", "menma-7", "bowl-1"), ("play", "ajitama-2", "bowl-2")],
            "fridge_to_bowl",
            {"card": "ajitama-2", "bowl": "bowl-2"},
            id="a Fridge card played without being taken",
        ),
        pytest.param(
            [("first_turns",), ("remove", "ajitama-2")],
            "take_before_plays",
            {},
            id="a Fridge take before any play",
        ),
        pytest.param(
            [("play", "menma-7", "bowl-1"), ("play", "nori-0", "bowl-1")],
            "same_bowl_twice",
            {"bowl": "bowl-1"},
            id="two cards into one bowl",
        ),
        pytest.param(
            [("play", "menma-7", "bowl-1"), ("remove", "ajitama-0"), ("remove", "ajitama-1")],
            "second_take",
            {},
            id="two Fridge takes before the plays are in",
        ),
    ],
)
def test_an_illegal_move_is_warned_with_its_code(
    moves: list[tuple[str, ...]], code: str, params: dict[str, str]
) -> None:
    tb = Table()
    last: list[dict[str, Any]] = []
    for kind, *args in moves:
        last = getattr(tb, kind)(*args) or []
    warned = kinds(last, "rule_warning")
    assert [w["code"] for w in warned] == [code]
    assert warned[0]["params"] == params
    assert warned[0]["message"] == english(code, params)
    assert tb.f.view().notes[-1] == Note.of(code, params)


def test_a_hidden_card_notice_carries_its_code() -> None:
    tb = alice_plays_both()
    tb.remove("ajitama-0")
    tb.refill("kamaboko-0")
    tb.play("negi-1", "bowl-1")
    out = tb.remove("menma-7")
    (hidden,) = kinds(out, "card_hidden")
    assert hidden["code"] == "card_hidden"
    assert hidden["params"] == {"card": "menma-7", "bowl": "bowl-1"}
    assert kinds(out, "rule_warning") == []


# -- the UI's words ----------------------------------------------------------------------------
SAMPLE = {
    "card": "nori-4",
    "bowl": "bowl-2",
    "src": "bowl-1",
    "dst": "bowl-3",
    "who": "Bob",
    "sum": "9",
    "types": "3",
}


@pytest.mark.parametrize("code", sorted(RULE_WARNINGS) + sorted(NOTICES))
@pytest.mark.parametrize("lang", ["en", "fr"])
def test_every_warning_has_a_line_in_every_language(code: str, lang: str) -> None:
    assert f"warn_{code}" in STRINGS[lang]
    text = warning_text(code, SAMPLE, lang)
    assert "{" not in text and "bowl-" not in text and "nori-4" not in text
    if lang == "en":
        assert text.replace("4 Nori", "nori-4") == english(code, SAMPLE)


def test_a_warning_logged_without_a_field_still_reads() -> None:
    """An event from an older log lacks `sum`/`types`: the line shows '?' there."""
    assert warning_text("bowl_taken_unready", {"bowl": "bowl-1"}, "fr") == (
        "Le Bol 1 a été retiré alors qu'il n'était pas prêt (somme ? sur 14, ? types sur 7)."
    )
    assert warning_text("no_such_code", {}, "fr") == "no_such_code"


def test_the_french_screen_gets_french_warnings() -> None:
    tb = Table()
    tb.play("menma-7", "bowl-1")
    tb.play("nori-0", "bowl-1")
    announcer = Announcer()
    view: GameView = tb.f.view()
    assert announcer.new_warnings(view, "fr") == [
        "Deux cartes dans le Bol 1 ce tour-ci : jouez dans deux Bols différents."
    ]
    assert announcer.new_warnings(view, "fr") == []  # once
