"""Properties of whole games over many seeds, every mode and both bots (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.cards import ALL_CARDS
from companion.rules import (
    BOTS,
    BOWLS,
    MODES,
    Phase,
    Served,
    TurnEnded,
    is_legal,
    is_ready,
    legal_actions,
    new_game,
    pile_points,
    record_to_json,
    simulate,
    step,
)

games = st.tuples(
    st.sampled_from(sorted(MODES)), st.integers(0, 2**32), st.sampled_from(sorted(BOTS))
)


@settings(max_examples=60, deadline=None)
@given(games)
def test_whole_games_keep_every_rule(game: tuple[str, int, str]) -> None:
    mode_name, seed, bot_name = game
    mode = MODES[mode_name]
    state = new_game(mode, seed)
    bots = [BOTS[bot_name](f"{seed}:{i}") for i in range(mode.players)]
    plays_this_turn, hand_at_start = 0, len(state.hand)
    while not state.is_over:
        legal = list(legal_actions(state))
        assert legal, f"no legal action in phase {state.phase}"
        action = bots[state.current].choose(state)
        assert action in legal and is_legal(state, action)
        state, events = step(state, action)
        # Card conservation: each of the 56 cards in exactly one place after every action.
        where = Counter(c for _, c in state.places())
        assert set(where) == set(ALL_CARDS) and max(where.values()) == 1
        # Never a fourth bowl: cards only ever in the three bowl places.
        assert len(state.bowls) == len(BOWLS) == 3
        assert len(state.fridge) <= mode.fridge_size
        plays_this_turn += action.__class__.__name__ == "Play"
        for ev in events:
            if isinstance(ev, Served):
                assert is_ready(ev.cards)
            if isinstance(ev, TurnEnded):
                # No bowl stays ready after a turn; two plays unless the hand held one.
                assert state.ready_bowls == ()
                assert plays_this_turn == min(2, hand_at_start)
                plays_this_turn, hand_at_start = 0, len(state.hand)
    assert state.phase is Phase.OVER
    assert not state.deck and not state.fridge and not any(state.hands)
    assert all(not b for b in state.bowls)
    result = state.tally()
    for name, piles in zip(state.scorers, state.served, strict=True):
        assert result.score(name).points == sum(pile_points(p) for p in piles)
        assert result.score(name).bowls == len(piles)
    played = sum(len(p) for piles in state.served for p in piles)
    played += sum(len(c) for _, c in state.unserved)
    assert played == 56 - len(state.discarded)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(sorted(MODES)), st.integers(0, 2**32))
def test_simulate_is_deterministic_by_seed(mode: str, seed: int) -> None:
    assert record_to_json(simulate(mode, seed)) == record_to_json(simulate(mode, seed))
