"""Temporal filtering: from noisy per-frame readings to a table state a person would trust.

A frame votes only when the scene is still and no hand is over the table. Motion alone does not say
that: a hand resting over a bowl is still, and the cards under it look gone. So the caller also
says whether a hand is there (`hand=True`, e.g. from `companion.vision.hands`: a change reaching in
across the play area's edge); a frame with a hand is treated like a moving one: it does not vote
and restarts the stillness clock, so nothing is committed while a hand is there and a card that
vanished under it is hidden (its votes from before the hand stay), never removed. A change is
committed only after the scene has stayed still, with no hand, for a while (or, for a card laid or
moved, as soon as two still frames agree on the whole table with certain readings of it and every
committed card still in sight: `certain_frames`), and a card's presence
and region are decided by a weighted vote over the last K still frames, with hysteresis: joining
needs a clear majority, leaving needs the votes to fall below a lower bar. So a card read in one
frame never appears, a card hidden for a frame never disappears, and a card under a moving hand is
not removed (moving frames do not vote at all). Every card exists once: when it is read in two
regions, its votes are split by region and the best-supported region wins (ties keep the committed
one).

Pure Python: the caller computes the motion score (frame differences) and maps the detector's
readings to `card -> (region, confidence)`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

Reading = tuple[str, str, float]
"""(card id, region id, confidence) of one card in one frame."""

NO_READING: Final = None
"""Pass as `readings` when the frame could not be read (camera lost, markers hidden)."""


@dataclass(frozen=True, slots=True)
class SettleConfig:
    """Settling parameters; the defaults suit 4-10 frames per second."""

    motion_threshold: float = 0.02
    """A frame whose motion score exceeds this is 'moving' (hands over the table) and does not
    vote. The score is the caller's: e.g. the fraction of pixels that changed since the last
    frame. A bool motion flag is read as 0.0 / 1.0."""
    still_frames: int = 3
    """Consecutive still frames needed before anything is committed (~0.3-0.75 s)..."""
    still_seconds: float = 0.25
    """...and at least this long since the last moving (or unreadable) frame. Below 8 frames/s
    still_frames decides; at the Pi camera's 15 it is 4 frames (a resting hand is seen by
    HandWatch, not waited out), so a card taken or covered is committed ~0.3 s after the table
    settles instead of ~0.5 s."""
    window: int = 5
    """K: the vote is over the last K still frames (older still frames, even from before a
    hand passed, keep voting: a card hidden while a hand moved is still remembered)."""
    add_share: float = 0.6
    """A card joins the table (or moves to another region) when its weighted votes reach this
    share of K. Above 1/K, so a single frame never adds a card."""
    keep_share: float = 0.4
    """A committed card stays until its share falls below this (hysteresis: below add_share,
    and at most (K-1)/K so one missed frame never removes it). With K=5 a card leaves after 4
    still frames without it at full confidence."""
    min_confidence: float = 0.3
    """Readings below this confidence do not vote."""
    full_confidence: float = 0.6
    """A reading at or above this confidence is one full vote; below, it votes
    confidence / full_confidence (low-confidence readings vote less)."""
    certain_frames: int = 2
    """A change may be committed before the still time is up, as soon as this many consecutive
    still frames (no hand) agree on the whole table and read every card added or moved at
    `certain_confidence` or more, with every committed card still seen (so a card covered or
    taken waits for the full vote, in one step with what covered it). 0: never early."""
    certain_confidence: float = 0.8
    """What a reading of an added or moved card needs for an early commit."""

    def __post_init__(self) -> None:
        if self.window < 1 or self.still_frames < 1:
            raise ValueError("window and still_frames must be >= 1")
        if not 0 < self.keep_share <= self.add_share <= 1:
            raise ValueError("need 0 < keep_share <= add_share <= 1")
        if self.add_share * self.window <= 1:
            raise ValueError("add_share * window must exceed 1 so one frame never adds a card")
        if self.full_confidence <= 0:
            raise ValueError("full_confidence must be > 0")
        if self.certain_frames == 1 or self.certain_frames < 0:
            raise ValueError("certain_frames must be 0 (off) or >= 2: one frame is no agreement")

    def weight(self, confidence: float) -> float:
        """One reading's vote."""
        if confidence < self.min_confidence:
            return 0.0
        return min(1.0, confidence / self.full_confidence)


@dataclass(frozen=True, slots=True)
class TableState:
    """The committed table: each visible card with its region (sorted by card id)."""

    cards: tuple[tuple[str, str], ...] = ()
    """(card id, region id) pairs, each card once."""

    @classmethod
    def of(cls, mapping: Mapping[str, str]) -> TableState:
        return cls(tuple(sorted(mapping.items())))

    def as_dict(self) -> dict[str, str]:
        return dict(self.cards)

    def region(self, region: str) -> tuple[str, ...]:
        """Cards lying in `region` (sorted by id: the table does not know play order)."""
        return tuple(c for c, r in self.cards if r == region)

    def get(self, card: str) -> str | None:
        return dict(self.cards).get(card)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.cards)

    def __len__(self) -> int:
        return len(self.cards)


@dataclass(frozen=True, slots=True)
class Settled:
    """What `TableSettler.update` returns for one frame."""

    t: float
    table: TableState
    """The committed table (unchanged unless `changed`)."""
    changed: bool
    """True when this frame committed a different table."""
    settled: bool
    """True when the scene is still long enough for commits (False while hands move)."""
    hand: bool = False
    """A hand was over the table in this frame (nothing is committed then)."""


def _frame_votes(
    readings: Mapping[str, tuple[str, float]] | Iterable[Reading], config: SettleConfig
) -> dict[str, dict[str, float]]:
    """card -> region -> weight for one frame (a card read twice: best weight per region)."""
    items: Iterable[Reading]
    if isinstance(readings, Mapping):
        items = ((c, rc[0], rc[1]) for c, rc in readings.items())
    else:
        items = readings
    votes: dict[str, dict[str, float]] = {}
    for card, region, confidence in items:
        if region is None:
            continue
        w = config.weight(float(confidence))
        if w <= 0:
            continue
        per = votes.setdefault(card, {})
        per[region] = max(per.get(region, 0.0), w)
    return votes


@dataclass(slots=True)
class TableSettler:
    """Frames in, settled table states out (`update(...) -> Settled`; `reset()`)."""

    config: SettleConfig = field(default_factory=SettleConfig)
    _window: deque[dict[str, dict[str, float]]] = field(init=False)
    _sure: deque[frozenset[tuple[str, str]]] = field(init=False)
    """Per voting frame: (card, region) read at certain_confidence or more."""
    _table: dict[str, str] = field(init=False, default_factory=dict)
    _still_run: int = field(init=False, default=0)
    _still_since: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._window = deque(maxlen=self.config.window)
        self._sure = deque(maxlen=self.config.window)

    def reset(self) -> None:
        """Forget votes and the committed table (a new game, a moved camera)."""
        self._window.clear()
        self._sure.clear()
        self._table = {}
        self._still_run = 0
        self._still_since = None

    @property
    def table(self) -> TableState:
        return TableState.of(self._table)

    def update(
        self,
        t: float,
        readings: Mapping[str, tuple[str, float]] | Iterable[Reading] | None,
        motion: float | bool = 0.0,
        hand: bool = False,
    ) -> Settled:
        """Feed one frame: `t` seconds, readings (None = frame unreadable), motion score, and
        whether a hand is over the table (still or not)."""
        cfg = self.config
        if readings is None or hand or float(motion) > cfg.motion_threshold:
            # Moving, a hand resting over the table, or blind: no vote, and the stillness
            # clock restarts. Votes from before stay: what the hand covers is hidden, not gone.
            self._still_run = 0
            self._still_since = None
            return Settled(t, self.table, False, False, hand)
        if self._still_since is None:
            self._still_since = t
        self._still_run += 1
        items: list[Reading] = (
            [(c, rc[0], rc[1]) for c, rc in readings.items()]
            if isinstance(readings, Mapping)
            else list(readings)
        )
        self._window.append(_frame_votes(items, cfg))
        self._sure.append(
            frozenset((c, r) for c, r, conf in items if float(conf) >= cfg.certain_confidence)
        )
        settled = self._still_run >= cfg.still_frames and t - self._still_since >= cfg.still_seconds
        if not settled:
            early = self._certain()
            if early is None:
                return Settled(t, self.table, False, False)
            self._table = early
            return Settled(t, self.table, True, True)
        new = self._vote()
        changed = new != self._table
        self._table = new
        return Settled(t, self.table, changed, True)

    def _certain(self) -> dict[str, str] | None:
        """The table the last `certain_frames` still frames agree on, when it adds or moves a
        card, every such reading is certain and every committed card is still seen; else None
        (the full vote decides once the still time is up)."""
        n = self.config.certain_frames
        if n < 2 or self._still_run < n:
            return None
        frames = list(self._window)[-n:]
        seen: dict[str, str] | None = None
        for votes in frames:
            if any(len(regions) != 1 for regions in votes.values()):
                return None  # a card read in two places: not certain
            here = {card: next(iter(regions)) for card, regions in votes.items()}
            if seen is not None and here != seen:
                return None
            seen = here
        assert seen is not None
        if any(card not in seen for card in self._table):
            return None  # a committed card is gone from sight: the full vote decides
        changes = {(c, r) for c, r in seen.items() if self._table.get(c) != r}
        if not changes:
            return None
        if any(not changes <= sure for sure in list(self._sure)[-n:]):
            return None
        return seen

    def _vote(self) -> dict[str, str]:
        cfg = self.config
        k = cfg.window
        presence: dict[str, float] = {}
        by_region: dict[str, dict[str, float]] = {}
        for frame in self._window:
            for card, regions in frame.items():
                presence[card] = presence.get(card, 0.0) + max(regions.values())
                per = by_region.setdefault(card, {})
                for region, w in regions.items():
                    per[region] = per.get(region, 0.0) + w
        new: dict[str, str] = {}
        for card, total in presence.items():
            current = self._table.get(card)
            share = total / k
            if current is None and share < cfg.add_share:
                continue
            if current is not None and share < cfg.keep_share:
                continue
            regions = by_region[card]
            best = max(regions, key=lambda r: (regions[r], r == current))
            moves = (
                best != current
                and regions[best] / k >= cfg.add_share
                and regions[best] > (regions.get(current, 0.0) if current else 0.0)
            )
            new[card] = best if current is None or moves else current
        return new


def readings_of(frame: object) -> list[Reading] | None:
    """A detector FrameReading -> settler readings; None when the markers were not found
    (regions unknown). Cards outside every region are left out. Duck-typed: no vision import."""
    if not getattr(frame, "calibrated", False):
        return None
    out: list[Reading] = []
    for r in getattr(frame, "cards", ()):
        if r.region is not None:
            out.append((r.card, r.region, float(r.confidence)))
    return out
