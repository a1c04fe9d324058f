"""Simple players for simulated games: a random bot and a greedy one. Deterministic by seed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import permutations
from typing import Protocol

from companion.cards import Card
from companion.rules.modes import BOWLS, SERVER
from companion.rules.scoring import POINTS_BY_TYPES, READY_SUM, is_ready, pile_points
from companion.rules.state import Action, GameState, Phase, Play, Take, legal_actions


class Bot(Protocol):
    """Anything that picks a legal action for the current player."""

    def choose(self, state: GameState) -> Action: ...


class RandomBot:
    """Uniformly random legal action (its own `random.Random(seed)`, never the global one)."""

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState) -> Action:
        return self.rng.choice(list(legal_actions(state)))


Bowls = tuple[tuple[Card, ...], ...]

SOLO_HOPE = 0.9
"""Share of a building bowl's points the solo greedy bot counts on (tuned on seeds 0..299:
0.7 -> mean 44 points, 0.9 -> 50, 1.0 -> 50.6 on seeds 0..99 but lower on 100..299)."""


class GreedyBot:
    """One-turn lookahead: plays the pair of cards whose resulting bowls look best for its side.

    It counts points it serves to itself (or its team), minus points it hands to others, plus
    a share of the points still building in bowls it can hope to get: its own bowls fully,
    communal bowls less the closer they are to 14 (an opponent may serve them first), other
    players' bowls negatively (it feeds them same-ingredient junk instead). Fridge takes pick
    the card that would improve the bowls most. Ties are broken by its own seeded RNG.
    """

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)

    # -- evaluation --------------------------------------------------------------------
    def _value(self, state: GameState, bowls: Bowls) -> float:
        mode, seat = state.mode, state.current
        me = mode.scorer_of_seat(seat)
        alone = mode.scorers == 1
        total = 0.0
        for i, cards in enumerate(bowls):
            if not cards:
                continue
            if is_ready(cards):
                to = mode.bowl_scorer(i, seat)
                pts = pile_points(cards) + 0.3 - 0.02 * len(cards)
                total += pts if to == me else -pts
                continue
            types = len({c.ingredient for c in cards})
            s = sum(c.value for c in cards)
            hope = POINTS_BY_TYPES[types] + 0.25 * types + 0.04 * (READY_SUM - s)
            owner = mode.bowl_owners[i]
            if alone:
                total += SOLO_HOPE * hope
            elif owner == SERVER:
                risk = min(1.0, max(0.0, (s - 5) / 8))
                total += 0.6 * hope * (1 - 2 * risk)
            elif mode.bowl_scorer(i, seat) == me:
                total += 0.7 * hope
            else:
                total -= 0.7 * hope
        return total

    def _best(self, options: Sequence[tuple[float, object]]) -> object:
        top = max(v for v, _ in options)
        return self.rng.choice([o for v, o in options if v >= top - 1e-9])

    def _plan(self, state: GameState) -> Play:
        left = state.to_play - len(state.played)
        used = {p.bowl for p in state.played}
        free = [i for i, b in enumerate(BOWLS) if b not in used]
        options: list[tuple[float, object]] = []
        hand = state.hand
        for cards in permutations(hand, left):
            if left == 2 and cards[0].index > cards[1].index:
                continue  # the pair's order does not matter: serving waits for both
            for where in permutations(free, left):
                bowls = list(state.bowls)
                for c, i in zip(cards, where, strict=True):
                    bowls[i] = (*bowls[i], c)
                first = Play(cards[0], BOWLS[where[0]])
                options.append((self._value(state, tuple(bowls)), first))
        choice = self._best(options)
        assert isinstance(choice, Play)
        return choice

    def _take(self, state: GameState) -> Take:
        base = self._value(state, state.bowls)
        options: list[tuple[float, object]] = []
        for card in state.fridge:
            gain = max(
                self._value(
                    state, (*state.bowls[:i], (*state.bowls[i], card), *state.bowls[i + 1 :])
                )
                for i in range(len(BOWLS))
            )
            options.append((gain - base, Take(card)))
        choice = self._best(options)
        assert isinstance(choice, Take)
        return choice

    def choose(self, state: GameState) -> Action:
        if state.phase is Phase.PLAY:
            return self._plan(state)
        return self._take(state)


BOTS: dict[str, type[RandomBot] | type[GreedyBot]] = {"greedy": GreedyBot, "random": RandomBot}
"""Bot classes by CLI name."""
