"""Scoring by the rulebook: pile points, its three examples, tie-breaks, the critics' table."""

from __future__ import annotations

import pytest

from companion.cards import parse_cards
from companion.errors import BadInputError
from companion.rules import MODES, critics_review, critics_stars, pile_points, tally


def piles(*groups: str) -> list[tuple]:
    return [parse_cards(g.split()) for g in groups]


@pytest.mark.parametrize(
    ("cards", "points"),
    [
        # The rulebook's three scoring examples.
        ("nori-1 nori-4 chashu-3 shiitake-0 negi-6", 3),
        ("nori-0 chashu-0 shiitake-0 ajitama-2 kamaboko-5 menma-7", 7),
        ("nori-0 chashu-0 shiitake-0 ajitama-0 kamaboko-2 menma-3 negi-0", 10),
        # One pile per number of types: 0, 1, 2, 3, 5, 7, 10.
        ("nori-7 nori-6 nori-1", 0),
        ("nori-7 negi-7", 1),
        ("nori-7 negi-7 menma-0", 2),
        ("nori-7 negi-7 menma-0 ajitama-0", 3),
        ("nori-7 negi-7 menma-0 ajitama-0 chashu-0", 5),
        ("nori-7 negi-7 menma-0 ajitama-0 chashu-0 kamaboko-0", 7),
        # Values never score: the same types with other values score the same.
        ("nori-0 negi-0", 1),
    ],
)
def test_pile_points(cards: str, points: int) -> None:
    assert pile_points(parse_cards(cards.split())) == points


def test_one_type_bowl_scores_zero_but_counts_as_a_bowl() -> None:
    """FAQ: a one-type bowl gives 0 points but counts as a served bowl for the tie-break."""
    result = tally(
        MODES["2p"],
        {
            "Ann": piles("nori-7 nori-6 nori-1", "negi-7 menma-7"),
            "Bob": piles("chashu-7 kamaboko-7"),
        },
    )
    assert result.score("Ann").points == 1
    assert result.score("Ann").bowls == 2
    assert result.winners == ("Ann",)


@pytest.mark.parametrize(
    ("served", "winners"),
    [
        # 1. most points
        ({"Ann": ["nori-0 negi-0 menma-7 chashu-7"], "Bob": ["ajitama-7 kamaboko-7"]}, ["Ann"]),
        # 2. equal points: most bowls served
        (
            {"Ann": ["nori-7 negi-7", "menma-7 menma-6 menma-1"], "Bob": ["ajitama-7 kamaboko-7"]},
            ["Ann"],
        ),
        # 3. equal points and bowls: fewest cards
        ({"Ann": ["nori-7 negi-7 negi-6"], "Bob": ["ajitama-7 kamaboko-7"]}, ["Bob"]),
        # 4. all equal: shared victory
        ({"Ann": ["nori-7 negi-7"], "Bob": ["ajitama-7 kamaboko-7"]}, ["Ann", "Bob"]),
    ],
)
def test_tie_breaks(served: dict[str, list[str]], winners: list[str]) -> None:
    result = tally(MODES["2p"], {n: piles(*p) for n, p in served.items()})
    assert list(result.winners) == winners


def test_tally_json_shape_and_team_names() -> None:
    result = tally(MODES["4p"], {"A": piles("nori-7 negi-7"), "B": []})
    assert result.to_json() == {
        "scores": {
            "A": {"points": 1, "bowls": 1, "cards": 2},
            "B": {"points": 0, "bowls": 0, "cards": 0},
        },
        "winners": ["A"],
    }


def test_solo_tally_has_stars() -> None:
    result = tally(MODES["solo"], {"Me": piles("nori-7 negi-7")})
    assert result.to_json()["stars"] == 0.0
    assert result.winners == ("Me",)


@pytest.mark.parametrize(
    ("mode", "served"),
    [
        ("2p", {"Ann": []}),
        ("3p", {"Ann": [], "Bob": []}),
        ("4p", {"Ann": [], "Bob": []}),
        ("solo", {"Ann": [], "Bob": []}),
    ],
)
def test_tally_rejects_wrong_scorers(mode: str, served: dict) -> None:
    with pytest.raises(BadInputError, match=f"mode {mode}"):
        tally(MODES[mode], served)


def test_tally_rejects_a_card_served_twice_and_empty_piles() -> None:
    with pytest.raises(BadInputError, match="nori-7"):
        tally(MODES["2p"], {"Ann": piles("nori-7 negi-7"), "Bob": piles("nori-7 menma-7")})
    with pytest.raises(BadInputError, match="empty"):
        tally(MODES["2p"], {"Ann": [()], "Bob": []})


@pytest.mark.parametrize(
    ("points", "stars"),
    [
        (0, 0.0),
        (37, 0.0),
        (38, 1.0),
        (43, 1.0),
        (44, 2.0),
        (47, 2.0),
        (48, 2.5),
        (52, 2.5),
        (53, 3.0),  # the English rulebook prints four stars here; the French table says three
        (55, 3.0),
        (56, 3.5),
        (57, 3.5),
        (58, 4.0),
        (59, 4.0),
        (60, 4.5),
        (61, 4.5),
        (62, 5.0),
        (70, 5.0),
    ],
)
def test_critics_band_edges(points: int, stars: float) -> None:
    assert critics_stars(points) == stars


def test_critics_review_lines_quote_both_rulebooks() -> None:
    assert critics_review(37) == "Was that meant to be food?"
    assert critics_review(53) == "Lovely noodles and broth. Great service."
    assert critics_review(53, "fr").startswith("Les nouilles et le bouillon sont très bons")
    assert critics_review(62).startswith("A world-class gastronomic wonder.")
    assert critics_review(60, "fr") == "À ne pas manquer. Une transcendance comestible."
    with pytest.raises(BadInputError):
        critics_review(50, "de")
