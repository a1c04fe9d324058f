"""A simulated game (the `companion simulate --json` record) rendered as a camera video.

One fixed camera (optionally bumped once mid-game) watches the face-down deck, the Fridge row and
the three bowls. Each action is a short motion (a hand reaches in, the card lands or the cards
go, the hand leaves) followed by a settled hold of about a second; at the end, unserved bowls are
cleared and each served pile is spread in the scan area, one at a time. A settled hold repeats
one rendered frame, which keeps the video small (the tracker sees a perfectly still table) and
the rendering fast.

Outputs in OUT_DIR: recording.mp4 (or recording.avi when no MPEG-4 encoder is available),
truth.jsonl (one event per line, `t` in seconds of video time: `card_added`/`card_removed` with
`card`, `region`, `player`; `bowl_served` with `region`, `player`, `cards`; `bowl_discarded`;
`deck_draw`; `scan_pile` with `player`, `cards`; `camera_bumped`; `game_over` with `scores`),
record.json (the input record) and meta.json (camera, fps, frame count).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion import layout
from companion.cards import CARD_IDS, parse_card
from companion.deck.deckdir import Deck
from companion.errors import BadInputError
from companion.synth.camera import (
    Camera,
    Light,
    develop,
    frame_maps,
    look_at_camera,
    plane_view_for,
)
from companion.synth.raster import Look, PlaneRenderer
from companion.synth.scene import (
    SKIN_TONES,
    Distractor,
    Hand,
    Item,
    PlacedCard,
    Scene,
)

RECORDING_TEXTURES = ("wood", "stone", "plain", "felt")
"""Smooth tables only: fine weaves cost the video codec dearly."""
BOWLS = ("bowl-1", "bowl-2", "bowl-3")
SEATS = {
    1: ("bottom",),
    2: ("bottom", "top"),
    3: ("bottom", "left", "top"),
    4: ("bottom", "left", "top", "right"),
}


@dataclass(frozen=True)
class RecordingSpec:
    fps: float = 4.0
    width: int = 1280
    seed: int | None = None
    """Look of the table and camera; default: the record's own seed."""
    bump: bool = False
    scoring: bool = True
    hold_s: float = 1.0
    """How long each settled state is held."""
    cascade_mm: tuple[float, float] = (14.0, 20.0)
    """Step between two cascaded cards of a bowl, drawn from this range (mm); sloppy players
    lay 12-22 mm."""
    rest_s: tuple[float, float] = (0.0, 0.0)
    """After an action the hand may stay over the table, perfectly still, for a time drawn
    from this range (seconds) before it leaves: the case a motion gate alone cannot see.
    (0, 0): the hand leaves at once."""
    rest_share: float = 0.5
    """Share of actions after which the hand rests (when `rest_s` is not (0, 0))."""
    warm: bool = False
    """Warm indoor light (2700-3200 K) instead of 3200-5600 K."""

    def __post_init__(self) -> None:
        lo, hi = self.cascade_mm
        if not 8.0 <= lo <= hi <= 40.0:
            raise BadInputError(f"cascade step must be 8..40 mm, low <= high; got {lo}..{hi}")
        r0, r1 = self.rest_s
        if not 0.0 <= r0 <= r1 <= 30.0:
            raise BadInputError(f"hand rest must be 0..30 s, low <= high; got {r0}..{r1}")
        if not 0.0 <= self.rest_share <= 1.0:
            raise BadInputError(f"rest share must be 0..1, got {self.rest_share}")


@dataclass
class _Table:
    """The visible table state; cards keep the placement they landed with."""

    deck_left: int
    fridge: list[PlacedCard | None]
    bowls: dict[str, list[PlacedCard]] = field(default_factory=lambda: {b: [] for b in BOWLS})
    scan: list[PlacedCard] = field(default_factory=list)

    def items(self) -> list[Item]:
        out: list[Item] = []
        if self.deck_left > 0:
            d = layout.DECK_SPOT
            out.append(Distractor("deck", d.center, 1.5, (layout.CARD_W_MM, layout.CARD_H_MM)))
        out.extend(c for c in self.fridge if c is not None)
        for b in BOWLS:
            out.extend(self.bowls[b])
        out.extend(self.scan)
        return out


class _Recorder:
    def __init__(self, deck: Deck, spec: RecordingSpec, seed: int, out: Path, seats: dict) -> None:
        self.spec = spec
        self.rng = np.random.default_rng([seed, 77])
        rng = self.rng
        self.renderer = PlaneRenderer(deck)
        self.texture = str(rng.choice(np.array(RECORDING_TEXTURES)))
        self.texture_seed = int(rng.integers(1 << 30))
        self.camera = look_at_camera(
            spec.width,
            (
                layout.PLAY_W_MM / 2 + float(rng.normal(0, 6)),
                layout.PLAY_H_MM / 2 + float(rng.normal(0, 6)),
            ),
            float(rng.uniform(690, 760)),
            float(rng.uniform(0, 3)),
            float(rng.uniform(0, 360)),
            float(rng.normal(0, 1)),
            k1=float(rng.uniform(-0.04, 0.01)),
        )
        kelvin = float(rng.uniform(3200, 5600))
        if spec.warm:  # same draws either way: a warm recording differs only in its light
            kelvin = 2700.0 + (kelvin - 3200.0) * 500.0 / 2400.0
        self.light = Light(
            kelvin,
            float(rng.uniform(0.2, 0.5)),
            float(rng.uniform(0.85, 1.1)),
            (float(rng.uniform(0, 0.2)), float(rng.uniform(0, 6.28)), float(rng.uniform(0, 0.2))),
            float(rng.uniform(0.8, 1.1)),
            1.5,
            90,
        )
        self.look = Look(
            shadow_dir=(0.6, 0.8),
            shadow_per_mm=0.25,
            shadow_strength=0.3,
            hand_shadow_strength=0.4,
            glare=((float(rng.uniform(200, 600)), float(rng.uniform(100, 350)), 40.0, 0.35),),
            paper_noise=0.0,
        )
        self.clutter: list[Item] = [
            Distractor("cup", (-60.0, 380.0), 0.0, (85.0, 85.0), (180, 180, 170), seed=3),
            Distractor("phone", (850.0, 300.0), 80.0, (72.0, 150.0), (30, 30, 35), seed=4),
        ]
        self.noise_seed = int(rng.integers(1 << 30))
        self.seats = seats
        self.skins = {p: SKIN_TONES[i % len(SKIN_TONES)] for i, p in enumerate(seats)}
        self._set_camera(self.camera)
        self.first_camera = self.camera
        self.out = out
        self.frames = 0
        self.writer, self.video = _open_writer(out, spec.fps, self.camera.width, self.camera.height)
        self.events: list[dict[str, Any]] = []
        self.rest_rng = np.random.default_rng([seed, 79])
        """Hand rests draw from their own stream: the rest of the recording is unchanged."""
        self.rest_frames: list[tuple[int, int]] = []
        """[first, end) frame numbers of each resting hand."""
        self.hand_frames: list[tuple[int, int]] = []
        """[first, end) frame numbers of every shot with a hand over the table."""

    def _set_camera(self, cam: Camera) -> None:
        self.camera = cam
        self.view = plane_view_for(cam)
        self.maps = frame_maps(cam, self.view)

    @property
    def t(self) -> float:
        return round(self.frames / self.spec.fps, 3)

    def shot(self, table: _Table, hand: Hand | None = None, hold: int = 1) -> None:
        items = [*self.clutter, *table.items()]
        if hand is not None:
            items.append(hand)
        scene = Scene(tuple(items), self.texture, self.texture_seed)
        plane = self.renderer.render(scene, self.view, self.look, self.rng)
        img = cv2.remap(plane.image, *self.maps, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        # one fixed noise pattern for the whole video: only what moves changes between frames,
        # which keeps the MPEG-4 stream small
        img = develop(img, self.light, np.random.default_rng(self.noise_seed))
        if hand is not None:
            self.hand_frames.append((self.frames, self.frames + hold))
        for _ in range(hold):
            self.writer.write(img)
            self.frames += 1

    def still(self, table: _Table, seconds: float | None = None) -> None:
        n = max(1, round((self.spec.hold_s if seconds is None else seconds) * self.spec.fps))
        self.shot(table, None, n)

    def hand(self, player: str, target: tuple[float, float], reach: float) -> Hand:
        """The player's hand, `reach` of the way (0..1) from their edge to target."""
        side = self.seats.get(player, "bottom")
        tx, ty = target
        far = {
            "bottom": (tx, 760.0),
            "top": (tx, -320.0),
            "left": (-420.0, ty),
            "right": (1200.0, ty),
        }[side]
        root = {
            "bottom": (tx + 60, 1000.0),
            "top": (tx - 60, -560.0),
            "left": (-700.0, ty + 40),
            "right": (1480.0, ty - 40),
        }[side]
        tip = (far[0] + (tx - far[0]) * reach, far[1] + (ty - far[1]) * reach)
        return Hand(root, tip, self.skins.get(player, SKIN_TONES[0]), 85.0, 0.4, 90.0, (90, 60, 40))

    def motion(self, player: str, target, before: _Table, after: _Table) -> None:
        """Hand reaches in over `before`; the change happens under the hand; then it is gone
        (after resting still over the table a while when the spec says so)."""
        self.shot(before, self.hand(player, target, 0.6))
        self.shot(after, self.hand(player, target, 1.0))
        lo, hi = self.spec.rest_s
        if hi > 0 and self.rest_rng.random() < self.spec.rest_share:
            seconds = float(self.rest_rng.uniform(lo, hi))
            n = round(seconds * self.spec.fps)
            if n > 0:
                # pulled back a little, then perfectly still: covering what it just laid or
                # took and whatever lies between it and the player's edge
                reach = float(self.rest_rng.uniform(0.75, 1.0))
                self.rest_frames.append((self.frames, self.frames + n))
                self.shot(after, self.hand(player, target, reach), n)

    def event(self, **kw: Any) -> None:
        self.events.append({"t": self.t, **kw})

    def close(self) -> None:
        self.writer.release()


def _open_writer(out: Path, fps: float, w: int, h: int):
    for fourcc, name in (("mp4v", "recording.mp4"), ("MJPG", "recording.avi")):
        path = out / name
        wr = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*fourcc), fps, (w, h))
        if wr.isOpened():
            return wr, path
        wr.release()
        path.unlink(missing_ok=True)
    raise BadInputError(f"cannot open a video writer in {out} (no mp4v or MJPG encoder)")


def _bowl_card(
    rng: np.random.Generator,
    bowl: str,
    k: int,
    card: str,
    step_mm: tuple[float, float] = (14.0, 20.0),
) -> PlacedCard:
    r = layout.region_by_id(bowl).rect
    y = r.y0 + 8 + layout.CARD_H_MM / 2 + k * float(rng.uniform(*step_mm))
    x = r.center[0] + float(rng.normal(0, 2))
    angle = float(rng.normal(0, 2.0)) + (180.0 if rng.random() < 0.03 else 0.0)
    return PlacedCard(card, (x, y), angle, True, bowl)


def _fridge_card(rng: np.random.Generator, slot: int, card: str) -> PlacedCard:
    cx, cy = layout.fridge_slots()[slot].center
    return PlacedCard(
        card,
        (cx + float(rng.normal(0, 2)), cy + float(rng.normal(0, 2))),
        float(rng.normal(0, 2)),
        True,
        "fridge",
    )


def _scan_spread(rng: np.random.Generator, cards: list[str]) -> list[PlacedCard]:
    """A served pile spread in columns of up to 10, index strips showing."""
    r = layout.region_by_id("scan").rect
    out = []
    per_col = 10
    for i, c in enumerate(cards):
        col, row = divmod(i, per_col)
        x = r.x0 + 40 + col * 80 + float(rng.normal(0, 2))
        y = r.y0 + 50 + row * 22 + float(rng.normal(0, 1.5))
        out.append(PlacedCard(c, (x, y), float(rng.normal(0, 2)), True, "scan"))
    return out


def _check_record(record: Any) -> None:
    """The parts of a `simulate --json` record the renderer reads (a record cut after a few
    turns is fine), else one BadInputError."""
    from companion.rules.simulate import get_mode

    try:
        if not isinstance(record, dict):
            raise TypeError("not a JSON object")
        get_mode(record["mode"])
        players = record["players"]
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise TypeError("'players' is not a list of names")
        setup = record["setup"]
        for c in [*setup["deck"], *setup["fridge"], *setup["hands"].values()]:
            for card in c if isinstance(c, list) else [c]:
                parse_card(card)
        for turn in record["turns"]:
            for p in turn["plays"]:
                parse_card(p["card"])
                if p["bowl"] not in BOWLS:
                    raise BadInputError(f"unknown bowl {p['bowl']!r} in the record")
            for key in ("served", "took", "refilled", "drew"):
                if not isinstance(turn.get(key, []), list):
                    raise TypeError(f"turn {key!r} is not a list")
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise BadInputError(f"not a simulate --json record: missing or malformed {exc}") from None


def render_recording(
    record_path: Path | str,
    out_dir: Path | str,
    spec: RecordingSpec,
    deck: Deck,
    progress: bool = True,
) -> str:
    """Render the record's game; returns a one-line summary."""
    from tqdm import tqdm

    from companion.inputs import read_json

    record_path = Path(record_path)
    record = read_json(record_path, "record")
    _check_record(record)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    players = list(record["players"])
    seats = {p: SEATS.get(len(players), SEATS[4])[i % 4] for i, p in enumerate(players)}
    seed = spec.seed if spec.seed is not None else int(record.get("seed", 0))
    t0 = time.monotonic()
    rec = _Recorder(deck, spec, seed, out, seats)
    rng = np.random.default_rng([seed, 78])
    setup = record["setup"]
    table = _Table(len(setup["deck"]), [None] * 4)
    for i, c in enumerate(setup["fridge"][:4]):
        table.fridge[i] = _fridge_card(rng, i, c)
        rec.event(type="card_added", card=c, region="fridge", player=None, initial=True)
    rec.still(table, 2.0)
    turns = record["turns"]
    bump_at = len(turns) // 2 if spec.bump else -1
    served_piles: list[tuple[str, list[str]]] = []
    bar = tqdm(total=len(turns), desc="recording", unit="turn", disable=not progress)
    for n, turn in enumerate(turns):
        player = turn["player"]
        if n == bump_at:
            c = rec.camera
            bumped = look_at_camera(
                c.width,
                (layout.PLAY_W_MM / 2 + 22.0, layout.PLAY_H_MM / 2 - 15.0),
                c.mount_mm + 10.0,
                c.tilt_deg + 2.0,
                40.0,
                1.5,
                k1=float(c.dist[0]),
            )
            rec._set_camera(bumped)
            rec.event(type="camera_bumped")
            rec.still(table, 0.5)
        for play in turn["plays"]:
            bowl, card = play["bowl"], play["card"]
            before = _copy(table)
            placed = _bowl_card(rng, bowl, len(table.bowls[bowl]), card, spec.cascade_mm)
            table.bowls[bowl].append(placed)
            rec.motion(player, placed.center, before, table)
            rec.event(type="card_added", card=card, region=bowl, player=player)
            rec.still(table)
        for s in turn.get("served", []):
            bowl = s["bowl"]
            before = _copy(table)
            cards = [c.card for c in table.bowls[bowl]]
            centre = layout.region_by_id(bowl).rect.center
            table.bowls[bowl] = []
            rec.motion(player, centre, before, table)
            rec.event(
                type="bowl_served", region=bowl, player=s.get("to", player), cards=cards, by=player
            )
            for c in cards:
                rec.event(type="card_removed", card=c, region=bowl, player=player)
            served_piles.append((str(s.get("to", player)), list(s.get("cards", cards))))
            rec.still(table, 0.5)
        for card in turn.get("took", []):
            slot = next((i for i, c in enumerate(table.fridge) if c and c.card == card), None)
            if slot is None:
                continue
            before = _copy(table)
            target = table.fridge[slot].center  # type: ignore[union-attr]
            table.fridge[slot] = None
            rec.motion(player, target, before, table)
            rec.event(type="card_removed", card=card, region="fridge", player=player)
            rec.still(table, 0.25)
        for card in turn.get("refilled", []):
            slot = next((i for i, c in enumerate(table.fridge) if c is None), None)
            if slot is None:
                continue
            before = _copy(table)
            table.fridge[slot] = _fridge_card(rng, slot, card)
            table.deck_left = max(0, table.deck_left - 1)
            rec.motion(player, table.fridge[slot].center, before, table)  # type: ignore[union-attr]
            rec.event(type="card_added", card=card, region="fridge", player=player)
            rec.still(table, 0.5)
        for _ in turn.get("drew", []):
            before = _copy(table)
            table.deck_left = max(0, table.deck_left - 1)
            rec.shot(table, rec.hand(player, layout.DECK_SPOT.center, 1.0))
            rec.event(type="deck_draw", player=player)
        bar.update(1)
    bar.close()
    # unserved bowls are discarded at the end (rulebook), once every card has been played: a
    # record cut short (a test's first turns) just ends with the camera still watching
    played = sum(len(t.get("plays", [])) for t in record["turns"])
    complete = played == len(CARD_IDS) - len(record.get("setup", {}).get("discarded", []))
    for bowl in BOWLS if complete else ():
        if table.bowls[bowl]:
            before = _copy(table)
            cards = [c.card for c in table.bowls[bowl]]
            table.bowls[bowl] = []
            rec.motion(players[0], layout.region_by_id(bowl).rect.center, before, table)
            rec.event(type="bowl_discarded", region=bowl, cards=cards)
            for c in cards:
                rec.event(type="card_removed", card=c, region=bowl, player=None)
            rec.still(table, 0.5)
    if spec.scoring:
        for who, cards in served_piles:
            before = _copy(table)
            table.scan = _scan_spread(rng, cards)
            scan_c = layout.region_by_id("scan").rect.center
            seat_player = who if who in seats else players[0]
            rec.motion(seat_player, scan_c, before, table)
            rec.event(type="scan_pile", player=who, cards=cards)
            for c in cards:
                rec.event(type="card_added", card=c, region="scan", player=who)
            rec.still(table, 1.0)
            before = _copy(table)
            table.scan = []
            rec.motion(seat_player, scan_c, before, table)
            for c in cards:
                rec.event(type="card_removed", card=c, region="scan", player=who)
            rec.still(table, 0.5)
    # the camera keeps watching after the last move: without this hold a recording cut right
    # after a quick serve-take-draw never shows the settled table (a live camera would)
    rec.still(table, 2.0)
    rec.event(
        type="game_over",
        scores=record.get("final", {}).get("scores"),
        winners=record.get("final", {}).get("winners"),
    )
    rec.close()
    with (out / "truth.jsonl").open("w", encoding="utf-8") as fh:
        for e in rec.events:
            fh.write(json.dumps(e) + "\n")
    if record_path.resolve() != (out / "record.json").resolve():
        shutil.copyfile(record_path, out / "record.json")
    meta = {
        "video": rec.video.name,
        "fps": spec.fps,
        "frames": rec.frames,
        "seconds": rec.t,
        "camera": rec.first_camera.to_json(),
        "camera_after_bump": rec.camera.to_json() if spec.bump else None,
        "texture": rec.texture,
        "bumped": spec.bump,
        "cascade_mm": list(spec.cascade_mm),
        "rest_s": list(spec.rest_s),
        "rest_frames": [list(r) for r in rec.rest_frames],
        "hand_frames": [list(r) for r in rec.hand_frames],
        "warm": spec.warm,
        "kelvin": rec.light.kelvin,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    size = rec.video.stat().st_size / 1e6
    took = time.monotonic() - t0
    return (
        f"{rec.video} ({rec.frames} frames, {rec.t:.0f} s of video, {size:.1f} MB) + "
        f"truth.jsonl ({len(rec.events)} events) in {took:.0f} s"
    )


def _copy(t: _Table) -> _Table:
    return _Table(
        t.deck_left, list(t.fridge), {b: list(v) for b, v in t.bowls.items()}, list(t.scan)
    )
