"""What each screen shows, derived from a `GameView`: plain Python, testable without a window.

The Kivy screens only copy these values into widgets. Secrecy lives here, not in `.kv`:
`table_model` never puts a served pile's cards or points in its output unless the mode is solo
(the rulebook lets a solo cook look at what was served).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from companion.cards import INGREDIENTS, parse_card, parse_cards
from companion.deck.palette import INGREDIENT_COLORS
from companion.errors import CompanionError
from companion.rules.modes import MODES
from companion.rules.scoring import (
    ALL_TYPES,
    READY_SUM,
    critics_review,
    critics_stars,
    pile_points,
    pile_types,
    tally,
)
from companion.tracking.view import BowlView, GameView
from companion.ui.controller import Controller
from companion.ui.i18n import card_label, count, ingredient_name, stars_text, tr, warning_text

RGBA = tuple[float, float, float, float]
UI_MODES: Final[tuple[str, ...]] = ("solo", "2p", "3p", "4p")


# -- colours -----------------------------------------------------------------------------
def ingredient_rgba(ingredient: str) -> RGBA:
    """The deck's ingredient colour (faces.py keeps it BGR 0..255) as Kivy RGBA 0..1."""
    b, g, r = INGREDIENT_COLORS.get(ingredient, (128, 128, 128))
    return (r / 255, g / 255, b / 255, 1.0)


def ink_on(rgba: RGBA) -> RGBA:
    """Black or white text, whichever reads better on rgba (relative luminance)."""
    r, g, b, _ = rgba
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return (0.0, 0.0, 0.0, 1.0) if lum > 0.45 else (1.0, 1.0, 1.0, 1.0)


# -- names ---------------------------------------------------------------------------------
def scorer_label(scorer: str, mode: str, lang: str) -> str:
    """Teams are `A`/`B` in the view; on screen they read "Team A"/"Équipe A"."""
    return tr("team", lang, name=scorer) if mode == "4p" else scorer


def bowl_number(region: str) -> str:
    return region.rpartition("-")[2] or region


def default_names(mode: str, lang: str) -> tuple[str, ...]:
    return tuple(tr("player_n", lang, n=i) for i in range(1, MODES[mode].players + 1))


def player_names(mode: str, typed: Sequence[str], lang: str) -> tuple[str, ...]:
    """Names for new_game: typed names in seat order, blanks and repeats replaced by defaults
    (the follower needs distinct names to keep piles apart)."""
    defaults = default_names(mode, lang)
    names: list[str] = []
    for i, default in enumerate(defaults):
        name = typed[i].strip() if i < len(typed) else ""
        names.append(name if name and name not in names else default)
    return tuple(names)


# -- table ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CardChip:
    card: str
    label: str
    color: RGBA
    ink: RGBA


def chip(card_id: str, lang: str) -> CardChip:
    ingredient = card_id.rpartition("-")[0]
    color = ingredient_rgba(ingredient)
    return CardChip(card_id, card_label(card_id, lang), color, ink_on(color))


@dataclass(frozen=True, slots=True)
class BowlPanel:
    region: str
    title: str
    chips: tuple[CardChip, ...]
    sum_text: str
    """`9/14`."""
    types_text: str
    """`4/7`."""
    sum_fraction: float
    types_fraction: float
    ready: bool


@dataclass(frozen=True, slots=True)
class ServedRow:
    scorer: str
    text: str
    """`Alice: 2` — a count only."""
    count: int
    peek: tuple[tuple[CardChip, ...], ...] = ()
    """Solo only: the served piles' cards."""


@dataclass(frozen=True, slots=True)
class TableModel:
    turn_text: str
    bowls: tuple[BowlPanel, ...]
    fridge: tuple[CardChip, ...]
    served: tuple[ServedRow, ...]
    camera_text: str
    camera_ok: bool
    banner_text: str
    """Empty when no bowl is ready."""
    can_peek: bool


def bowl_panel(bowl_view: BowlView, mode: str, lang: str) -> BowlPanel:
    n = bowl_number(bowl_view.region)
    title = (
        tr("bowl_of", lang, n=n, owner=scorer_label(bowl_view.owner, mode, lang))
        if bowl_view.owner
        else tr("bowl", lang, n=n)
    )
    return BowlPanel(
        region=bowl_view.region,
        title=title,
        chips=tuple(chip(c, lang) for c in bowl_view.cards),
        sum_text=f"{bowl_view.value_sum}/{READY_SUM}",
        types_text=f"{bowl_view.types}/{ALL_TYPES}",
        sum_fraction=min(1.0, bowl_view.value_sum / READY_SUM),
        types_fraction=min(1.0, bowl_view.types / ALL_TYPES),
        ready=bowl_view.ready,
    )


def camera_text(state: str, lang: str, error: str | None = None) -> str:
    """The camera line: its state, or why following stopped (GameView.error) if it did."""
    if error:
        return tr("pipeline_error", lang, error=error)
    return tr(f"cam_{state}", lang)


def banner_text(ready_bowls: Sequence[str], lang: str) -> str:
    """ "Bowl 2 — ready to serve!" for the bowls ready now, or "" when none is."""
    numbers = [bowl_number(r) for r in ready_bowls]
    if not numbers:
        return ""
    if len(numbers) == 1:
        return tr("ready_banner", lang, n=numbers[0])
    return tr("ready_banner_many", lang, ns=" & ".join(numbers))


def table_model(view: GameView, lang: str) -> TableModel:
    """The Table screen's data. Served piles: counts for everyone, contents only in solo."""
    can_peek = view.mode == "solo"
    served: list[ServedRow] = []
    for scorer in view.scorers:
        count = view.served_counts.get(scorer, 0)
        peek: tuple[tuple[CardChip, ...], ...] = ()
        if can_peek:
            peek = tuple(
                tuple(chip(c, lang) for c in p.cards) for p in view.served if p.scorer == scorer
            )
        served.append(
            ServedRow(
                scorer=scorer,
                text=tr(
                    "served_count", lang, name=scorer_label(scorer, view.mode, lang), count=count
                ),
                count=count,
                peek=peek,
            )
        )
    if view.current_player and view.turn > 0:
        turn = tr("turn", lang, n=view.turn, player=view.current_player)
    else:
        turn = tr("turn_none", lang)
    return TableModel(
        turn_text=turn,
        bowls=tuple(bowl_panel(b, view.mode, lang) for b in view.bowls),
        fridge=tuple(chip(c, lang) for c in view.fridge),
        served=tuple(served),
        camera_text=camera_text(view.camera, lang, view.error),
        camera_ok=view.camera == "ok" and not view.error,
        banner_text=banner_text(view.ready_bowls, lang),
        can_peek=can_peek,
    )


# -- announcements -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Announcement:
    region: str
    speech: str
    """The spoken line, "Bowl 2 is ready to serve"."""


class Announcer:
    """Says each ready bowl once: a bowl is announced when it becomes ready with a given set of
    cards, not again on every poll, and again only if it is served and a new one gets ready
    (or its cards change). Rule warnings likewise become toasts once."""

    def __init__(self) -> None:
        self._announced: set[tuple[str, frozenset[str]]] = set()
        self._warnings: tuple[str, ...] = ()

    def reset(self) -> None:
        self._announced.clear()
        self._warnings = ()

    def update(self, view: GameView, lang: str) -> list[Announcement]:
        """New announcements since the last call (usually empty)."""
        cards = {b.region: frozenset(b.cards) for b in view.bowls}
        out: list[Announcement] = []
        for region in view.ready_bowls:
            key = (region, cards.get(region, frozenset()))
            if key in self._announced:
                continue
            self._announced.add(key)
            out.append(Announcement(region, tr("ready_speech", lang, n=bowl_number(region))))
        return out

    def new_warnings(self, view: GameView, lang: str = "en") -> list[str]:
        """Warnings that were not in the previous view's list (newest last), in `lang`
        (translated from their codes; a view without codes gives its English lines)."""
        fresh = [i for i, w in enumerate(view.warnings) if w not in self._warnings]
        self._warnings = view.warnings
        notes = view.notes if len(view.notes) == len(view.warnings) else ()
        return [
            warning_text(notes[i].code, notes[i].as_dict(), lang) if notes else view.warnings[i]
            for i in fresh
        ]


# -- corrections ---------------------------------------------------------------------------
class CardFix:
    """Two taps: ingredient, then value. The second tap sends the correction."""

    def __init__(self, card_id: str) -> None:
        parse_card(card_id)
        self.old = card_id
        self.ingredient: str | None = None

    def title(self, lang: str) -> str:
        return tr("fix_card", lang, card=card_label(self.old, lang))

    def prompt(self, lang: str) -> str:
        if self.ingredient is None:
            return tr("pick_ingredient", lang)
        return tr("pick_value", lang, name=ingredient_name(self.ingredient, lang))

    def pick_ingredient(self, ingredient: str) -> None:
        if ingredient not in INGREDIENTS:
            raise ValueError(f"unknown ingredient {ingredient!r}")
        self.ingredient = ingredient

    def pick_value(self, value: int, controller: Controller) -> str | None:
        """Send `correct_card(old, new)`; None (nothing sent) when the card is unchanged."""
        if self.ingredient is None:
            raise ValueError("pick the ingredient first")
        new = parse_card(f"{self.ingredient}-{value}").id
        if new == self.old:
            return None
        controller.correct_card(self.old, new)
        return new


@dataclass(frozen=True, slots=True)
class ServedItem:
    index: int
    scorer: str
    text: str
    """`#3 · Bowl 2 → Alice`: where it came from and who has it, never what is in it."""


def served_items(view: GameView, lang: str) -> tuple[ServedItem, ...]:
    return tuple(
        ServedItem(
            p.index,
            p.scorer,
            tr(
                "served_item",
                lang,
                n=p.index + 1,
                bowl=bowl_number(p.region),
                name=scorer_label(p.scorer, view.mode, lang),
            ),
        )
        for p in view.served
    )


def reassign(controller: Controller, item: ServedItem, scorer: str) -> bool:
    """Give a served pile to scorer; False (nothing sent) when it is already theirs."""
    if scorer == item.scorer:
        return False
    controller.reassign_served(item.index, scorer)
    return True


# -- end game ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class PileCheck:
    status: str
    """`empty` (nothing read), `match`, or `differs`."""
    seen: tuple[str, ...] = ()
    """The served pile it was compared with (empty if none left for this scorer)."""
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PileRead:
    chips: tuple[CardChip, ...]
    line: str
    """`5 types · 5 pts`, or "Nothing read yet"."""
    check: PileCheck
    check_lines: tuple[str, ...]


def compare_pile(read: Sequence[str], candidates: Sequence[Sequence[str]]) -> PileCheck:
    """Compare a scanned pile with the best-overlapping served pile still unmatched."""
    if not read:
        return PileCheck("empty")
    got = set(read)
    if not candidates:
        return PileCheck("differs", extra=tuple(sorted(got)))
    best = max(candidates, key=lambda c: (len(got & set(c)), -len(set(c) ^ got)))
    want = set(best)
    if want == got:
        return PileCheck("match", seen=tuple(best))
    return PileCheck(
        "differs",
        seen=tuple(best),
        missing=tuple(c for c in best if c not in got),
        extra=tuple(c for c in read if c not in want),
    )


class EndGame:
    """The End game flow: each scorer in turn spreads their piles in the scan area; each pile is
    read, checked against what was seen served, confirmed (as read or as served), then the
    scoreboard."""

    def __init__(self, view: GameView) -> None:
        self.mode = view.mode
        self.scorers = view.scorers
        self.expected = {s: view.served_counts.get(s, 0) for s in view.scorers}
        self.seen: dict[str, list[tuple[str, ...]]] = {s: [] for s in view.scorers}
        for pile in view.served:
            self.seen.setdefault(pile.scorer, []).append(pile.cards)
        self.confirmed: dict[str, list[tuple[str, ...]]] = {s: [] for s in view.scorers}
        self.position = 0

    @property
    def scorer(self) -> str | None:
        return self.scorers[self.position] if self.position < len(self.scorers) else None

    @property
    def done(self) -> bool:
        return self.scorer is None

    def guide(self, lang: str) -> str:
        if self.scorer is None:
            return ""
        return tr("spread", lang, name=scorer_label(self.scorer, self.mode, lang))

    def progress(self, lang: str) -> str:
        if self.scorer is None:
            return ""
        return tr(
            "pile_of", lang, k=len(self.confirmed[self.scorer]), total=self.expected[self.scorer]
        )

    def _unmatched(self) -> list[tuple[str, ...]]:
        if self.scorer is None:
            return []
        left = list(self.seen.get(self.scorer, []))
        for pile in self.confirmed[self.scorer]:
            for i, seen in enumerate(left):
                if set(seen) == set(pile):
                    del left[i]
                    break
        return left

    def read(self, scan: Sequence[str], lang: str) -> PileRead:
        """The pile in the scan area now, its score, and how it compares with what was served."""
        check = compare_pile(scan, self._unmatched())
        if not scan:
            return PileRead((), tr("nothing_read", lang), check, ())
        try:
            cards = parse_cards(tuple(scan))
            line = tr(
                "pile_line",
                lang,
                types=count("n_types", pile_types(cards), lang),
                points=count("n_points", pile_points(cards), lang),
            )
        except CompanionError:
            line = tr("differs", lang)
        lines: list[str] = [tr("match" if check.status == "match" else "differs", lang)]
        if check.missing:
            lines.append(
                tr("missing", lang, cards=", ".join(card_label(c, lang) for c in check.missing))
            )
        if check.extra:
            lines.append(
                tr("extra", lang, cards=", ".join(card_label(c, lang) for c in check.extra))
            )
        return PileRead(tuple(chip(c, lang) for c in scan), line, check, tuple(lines))

    def already_confirmed(self, scan: Sequence[str]) -> bool:
        """True while the pile just confirmed still lies in the scan area (no double count)."""
        if self.scorer is None:
            return False
        return any(set(p) == set(scan) for p in self.confirmed[self.scorer])

    def confirm(self, controller: Controller, cards: Sequence[str]) -> None:
        """Record one pile for the current scorer (as read, or as served when told so)."""
        if self.scorer is None or not cards:
            return
        pile = tuple(cards)
        controller.resolve_scan(self.scorer, pile)
        self.confirmed[self.scorer].append(pile)

    def use_seen(self, controller: Controller, scan: Sequence[str]) -> None:
        """Resolve a difference in favour of what the camera saw served during play."""
        check = compare_pile(scan, self._unmatched())
        if check.seen:
            self.confirm(controller, check.seen)

    def next_scorer(self) -> None:
        if self.scorer is not None:
            self.position += 1

    def count_lines(self, lang: str) -> tuple[str, ...]:
        """Scorers whose confirmed pile count differs from the served count seen in play."""
        return tuple(
            tr(
                "piles_missing",
                lang,
                name=scorer_label(s, self.mode, lang),
                read=len(self.confirmed[s]),
                served=self.expected[s],
            )
            for s in self.scorers
            if len(self.confirmed[s]) != self.expected[s]
        )

    def local_tally(self) -> dict[str, object]:
        """The tally JSON computed here from the confirmed piles (when the view has no final)."""
        served = {s: [parse_cards(p) for p in self.confirmed[s]] for s in self.scorers}
        return tally(MODES[self.mode], served).to_json()


# -- scoreboard ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ScoreRow:
    name: str
    points: int
    bowls: int
    cards: int
    winner: bool


@dataclass(frozen=True, slots=True)
class Scoreboard:
    rows: tuple[ScoreRow, ...]
    """Best first."""
    result: str
    """"Alice wins!" / "Team A wins!" / "Shared victory: ..."."""
    tie_text: str = ""
    """Which tie-break decided, if any."""
    stars: str = ""
    """Solo: `★★★½☆`."""
    review: str = ""
    """Solo: the critics' line."""
    star_value: float | None = None


def scoreboard(final: dict[str, object], mode: str, lang: str) -> Scoreboard:
    """The End game scoreboard from the tally JSON (PRODUCT.md `tally` output)."""
    scores = final["scores"]
    assert isinstance(scores, dict)
    winners = list(final.get("winners", []))  # type: ignore[call-overload]
    rows = [
        ScoreRow(
            scorer_label(name, mode, lang),
            int(s["points"]),
            int(s["bowls"]),
            int(s["cards"]),
            name in winners,
        )
        for name, s in scores.items()
    ]
    rows.sort(key=lambda r: (-r.points, -r.bowls, r.cards))
    labels = [scorer_label(w, mode, lang) for w in winners]
    if len(labels) == 1:
        result = tr("winner", lang, name=labels[0])
    else:
        result = tr("winners", lang, names=", ".join(labels))
    tie = ""
    if len(rows) > 1 and rows[0].points == rows[1].points:
        tie = tr("tie_bowls", lang)
        if rows[0].bowls == rows[1].bowls:
            tie = tr("tie_cards", lang)
    if mode == "solo" and rows:
        stars = final.get("stars")
        value = float(stars) if isinstance(stars, int | float) else critics_stars(rows[0].points)
        return Scoreboard(
            tuple(rows),
            result=count("n_points", rows[0].points, lang),
            stars=stars_text(value),
            review=critics_review(rows[0].points, lang),
            star_value=value,
        )
    return Scoreboard(tuple(rows), result=result, tie_text=tie)
