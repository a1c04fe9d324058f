"""What the follower can say to the table: a code, its parameters, and an English line.

A rule warning (`rule_warning`) or a hidden-card notice (`card_hidden`) is a value: `code` names
what happened, `params` holds the card ids, region ids and names it is about (raw ids, never
words), and `message` is the English line for the log and the headless mode. The UI translates
from `code` and `params` (companion.ui.i18n `warning_text`), so a French screen never shows an
English sentence. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

RULE_WARNINGS: Final[dict[str, str]] = {
    "already_served": "{card} was already served: ignoring it.",
    "moved_between_bowls": "{card} moved from {src} to {dst}.",
    "fridge_to_bowl": "{card} went from the Fridge straight into {bowl}.",
    "refill_missed": "Refill the Fridge before the next player plays.",
    "third_card": "A third card this turn went into {bowl}: only two per turn.",
    "played_after_end": "{card} was played after all cards were played.",
    "same_bowl_twice": "Two cards went into {bowl} this turn: use two different bowls.",
    "bowl_served_this_turn": "{bowl} was served this turn: start it again next turn.",
    "bowl_taken_unready": "{bowl} was taken away but it was not ready "
    "(sum {sum} of 14, {types} of 7 types).",
    "served_early": "{bowl} was served before both cards were played.",
    "take_before_plays": "Play your cards before taking from the Fridge.",
    "second_take": "Only one Fridge card per turn.",
    "moved_to_fridge": "{card} moved from {src} to the Fridge.",
    "fridge_deck_empty": "{card} appeared in the Fridge but the deck is empty.",
    "scan_unmatched": "This pile matches no served bowl: tell me whose it is.",
    "scan_differs": "{who}'s pile differs from the bowl I saw served: please check it.",
}
"""Rule warnings: code -> English template (`{bowl}`, `{src}`, `{dst}` are region ids, shown
as `Bowl 2`; `{card}` a card id; `{who}` a player or team name; `{sum}`, `{types}` what the
app saw in the bowl)."""

NOTICES: Final[dict[str, str]] = {
    "card_hidden": "I can't see {card} in {bowl} any more: keep the top strip of every card "
    "showing.",
}
"""Things the camera cannot see (not a rule broken): code -> English template."""

REGION_PARAMS: Final = frozenset({"bowl", "src", "dst"})


def region_label(region: str) -> str:
    """`bowl-2` -> `Bowl 2`, `fridge` -> `the Fridge`; other ids as they are."""
    if region.startswith("bowl-"):
        return region.replace("bowl-", "Bowl ")
    return "the Fridge" if region == "fridge" else region


def english(code: str, params: Mapping[str, str]) -> str:
    """The English line of a warning or notice."""
    template = RULE_WARNINGS.get(code) or NOTICES[code]
    fields = {k: region_label(v) if k in REGION_PARAMS else v for k, v in params.items()}
    return template.format(**fields)


@dataclass(frozen=True, slots=True)
class Note:
    """One warning or notice as the view shows it."""

    code: str
    """A key of RULE_WARNINGS or NOTICES."""
    params: tuple[tuple[str, str], ...]
    """(name, value) pairs, sorted by name."""
    message: str
    """The English line."""

    @classmethod
    def of(cls, code: str, params: Mapping[str, str]) -> Note:
        return cls(code, tuple(sorted(params.items())), english(code, params))

    @property
    def rule(self) -> bool:
        """A rule warning (False: a hidden-card notice)."""
        return self.code in RULE_WARNINGS

    def as_dict(self) -> dict[str, str]:
        return dict(self.params)
