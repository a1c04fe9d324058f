"""The turn machine against the rulebook and its FAQ, mode by mode, with illegal actions."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

from companion.cards import ALL_CARDS, parse_card, parse_cards
from companion.rules import (
    MODES,
    Drew,
    GameOver,
    GameState,
    IllegalActionError,
    Phase,
    Play,
    Refilled,
    Served,
    Take,
    TurnEnded,
    apply,
    from_setup,
    is_legal,
    legal_actions,
    new_game,
    step,
)


def cards(text: str) -> tuple:
    return parse_cards(text.split()) if text else ()


def table(
    mode: str = "2p",
    hands: tuple[str, ...] = ("nori-0 nori-1 nori-2 nori-3", "negi-0 negi-1 negi-2 negi-3"),
    fridge: str = "menma-0 menma-1 menma-2 menma-3",
    bowls: tuple[str, str, str] = ("", "", ""),
    deck: str | None = None,
    current: int = 0,
) -> GameState:
    """A mid-game table; every card not placed is in the deck (or discarded when deck="")."""
    m = MODES[mode]
    hand_cards = [cards(h) for h in hands]
    hand_cards += [()] * (m.players - len(hand_cards))
    bowl_cards = tuple(cards(b) for b in bowls)
    placed = {c for h in hand_cards for c in h} | set(cards(fridge))
    placed |= {c for b in bowl_cards for c in b}
    rest = tuple(c for c in ALL_CARDS if c not in placed)
    the_deck = rest if deck is None else cards(deck)
    discarded = tuple(c for c in rest if c not in the_deck)
    placed_list = [*(c for h in hand_cards for c in h), *cards(fridge)]
    placed_list += [c for b in bowl_cards for c in b]
    assert len(placed_list) == len(placed), "a test table places a card twice"
    return GameState(
        mode=m,
        players=tuple(f"P{i}" for i in range(1, m.players + 1)),
        deck=the_deck,
        fridge=cards(fridge),
        hands=tuple(hand_cards),
        bowls=bowl_cards,  # type: ignore[arg-type]
        served=tuple(() for _ in range(m.scorers)),
        discarded=discarded,
        current=current,
        to_play=min(2, len(hand_cards[current])),
    )


def play(state: GameState, card: str, bowl: str) -> GameState:
    return apply(state, Play(parse_card(card), bowl))


def test_a_full_turn_plays_serves_takes_refills_draws() -> None:
    s = table(bowls=("chashu-7 chashu-6", "", ""), deck="ajitama-1 ajitama-2 ajitama-3")
    s = play(s, "nori-1", "bowl-1")  # 14: ready, but not served before the second card
    assert s.bowl("bowl-1") and s.ready_bowls == ("bowl-1",)
    s, events = step(s, Play(parse_card("nori-2"), "bowl-2"))
    assert events == (Served("bowl-1", "P1", cards("chashu-7 chashu-6 nori-1"), "sum"),)
    assert s.phase is Phase.TAKE and not s.bowl("bowl-1")
    s, events = step(s, Take(parse_card("menma-2")))
    assert events == (
        Refilled(parse_card("ajitama-1")),
        Drew("P1", parse_card("ajitama-2")),
        TurnEnded("P1", "P2"),
    )
    assert s.hands[0] == cards("nori-0 nori-3 menma-2 ajitama-2")
    assert s.fridge == cards("menma-0 menma-1 menma-3 ajitama-1")
    assert s.current_player == "P2" and s.phase is Phase.PLAY and s.turn == 2


def test_bowl_with_all_seven_types_is_served_under_14() -> None:
    s = table(
        hands=("negi-0 nori-1 nori-2 nori-3", "negi-5 negi-6 negi-7 kamaboko-7"),
        fridge="ajitama-4 ajitama-5 ajitama-6 ajitama-7",
        bowls=("nori-0 chashu-0 shiitake-0 ajitama-0 kamaboko-2 menma-3", "", ""),
    )
    s = play(play(s, "negi-0", "bowl-1"), "nori-1", "bowl-2")
    assert s.served_by("P1") == (
        cards("nori-0 chashu-0 shiitake-0 ajitama-0 kamaboko-2 menma-3 negi-0"),
    )


def test_faq_cannot_play_into_a_bowl_served_this_turn() -> None:
    """Serving waits for both cards: the ready bowl is still there, and a turn's two cards go
    into two different bowls, so no new bowl can be started in its place."""
    s = play(table(bowls=("chashu-7 chashu-6", "", "")), "nori-1", "bowl-1")
    with pytest.raises(IllegalActionError, match="different bowls") as err:
        play(s, "nori-2", "bowl-1")
    assert err.value.rule == "different-bowls"


def test_every_ready_bowl_is_served_after_both_cards() -> None:
    s = table(bowls=("chashu-7 chashu-6", "kamaboko-7 kamaboko-6", ""))
    s, ev1 = step(s, Play(parse_card("nori-1"), "bowl-1"))
    s, ev2 = step(s, Play(parse_card("nori-2"), "bowl-2"))
    assert ev1 == ()
    assert [e.bowl for e in ev2 if isinstance(e, Served)] == ["bowl-1", "bowl-2"]
    assert s.active_bowls == ()


def test_faq_one_card_in_hand_plays_one_card() -> None:
    s = table(mode="solo", hands=("nori-5",), deck="")
    assert s.to_play == 1
    with pytest.raises(IllegalActionError) as err:
        apply(s, Take(parse_card("menma-0")))
    assert err.value.rule == "step-order"
    s = play(s, "nori-5", "bowl-2")
    assert s.phase is Phase.TAKE


def test_two_cards_must_be_played_before_taking() -> None:
    s = play(table(), "nori-1", "bowl-1")
    with pytest.raises(IllegalActionError, match="play 1 more card"):
        apply(s, Take(parse_card("menma-0")))


def test_faq_empty_deck_take_from_fridge_instead_of_drawing() -> None:
    s = table(deck="")
    s = play(play(s, "nori-1", "bowl-1"), "nori-2", "bowl-2")
    s, events = step(s, Take(parse_card("menma-0")))
    assert events == () and s.phase is Phase.FRIDGE_DRAW  # no refill, no draw
    s, events = step(s, Take(parse_card("menma-3")))
    assert events == (TurnEnded("P1", "P2"),)
    assert s.hands[0] == cards("nori-0 nori-3 menma-0 menma-3")
    assert s.fridge == cards("menma-1 menma-2")


def test_last_deck_card_refills_the_fridge_then_the_draw_comes_from_the_fridge() -> None:
    s = table(deck="ajitama-5")
    s = play(play(s, "nori-1", "bowl-1"), "nori-2", "bowl-2")
    s, events = step(s, Take(parse_card("menma-0")))
    assert events == (Refilled(parse_card("ajitama-5")),)
    assert s.phase is Phase.FRIDGE_DRAW and not s.deck
    assert Take(parse_card("ajitama-5")) in set(legal_actions(s))


def test_empty_fridge_and_deck_skip_steps_3_to_5() -> None:
    s = table(hands=("nori-1 nori-2 nori-3", "negi-1"), fridge="", deck="")
    s, events = step(play(s, "nori-1", "bowl-1"), Play(parse_card("nori-2"), "bowl-2"))
    assert events[-1] == TurnEnded("P1", "P2")
    assert s.current_player == "P2" and s.to_play == 1


def test_player_with_nothing_to_do_is_skipped() -> None:
    s = table(hands=("nori-1 nori-2 nori-3", ""), fridge="", deck="")
    s, events = step(play(s, "nori-1", "bowl-1"), Play(parse_card("nori-2"), "bowl-2"))
    assert events[-1] == TurnEnded("P1", "P1")
    assert s.current_player == "P1" and s.to_play == 1 and s.turn == 2


def test_game_ends_when_all_cards_played_and_unserved_bowls_are_discarded() -> None:
    s = table(mode="solo", hands=("nori-1",), fridge="", deck="", bowls=("chashu-3", "", ""))
    s, events = step(s, Play(parse_card("nori-1"), "bowl-1"))
    assert s.is_over and s.phase is Phase.OVER
    assert events[-1] == GameOver((("bowl-1", cards("chashu-3 nori-1")),))
    assert s.active_bowls == ()
    outcome = s.outcome()
    assert outcome is not None and outcome.unserved == (("bowl-1", cards("chashu-3 nori-1")),)
    assert outcome.tally.score("P1").bowls == 0
    with pytest.raises(IllegalActionError) as err:
        apply(s, Play(parse_card("nori-1"), "bowl-1"))
    assert err.value.rule == "game-over"
    assert list(legal_actions(s)) == []


@pytest.mark.parametrize(
    ("mode", "seat", "bowl", "to"),
    [
        ("solo", 0, "bowl-1", "P1"),
        ("solo", 0, "bowl-3", "P1"),
        ("2p", 0, "bowl-2", "P1"),
        ("2p", 1, "bowl-2", "P2"),
        ("2p", 1, "bowl-3", "P2"),
        # 3p: the bowl in front of player N goes to player N, whoever serves it.
        ("3p", 0, "bowl-1", "P1"),
        ("3p", 0, "bowl-2", "P2"),
        ("3p", 0, "bowl-3", "P3"),
        ("3p", 2, "bowl-1", "P1"),
        ("3p", 1, "bowl-2", "P2"),
        # 4p: seats A1, B1, A2, B2; bowl-1 communal, bowl-2 team A, bowl-3 team B.
        ("4p", 0, "bowl-1", "A"),
        ("4p", 1, "bowl-1", "B"),
        ("4p", 2, "bowl-1", "A"),
        ("4p", 3, "bowl-1", "B"),
        ("4p", 1, "bowl-2", "A"),
        ("4p", 0, "bowl-3", "B"),
        ("4p", 2, "bowl-2", "A"),
        ("4p", 3, "bowl-3", "B"),
    ],
)
def test_bowl_ownership_by_mode(mode: str, seat: int, bowl: str, to: str) -> None:
    full = {"bowl-1": "", "bowl-2": "", "bowl-3": ""}
    full[bowl] = "chashu-7 chashu-6"
    hands = ["", "", "", ""][: MODES[mode].players]
    hands[seat] = "nori-1 nori-2 nori-3 nori-4"
    s = table(mode=mode, hands=tuple(hands), bowls=tuple(full.values()), current=seat)  # type: ignore[arg-type]
    other = next(b for b in full if b != bowl)
    s, events = step(play(s, "nori-1", bowl), Play(parse_card("nori-2"), other))
    assert events == (Served(bowl, to, cards("chashu-7 chashu-6 nori-1"), "sum"),)
    assert s.served_by(to) == (cards("chashu-7 chashu-6 nori-1"),)


def test_4p_turn_order_alternates_teams() -> None:
    s = new_game(MODES["4p"], 7, ["Ann", "Bea", "Cid", "Dan"])
    assert s.scorers == ("A", "B")
    assert [s.mode.teams[i] for i in range(4)] == ["A", "B", "A", "B"]


@pytest.mark.parametrize(
    ("action_of", "rule", "quoted"),
    [
        (lambda s: Play(parse_card("negi-0"), "bowl-1"), "card-in-hand", "play negi-0 to bowl-1"),
        (lambda s: Play(parse_card("nori-0"), "bowl-4"), "three-bowls", "play nori-0 to bowl-4"),
        (lambda s: Take(parse_card("menma-0")), "step-order", "take menma-0 from the Fridge"),
        (lambda s: "nori-0", "action-kind", "nori-0"),
    ],
)
def test_illegal_actions_name_the_rule_and_quote_the_action(action_of, rule, quoted) -> None:
    s = table()
    action = action_of(s)
    assert not is_legal(s, action)
    with pytest.raises(IllegalActionError) as err:
        apply(s, action)
    assert err.value.rule == rule and err.value.action == action
    assert quoted in str(err.value) and f"[rule {rule}]" in str(err.value)
    assert isinstance(err.value, ValueError)


def test_illegal_take_phase_actions() -> None:
    s = play(play(table(), "nori-1", "bowl-1"), "nori-2", "bowl-2")
    with pytest.raises(IllegalActionError) as err:
        apply(s, Take(parse_card("nori-5")))
    assert err.value.rule == "card-in-fridge"
    with pytest.raises(IllegalActionError) as err:
        play(s, "nori-3", "bowl-3")
    assert err.value.rule == "step-order"


def test_legal_actions_are_exactly_the_legal_ones() -> None:
    s = play(table(), "nori-1", "bowl-1")
    listed = set(legal_actions(s))
    assert listed == {
        Play(c, b) for c in cards("nori-0 nori-2 nori-3") for b in ("bowl-2", "bowl-3")
    }
    every = [Play(c, b) for c in ALL_CARDS for b in ("bowl-1", "bowl-2", "bowl-3")]
    assert {a for a in every if is_legal(s, a)} == listed


def test_apply_never_mutates_its_input() -> None:
    s = table()
    before = replace(s)
    play(s, "nori-1", "bowl-1")
    assert s == before


@pytest.mark.parametrize("mode", list(MODES))
def test_setup_deals_by_mode(mode: str) -> None:
    m = MODES[mode]
    s = new_game(m, 42)
    assert len(s.hands) == m.players and all(len(h) == 4 for h in s.hands)
    assert len(s.fridge) == 4 and len(s.discarded) == (4 if mode == "solo" else 0)
    assert len(s.deck) == 56 - 4 - 4 * m.players - len(s.discarded)
    assert new_game(m, 42) == s and new_game(m, 43) != s


def test_from_setup_rejects_missing_or_duplicate_cards() -> None:
    s = new_game(MODES["2p"], 1)
    with pytest.raises(ValueError, match="56 cards"):
        from_setup(s.mode, None, s.deck[1:], s.hands, s.fridge)
    with pytest.raises(ValueError, match="needs 2 player"):
        from_setup(s.mode, ["solo"], s.deck, s.hands, s.fridge)


def test_importing_rules_pulls_no_heavy_modules() -> None:
    code = (
        "import sys, companion.rules, companion.commands.simulate, companion.commands.score, "
        "companion.commands.tally\n"
        "print([m for m in ('numpy', 'cv2', 'kivy', 'torch', 'ultralytics') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
