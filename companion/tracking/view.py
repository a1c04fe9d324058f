"""What the game follower publishes, and all the UI may read (pure values, no I/O).

The UI renders a `GameView` and sends corrections back through the follower's API; it never
looks at frames, detections or the rules engine itself. Served piles are secret during play
(rulebook): `served_counts` is open information, `served` is for the end-game screens only
(and for solo, where peeking is allowed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from companion.tracking.warnings import Note

PHASES: Final = ("setup", "playing", "scoring", "over")
CAMERA_STATES: Final = (
    "ok",
    "camera lost",
    "reconnecting",
    "markers not found",
    "too dark",
    "glare",
    "out of focus",
)
"""`camera lost` / `reconnecting` come from the camera watchdog (companion.camera.watchdog);
`too dark` and `out of focus` from a look at the frame now and then
(companion.vision.table_light.camera_state), while the cards are still read. `glare` is the
doctor's alone (a table full of white card faces clips as glare does)."""


@dataclass(frozen=True, slots=True)
class SeenCard:
    """A card as the table shows it now."""

    card: str
    """Card id, e.g. `nori-4`."""
    region: str
    """`fridge`, `bowl-1`..`bowl-3`, `scan`, or `table` (seen outside every region)."""
    confidence: float
    box: tuple[float, float, float, float] | None = None
    """Frame pixels (x1, y1, x2, y2), for outlining on the camera view."""


@dataclass(frozen=True, slots=True)
class BowlView:
    region: str
    """`bowl-1`..`bowl-3`."""
    cards: tuple[str, ...]
    """In play order."""
    value_sum: int
    """Towards 14."""
    types: int
    """Distinct ingredients, towards 7."""
    ready: bool
    reason: str | None = None
    """`sum` or `all_types` when ready."""
    owner: str | None = None
    """Who receives it when served if fixed by the mode (3p seats, 4p team bowls); None when
    it goes to whoever serves it."""


@dataclass(frozen=True, slots=True)
class ServedPile:
    index: int
    """Position in the game's list of served bowls (0-based): what corrections refer to."""
    scorer: str
    """Player name, or team `A`/`B` in 4p."""
    region: str
    cards: tuple[str, ...]
    t: float


@dataclass(frozen=True, slots=True)
class ScanView:
    """One pile read in the scan area at the end, against what was seen served."""

    scan: int
    """Scan number (0-based): what `resolve_scan` refers to."""
    scorer: str | None
    """Whose pile it is (None when it matched no served bowl and nobody said)."""
    seen: tuple[str, ...]
    """Cards read in the scan area."""
    index: int | None
    """The served pile it was matched to (ServedPile.index), or None."""
    expected: tuple[str, ...] = ()
    """That served pile's cards as seen during play."""
    keep: str | None = None
    """`seen` / `expected` once the UI resolved a difference; None until then."""
    counted: tuple[str, ...] = ()
    """The cards the tally counts for this pile: as resolved; unresolved, the served pile
    plus cards only the scan read that the game never saw elsewhere (none if the scan
    missed a served card)."""

    @property
    def mismatch(self) -> bool:
        return self.index is None or set(self.seen) != set(self.expected)


@dataclass(frozen=True, slots=True)
class GameView:
    mode: str
    """`solo`, `2p`, `3p`, `4p`."""
    players: tuple[str, ...]
    scorers: tuple[str, ...]
    """Players, or teams `A`, `B` in 4p."""
    phase: str
    """One of PHASES."""
    turn: int
    """1-based count of turns seen so far (0 before the first play)."""
    current_player: str | None
    fridge: tuple[str, ...]
    bowls: tuple[BowlView, ...]
    served_counts: dict[str, int]
    """Bowls served per scorer: open information."""
    served: tuple[ServedPile, ...] = field(default=(), repr=False)
    """Secret until the end (solo may peek)."""
    scan: tuple[str, ...] = ()
    """Cards read in the scan area (end-game scoring)."""
    seen: tuple[SeenCard, ...] = ()
    """Every card on the table now, for outlines on the camera view."""
    camera: str = "ok"
    """One of CAMERA_STATES."""
    warnings: tuple[str, ...] = ()
    """Recent rule warnings and hidden-card notices, newest last, in English."""
    notes: tuple[Note, ...] = ()
    """The same, as codes and parameters for the UI to translate (companion.ui.i18n)."""
    ready_bowls: tuple[str, ...] = ()
    """Bowls ready to serve right now (the banner)."""
    final: dict[str, Any] | None = None
    """The tally JSON of PRODUCT.md once the game is over."""
    t: float = 0.0
    scans: tuple[ScanView, ...] = ()
    """End-game scan results, for the cross-check screen."""
    all_played: bool = False
    """Every card has been played (deck, Fridge and hands empty): time to score."""
    error: str | None = None
    """Why following stopped (one line: the camera is gone for good, the game log cannot be
    written...); None while all is well. The game so far is kept in the log."""
