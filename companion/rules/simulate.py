"""Whole simulated games and their record (the JSON of issue 2), and replaying a record.

The record is read by the game follower and the synthetic-game renderer, so its JSON shape is
a contract: {"mode", "seed", "players", "setup": {"deck", "hands", "fridge", "discarded"},
"turns": [{"player", "plays": [{"card", "bowl"}], "served": [{"bowl", "to", "cards"}],
"took", "refilled", "drew"}], "final": <tally JSON>}. `setup.deck` is the draw pile after
dealing, top first; setup's four lists hold the 56 cards once each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.cards import Card, parse_card
from companion.errors import BadInputError
from companion.rules.bots import BOTS, Bot
from companion.rules.modes import MODES, Mode
from companion.rules.scoring import Tally
from companion.rules.state import (
    Drew,
    GameState,
    Play,
    Refilled,
    Served,
    Take,
    TurnEnded,
    from_setup,
    new_game,
    step,
)


def get_mode(mode: Mode | str) -> Mode:
    """A Mode from itself or its name; BadInputError for an unknown name."""
    if isinstance(mode, Mode):
        return mode
    try:
        return MODES[str(mode)]
    except KeyError:
        raise BadInputError(f"unknown mode {mode!r}: expected one of {', '.join(MODES)}") from None


@dataclass(frozen=True, slots=True)
class Setup:
    """The table before the first turn."""

    deck: tuple[Card, ...]
    """Draw pile after dealing, top first."""
    hands: tuple[tuple[Card, ...], ...]
    """Per seat."""
    fridge: tuple[Card, ...]
    discarded: tuple[Card, ...]
    """Solo's 4 face-down cards; empty otherwise."""


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One player's turn: their plays and everything that followed."""

    player: str
    plays: tuple[Play, ...] = ()
    served: tuple[Served, ...] = ()
    took: tuple[Card, ...] = ()
    """Fridge cards taken, in order (a second one when the deck was empty)."""
    refilled: tuple[Card, ...] = ()
    drew: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class Record:
    """A whole game: setup, turns, final tally."""

    mode: Mode
    seed: int | None
    players: tuple[str, ...]
    setup: Setup
    turns: tuple[TurnRecord, ...]
    final: Tally
    states: tuple[GameState, ...] = field(default=(), repr=False, compare=False)
    """Every state from setup to the end (one per action), for tests and viewers."""


def _start(state: GameState) -> Setup:
    return Setup(state.deck, state.hands, state.fridge, state.discarded)


def play_game(
    state: GameState, bots: Sequence[Bot], seed: int | None = None, keep_states: bool = False
) -> Record:
    """Play `state` to the end with one bot per seat and record it."""
    setup = _start(state)
    turns: list[TurnRecord] = []
    cur: dict[str, list[Any]] = {}
    states = [state] if keep_states else []
    first = state

    def fresh() -> dict[str, list[Any]]:
        return {"plays": [], "served": [], "took": [], "refilled": [], "drew": []}

    cur = fresh()
    player = state.current_player
    while not state.is_over:
        action = bots[state.current].choose(state)
        state, events = step(state, action)
        if keep_states:
            states.append(state)
        (cur["plays"] if isinstance(action, Play) else cur["took"]).append(
            action if isinstance(action, Play) else action.card
        )
        for ev in events:
            if isinstance(ev, Served):
                cur["served"].append(ev)
            elif isinstance(ev, Refilled):
                cur["refilled"].append(ev.card)
            elif isinstance(ev, Drew):
                cur["drew"].append(ev.card)
            elif isinstance(ev, TurnEnded):
                turns.append(TurnRecord(player, *(tuple(cur[k]) for k in cur)))
                cur = fresh()
                player = ev.next_player or ""
    return Record(
        mode=first.mode,
        seed=seed,
        players=first.players,
        setup=setup,
        turns=tuple(turns),
        final=state.tally(),
        states=tuple(states),
    )


def simulate(
    mode: Mode | str,
    seed: int,
    players: Sequence[str] | None = None,
    bot: str = "greedy",
    keep_states: bool = False,
) -> Record:
    """One whole legal game, shuffled by `seed`, every seat played by `bot` (`greedy` or
    `random`, seat i seeded from (seed, i)). Same arguments, same game."""
    m = get_mode(mode)
    if bot not in BOTS:
        raise BadInputError(f"unknown bot {bot!r}: expected one of {', '.join(BOTS)}")
    state = new_game(m, seed, players)
    bots = [BOTS[bot](f"{seed}:{i}") for i in range(m.players)]
    return play_game(state, bots, seed=seed, keep_states=keep_states)


def _ids(cards: Sequence[Card]) -> list[str]:
    return [c.id for c in cards]


def record_to_json(record: Record) -> dict[str, Any]:
    """The record as issue 2's JSON object (see module docstring)."""
    return {
        "mode": record.mode.name,
        "seed": record.seed,
        "players": list(record.players),
        "setup": {
            "deck": _ids(record.setup.deck),
            "hands": {n: _ids(h) for n, h in zip(record.players, record.setup.hands, strict=True)},
            "fridge": _ids(record.setup.fridge),
            "discarded": _ids(record.setup.discarded),
        },
        "turns": [
            {
                "player": t.player,
                "plays": [{"card": p.card.id, "bowl": p.bowl} for p in t.plays],
                "served": [{"bowl": s.bowl, "to": s.to, "cards": _ids(s.cards)} for s in t.served],
                "took": _ids(t.took),
                "refilled": _ids(t.refilled),
                "drew": _ids(t.drew),
            }
            for t in record.turns
        ],
        "final": record.final.to_json(),
    }


def _cards(value: Any, where: str) -> list[Card]:
    if not isinstance(value, list):
        raise BadInputError(f"{where}: expected a list of card ids")
    return [parse_card(v) for v in value]


def _get(obj: Any, key: str, where: str) -> Any:
    if not isinstance(obj, Mapping) or key not in obj:
        raise BadInputError(f"{where}: missing {key!r}")
    return obj[key]


def replay(record: Mapping[str, Any]) -> GameState:
    """Re-apply a record's JSON through the checked `apply`; return the final state.

    Raises IllegalActionError when a play or take breaks a rule, BadInputError when the
    record's served/refilled/drew lists or final tally disagree with what the rules make happen.
    """
    mode = get_mode(_get(record, "mode", "record"))
    players = _get(record, "players", "record")
    setup = _get(record, "setup", "record")
    hands_json = _get(setup, "hands", "setup")
    if not isinstance(players, list) or not isinstance(hands_json, Mapping):
        raise BadInputError("record: players must be a list and setup.hands an object")
    state = from_setup(
        mode,
        players,
        _cards(_get(setup, "deck", "setup"), "setup.deck"),
        [_cards(hands_json.get(p), f"setup.hands[{p!r}]") for p in players],
        _cards(_get(setup, "fridge", "setup"), "setup.fridge"),
        _cards(setup.get("discarded", []), "setup.discarded"),
    )
    for n, turn in enumerate(_get(record, "turns", "record"), start=1):
        where = f"turn {n}"
        if state.is_over:
            raise BadInputError(f"{where}: the game was already over")
        if _get(turn, "player", where) != state.current_player:
            raise BadInputError(
                f"{where}: record says {turn['player']!r} plays, the rules say "
                f"{state.current_player!r}"
            )
        seen: dict[str, list[Any]] = {"served": [], "refilled": [], "drew": []}
        actions: list[Play | Take] = [
            Play(parse_card(_get(p, "card", where)), str(_get(p, "bowl", where)))
            for p in _get(turn, "plays", where)
        ]
        actions += [Take(c) for c in _cards(_get(turn, "took", where), f"{where} took")]
        ended = False
        for action in actions:
            if ended:
                raise BadInputError(f"{where}: {action} after the turn had ended")
            state, events = step(state, action)
            for ev in events:
                if isinstance(ev, Served):
                    seen["served"].append({"bowl": ev.bowl, "to": ev.to, "cards": _ids(ev.cards)})
                elif isinstance(ev, Refilled):
                    seen["refilled"].append(ev.card.id)
                elif isinstance(ev, Drew):
                    seen["drew"].append(ev.card.id)
                elif isinstance(ev, TurnEnded):
                    ended = True
        if not ended:
            raise BadInputError(f"{where}: the turn is incomplete (phase {state.phase})")
        for key, got in seen.items():
            if list(turn.get(key, [])) != got:
                raise BadInputError(f"{where}: record's {key} {turn.get(key)} != rules' {got}")
    if not state.is_over:
        raise BadInputError("record ends before the game is over")
    if "final" in record and record["final"] != state.tally().to_json():
        raise BadInputError(
            f"record's final tally {record['final']} != rules' {state.tally().to_json()}"
        )
    return state
