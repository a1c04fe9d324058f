"""The 56 cards of Ramen! Ramen!: 7 ingredients x values 0..7, each exactly once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from companion.errors import UnknownCardError

INGREDIENTS: Final[tuple[str, ...]] = (
    "ajitama",
    "chashu",
    "kamaboko",
    "menma",
    "negi",
    "nori",
    "shiitake",
)
"""Ingredient names, lower case, in the rulebook's order."""

VALUES: Final[tuple[int, ...]] = tuple(range(8))


@dataclass(frozen=True, order=True, slots=True)
class Card:
    ingredient: str
    """One of INGREDIENTS."""
    value: int
    """0..7; values decide when a bowl is ready, never the score."""

    @property
    def id(self) -> str:
        return f"{self.ingredient}-{self.value}"

    @property
    def index(self) -> int:
        """Position in ALL_CARDS (ingredient-major), used as a class number."""
        return INGREDIENTS.index(self.ingredient) * len(VALUES) + self.value

    def __str__(self) -> str:
        return self.id


ALL_CARDS: Final[tuple[Card, ...]] = tuple(Card(i, v) for i in INGREDIENTS for v in VALUES)
CARD_IDS: Final[tuple[str, ...]] = tuple(c.id for c in ALL_CARDS)
_BY_ID: Final[dict[str, Card]] = {c.id: c for c in ALL_CARDS}


def parse_card(text: str) -> Card:
    """Card from its id (`nori-4`); surrounding blanks and case are forgiven."""
    card = _BY_ID.get(str(text).strip().lower())
    if card is None:
        raise UnknownCardError(
            f"unknown card id {text!r}: expected <ingredient>-<value>, "
            f"ingredient one of {', '.join(INGREDIENTS)}, value 0..7"
        )
    return card


def parse_cards(texts: list[str] | tuple[str, ...]) -> tuple[Card, ...]:
    """Several ids; a card named twice is an error since every card is unique."""
    cards = tuple(parse_card(t) for t in texts)
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise UnknownCardError(f"card {card.id!r} named twice: each of the 56 cards is unique")
        seen.add(card)
    return cards
