"""The four ways to play, as data: who sits where, how many cards, who gets each bowl.

Every rule that differs between solo, 2, 3 and 4 players lives in a `Mode` value, so the engine
has no `if mode == ...` chains (python-chess keeps its variants the same way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

BOWLS: Final[tuple[str, ...]] = ("bowl-1", "bowl-2", "bowl-3")
"""The three bowl places. "No more than three Bowls may be active": a bowl is active when it
holds cards, and cards may only ever go into one of these three places."""

SERVER: Final = "server"
"""Bowl owner rule: a communal bowl goes to whoever serves it (their team in 4p)."""


@dataclass(frozen=True, slots=True)
class Mode:
    """One variant of Ramen! Ramen! (rulebook pages "setup / 2-player" and "page 10")."""

    name: str
    """`solo`, `2p`, `3p` or `4p` (PRODUCT.md)."""
    players: int
    """Number of hands at the table."""
    bowl_owners: tuple[str, str, str]
    """Per bowl (BOWLS order): `server`, `seat:N` (player N, 1-based) or `team:X`."""
    teams: tuple[str, ...] = ()
    """Team of each seat in turn order (4p: A, B, A, B); empty when everyone plays alone."""
    hand_size: int = 4
    """Cards dealt to each player, and the hand size a full turn restores."""
    fridge_size: int = 4
    """Face-up cards in the Fridge."""
    discard: int = 0
    """Cards discarded face down before dealing (solo: 4, never used in the game)."""

    @property
    def scorers(self) -> int:
        """How many score keepers: players, or teams in 4p."""
        return len(dict.fromkeys(self.teams)) if self.teams else self.players

    def scorer_names(self, players: tuple[str, ...]) -> tuple[str, ...]:
        """Names under which served piles are kept and tallied: players, or teams `A`/`B`."""
        return tuple(dict.fromkeys(self.teams)) if self.teams else players

    def scorer_of_seat(self, seat: int) -> int:
        """Scorer index credited for seat (0-based) serving a communal bowl."""
        if not self.teams:
            return seat
        return self.scorer_names(self.teams).index(self.teams[seat])

    def bowl_scorer(self, bowl: int, seat: int) -> int:
        """Scorer index that receives bowl (0-based) when seat (0-based) serves it.

        3p: "whenever the Bowl in front of a player is served (either by that player ... or a
        different player) they receive that Bowl". 4p: "If a player from Team A plays an
        ingredient in Team B's Bowl that causes it to be served, Team B still receives those
        points"; the communal bowl goes to the serving player's team.
        """
        rule = self.bowl_owners[bowl]
        if rule == SERVER:
            return self.scorer_of_seat(seat)
        kind, _, who = rule.partition(":")
        if kind == "seat":
            return self.scorer_of_seat(int(who) - 1)
        if kind == "team":
            return self.scorer_names(self.teams).index(who)
        raise ValueError(f"bad bowl owner rule {rule!r} in mode {self.name!r}")


SOLO: Final = Mode("solo", players=1, bowl_owners=(SERVER, SERVER, SERVER), discard=4)
TWO: Final = Mode("2p", players=2, bowl_owners=(SERVER, SERVER, SERVER))
THREE: Final = Mode("3p", players=3, bowl_owners=("seat:1", "seat:2", "seat:3"))
FOUR: Final = Mode(
    "4p",
    players=4,
    bowl_owners=(SERVER, "team:A", "team:B"),
    teams=("A", "B", "A", "B"),
)

MODES: Final[dict[str, Mode]] = {m.name: m for m in (SOLO, TWO, THREE, FOUR)}
"""Every mode by its PRODUCT.md name."""
