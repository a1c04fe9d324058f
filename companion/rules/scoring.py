"""End-of-game scoring: points per served pile, the tally with tie-breaks, the critics' review."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from companion.cards import Card
from companion.errors import BadInputError
from companion.rules.modes import Mode

POINTS_BY_TYPES: Final[tuple[int, ...]] = (0, 0, 1, 2, 3, 5, 7, 10)
"""Points of a served pile by its number of distinct ingredient types (index 0 unused)."""

READY_SUM: Final = 14
"""A bowl is ready when its values sum to at least this..."""
ALL_TYPES: Final = 7
"""...or when it holds this many ingredient types."""


def pile_types(cards: Iterable[Card]) -> int:
    """Distinct ingredient types in a pile; values never matter for scoring."""
    return len({c.ingredient for c in cards})


def pile_points(cards: Iterable[Card]) -> int:
    """Points of one served pile: 1..7 types -> 0, 1, 2, 3, 5, 7, 10 (rulebook "Scoring")."""
    return POINTS_BY_TYPES[pile_types(cards)]


def ready_reason(cards: Sequence[Card]) -> str | None:
    """`"all_types"`, `"sum"` or None: why a bowl must be served (all types checked first)."""
    if pile_types(cards) >= ALL_TYPES:
        return "all_types"
    if sum(c.value for c in cards) >= READY_SUM:
        return "sum"
    return None


def is_ready(cards: Sequence[Card]) -> bool:
    """Sum of values >= 14 or all 7 ingredient types (rulebook step 2)."""
    return ready_reason(cards) is not None


# The critics' table of the solo game. The English rulebook's stars have typos: 53-55 is
# printed with four stars (the same as 58-59, and more than 56-57's three and a half), and
# several rows have six glyphs. The French rulebook's table is consistent (each band half a
# star or a star above the last, 53-55 = three stars), so that is the one used here.
_CRITICS: Final[tuple[tuple[int, float, str, str], ...]] = (
    # (lowest points of the band, stars, English review, French review)
    (0, 0.0, "Was that meant to be food?", "Vous appelez ça de la nourriture ?"),
    (
        38,
        1.0,
        "Diners left disappointed, not delighted.",
        "Les clients sont repartis déçus, rien d’enthousiasmant.",
    ),
    (
        44,
        2.0,
        "Ramen declared exceptionally average.",
        "Vos ramen n’ont vraiment rien d’exceptionnel.",
    ),
    (48, 2.5, "You've got some regulars.", "Vous avez quelques clients fidèles."),
    (
        53,
        3.0,
        "Lovely noodles and broth. Great service.",
        "Les nouilles et le bouillon sont très bons, le service très sympathique.",
    ),
    (
        56,
        3.5,
        "The smells alone are worth the wait.",
        "Ça vaut la peine d’attendre rien que pour l’odeur délicieuse.",
    ),
    (
        58,
        4.0,
        "True elevation of the humble ramen bowl.",
        "Une véritable élévation du simple bol de ramen.",
    ),
    (
        60,
        4.5,
        "Not to be missed. Edible transcendence.",
        "À ne pas manquer. Une transcendance comestible.",
    ),
    (
        62,
        5.0,
        "A world-class gastronomic wonder. Ramen redefined. Eager eaters make pilgrimages from "
        "all over the world for one taste of your legendary broth and homemade noodles.",
        "Un miracle gastronomique de portée mondiale. Le bol de ramen redéfini. Les gastronomes "
        "avertis font le pèlerinage des quatre coins de la planète pour goûter votre bouillon "
        "légendaire et vos nouilles faites maison.",
    ),
)

CRITICS_BANDS: Final[tuple[tuple[int, float], ...]] = tuple((lo, s) for lo, s, _, _ in _CRITICS)
"""(lowest points, stars) per band, for tables and benchmarks."""


def _band(points: int) -> tuple[int, float, str, str]:
    return [row for row in _CRITICS if points >= row[0]][-1]


def critics_stars(points: int) -> float:
    """Solo stars 0..5 in halves: <38: 0; 38-43: 1; 44-47: 2; 48-52: 2.5; 53-55: 3;
    56-57: 3.5; 58-59: 4; 60-61: 4.5; >61: 5 (French table, see comment above)."""
    return _band(points)[1]


def critics_review(points: int, lang: str = "en") -> str:
    """The critics' line for a solo score, quoted from the English or French rulebook."""
    if lang not in ("en", "fr"):
        raise BadInputError(f"unknown review language {lang!r}: expected 'en' or 'fr'")
    row = _band(points)
    return row[2] if lang == "en" else row[3]


@dataclass(frozen=True, slots=True)
class Score:
    """One scorer's end-of-game line."""

    points: int
    """Sum of pile points."""
    bowls: int
    """Served piles (a 0-point pile still counts: FAQ), first tie-break."""
    cards: int
    """Cards in served piles; fewer wins the second tie-break."""


@dataclass(frozen=True, slots=True)
class Tally:
    """The scoreboard: scores per scorer (player, or team in 4p), winners, solo stars."""

    mode: str
    """Mode name."""
    scores: tuple[tuple[str, Score], ...]
    """(name, score) in seat/team order."""
    winners: tuple[str, ...]
    """Everyone tied after all tie-breaks shares the victory."""
    stars: float | None = None
    """Solo critics' stars; None in multiplayer."""

    def score(self, name: str) -> Score:
        return dict(self.scores)[name]

    def to_json(self) -> dict[str, object]:
        """PRODUCT.md's tally JSON: {"scores": {NAME: {...}}, "winners": [...], "stars"?}."""
        out: dict[str, object] = {
            "scores": {
                n: {"points": s.points, "bowls": s.bowls, "cards": s.cards} for n, s in self.scores
            },
            "winners": list(self.winners),
        }
        if self.stars is not None:
            out["stars"] = self.stars
        return out


def _expected_names(mode: Mode) -> str:
    if mode.teams:
        return "teams " + " and ".join(mode.scorer_names(mode.teams))
    return f"{mode.players} player name{'s' if mode.players > 1 else ''}"


def tally(mode: Mode, served: Mapping[str, Sequence[Sequence[Card]]]) -> Tally:
    """Score every scorer's served piles and name the winners.

    Tie-breaks (rulebook): most points, then most bowls served, then fewest total cards,
    otherwise a shared victory. `served` must name exactly the mode's scorers: the players
    (any names, as many as the mode seats) or, in 4p, teams `A` and `B`. A card may appear only
    once overall, and a served pile is never empty.
    """
    names = tuple(served)
    if mode.teams:
        if sorted(names) != sorted(mode.scorer_names(mode.teams)):
            raise BadInputError(
                f"mode {mode.name} expects {_expected_names(mode)}, got {list(names)}"
            )
    elif len(names) != mode.players:
        raise BadInputError(
            f"mode {mode.name} expects {_expected_names(mode)}, got {len(names)}: {list(names)}"
        )
    seen: set[Card] = set()
    scores: list[tuple[str, Score]] = []
    for name in names:
        piles = served[name]
        for pile in piles:
            if not pile:
                raise BadInputError(f"{name!r} has an empty served pile")
            for card in pile:
                if card in seen:
                    raise BadInputError(f"card {card.id!r} appears twice in the served piles")
                seen.add(card)
        scores.append(
            (
                name,
                Score(
                    points=sum(pile_points(p) for p in piles),
                    bowls=len(piles),
                    cards=sum(len(p) for p in piles),
                ),
            )
        )
    best = max(((s.points, s.bowls, -s.cards) for _, s in scores), default=None)
    winners = tuple(n for n, s in scores if (s.points, s.bowls, -s.cards) == best)
    stars = critics_stars(scores[0][1].points) if mode.players == 1 else None
    return Tally(mode=mode.name, scores=tuple(scores), winners=winners, stars=stars)
