"""What the explained Scores screen and the Past games screen show: plain Python, testable
without a window (the Kivy screens in recap_screens.py only copy these into widgets)."""

from __future__ import annotations

from dataclasses import dataclass

from companion.recap.history import History
from companion.recap.picture import header_line, label, result_line, tie_line
from companion.recap.record import DAMAGED, FINISHED, GameRecord
from companion.rules.scoring import critics_review
from companion.ui.i18n import count, stars_text, tr
from companion.ui.viewmodels import CardChip, chip


@dataclass(frozen=True, slots=True)
class BowlLine:
    """One served bowl on the Scores screen."""

    chips: tuple[CardChip, ...]
    points: int
    text: str
    """`4 types · 3 pts`."""


@dataclass(frozen=True, slots=True)
class ScorerBlock:
    name: str
    """`Alice`, or `Team A` in 4p."""
    total: str
    """`20 pts · 5 bowls · 21 cards`."""
    winner: bool
    bowls: tuple[BowlLine, ...]


@dataclass(frozen=True, slots=True)
class ExplainedScores:
    result: str
    header: str
    tie: str
    """The tie-break that decided, in words; empty when points alone did."""
    stars: str
    review: str
    next_star: str
    """Solo: points the next star needed."""
    blocks: tuple[ScorerBlock, ...]


def explained_scores(record: GameRecord, lang: str) -> ExplainedScores:
    blocks = []
    for s in record.standings:
        bowls = tuple(
            BowlLine(
                tuple(chip(c, lang) for c in b.cards),
                b.points,
                tr(
                    "pile_line",
                    lang,
                    types=count("n_types", b.types, lang),
                    points=count("n_points", b.points, lang),
                ),
            )
            for b in record.bowls_of(s.name)
        )
        total = " · ".join(
            (
                count("n_points", s.points, lang),
                f"{s.bowls} {tr('col_bowls', lang).lower()}",
                f"{s.cards} {tr('col_cards', lang).lower()}",
            )
        )
        blocks.append(ScorerBlock(label(s.name, record.mode, lang), total, s.winner, bowls))
    stars = review = next_star = ""
    if record.stars is not None and record.standings:
        points = record.standings[0].points
        stars = stars_text(record.stars)
        review = critics_review(points, lang)
        nxt = record.next_star_points()
        next_star = (
            tr("next_star", lang, points=nxt, more=nxt - points)
            if nxt is not None
            else tr("top_stars", lang)
        )
    return ExplainedScores(
        result=result_line(record, lang),
        header=header_line(record, lang),
        tie=tie_line(record, lang),
        stars=stars,
        review=review,
        next_star=next_star,
        blocks=tuple(blocks),
    )


@dataclass(frozen=True, slots=True)
class GameRow:
    """One past game on the Past games screen."""

    id: str
    date: str
    mode: str
    players: str
    result: str
    """Winner and points, or `Unfinished` / `Damaged: why`."""
    status: str
    """`finished`, `unfinished`, `damaged`."""
    can_open: bool
    """A recap exists (finished games)."""


@dataclass(frozen=True, slots=True)
class PlayerRow:
    name: str
    games: str
    wins: str
    mean: str
    best_bowl: str


@dataclass(frozen=True, slots=True)
class HistoryModel:
    games: tuple[GameRow, ...]
    """Newest first, as a person looks for their last game."""
    players: tuple[PlayerRow, ...]
    solo: tuple[str, ...]
    """`Solo, Alice: best 56 pts (★★★½☆)` per solo player."""
    empty: str
    """Shown when there is no game."""


def history_model(history: History, lang: str) -> HistoryModel:
    rows = []
    for g in reversed(history.games):
        if g.status == FINISHED:
            points = ", ".join(f"{label(s.name, g.mode, lang)} {s.points}" for s in g.standings)
            result = (
                f"{result_line(g, lang)} {points}" if g.mode != "solo" else result_line(g, lang)
            )
        elif g.status == DAMAGED:
            result = tr("status_damaged", lang)
        else:
            result = tr("status_unfinished", lang)
        rows.append(
            GameRow(
                g.id,
                g.date_text(),
                tr(f"mode_name_{g.mode}", lang) if g.status != DAMAGED else g.mode,
                ", ".join(g.players),
                result,
                g.status,
                g.status == FINISHED,
            )
        )
    players = tuple(
        PlayerRow(p.name, str(p.games), str(p.wins), f"{p.mean_points:.1f}", str(p.best_bowl))
        for p in history.players
    )
    solo = []
    for name, runs in history.solo_runs().items():
        best = max(runs, key=lambda r: r.points)
        solo.append(
            tr("solo_best", lang, name=name, points=best.points, stars=stars_text(best.stars))
        )
    return HistoryModel(tuple(rows), players, tuple(solo), tr("no_games", lang))
