"""The game follower: settled table states in, PRODUCT.md game events out.

Event sourcing. The follower's inputs are themselves events: what the camera committed
(`card_added` / `card_removed`, one *step* per settled change), the UI's commands (`begin_scoring`,
`scan_pile`, `resolve_scan`, `finish`) and corrections (`correction_card`,
`correction_reassign`, `correction_undo`). Everything else (`turn`, `bowl_ready`, `bowl_served`,
`rule_warning`, `card_hidden`, `pile_scanned`, `scan_mismatch`, `all_played`, `phase`,
`game_over`) is derived from the inputs by `_Game`, a deterministic interpreter. A correction
re-derives the whole game from the input list (nothing is patched in place), and
`GameFollower.from_events` rebuilds a follower from a logged list after a power cut: derived
events in the list are ignored and recomputed.

The camera layer and the game layer are kept apart: the follower diffs each settled table
against the last one the *camera* committed (raw ids), while the game reads those observations
through corrections and undo. So undoing a misread card does not make it "reappear" at the next
frame, and a card renamed by the user stays renamed while it lies on the table.

How turns are inferred (mirrors `companion.rules.state`, whose pure scoring functions are used):
the active player plays min(2, hand) cards into bowls, serves every ready bowl, takes one Fridge
card, the Fridge is refilled from the deck (an unseen draw follows while the deck lasts); with
an empty deck a second Fridge card is taken instead. Hand sizes and the deck count follow from
the mode, so the follower knows when a turn ends. Observations out of order are tolerated:
within one settled change they are applied in rulebook order; a Fridge take seen before the
plays are finished waits for them; a ready bowl collected late is credited to the player whose
turn made it ready.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from companion.cards import ALL_CARDS, parse_card
from companion.errors import BadInputError
from companion.rules.modes import BOWLS, MODES, Mode
from companion.rules.scoring import pile_points, pile_types, ready_reason, tally
from companion.rules.state import check_players
from companion.tracking.scored_piles import scored_piles
from companion.tracking.settle import Settled, TableState
from companion.tracking.view import CAMERA_STATES, BowlView, GameView, ScanView, ServedPile
from companion.tracking.warnings import Note

Event = dict[str, Any]
Sink = Callable[[Event], None]

OBSERVATIONS: Final = frozenset({"card_added", "card_removed"})
HIDDEN_STEPS: Final = 6
"""A Fridge card seen gone and back within this many settled changes (with no sighting
elsewhere between) was hidden (a hand, a glare), never taken: both observations are read as
nothing happened."""
COMMANDS: Final = frozenset({"begin_scoring", "scan_pile", "resolve_scan", "finish"})
CORRECTIONS: Final = frozenset({"correction_card", "correction_reassign", "correction_undo"})
INPUTS: Final = OBSERVATIONS | COMMANDS | CORRECTIONS
"""Event types the game is derived from; every other type is derived and ignored on rebuild."""

COVER_S: Final = 0.75
"""A bowl card going out of sight this soon after a card landed on it is covered by it (the
laid card may be committed a frame or two before the card under it is given up)."""
MAX_WARNINGS: Final = 3
"""Warnings the view keeps (newest last)."""

# Turn phases of the interpreter (finer than the view's phase).
_PLAY, _TAKE, _REFILL, _FRIDGE_DRAW, _DONE = "play", "take", "refill", "fridge_draw", "done"
_SCAN = "scan"
UNREADY: Final = "unready"
"""`bowl_served`'s reason for a bowl taken away before it was seen ready."""
_FRIDGE = "fridge"


def _cards(ids: Iterable[str]) -> tuple[Any, ...]:
    return tuple(parse_card(c) for c in ids)


@dataclass(slots=True)
class _Pile:
    index: int
    scorer: str
    region: str
    cards: tuple[str, ...]
    t: float
    by: str
    """Player whose turn made it ready (who served it)."""


@dataclass(slots=True)
class _Scan:
    scan: int
    scorer: str | None
    cards: tuple[str, ...]
    index: int | None
    """Served pile it was matched to, or None."""
    keep: str | None = None
    """`seen` / `expected` once resolved."""


@dataclass(slots=True)
class _Game:
    """The interpretation of the inputs. Private and mutable; rebuilt from scratch on every
    correction, so it never needs to undo anything itself."""

    mode: Mode
    players: tuple[str, ...]
    reassign: dict[int, str] = field(default_factory=dict)
    phase: str = "setup"
    tphase: str = _PLAY
    turn: int = 0
    seat: int = 0
    to_play: int = 0
    plays: list[tuple[str, str]] = field(default_factory=list)
    misread_plays: list[tuple[str, str]] = field(default_factory=list)
    """This turn's plays counted though read as a card already served (`read_right`)."""
    served_this_turn: set[str] = field(default_factory=set)
    hands: list[int] = field(default_factory=list)
    deck: int = 0
    fridge: list[str] = field(default_factory=list)
    bowls: dict[str, list[str]] = field(default_factory=lambda: {b: [] for b in BOWLS})
    leaving: dict[str, set[str]] = field(default_factory=lambda: {b: set() for b in BOWLS})
    """Cards of a ready bowl already picked up (a serve in progress)."""
    hidden: dict[str, set[str]] = field(default_factory=lambda: {b: set() for b in BOWLS})
    """Cards no longer seen while the rest of their bowl stays: covered by a card laid too
    low, or misread. Cards stay in a bowl until it is served, so they still count."""
    """Cards that left a bowl unserved -> (bowl, position), restored if they come back."""
    ready: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    """Ready bowl -> (reason, seat whose turn made it ready, that turn's number)."""
    served: list[_Pile] = field(default_factory=list)
    gone: set[str] = field(default_factory=set)
    landed: dict[str, list[str]] = field(default_factory=dict)
    """Cards laid in each bowl in the settled change being read."""
    last_landing: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Bowl -> (card the last card laid in it landed on, when)."""
    serving: set[str] = field(default_factory=set)
    """Cards of ready bowls emptied in the settled change being read (served)."""
    pending: list[str] = field(default_factory=list)
    """Turn steps seen early (`take`, `refill`), applied when the turn reaches them."""
    missed_refills: int = 0
    late_takes: int = 0
    """Turns that ended on the next player's play before their Fridge take was seen."""
    scan: list[str] = field(default_factory=list)
    scan_accum: list[str] = field(default_factory=list)
    scans: list[_Scan] = field(default_factory=list)
    warnings: list[Note] = field(default_factory=list)
    all_played: bool = False
    unserved: dict[str, tuple[str, ...]] = field(default_factory=dict)
    final: dict[str, Any] | None = None
    t: float = 0.0
    out: list[Event] = field(default_factory=list)

    def __post_init__(self) -> None:
        m = self.mode
        self.hands = [m.hand_size] * m.players
        self.deck = len(ALL_CARDS) - m.discard - m.players * m.hand_size - m.fridge_size

    # -- helpers -------------------------------------------------------------------------
    @property
    def scorers(self) -> tuple[str, ...]:
        return self.mode.scorer_names(self.players)

    def emit(self, type_: str, **fields: Any) -> None:
        self.out.append({"t": self.t, "type": type_, **fields})

    def warn(self, code: str, **params: str) -> None:
        """A rule broken: `rule_warning` with its code (warnings.RULE_WARNINGS), parameters
        (raw card / region ids) and English message."""
        note = Note.of(code, params)
        self.warnings.append(note)
        self.emit("rule_warning", code=code, params=dict(params), message=note.message)

    def notice(self, card: str, region: str) -> None:
        """Something the camera cannot see, not a rule broken: shown like a warning, logged
        as `card_hidden`."""
        note = Note.of("card_hidden", {"card": card, "bowl": region})
        self.warnings.append(note)
        self.emit(
            "card_hidden",
            card=card,
            region=region,
            code=note.code,
            params=note.as_dict(),
            message=note.message,
        )

    def check_ready(self, bowl: str) -> None:
        cards = self.bowls[bowl]
        reason = ready_reason(_cards(cards)) if cards else None
        if reason is None:
            self.ready.pop(bowl, None)
        elif bowl not in self.ready:
            self.ready[bowl] = (reason, self.seat, self.turn)
            self.emit(
                "bowl_ready",
                region=bowl,
                sum=sum(parse_card(c).value for c in cards),
                types=pile_types(_cards(cards)),
                reason=reason,
            )

    def locate(self, card: str) -> str | None:
        if card in self.fridge:
            return _FRIDGE
        for b, cards in self.bowls.items():
            if card in cards and card not in self.leaving[b]:
                return b
        return None

    # -- one settled change --------------------------------------------------------------
    def batch(self, obs: Sequence[Event]) -> list[Event]:
        self.out = []
        if not obs or self.phase == "over":
            return self.out
        self.t = float(obs[0].get("t", self.t))
        if any(ev["region"] == _SCAN and ev["type"] == "card_added" for ev in obs):
            # the first pile spread for scoring: bowls swept away in the same change are the
            # end-of-game discard, not bowls taken before they were ready; but a ready bowl
            # emptied is served, whatever else the change holds (the last turn's serve, seen
            # in one change with the sweep and the first pile while hands kept moving)
            if self.phase == "playing":
                for b in BOWLS:
                    gone = [
                        ev["card"]
                        for ev in obs
                        if ev["region"] == b and ev["type"] == "card_removed"
                    ]
                    if b in self.ready and gone and self.out_of_sight(b, gone):
                        self.clear(b, tuple(gone))
            self.begin_scoring()
        tokens: list[tuple[str, str, Any]] = []
        clears: dict[str, list[str]] = {}
        self.landed = {
            b: [ev["card"] for ev in obs if ev["region"] == b and ev["type"] == "card_added"]
            for b in BOWLS
        }
        misread = self.covered_misread(obs)
        # a misread card is no landing: the covered card goes out of sight as any covered card
        self.landed = {b: [c for c in cs if c not in misread] for b, cs in self.landed.items()}
        self.serving = set()
        for b in self.ready:
            gone = [ev["card"] for ev in obs if ev["region"] == b and ev["type"] == "card_removed"]
            if gone and self.out_of_sight(b, gone):
                self.serving.update(gone)
        for ev in obs:
            card, region, added = ev["card"], ev["region"], ev["type"] == "card_added"
            if region == _SCAN:
                self.scan_add(card) if added else self.scan_remove(card)
            elif self.phase == "scoring":
                continue  # the table is being cleared for scoring
            elif region == _FRIDGE:
                tokens.append(("refill" if added else "take", card, None))
            elif region in BOWLS:
                if added and card not in misread:
                    tokens.append(("play", card, region))
                else:
                    clears.setdefault(region, []).append(card)
        for b, cs in clears.items():
            if b in self.ready and self.out_of_sight(b, cs):
                # a ready bowl emptied in the same settled change as a new card landed in it
                # was served first: no card joins a bowl that is being served
                self.clear(b, tuple(cs))
            else:
                tokens.append(("clear", b, tuple(cs)))
        # a card read as one already served counts as a play only when the turn's plays are
        # not complete without it (`play`): it is judged after the cards that truly landed
        # (segment-1's bump game: a served kamaboko-3 read over a bowl as Player 4's second
        # card landed elsewhere took that card's place, and every turn after went one seat on)
        tokens.sort(key=lambda tok: tok[0] == "play" and tok[1] in self.gone)
        canonical = ("play", "clear", "take", "refill")
        while tokens:
            expected = self.expected()
            pick = next(
                (tok for kind in expected for tok in tokens if tok[0] == kind),
                None,
            )
            if pick is None:
                pick = min(tokens, key=lambda tok: canonical.index(tok[0]))
            if pick[0] == "play" and self.late_takes > 0 and self.mode.players == 1:
                # solo: a Fridge card taken into the hand as the last turn ended (its take
                # still owed), seen leaving only now with its play: taken first, then played
                card = pick[1]
                pick = next((tok for tok in tokens if tok[:2] == ("take", card)), pick)
            tokens.remove(pick)
            kind, a, b = pick
            if kind == "play":
                self.play(a, b)
            elif kind == "clear":
                self.clear(a, b)
            elif kind == "take":
                self.take(a)
            else:
                self.refill(a)
        for bowl in BOWLS:
            under = self.landed_on(bowl)
            if under is not None and under in self.bowls[bowl]:
                self.last_landing[bowl] = (under, self.t)
        return self.out

    def covered_misread(self, obs: Sequence[Event]) -> set[str]:
        """Cards seen landing in a bowl that are the bowl's last card, covered in the same
        change, read as another value of its ingredient: with two cards landing in one bowl
        at once (never legal), the one of the covered card's ingredient is that card's strip,
        half hidden and misread (ornate-1 at 15 frames/s: ajitama-0 laid on shiitake-2,
        which went out of sight as ajitama-0 and a shiitake-5 came in). One card landing is
        such a misreading when it is of the ingredient of the card this turn's play into the
        bowl covered, gone in the same change (`covered_by_this_turn`), or, that card still
        in view, a card already served: it cannot land again (segment-1's bump game: a
        kamaboko-5 under this turn's chashu-4 read as the served kamaboko-3 as the turn's
        second card landed elsewhere, counted as the next player's first play, and every turn
        after it went one seat on)."""
        out: set[str] = set()
        for b in BOWLS:
            landed = self.landed[b]
            if not landed or not self.bowls[b]:
                continue
            gone = {ev["card"] for ev in obs if ev["region"] == b and ev["type"] == "card_removed"}
            covered: str | None
            if len(landed) >= 2:
                covered = self.bowls[b][-1]
            elif self.bowls[b][-1] in gone:  # the play itself gone: a bowl served, not covered
                continue
            else:
                covered = self.covered_by_this_turn(b)
            if covered is None:
                continue
            kind = parse_card(covered).ingredient
            out.update(
                c
                for c in landed
                if c != covered
                and parse_card(c).ingredient == kind
                and (covered in gone or c in self.gone)
            )
        return out

    def covered_by_this_turn(self, bowl: str) -> str | None:
        """The card this turn's play into `bowl` landed on, still in the bowl under it: a card
        read there as another value of its ingredient once covered is that card, half hidden
        (a second card into one bowl in one turn is never legal, and it would cover the play,
        not the card under it). Outsider segment-1's sloppy game: ajitama-2 laid on ajitama-6,
        whose seven-segment 6 lost its lower half under it 3 s later and read as a 5, counted as
        a second card in the bowl; a bowl served wrong). Judged only while the play itself
        is in view: a bowl served as the next player's first card lands in it is no cover
        (segment-1's warm game: kamaboko-7 and ajitama-7 served, kamaboko-0 laid there)."""
        if self.phase != "playing" or not any(b == bowl for _, b in self.plays):
            return None
        under = self.last_landing.get(bowl, (None, 0.0))[0]
        if under is None or under not in self.bowls[bowl] or under == self.bowls[bowl][-1]:
            return None
        return under

    def expected(self) -> tuple[str, ...]:
        if self.phase == "setup" or self.tphase == _PLAY:
            return ("play",)
        if self.tphase in (_TAKE, _FRIDGE_DRAW):
            return ("clear", "take")
        if self.tphase == _REFILL:
            return ("refill",)
        return ("clear",)

    # -- the turn machine ----------------------------------------------------------------
    def start_game(self) -> None:
        self.phase = "playing"
        self.turn = 1
        self.emit("turn", player=self.players[0], turn=1)
        self.start_turn(0)

    def start_turn(self, seat: int) -> None:
        self.seat = seat
        self.to_play = min(2, self.hands[seat])
        self.tphase = _PLAY
        self.plays = []
        self.misread_plays = []
        self.served_this_turn = set()
        if self.to_play == 0:
            self.after_plays()

    def after_plays(self) -> None:
        if self.fridge:
            self.tphase = _TAKE
            if "take" in self.pending:
                self.pending.remove("take")
                self.take_acct()
        else:
            self.after_take()

    def take_acct(self) -> None:
        self.hands[self.seat] += 1
        if self.tphase == _FRIDGE_DRAW:
            self.end_turn()
        else:
            self.after_take()

    def after_take(self) -> None:
        if self.deck > 0:
            self.tphase = _REFILL
            if "refill" in self.pending:
                self.pending.remove("refill")
                self.refill_acct()
        else:
            self.after_refill()

    def refill_acct(self) -> None:
        self.deck = max(0, self.deck - 1)
        self.after_refill()

    def after_refill(self) -> None:
        if self.deck > 0:  # step 5: the unseen draw
            self.hands[self.seat] += 1
            self.deck -= 1
            self.end_turn()
        elif self.fridge and self.tphase != _FRIDGE_DRAW:
            self.tphase = _FRIDGE_DRAW
            if "take" in self.pending:
                self.pending.remove("take")
                self.take_acct()
        else:
            self.end_turn()

    def end_turn(self) -> None:
        self.pending = [p for p in self.pending if p != "take"]
        if self.deck == 0 and not self.fridge and not any(self.hands):
            self.tphase = _DONE
            self.all_played = True
            self.emit("all_played")
            return
        n = self.mode.players
        order = [(self.seat + k) % n for k in range(1, n + 1)]
        seat = next((s for s in order if self.hands[s] or self.fridge), order[0])
        self.turn += 1
        self.emit("turn", player=self.players[seat], turn=self.turn)
        self.start_turn(seat)

    # -- observations as turn steps ------------------------------------------------------
    def play(self, card: str, bowl: str) -> None:
        if card in self.serving:
            # a card of a pile being served cannot land in another bowl in the same change
            # (the pile goes face down to the player's side): another card misread as it
            return
        if card in self.gone:
            self.warn("already_served", card=card)
            if self.phase == "playing" and self.tphase == _PLAY and self.landed[bowl] == [card]:
                # a card did land, misread as a served one: it is still one of the turn's
                # plays (left uncounted, the turn never ended and every turn after it went
                # to the other player: the ornate-1 demo's serves all credited to Bob). Not
                # when another card landed in that bowl in the same change: then it is that
                # card read twice (a lone card's far end read as another card)
                self.hands[self.seat] = max(0, self.hands[self.seat] - 1)
                self.plays.append((card, bowl))
                self.misread_plays.append((card, bowl))
                if len(self.plays) >= self.to_play:
                    self.after_plays()
            return
        if card in self.leaving[bowl]:
            self.leaving[bowl].discard(card)
            return
        if card in self.hidden[bowl]:
            self.hidden[bowl].discard(card)
            return
        for other in BOWLS:
            self.hidden[other].discard(card)
        where = self.locate(card)
        if where == bowl:
            return
        if where is not None and where != _FRIDGE:
            self.warn("moved_between_bowls", card=card, src=where, dst=bowl)
            self.bowls[where].remove(card)
            self.check_ready(where)
            self.bowls[bowl].append(card)
            self.check_ready(bowl)
            return
        if where is None and self.read_right(card, bowl):
            return
        if where == _FRIDGE:
            self.warn("fridge_to_bowl", card=card, bowl=bowl)
            self.fridge.remove(card)
        if self.phase == "setup":
            self.start_game()
        if self.tphase == _REFILL:
            self.warn("refill_missed")
            self.missed_refills += 1
            self.after_refill()
        elif self.tphase in (_TAKE, _FRIDGE_DRAW) and self.late_takes == 0:
            # the next player's first card, before this player's Fridge take settled (a hand
            # over the Fridge): the take is accounted now and accepted quietly when it shows
            while self.tphase in (_TAKE, _FRIDGE_DRAW):  # twice when the deck is empty
                self.late_takes += 1
                self.take_acct()
            if self.tphase == _REFILL:
                self.missed_refills += 1
                self.after_refill()
        elif self.tphase == _TAKE:
            self.warn("third_card", bowl=bowl)
            self.bowls[bowl].append(card)
            self.hands[self.seat] = max(0, self.hands[self.seat] - 1)
            self.check_ready(bowl)
            return
        elif self.tphase == _DONE:
            self.warn("played_after_end", card=card)
            self.bowls[bowl].append(card)
            self.check_ready(bowl)
            return
        if any(b == bowl for _, b in self.plays):
            self.warn("same_bowl_twice", bowl=bowl)
        elif bowl in self.served_this_turn:
            self.warn("bowl_served_this_turn", bowl=bowl)
        self.bowls[bowl].append(card)
        self.hands[self.seat] = max(0, self.hands[self.seat] - 1)
        self.plays.append((card, bowl))
        self.check_ready(bowl)
        if len(self.plays) >= self.to_play:
            self.after_plays()

    def read_right(self, card: str, bowl: str) -> bool:
        """Whether `card`, new in `bowl`, is this turn's play there that was misread as a
        served card (`already_served`, counted as a play): then it takes that play's place.
        Counted again, as a second card in the bowl, the turn ended a card early and every
        later turn and serve went to the other player (a lettered-1 4 read as a served 3 for
        one change in warm light: 6 of 12 bowls credited to the wrong player)."""
        ghost = next((p for p in self.misread_plays if p[1] == bowl), None)
        if self.phase != "playing" or ghost is None:
            return False
        self.misread_plays.remove(ghost)
        self.plays[self.plays.index(ghost)] = (card, bowl)
        self.bowls[bowl].append(card)
        self.check_ready(bowl)
        return True

    def out_of_sight(self, bowl: str, removed: Iterable[str] = ()) -> bool:
        """No card of the bowl is seen any more once `removed` are gone too."""
        return set(removed) | self.leaving[bowl] | self.hidden[bowl] >= set(self.bowls[bowl])

    def landed_on(self, bowl: str) -> str | None:
        """The card the cards laid in this settled change landed on (the bowl's last before)."""
        landed = self.landed.get(bowl, [])
        if not landed:
            return None
        before = [c for c in self.bowls[bowl] if c not in landed]
        return before[-1] if before else None

    def covered(self, bowl: str) -> str | None:
        """The card a card laid in this same settled change, or in one at most COVER_S
        earlier, landed on: a cascade laid a little tight hides its strip, the commonest way a
        bowl card goes out of sight (the laid card can be committed a moment before the card
        under it is given up). Read as covered: it still counts, nobody is told off."""
        here = self.landed_on(bowl)
        if here is not None:
            return here
        card, t = self.last_landing.get(bowl, (None, -math.inf))
        return card if self.t - t <= COVER_S else None

    def clear(self, bowl: str, cards: tuple[str, ...]) -> None:
        unseen = self.leaving[bowl] | self.hidden[bowl]
        removed = [c for c in cards if c in self.bowls[bowl] and c not in unseen]
        if not removed:
            return
        if bowl in self.ready:
            self.leaving[bowl].update(removed)
            if self.out_of_sight(bowl):
                self.serve(bowl)
            return
        if self.all_played:
            # unserved bowls are discarded at the end (rulebook): kept for finish() to report
            self.hidden[bowl].update(removed)
            return
        if self.landed.get(bowl) and removed == self.bowls[bowl][-1:]:
            # the bowl's last card going out of sight as a card lands in it is covered by
            # it, even when the change also holds the previous turn's take (applied first,
            # in rulebook order, the bowl would look taken away before the card landed)
            self.hidden[bowl].update(removed)
            return
        if not self.out_of_sight(bowl, removed):
            self.hidden[bowl].update(removed)
            covered = self.covered(bowl)
            for card in removed:
                if card != covered:
                    self.notice(card, bowl)
            return
        seen = _cards(self.bowls[bowl])
        self.warn(
            "bowl_taken_unready",
            bowl=bowl,
            sum=str(sum(c.value for c in seen)),
            types=str(pile_types(seen)),
        )
        # a bowl leaves the table only to be served: one seen unready most likely had a card
        # the camera missed (laid and served within a second, read as another card), and its
        # cards lie in the player's pile all the same, scanned at the end. Served, so the
        # turns and the scores go on (the scan then counts the card missed); warned, to check
        self.ready[bowl] = (UNREADY, self.seat, self.turn)
        self.serve(bowl)

    def serve(self, bowl: str) -> None:
        cards = tuple(self.bowls[bowl])
        reason, seat, turn = self.ready.pop(bowl)
        this_turn = self.phase == "playing" and turn == self.turn
        early = (
            this_turn
            and reason != UNREADY
            and self.tphase == _PLAY
            and len(self.plays) < self.to_play
        )
        index = len(self.served)
        scorer = self.scorers[self.mode.bowl_scorer(BOWLS.index(bowl), seat)]
        scorer = self.reassign.get(index, scorer)
        self.served.append(_Pile(index, scorer, bowl, cards, self.t, self.players[seat]))
        self.gone.update(cards)
        self.bowls[bowl] = []
        self.leaving[bowl] = set()
        self.hidden[bowl] = set()
        if this_turn:
            self.served_this_turn.add(bowl)
        if early:
            self.warn("served_early", bowl=bowl)
        self.emit(
            "bowl_served",
            region=bowl,
            player=scorer,
            cards=list(cards),
            reason=reason,
            by=self.players[seat],
            index=index,
        )

    def take(self, card: str) -> None:
        if card not in self.fridge:
            return
        self.fridge.remove(card)
        if self.phase == "setup":
            return
        if self.late_takes > 0:
            self.late_takes -= 1
        elif self.tphase == _PLAY:
            # seen before the plays settled (a hand still over a bowl, a card not read yet):
            # the take is this turn's, accounted when the plays are in. It breaks a rule only
            # when no card has been played yet, or when the turn has no take left for it.
            allowed = 1 if self.deck > 0 else 2
            if not self.plays:
                self.warn("take_before_plays")
            elif self.pending.count("take") >= allowed:
                self.warn("second_take")
            self.pending.append("take")
        elif self.tphase in (_TAKE, _FRIDGE_DRAW):
            self.take_acct()
        elif self.tphase == _REFILL:
            self.warn("second_take")
            self.hands[self.seat] += 1

    def refill(self, card: str) -> None:
        if card in self.gone:
            self.warn("already_served", card=card)
            return
        where = self.locate(card)
        if where == _FRIDGE:
            return
        if where is not None:
            self.warn("moved_to_fridge", card=card, src=where)
            self.bowls[where].remove(card)
            self.check_ready(where)
        self.fridge.append(card)
        if self.phase == "setup":
            return
        if self.tphase == _REFILL:
            self.refill_acct()
        elif self.missed_refills > 0:
            self.missed_refills -= 1
            self.deck = max(0, self.deck - 1)
        elif self.deck == 0:
            self.warn("fridge_deck_empty", card=card)
        elif self.tphase in (_PLAY, _TAKE):
            self.pending.append("refill")

    # -- end-game scoring ----------------------------------------------------------------
    def begin_scoring(self) -> None:
        if self.phase in ("setup", "playing"):
            self.phase = "scoring"
            self.emit("phase", phase="scoring")

    def scan_add(self, card: str) -> None:
        self.begin_scoring()
        if card not in self.scan:
            self.scan.append(card)
        if card not in self.scan_accum:
            self.scan_accum.append(card)

    def scan_remove(self, card: str) -> None:
        if card in self.scan:
            self.scan.remove(card)
        if not self.scan and self.scan_accum:
            self.register_scan(None)

    def register_scan(self, scorer: str | None) -> None:
        cards = tuple(self.scan_accum or self.scan)
        self.scan_accum = []
        if not cards:
            return
        taken = {s.index for s in self.scans if s.index is not None}
        candidates = [
            p
            for p in self.served
            if p.index not in taken and (scorer is None or p.scorer == scorer)
        ]
        best = max(candidates, key=lambda p: len(set(p.cards) & set(cards)), default=None)
        if best is not None and not set(best.cards) & set(cards):
            best = None
        who = scorer if scorer is not None else (best.scorer if best else None)
        scan = _Scan(len(self.scans), who, cards, best.index if best else None)
        self.scans.append(scan)
        self.emit(
            "pile_scanned",
            scan=scan.scan,
            scorer=who,
            index=scan.index,
            cards=list(cards),
            points=pile_points(_cards(cards)),
        )
        if best is None:
            self.warn("scan_unmatched")
        elif set(best.cards) != set(cards):
            self.emit(
                "scan_mismatch",
                scan=scan.scan,
                scorer=who,
                index=best.index,
                expected=list(best.cards),
                seen=list(cards),
            )
            self.warn("scan_differs", who=str(who))

    def resolve_scan(self, scan: int, keep: str, scorer: str | None) -> None:
        if not 0 <= scan < len(self.scans):
            return
        self.scans[scan].keep = keep
        if scorer is not None:
            self.scans[scan].scorer = scorer
        if self.phase == "over":  # resolved after the end: the result changes
            self.score()

    def counted(self, s: _Scan) -> tuple[str, ...]:
        """The cards the tally counts for scan `s`. Until someone resolves a difference, the
        scan may add cards the game never saw (not served, not left on the table) but takes
        none away: a card seen served and not read at the end is a card the single end view
        missed (one card in twenty on a held-out deck) far more often than a card gone; and
        a card read only at the end in place of one read only at serving is the same card
        misread, where the serve's reading, made over many frames, counts."""
        if s.index is None or s.keep == "seen":
            return s.cards
        served = self.served[s.index].cards
        if s.keep == "expected" or any(c not in s.cards for c in served):
            return served
        elsewhere = {c for p in self.served if p.index != s.index for c in p.cards}
        elsewhere.update(self.fridge, *self.bowls.values(), *self.unserved.values())
        return served + tuple(c for c in s.cards if c not in served and c not in elsewhere)

    def final_piles(self) -> dict[str, list[tuple[str, ...]]]:
        """Served piles per scorer after scans and their resolutions."""
        piles: dict[str, list[tuple[str, ...]]] = {n: [] for n in self.scorers}
        served = ((p.index, p.scorer, p.cards) for p in self.served)
        scans = ((s.index, s.scorer, s.keep, self.counted(s)) for s in self.scans)
        for pile in scored_piles(served, scans, self.scorers):
            piles[pile.scorer].append(pile.cards)
        return piles

    def finish(self) -> None:
        if self.phase == "over":
            return
        self.phase = "over"
        self.unserved = {b: tuple(c) for b, c in self.bowls.items() if c}
        self.bowls = {b: [] for b in BOWLS}
        self.leaving = {b: set() for b in BOWLS}
        self.hidden = {b: set() for b in BOWLS}
        self.ready = {}
        self.score()

    def score(self) -> None:
        piles = self.final_piles()
        result = tally(self.mode, {n: [_cards(p) for p in ps] for n, ps in piles.items()})
        self.final = result.to_json()
        self.emit("game_over", **self.game_over())

    def game_over(self) -> dict[str, Any]:
        """`game_over` fields: the tally JSON (`scores`, `winners`, `stars`) + unserved bowls."""
        assert self.final is not None
        return {**self.final, "unserved": {b: list(c) for b, c in self.unserved.items()}}


def _obs(t: float, type_: str, card: str, region: str, step: int) -> Event:
    return {"t": t, "type": type_, "card": card, "region": region, "step": step}


def hidden_returns(events: Sequence[Mapping[str, Any]]) -> set[int]:
    """Indices of observations to read as nothing happened: a card removed from the Fridge and
    added back to it within HIDDEN_STEPS settled changes, not seen anywhere else between.
    Causal (a pair is decided at its second observation from earlier events only), so the live
    follower and a rebuild from the log find the same pairs."""
    gone: dict[str, tuple[int, int]] = {}
    """card -> (index, step) of its last removal from the Fridge."""
    out: set[int] = set()
    for i, e in enumerate(events):
        kind = e.get("type")
        if kind not in OBSERVATIONS:
            continue
        card, region, step = e.get("card"), e.get("region"), int(e.get("step", 0))
        if not isinstance(card, str):
            continue
        if kind == "card_removed":
            if region == _FRIDGE:
                gone[card] = (i, step)
            else:
                gone.pop(card, None)
            continue
        left = gone.pop(card, None)
        if region == _FRIDGE and left is not None and 0 < step - left[1] <= HIDDEN_STEPS:
            out.update((left[0], i))
    return out


def _owner(mode: Mode, players: tuple[str, ...], bowl: str) -> str | None:
    rule = mode.bowl_owners[BOWLS.index(bowl)]
    kind, _, who = rule.partition(":")
    if kind == "seat":
        return players[int(who) - 1]
    if kind == "team":
        return who
    return None


def _check_logged(i: int, e: Mapping[str, Any]) -> None:
    """A logged event the follower can rebuild from, else BadInputError naming it: a damaged
    log must not resume into a traceback."""
    t, step = e.get("t", 0.0), e.get("step", 0)
    ok = (
        isinstance(t, int | float)
        and not isinstance(t, bool)
        and math.isfinite(t)
        and isinstance(step, int)
        and not isinstance(step, bool)
    )
    if ok and e.get("type") in OBSERVATIONS:
        card, region = e.get("card"), e.get("region")
        ok = isinstance(card, str) and isinstance(region, str)
        if isinstance(card, str):
            parse_card(card)
    if not ok:
        raise BadInputError(f"logged event {i + 1} is damaged: {dict(e)!r:.200}")


class GameFollower:
    """Follows one game from settled table states; the UI's model (see module docstring).

    Every emitted event goes to `sink` (the game log, the headless printer) as it happens.
    """

    def __init__(
        self,
        mode: Mode | str,
        players: Sequence[str] | None = None,
        sink: Sink | None = None,
    ) -> None:
        self.mode = mode if isinstance(mode, Mode) else _mode(mode)
        self.players = check_players(self.mode, players)
        self.sink = sink
        self._events: list[Event] = []
        self._raw: dict[str, str] = {}
        self._lives: list[str] = []
        """Effective id of each stay of a card on the table (corrections rename a stay)."""
        self._life_of: dict[str, int] = {}
        self._step = 0
        self._t = 0.0
        self._camera = "ok"
        self._seen: tuple[Any, ...] = ()
        self._game = _Game(self.mode, self.players)
        self._ignored: set[int] = set()
        """Indices of observations read as nothing happened (hidden_returns)."""

    # -- building ------------------------------------------------------------------------
    @classmethod
    def from_events(
        cls,
        mode: Mode | str,
        players: Sequence[str] | None,
        events: Iterable[Mapping[str, Any]],
        sink: Sink | None = None,
    ) -> GameFollower:
        """Rebuild a follower from a logged event list (resume after a power cut). Derived
        events are recomputed; nothing is re-emitted."""
        f = cls(mode, players, sink)
        f._events = [dict(e) for e in events]
        for i, e in enumerate(f._events):
            _check_logged(i, e)
            if e.get("type") in OBSERVATIONS:
                if e["type"] == "card_added":
                    f._raw[e["card"]] = e["region"]
                elif f._raw.get(e["card"]) == e["region"]:
                    del f._raw[e["card"]]
            if "step" in e:
                f._step = max(f._step, int(e["step"]))
            if "t" in e:
                f._t = max(f._t, float(e["t"]))
        f._ignored = hidden_returns(f._events)
        f._game = f._derive()
        return f

    @property
    def events(self) -> tuple[Event, ...]:
        """Everything emitted so far, in order (inputs and derived)."""
        return tuple(self._events)

    def _emit(self, events: Iterable[Event]) -> list[Event]:
        out = list(events)
        for e in out:
            self._events.append(e)
            if self.sink is not None:
                self.sink(dict(e))
        return out

    # -- camera input --------------------------------------------------------------------
    def observe(self, settled: Settled) -> list[Event]:
        """Feed the settler's output; only committed changes matter."""
        if not settled.changed:
            return []
        return self.update(settled.table, settled.t)

    def update(self, table: TableState | Mapping[str, str], t: float) -> list[Event]:
        """A newly settled table (card -> region) at `t` seconds; returns the events emitted."""
        new = table.as_dict() if isinstance(table, TableState) else dict(table)
        old = self._raw
        obs: list[Event] = []
        self._t = max(self._t, float(t))
        step = self._step + 1
        for card in sorted(old):
            if new.get(card) != old[card]:
                obs.append(_obs(t, "card_removed", card, old[card], step))
        for card in sorted(new):
            if old.get(card) != new[card]:
                obs.append(_obs(t, "card_added", card, new[card], step))
        if not obs:
            return []
        self._step = step
        self._raw = new
        start = len(self._events)
        ignored = hidden_returns([*self._events, *obs])
        earlier = {i for i in ignored if i < start}
        if earlier - self._ignored:
            # a Fridge card came back: it was hidden, not taken; read the game again without
            # its removal (what that removal made the game say stays in the log)
            before = self._game
            self._ignored = earlier
            self._game = self._derive()
            self._emit(self._consequences(before, self._game))
        self._ignored = ignored
        effective = [self._track_life(e) for e in obs]
        out = self._emit(obs)
        kept = [e for k, e in enumerate(effective) if start + k not in ignored]
        return out + self._emit(self._game.batch(kept))

    def _track_life(self, e: Event) -> Event:
        """The observation as the game reads it: the card's stay may have been renamed."""
        card = e["card"]
        if e["type"] == "card_added":
            self._life_of[card] = len(self._lives)
            self._lives.append(card)
            return {**e, "card": card}
        life = self._life_of.pop(card, None)
        return {**e, "card": self._lives[life] if life is not None else card}

    def set_camera_status(self, status: str, seen: Sequence[Any] = ()) -> None:
        """`ok`, `camera lost`, `markers not found`...: shown by the UI; the game is untouched.
        `seen`: the cards on the table now (view.SeenCard values) for outlines."""
        if status not in CAMERA_STATES:
            raise BadInputError(f"unknown camera status {status!r}: expected {CAMERA_STATES}")
        self._camera = status
        self._seen = tuple(seen)

    # -- commands and corrections --------------------------------------------------------
    def _input(self, type_: str, t: float | None, step: bool = True, **fields: Any) -> list[Event]:
        if t is not None:
            self._t = max(self._t, float(t))
        ev: Event = {"t": self._t, "type": type_, **fields}
        if step:
            self._step += 1
            ev["step"] = self._step
        before = self._game
        out = self._emit([ev])
        if type_ in CORRECTIONS:
            self._game = self._derive()
            return out + self._emit(self._consequences(before, self._game))
        self._game.t = self._t
        self._game.out = []
        self._command(self._game, ev)
        return out + self._emit(self._game.out)

    @staticmethod
    def _command(game: _Game, ev: Event) -> None:
        kind = ev["type"]
        if kind == "begin_scoring":
            game.begin_scoring()
        elif kind == "scan_pile":
            game.begin_scoring()
            game.register_scan(ev.get("scorer"))
        elif kind == "resolve_scan":
            game.resolve_scan(int(ev["scan"]), str(ev["keep"]), ev.get("scorer"))
        elif kind == "finish":
            game.finish()

    def begin_scoring(self, t: float | None = None) -> list[Event]:
        """End of play: from now on the scan area is read pile by pile."""
        if self._game.phase not in ("setup", "playing"):
            return []
        return self._input("begin_scoring", t)

    def scan_pile(self, scorer: str | None = None, t: float | None = None) -> list[Event]:
        """The cards now in the scan area are one served pile (of `scorer` if given)."""
        if scorer is not None and scorer not in self.mode.scorer_names(self.players):
            raise BadInputError(f"unknown scorer {scorer!r}")
        return self._input("scan_pile", t, scorer=scorer)

    def resolve_scan(
        self, scan: int, keep: str, scorer: str | None = None, t: float | None = None
    ) -> list[Event]:
        """For scan number `scan`, keep the scanned cards (`seen`) or the cards seen served
        during play (`expected`); optionally give the pile to `scorer`."""
        if keep not in ("seen", "expected"):
            raise BadInputError(f"keep must be 'seen' or 'expected', got {keep!r}")
        if not 0 <= scan < len(self._game.scans):
            raise BadInputError(f"no scanned pile number {scan}")
        return self._input("resolve_scan", t, scan=scan, keep=keep, scorer=scorer)

    def finish(self, t: float | None = None) -> list[Event]:
        """End the game now: unserved bowls are discarded, `game_over` carries the tally."""
        if self._game.phase == "over":
            return []
        return self._input("finish", t)

    def correct_card(self, old: str, new: str, t: float | None = None) -> list[Event]:
        """The card last seen as `old` (on the table, served or scanned) is really `new`."""
        old, new = parse_card(old).id, parse_card(new).id
        if old not in self._lives:
            raise BadInputError(f"no card {old!r} has been seen in this game")
        return self._input("correction_card", t, step=False, old=old, new=new)

    def reassign_served(self, index: int, scorer: str, t: float | None = None) -> list[Event]:
        """Served bowl number `index` (0-based, ServedPile.index) goes to `scorer`."""
        if scorer not in self.mode.scorer_names(self.players):
            raise BadInputError(f"unknown scorer {scorer!r}")
        if not 0 <= index < len(self._game.served):
            raise BadInputError(f"no served bowl number {index}")
        return self._input("correction_reassign", t, step=False, index=index, scorer=scorer)

    def undo(self, t: float | None = None) -> list[Event]:
        """Cancel the effect of the last game step (a settled change or a command) not yet
        undone. Returns [] when there is nothing to undo."""
        undone = {e["undo"] for e in self._events if e["type"] == "correction_undo"}
        steps = [
            int(e["step"])
            for e in self._events
            if e["type"] in OBSERVATIONS | COMMANDS and "step" in e and e["step"] not in undone
        ]
        if not steps:
            return []
        return self._input("correction_undo", t, step=False, undo=max(steps))

    # -- re-derivation -------------------------------------------------------------------
    def _derive(self) -> _Game:
        """The game from the input events alone (corrections applied)."""
        events = self._events
        undone = {int(e["undo"]) for e in events if e.get("type") == "correction_undo"}
        reassign = {
            int(e["index"]): str(e["scorer"])
            for e in events
            if e.get("type") == "correction_reassign"
        }
        # Pass 1: each observation's stay on the table, and renames of stays.
        lives: list[str] = []
        life_of: dict[str, int] = {}
        obs_life: dict[int, int] = {}
        for i, e in enumerate(events):
            kind = e.get("type")
            if kind == "card_added":
                life_of[e["card"]] = len(lives)
                lives.append(e["card"])
                obs_life[i] = life_of[e["card"]]
            elif kind == "card_removed":
                life = life_of.pop(e["card"], None)
                if life is not None:
                    obs_life[i] = life
            elif kind == "correction_card":
                for j in range(len(lives) - 1, -1, -1):
                    if lives[j] == e["old"]:
                        lives[j] = str(e["new"])
                        break
        self._lives, self._life_of = lives, life_of
        # Pass 2: replay the steps through a fresh game.
        game = _Game(self.mode, self.players, reassign)
        i = 0
        while i < len(events):
            e = events[i]
            kind = e.get("type")
            if kind in OBSERVATIONS:
                j = i
                while (
                    j < len(events)
                    and events[j].get("type") in OBSERVATIONS
                    and events[j].get("step") == e.get("step")
                ):
                    j += 1
                if e.get("step") not in undone:
                    batch = [
                        {**events[k], "card": lives[obs_life[k]]} if k in obs_life else events[k]
                        for k in range(i, j)
                        if k not in self._ignored
                    ]
                    game.batch(batch)
                i = j
                continue
            if kind in COMMANDS and e.get("step") not in undone:
                game.t = float(e.get("t", game.t))
                self._command(game, e)
            i += 1
        game.t = self._t
        game.out = []
        return game

    def _consequences(self, before: _Game, after: _Game) -> list[Event]:
        """What a correction changed that the players must hear: a bowl now ready, a new
        final result."""
        out: list[Event] = []
        for bowl in BOWLS:
            if bowl in after.ready and bowl not in before.ready:
                cards = after.bowls[bowl]
                out.append(
                    {
                        "t": self._t,
                        "type": "bowl_ready",
                        "region": bowl,
                        "sum": sum(parse_card(c).value for c in cards),
                        "types": pile_types(_cards(cards)),
                        "reason": after.ready[bowl][0],
                    }
                )
        if after.final is not None and after.final != before.final:
            out.append({"t": self._t, "type": "game_over", **after.game_over()})
        return out

    def served_cards(self) -> frozenset[str]:
        """Every card served so far: none of them can lie on the table again before the end."""
        return frozenset(self._game.gone)

    def pile_in_scan(self, seen: Iterable[str] = ()) -> tuple[str, ...]:
        """The served pile, not scanned yet, that shares the most cards with `seen` (the cards
        read in the scan area now, not what the game settled there: the pile before may not be
        registered yet): the pile being spread there; () when none shares a card, or two share
        as many."""
        g = self._game
        there = set(seen)
        taken = {s.index for s in g.scans if s.index is not None}
        shared = sorted(
            ((len(there.intersection(p.cards)), p.cards) for p in g.served if p.index not in taken),
            key=lambda x: -x[0],
        )
        if not shared or shared[0][0] == 0 or (len(shared) > 1 and shared[1][0] == shared[0][0]):
            return ()
        return shared[0][1]

    # -- the UI's view -------------------------------------------------------------------
    def view(self) -> GameView:
        g = self._game
        scorers = self.mode.scorer_names(self.players)
        bowls = []
        for b in BOWLS:
            cards = tuple(c for c in g.bowls[b] if c not in g.leaving[b])
            parsed = _cards(cards)
            reason = g.ready[b][0] if b in g.ready else None
            bowls.append(
                BowlView(
                    region=b,
                    cards=cards,
                    value_sum=sum(c.value for c in parsed),
                    types=pile_types(parsed),
                    ready=reason is not None,
                    reason=reason,
                    owner=_owner(self.mode, self.players, b),
                )
            )
        counts = {n: 0 for n in scorers}
        for p in g.served:
            counts[p.scorer] = counts.get(p.scorer, 0) + 1
        playing = g.phase == "playing" and g.tphase != _DONE
        return GameView(
            mode=self.mode.name,
            players=self.players,
            scorers=scorers,
            phase=g.phase,
            turn=g.turn,
            current_player=self.players[g.seat] if playing else None,
            fridge=tuple(g.fridge),
            bowls=tuple(bowls),
            served_counts=counts,
            served=tuple(ServedPile(p.index, p.scorer, p.region, p.cards, p.t) for p in g.served),
            scan=tuple(g.scan),
            seen=self._seen,
            camera=self._camera,
            warnings=tuple(n.message for n in g.warnings[-MAX_WARNINGS:]),
            notes=tuple(g.warnings[-MAX_WARNINGS:]),
            ready_bowls=tuple(b for b in BOWLS if b in g.ready),
            final=g.final,
            t=self._t,
            scans=tuple(
                ScanView(
                    s.scan,
                    s.scorer,
                    s.cards,
                    s.index,
                    g.served[s.index].cards if s.index is not None else (),
                    s.keep,
                    g.counted(s),
                )
                for s in g.scans
            ),
            all_played=g.all_played,
        )


def _mode(name: str) -> Mode:
    try:
        return MODES[name]
    except KeyError:
        raise BadInputError(f"unknown mode {name!r}: expected one of {', '.join(MODES)}") from None
