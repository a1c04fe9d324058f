"""Test double of the UI's Controller: serves scripted GameViews and records every call.

Used by the view-model tests and by the real-window scenario (tests/ui_scenario.py). The
scripted views are built with `make_view`, a small helper that fills in what a test does not
care about (bowl sums and types are computed from the cards, as the follower would).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from companion.cards import parse_cards
from companion.rules.scoring import pile_types, ready_reason
from companion.tracking.view import BowlView, GameView, SeenCard, ServedPile
from companion.ui.controller import Settings


def bowl(region: str, *cards: str, owner: str | None = None) -> BowlView:
    parsed = parse_cards(list(cards))
    reason = ready_reason(parsed)
    return BowlView(
        region=region,
        cards=tuple(cards),
        value_sum=sum(c.value for c in parsed),
        types=pile_types(parsed),
        ready=reason is not None,
        reason=reason,
        owner=owner,
    )


def make_view(
    mode: str = "2p",
    players: Sequence[str] = ("Alice", "Bob"),
    phase: str = "playing",
    bowls: Sequence[BowlView] = (),
    served: Sequence[tuple[str, str, Sequence[str]]] = (),
    **kw: Any,
) -> GameView:
    """A GameView; served as (scorer, region, cards) rows; ready_bowls from the bowls."""
    scorers = ("A", "B") if mode == "4p" else tuple(players)
    piles = tuple(
        ServedPile(index=i, scorer=s, region=r, cards=tuple(c), t=float(i))
        for i, (s, r, c) in enumerate(served)
    )
    counts = {s: sum(1 for p in piles if p.scorer == s) for s in scorers}
    all_bowls = tuple(bowls) or tuple(bowl(r) for r in ("bowl-1", "bowl-2", "bowl-3"))
    fields: dict[str, Any] = {
        "mode": mode,
        "players": tuple(players),
        "scorers": scorers,
        "phase": phase,
        "turn": kw.pop("turn", 1),
        "current_player": kw.pop("current_player", players[0] if players else None),
        "fridge": tuple(kw.pop("fridge", ())),
        "bowls": all_bowls,
        "served_counts": counts,
        "served": piles,
        "ready_bowls": tuple(b.region for b in all_bowls if b.ready),
    }
    fields.update(kw)
    return GameView(**fields)


def sample_frame(w: int = 320, h: int = 240) -> np.ndarray:
    """A BGR picture with a green felt and three card-coloured rectangles."""
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = (40, 90, 30)
    img[20:80, 20:70] = (240, 240, 240)
    img[100:160, 120:170] = (0, 94, 213)
    img[100:160, 200:250] = (178, 114, 0)
    return img


def seen_for(view: GameView) -> tuple[SeenCard, ...]:
    """Outline boxes spread over the test frame, one per card in the bowls and fridge."""
    out: list[SeenCard] = []
    for i, b in enumerate(view.bowls):
        for j, c in enumerate(b.cards):
            x = 100 + i * 70
            y = 100 + j * 14
            out.append(SeenCard(c, b.region, 0.9, (x, y, x + 50, y + 60)))
    for k, c in enumerate(view.fridge):
        out.append(SeenCard(c, "fridge", 0.9, (10 + k * 55, 10, 60 + k * 55, 80)))
    return tuple(out)


class ScriptedController:
    """Plays a list of views: `view()` returns the current one, `advance()` moves on.

    Every controller call is appended to `calls` as (name, args). `on_call` may map a call
    name to a view to jump to (e.g. `finish` -> the view with the final tally).
    """

    def __init__(self, views: Sequence[GameView], frame: np.ndarray | None = None) -> None:
        self.views = list(views)
        self.position = 0
        self.frame = frame
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.on_call: dict[str, GameView] = {}
        self.settings: Settings | None = None

    def advance(self, steps: int = 1) -> GameView:
        self.position = min(len(self.views) - 1, self.position + steps)
        return self.view()

    def goto(self, view: GameView) -> None:
        self.views.append(view)
        self.position = len(self.views) - 1

    def _record(self, name: str, *args: Any) -> None:
        self.calls.append((name, args))
        if name in self.on_call:
            self.goto(self.on_call[name])

    def called(self, name: str) -> list[tuple[Any, ...]]:
        return [args for n, args in self.calls if n == name]

    # Controller protocol
    def view(self) -> GameView:
        return self.views[self.position]

    def latest_frame(self) -> np.ndarray | None:
        return self.frame

    def frame_scale(self) -> float:
        return 1.0

    def new_game(self, mode: str, players: Sequence[str], language: str, source: str) -> None:
        self._record("new_game", mode, tuple(players), language, source)

    def correct_card(self, old_id: str, new_id: str) -> None:
        self._record("correct_card", old_id, new_id)

    def reassign_served(self, index: int, scorer: str) -> None:
        self._record("reassign_served", index, scorer)

    def undo(self) -> None:
        self._record("undo")

    def begin_scoring(self) -> None:
        self._record("begin_scoring")

    def resolve_scan(self, scorer: str, cards: Sequence[str]) -> None:
        self._record("resolve_scan", scorer, tuple(cards))

    def finish(self) -> None:
        self._record("finish")

    def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self._record("apply_settings", settings)
