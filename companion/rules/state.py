"""Game state, actions and the turn machine of Ramen! Ramen!, for every mode.

A `GameState` is frozen: `apply` returns a new one, so the tracker, the UI and the game log can
hold snapshots. Players choose only two kinds of actions, `Play(card, bowl)` and
`Take(card)`; everything else in a turn (serving, refilling the Fridge, drawing, passing the
turn, ending the game) happens inside `step`/`apply` at the rulebook's moment and is reported
as events, so a record shows it.

How this engine reads the rulebook where it leaves room (EN and FR rulebooks, FAQ included):

- Step 1: the player plays two cards into two *different* bowls. Only when the hand holds a
  single card does the player play one card (FAQ, solo; we apply it in every mode). The
  number of cards to play is fixed when the turn starts: min(2, cards in hand).
- "No more than three Bowls may be active": there are exactly three bowl places, `bowl-1`,
  `bowl-2`, `bowl-3`; a bowl is active while it holds cards. Cards go nowhere else.
- Step 2 happens once, after all the turn's cards are played ("it may not be served until after
  both cards have been played"; FAQ: no playing into a bowl served this turn). Every bowl then
  ready (value sum >= 14 or all 7 ingredient types) is served at that moment, in bowl order.
  A bowl is credited per `Mode.bowl_scorer` (communal -> the serving player or their team).
- Steps 3-5: take 1 Fridge card; add 1 card from the deck to the Fridge if the deck has any;
  draw 1 if the deck has any, otherwise (FAQ "If the draw pile is empty, select 1 card from
  the Fridge to add to your hand instead") take one more Fridge card if the Fridge has any.
  The "End of Game" paragraph says steps 4 and 5 are skipped once the deck is empty; the FAQ
  refines step 5, and we follow the FAQ. A step that cannot be done is skipped ("Do as much as
  you can following Steps 1 through 5").
- The game ends when the deck, the Fridge and every hand are empty (all cards played). This is
  also the solo rule "play until the entire deck and Fridge have been consumed". Bowls still
  unserved then are discarded and score nothing; they are kept in `GameState.unserved`.
- A player whose hand is empty while the Fridge is also empty has nothing to do and is
  skipped (this only happens at the very end, once the deck is gone).
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Final

from companion.cards import ALL_CARDS, Card
from companion.errors import BadInputError, CompanionError
from companion.rules.modes import BOWLS, Mode
from companion.rules.scoring import Tally, is_ready, ready_reason, tally

RULE_GAME_OVER: Final = "game-over"
RULE_STEP_ORDER: Final = "step-order"
RULE_CARD_IN_HAND: Final = "card-in-hand"
RULE_BOWL_PLACE: Final = "three-bowls"
RULE_DIFFERENT_BOWLS: Final = "different-bowls"
RULE_IN_FRIDGE: Final = "card-in-fridge"
RULE_ACTION: Final = "action-kind"


class IllegalActionError(CompanionError, ValueError):
    """An action the rules forbid; `rule` names the rule, `action` is the offending action."""

    def __init__(self, message: str, rule: str, action: object) -> None:
        super().__init__(message)
        self.rule = rule
        self.action = action


class Phase(StrEnum):
    """Where the current player is within the turn."""

    PLAY = "play"
    """Step 1: play cards into bowls."""
    TAKE = "take"
    """Step 3: take one Fridge card."""
    FRIDGE_DRAW = "fridge_draw"
    """Step 5 with an empty deck: take one more Fridge card instead of drawing (FAQ)."""
    OVER = "over"
    """All cards played and every hand empty."""


@dataclass(frozen=True, slots=True)
class Play:
    """Step 1: put one card from hand into a bowl."""

    card: Card
    """Card from the current player's hand."""
    bowl: str
    """`bowl-1`, `bowl-2` or `bowl-3`."""

    def __str__(self) -> str:
        return f"play {self.card.id} to {self.bowl}"


@dataclass(frozen=True, slots=True)
class Take:
    """Step 3 (or step 5 with an empty deck): take one face-up Fridge card into hand."""

    card: Card
    """A card now in the Fridge."""

    def __str__(self) -> str:
        return f"take {self.card.id} from the Fridge"


Action = Play | Take


# Events: what happened automatically after an action, in order.
@dataclass(frozen=True, slots=True)
class Served:
    """A ready bowl was served and its cards became one face-down pile of `to`."""

    bowl: str
    to: str
    """Scorer credited: player name, or team `A`/`B` in 4p."""
    cards: tuple[Card, ...]
    """In play order."""
    reason: str
    """`sum` or `all_types`."""


@dataclass(frozen=True, slots=True)
class Refilled:
    """Step 4: the deck's top card went face up into the Fridge."""

    card: Card


@dataclass(frozen=True, slots=True)
class Drew:
    """Step 5: the current player drew the deck's top card."""

    player: str
    card: Card


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """`player` finished a turn; `next_player` is to play (None when the game is over)."""

    player: str
    next_player: str | None


@dataclass(frozen=True, slots=True)
class GameOver:
    """All cards played; unserved bowls were discarded."""

    unserved: tuple[tuple[str, tuple[Card, ...]], ...]


Event = Served | Refilled | Drew | TurnEnded | GameOver


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended (a value, not a print)."""

    tally: Tally
    """Scores and winners."""
    reason: str
    """Why the game ended; always "all cards played" for Ramen! Ramen!."""
    unserved: tuple[tuple[str, tuple[Card, ...]], ...]
    """Bowls never served, discarded without score."""

    @property
    def winners(self) -> tuple[str, ...]:
        return self.tally.winners


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything on the table, frozen. Seats are 0-based indexes into `players`."""

    mode: Mode
    players: tuple[str, ...]
    """Names in turn order (4p: A1, B1, A2, B2)."""
    deck: tuple[Card, ...]
    """Face-down draw pile, top first."""
    fridge: tuple[Card, ...]
    """Face-up Fridge cards (a taken card leaves a gap; refills go to the end)."""
    hands: tuple[tuple[Card, ...], ...]
    """One hand per seat."""
    bowls: tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
    """Cards of bowl-1..3 in play order; empty = not active."""
    served: tuple[tuple[tuple[Card, ...], ...], ...]
    """Served piles per scorer (`scorers` order), each pile in play order."""
    discarded: tuple[Card, ...] = ()
    """Solo: the 4 cards discarded face down at setup, never used."""
    unserved: tuple[tuple[str, tuple[Card, ...]], ...] = ()
    """Set when the game ends: bowls discarded without being served."""
    current: int = 0
    """Seat whose turn it is."""
    phase: Phase = Phase.PLAY
    to_play: int = 2
    """Cards the current player must play this turn: min(2, hand at turn start)."""
    played: tuple[Play, ...] = ()
    """Plays made so far this turn."""
    turn: int = 1
    """Turn number, 1-based, over all players."""

    # -- reading the table --------------------------------------------------------------
    @property
    def scorers(self) -> tuple[str, ...]:
        """Names served piles are credited to: players, or `A`/`B` in 4p."""
        return self.mode.scorer_names(self.players)

    @property
    def current_player(self) -> str:
        return self.players[self.current]

    @property
    def hand(self) -> tuple[Card, ...]:
        """The current player's hand."""
        return self.hands[self.current]

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def bowl(self, bowl: str) -> tuple[Card, ...]:
        """Cards in `bowl` (`bowl-1`..`bowl-3`)."""
        return self.bowls[_bowl_index(bowl)]

    @property
    def bowls_by_id(self) -> dict[str, tuple[Card, ...]]:
        """Bowl id -> cards in play order."""
        return dict(zip(BOWLS, self.bowls, strict=True))

    @property
    def active_bowls(self) -> tuple[str, ...]:
        return tuple(b for b, cards in zip(BOWLS, self.bowls, strict=True) if cards)

    @property
    def ready_bowls(self) -> tuple[str, ...]:
        """Bowls ready to serve (only ever non-empty between the plays of one turn)."""
        return tuple(b for b, cards in zip(BOWLS, self.bowls, strict=True) if is_ready(cards))

    def served_by(self, scorer: str) -> tuple[tuple[Card, ...], ...]:
        return self.served[self.scorers.index(scorer)]

    def places(self) -> Iterator[tuple[str, Card]]:
        """Every card with its place name (`deck`, `fridge`, `hand:NAME`, `bowl-N`,
        `served:NAME`, `discarded`, `unserved`); each of the 56 cards appears exactly once."""
        for c in self.deck:
            yield "deck", c
        for c in self.fridge:
            yield "fridge", c
        for name, hand in zip(self.players, self.hands, strict=True):
            for c in hand:
                yield f"hand:{name}", c
        for b, cards in zip(BOWLS, self.bowls, strict=True):
            for c in cards:
                yield b, c
        for name, piles in zip(self.scorers, self.served, strict=True):
            for pile in piles:
                for c in pile:
                    yield f"served:{name}", c
        for c in self.discarded:
            yield "discarded", c
        for _, cards in self.unserved:
            for c in cards:
                yield "unserved", c

    def tally(self) -> Tally:
        """Scoreboard of what has been served so far (final once the game is over)."""
        return tally(self.mode, dict(zip(self.scorers, self.served, strict=True)))

    def outcome(self) -> Outcome | None:
        """The game's outcome once it is over, else None."""
        if not self.is_over:
            return None
        return Outcome(tally=self.tally(), reason="all cards played", unserved=self.unserved)


def _bowl_index(bowl: str) -> int:
    try:
        return BOWLS.index(bowl)
    except ValueError:
        raise BadInputError(f"unknown bowl {bowl!r}: expected one of {', '.join(BOWLS)}") from None


# -- setup ------------------------------------------------------------------------------
def default_players(mode: Mode) -> tuple[str, ...]:
    """`Player 1` .. `Player N`."""
    return tuple(f"Player {i}" for i in range(1, mode.players + 1))


MAX_NAME_LENGTH = 24
"""Longest player (or team) name: it has to fit the scoreboard on a 800 x 480 screen."""


def check_player_name(name: object) -> str:
    """A player or team name, stripped: 1..24 printable characters (no newline, tab, escape
    or other control character), else a BadInputError quoting it."""
    if not isinstance(name, str):
        raise BadInputError(f"a player name must be text, got {name!r}")
    text = name.strip()
    if not text:
        raise BadInputError("a player name must not be empty")
    if not text.isprintable() or any(unicodedata.category(c) == "Cf" for c in text):
        raise BadInputError(
            f"player name {text!r} holds a control character: use letters, digits, spaces"
        )
    if len(text) > MAX_NAME_LENGTH:
        raise BadInputError(
            f"player name {text[:MAX_NAME_LENGTH]!r}... is {len(text)} characters long "
            f"(at most {MAX_NAME_LENGTH})"
        )
    return text


def check_players(mode: Mode, players: Sequence[str] | None) -> tuple[str, ...]:
    """Validated player names for mode (defaults when None)."""
    if players is None:
        return default_players(mode)
    names = tuple(str(p).strip() for p in players)
    if len(names) != mode.players:
        raise BadInputError(
            f"mode {mode.name} needs {mode.players} player name(s), got {len(names)}: {list(names)}"
        )
    if any(not n for n in names) or len(set(names)) != len(names):
        raise BadInputError(f"player names must be non-empty and distinct, got {list(names)}")
    return tuple(check_player_name(n) for n in names)


def from_setup(
    mode: Mode,
    players: Sequence[str] | None,
    deck: Sequence[Card],
    hands: Sequence[Sequence[Card]],
    fridge: Sequence[Card],
    discarded: Sequence[Card] = (),
) -> GameState:
    """The state at the start of the first turn from an explicit setup (e.g. a record's)."""
    names = check_players(mode, players)
    if len(hands) != mode.players:
        raise BadInputError(f"mode {mode.name} needs {mode.players} hand(s), got {len(hands)}")
    everything = [*deck, *fridge, *discarded, *(c for h in hands for c in h)]
    if len(everything) != len(ALL_CARDS) or set(everything) != set(ALL_CARDS):
        raise BadInputError(
            "a setup must hold each of the 56 cards exactly once "
            f"(got {len(everything)} cards, {len(set(everything))} distinct)"
        )
    first = tuple(hands[0])
    return GameState(
        mode=mode,
        players=names,
        deck=tuple(deck),
        fridge=tuple(fridge),
        hands=tuple(tuple(h) for h in hands),
        bowls=((), (), ()),
        served=tuple(() for _ in range(mode.scorers)),
        discarded=tuple(discarded),
        to_play=min(2, len(first)),
    )


def deal(mode: Mode, order: Sequence[Card], players: Sequence[str] | None = None) -> GameState:
    """Set up from a shuffled deck (top first): solo discards 4 face down first, then each
    player in turn order gets `hand_size` cards from the top, then the Fridge is turned up."""
    cards = list(order)
    discarded, cards = cards[: mode.discard], cards[mode.discard :]
    hands = []
    for _ in range(mode.players):
        hands.append(cards[: mode.hand_size])
        cards = cards[mode.hand_size :]
    fridge, deck = cards[: mode.fridge_size], cards[mode.fridge_size :]
    return from_setup(mode, players, deck, hands, fridge, discarded)


def new_game(mode: Mode, seed: int, players: Sequence[str] | None = None) -> GameState:
    """A freshly shuffled and dealt game; the same seed gives the same game."""
    order = list(ALL_CARDS)
    random.Random(seed).shuffle(order)
    return deal(mode, order, players)


# -- legality -----------------------------------------------------------------------------
def _illegal(state: GameState, action: object, rule: str, why: str) -> IllegalActionError:
    return IllegalActionError(
        f"illegal action {str(action)!r} by {state.current_player} (turn {state.turn}): "
        f"{why} [rule {rule}]",
        rule,
        action,
    )


def check_action(state: GameState, action: object) -> None:
    """Raise IllegalActionError naming the rule `action` breaks in `state`; None if legal."""
    if state.phase is Phase.OVER:
        raise _illegal(state, action, RULE_GAME_OVER, "the game is over")
    if isinstance(action, Play):
        if state.phase is not Phase.PLAY:
            raise _illegal(
                state,
                action,
                RULE_STEP_ORDER,
                "cards are played to bowls only in step 1; now take a card from the Fridge",
            )
        if action.bowl not in BOWLS:
            raise _illegal(
                state,
                action,
                RULE_BOWL_PLACE,
                f"no more than three bowls: cards go only into {', '.join(BOWLS)}",
            )
        if action.card not in state.hand:
            raise _illegal(
                state, action, RULE_CARD_IN_HAND, f"{action.card.id} is not in the player's hand"
            )
        if any(p.bowl == action.bowl for p in state.played):
            raise _illegal(
                state,
                action,
                RULE_DIFFERENT_BOWLS,
                f"the two cards of a turn go into two different bowls; {action.bowl} "
                "already got one this turn",
            )
        return
    if isinstance(action, Take):
        if state.phase is Phase.PLAY:
            left = state.to_play - len(state.played)
            raise _illegal(
                state,
                action,
                RULE_STEP_ORDER,
                f"play {left} more card(s) to bowls first (step 1 comes before the Fridge)",
            )
        if action.card not in state.fridge:
            raise _illegal(state, action, RULE_IN_FRIDGE, f"{action.card.id} is not in the Fridge")
        return
    raise _illegal(state, action, RULE_ACTION, "an action is Play(card, bowl) or Take(card)")


def is_legal(state: GameState, action: object) -> bool:
    """True when `apply(state, action)` would succeed."""
    try:
        check_action(state, action)
    except IllegalActionError:
        return False
    return True


def legal_actions(state: GameState) -> Iterator[Action]:
    """Every legal action in a stable order (cards in hand/Fridge order, then bowl order)."""
    if state.phase is Phase.PLAY:
        used = {p.bowl for p in state.played}
        for card in state.hand:
            for bowl in BOWLS:
                if bowl not in used:
                    yield Play(card, bowl)
    elif state.phase in (Phase.TAKE, Phase.FRIDGE_DRAW):
        for card in state.fridge:
            yield Take(card)


# -- the turn machine ---------------------------------------------------------------------
def _without(cards: tuple[Card, ...], card: Card) -> tuple[Card, ...]:
    i = cards.index(card)
    return cards[:i] + cards[i + 1 :]


def _set(seq: tuple, i: int, value: object) -> tuple:  # type: ignore[type-arg]
    return (*seq[:i], value, *seq[i + 1 :])


def _serve(state: GameState, events: list[Event]) -> GameState:
    """Step 2: serve every ready bowl, in bowl order, to its scorer."""
    bowls = state.bowls
    served = state.served
    for i, cards in enumerate(bowls):
        reason = ready_reason(cards)
        if reason is None:
            continue
        to = state.mode.bowl_scorer(i, state.current)
        served = _set(served, to, (*served[to], cards))
        bowls = _set(bowls, i, ())
        events.append(Served(BOWLS[i], state.scorers[to], cards, reason))
    return replace(state, bowls=bowls, served=served)


def _after_take(state: GameState, events: list[Event]) -> GameState:
    """Steps 4 and 5 after step 3 (or after a skipped step 3)."""
    if state.deck and len(state.fridge) < state.mode.fridge_size:
        card = state.deck[0]
        state = replace(state, deck=state.deck[1:], fridge=(*state.fridge, card))
        events.append(Refilled(card))
    if state.deck:
        card = state.deck[0]
        hand = (*state.hand, card)
        state = replace(state, deck=state.deck[1:], hands=_set(state.hands, state.current, hand))
        events.append(Drew(state.current_player, card))
        return _end_turn(state, events)
    if state.fridge:
        return replace(state, phase=Phase.FRIDGE_DRAW)
    return _end_turn(state, events)


def _after_plays(state: GameState, events: list[Event]) -> GameState:
    state = _serve(state, events)
    if state.fridge:
        return replace(state, phase=Phase.TAKE)
    return _after_take(state, events)


def _start_turn(state: GameState, seat: int, events: list[Event]) -> GameState:
    n = min(2, len(state.hands[seat]))
    state = replace(state, current=seat, phase=Phase.PLAY, to_play=n, played=())
    if n == 0:  # nothing to play: "do as much as you can"
        return _after_plays(state, events)
    return state


def _end_turn(state: GameState, events: list[Event]) -> GameState:
    player = state.current_player
    if not state.deck and not state.fridge and not any(state.hands):
        unserved = tuple((b, c) for b, c in zip(BOWLS, state.bowls, strict=True) if c)
        state = replace(
            state, phase=Phase.OVER, bowls=((), (), ()), unserved=unserved, played=(), to_play=0
        )
        events.append(TurnEnded(player, None))
        events.append(GameOver(unserved))
        return state
    n = state.mode.players
    seat = next(
        s
        for s in ((state.current + k) % n for k in range(1, n + 1))
        if state.hands[s] or state.fridge
    )
    state = replace(state, turn=state.turn + 1)
    events.append(TurnEnded(player, state.players[seat]))
    return _start_turn(state, seat, events)


def step(
    state: GameState, action: Action, *, check: bool = True
) -> tuple[GameState, tuple[Event, ...]]:
    """Apply one action and everything that follows it automatically; return the new state
    and the events (served bowls, refill, draw, turn end, game over) in order.

    With `check=False` the action is trusted (fast path for bots that only pick from
    `legal_actions`); an illegal action then gives an undefined state.
    """
    if check:
        check_action(state, action)
    events: list[Event] = []
    if isinstance(action, Play):
        i = BOWLS.index(action.bowl)
        state = replace(
            state,
            hands=_set(state.hands, state.current, _without(state.hand, action.card)),
            bowls=_set(state.bowls, i, (*state.bowls[i], action.card)),
            played=(*state.played, action),
        )
        if len(state.played) == state.to_play:
            state = _after_plays(state, events)
    else:
        state = replace(
            state,
            fridge=_without(state.fridge, action.card),
            hands=_set(state.hands, state.current, (*state.hand, action.card)),
        )
        if state.phase is Phase.TAKE:
            state = _after_take(state, events)
        else:
            state = _end_turn(state, events)
    return state, tuple(events)


def apply(state: GameState, action: Action) -> GameState:
    """The state after a legal action; raises IllegalActionError naming the broken rule."""
    return step(state, action)[0]


def apply_unchecked(state: GameState, action: Action) -> GameState:
    """Like `apply` without the legality check: faster, for actions from `legal_actions`
    only. An illegal action here corrupts the game silently."""
    return step(state, action, check=False)[0]
