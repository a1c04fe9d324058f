"""What lies on the table, in table-plane millimetres (layout.py coordinates), and a random builder.

A scene is pure data: the renderer turns it into pixels and the ground truth. Objects are drawn
in list order (z order), so a later object covers an earlier one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final, Literal

import numpy as np

from companion import layout
from companion.cards import CARD_IDS, parse_card

TEXTURE_FAMILIES: Final[tuple[str, ...]] = (
    "wood",
    "cloth",
    "felt",
    "stone",
    "checker",
    "plain",
    "tiles",
    "plaid",
)
HELD_OUT_TEXTURES: Final[tuple[str, ...]] = ("tiles", "plaid")
"""Never seen by the training split: the test split judges generalisation to new tables."""


@dataclass(frozen=True, slots=True)
class PlacedCard:
    card: str
    """Card id (`nori-4`)."""
    center: tuple[float, float]
    """Centre on the table plane, mm."""
    angle: float
    """Counter-clockwise rotation in degrees; 180 means laid upside down."""
    face_up: bool = True
    region: str | None = None
    """The region the scene builder placed it in (`bowl-2`...), None for a loose card."""


@dataclass(frozen=True, slots=True)
class Distractor:
    kind: Literal["back", "deck", "cup", "phone", "other_card", "coin"]
    center: tuple[float, float]
    angle: float
    size: tuple[float, float]
    """Width and height in mm (diameter for cups and coins)."""
    color: tuple[int, int, int] = (128, 128, 128)
    """Main colour, BGR."""
    seed: int = 0
    """Drives the object's own pattern (other cards, cups' contents)."""


@dataclass(frozen=True, slots=True)
class Hand:
    """An arm reaching in from outside the table to a point, seen from above."""

    root: tuple[float, float]
    """Where the arm enters (outside the camera's view), mm."""
    tip: tuple[float, float]
    """Where the palm centre hovers, mm."""
    skin: tuple[int, int, int]
    """BGR."""
    width: float = 85.0
    """Palm width, mm; the forearm is a little narrower."""
    spread: float = 0.3
    """Finger spread, 0 (closed) .. 1."""
    height: float = 80.0
    """Height above the table, mm: sets how far its hard shadow falls."""
    sleeve: tuple[int, int, int] | None = None


Item = PlacedCard | Distractor | Hand


@dataclass(frozen=True, slots=True)
class Scene:
    items: tuple[Item, ...]
    """In z order: first drawn first."""
    texture: str
    """One of TEXTURE_FAMILIES."""
    texture_seed: int
    markers: bool = True
    cloth_card: str | None = None
    """A card whose face colour the table top takes (a pink card on a pink cloth): a band
    must be found by its own edges and index, not by its colour against the cloth."""

    @property
    def cards(self) -> tuple[PlacedCard, ...]:
        return tuple(i for i in self.items if isinstance(i, PlacedCard))

    @property
    def hands(self) -> tuple[Hand, ...]:
        return tuple(i for i in self.items if isinstance(i, Hand))


@dataclass(frozen=True, slots=True)
class SceneStyle:
    """Knobs of the random builder; `hard()` gives the evaluation's hard slice."""

    max_bowl_cards: int = 10
    min_bowl_cards: int = 0
    hands: tuple[int, int] = (0, 2)
    hand_probability: float = 0.45
    textures: tuple[str, ...] = tuple(t for t in TEXTURE_FAMILIES if t not in HELD_OUT_TEXTURES)
    distractors: tuple[int, int] = (1, 7)
    upside_down: float = 0.08
    scan_probability: float = 0.6
    skew_deg: float | None = None
    """None: laid cards (Fridge, bowls, scan cascades) sit within a few degrees of straight,
    as the training scenes have them; a number: each is turned uniformly within +- that many
    degrees, as a player following the README's "within about 10 degrees" may lay them."""
    ingredient_runs: float = 0.0
    """Chance that a cascade lays 2-4 cards of one ingredient in a row, as players collect
    sets: neighbours of one colour, whose bands show only by their edge and numeral."""
    card_cloth: bool = False
    """The table top takes the colour of one of the scene's cards (Scene.cloth_card)."""

    @staticmethod
    def hard(textures: tuple[str, ...] | None = None) -> SceneStyle:
        return SceneStyle(
            max_bowl_cards=10,
            min_bowl_cards=8,
            hands=(1, 2),
            hand_probability=1.0,
            textures=textures or SceneStyle().textures,
            distractors=(3, 8),
            upside_down=0.12,
            scan_probability=0.8,
        )


def card_corners(center: tuple[float, float], angle: float) -> np.ndarray:
    """The 4 corners (face TL, TR, BR, BL) of a card on the plane, mm."""
    return rect_corners(center, angle, layout.CARD_W_MM, layout.CARD_H_MM)


def rect_corners(center: tuple[float, float], angle: float, w: float, h: float) -> np.ndarray:
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    return local @ rotation(angle).T + np.asarray(center, np.float64)


def rotation(angle_deg: float) -> np.ndarray:
    """Counter-clockwise on screen (y down): x' = x cos + y sin, y' = -x sin + y cos."""
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, s], [-s, c]])


def strip_corners(card: PlacedCard, end: Literal["top", "bottom"]) -> np.ndarray:
    """The 4 corners of one index strip on the plane, mm (`top` = the face's own top)."""
    h = layout.CARD_H_MM / 2
    s = layout.INDEX_STRIP_MM
    y0, y1 = (-h, -h + s) if end == "top" else (h - s, h)
    w = layout.CARD_W_MM / 2
    local = np.array([[-w, y0], [w, y0], [w, y1], [-w, y1]])
    return local @ rotation(card.angle).T + np.asarray(card.center, np.float64)


# ---------------------------------------------------------------- the random builder

SKIN_TONES: Final[tuple[tuple[int, int, int], ...]] = (
    (173, 198, 241),
    (148, 182, 226),
    (112, 148, 198),
    (86, 121, 170),
    (61, 89, 130),
    (45, 62, 92),
)


def _jitter_angle(
    rng: np.random.Generator, spread: float, upside_down: float, skew: float | None = None
) -> float:
    """A laid card's angle: normal about straight (sd spread / 2, within 2 spread), or
    uniform within +- `skew` when given."""
    if skew is None:
        a = float(rng.normal(0.0, spread / 2.0))
        a = max(-2 * spread, min(2 * spread, a))
    else:
        a = float(rng.uniform(-skew, skew))
    if rng.random() < upside_down:
        a += 180.0
    return a


def cascade(
    cards: list[str],
    top_center: tuple[float, float],
    rng: np.random.Generator,
    region: str | None,
    upside_down: float = 0.08,
    offsets: tuple[float, float] = (12.0, 24.0),
    skew: float | None = None,
) -> list[PlacedCard]:
    """A bowl's cards laid downward, each about one index strip lower than the last (layout.py);
    `skew`: see SceneStyle.skew_deg."""
    out = []
    x, y = top_center[0], top_center[1] + layout.CARD_H_MM / 2
    for cid in cards:
        out.append(
            PlacedCard(
                cid,
                (x + float(rng.normal(0, 2.0)), y),
                _jitter_angle(rng, 5.0, upside_down, skew),
                True,
                region,
            )
        )
        y += float(rng.uniform(*offsets))
        x += float(rng.normal(0, 1.5))
    return out


def fan(
    cards: list[str], pivot: tuple[float, float], rng: np.random.Generator, region: str | None
) -> list[PlacedCard]:
    """A hand-held style fan: cards turning about a point below their centres."""
    n = len(cards)
    step = float(rng.uniform(7.0, 14.0))
    start = -step * (n - 1) / 2
    radius = float(rng.uniform(50.0, 70.0))
    out = []
    for i, cid in enumerate(cards):
        a = start + i * step + float(rng.normal(0, 1.0))
        # the centre sits `radius` above the pivot, turned by -a (fan opens to the right)
        rx, ry = rotation(a) @ np.array([0.0, -radius])
        out.append(PlacedCard(cid, (pivot[0] + rx, pivot[1] + ry), a, True, region))
    # a fan is laid left to right with each card on top of the previous: the index corner of
    # each card shows at the left; keep that order
    return out


def random_scene(
    rng: np.random.Generator, style: SceneStyle | None = None, texture: str | None = None
) -> Scene:
    """A plausible mid-game table: Fridge row, three bowls, maybe a scan pile, clutter, hands."""
    style = style or SceneStyle()
    pool = list(rng.permutation(np.array(CARD_IDS)))
    items: list[Item] = []

    def take(n: int) -> list[str]:
        n = min(n, len(pool))
        got = [str(pool.pop()) for _ in range(n)]
        return got

    def take_cascade(n: int) -> list[str]:
        """n cards to lay in a cascade, a run of one ingredient among them by chance."""
        ids = take(n)
        if style.ingredient_runs and rng.random() < style.ingredient_runs:
            ids = with_ingredient_run(ids, pool, rng)
        return ids

    # distractors lie under the cards (drawn first), mostly outside the regions
    items.extend(_distractors(rng, style))
    # the draw deck
    d = layout.DECK_SPOT
    items.append(
        Distractor(
            "deck",
            (d.center[0] + float(rng.normal(0, 2)), d.center[1] + float(rng.normal(0, 2))),
            float(rng.normal(0, 3)),
            (layout.CARD_W_MM, layout.CARD_H_MM),
            seed=int(rng.integers(1 << 30)),
        )
    )
    # the Fridge row
    n_fridge = int(rng.choice([0, 1, 2, 3, 4, 4, 4, 4]))
    slots = list(layout.fridge_slots())
    chosen = sorted(rng.choice(4, size=n_fridge, replace=False)) if n_fridge else []
    for cid, s in zip(take(n_fridge), chosen, strict=False):
        cx, cy = slots[s].center
        items.append(
            PlacedCard(
                cid,
                (cx + float(rng.normal(0, 3)), cy + float(rng.normal(0, 3))),
                _jitter_angle(rng, 4.0, style.upside_down, style.skew_deg),
                True,
                "fridge",
            )
        )
    # bowls
    for n in (1, 2, 3):
        r = layout.region_by_id(f"bowl-{n}").rect
        k = int(rng.integers(style.min_bowl_cards, style.max_bowl_cards + 1))
        top = (r.center[0] + float(rng.normal(0, 4)), r.y0 + float(rng.uniform(2, 14)))
        offsets = (12.0, 24.0) if k <= 9 else (12.0, 21.0)
        items.extend(
            cascade(
                take_cascade(k), top, rng, f"bowl-{n}", style.upside_down, offsets, style.skew_deg
            )
        )
    # the scan area
    if rng.random() < style.scan_probability and pool:
        sr = layout.region_by_id("scan").rect
        k = int(rng.integers(2, 11))
        if rng.random() < 0.6:
            top = (
                float(rng.uniform(sr.x0 + 45, sr.x1 - 45)),
                sr.y0 + float(rng.uniform(0, 30)),
            )
            items.extend(
                cascade(
                    take_cascade(k),
                    top,
                    rng,
                    "scan",
                    style.upside_down,
                    (14.0, 28.0),
                    style.skew_deg,
                )
            )
        else:
            pivot = (float(rng.uniform(sr.x0 + 110, sr.x1 - 110)), float(rng.uniform(250, 330)))
            items.extend(fan(take(k), pivot, rng, "scan"))
    # a loose face-down card now and then (someone's served pile)
    if rng.random() < 0.3 and pool:
        cid = take(1)[0]
        items.append(
            PlacedCard(
                cid,
                (float(rng.uniform(480, 720)), float(rng.uniform(90, 400))),
                float(rng.uniform(-30, 30)),
                False,
                None,
            )
        )
    # hands on top
    if rng.random() < style.hand_probability:
        for _ in range(int(rng.integers(style.hands[0], style.hands[1] + 1))):
            items.append(random_hand(rng))
    tex = texture or str(rng.choice(np.array(style.textures)))
    scene = Scene(tuple(items), tex, int(rng.integers(1 << 30)))
    shown = [c.card for c in scene.cards if c.face_up]
    if style.card_cloth and shown:
        scene = replace(scene, cloth_card=shown[int(rng.integers(len(shown)))])
    return scene


def with_ingredient_run(ids: list[str], pool: list[str], rng: np.random.Generator) -> list[str]:
    """`ids` with 2-4 cards of one ingredient laid in a row at a random place (drawn from
    `pool`, which loses them; the cards they replace go back to it)."""
    if len(ids) < 2:
        return ids
    first = ids[int(rng.integers(len(ids)))]
    ingredient = parse_card(first).ingredient
    same = [c for c in pool if parse_card(c).ingredient == ingredient]
    n = min(len(same), int(rng.integers(1, 4)), len(ids) - 1)
    if n < 1:
        return ids
    run = [first, *(str(c) for c in rng.choice(np.array(same), size=n, replace=False))]
    rest = [c for c in ids if c != first]
    start = int(rng.integers(0, len(rest) - n + 1))
    put_back = rest[start : start + n]  # replaced by the run's other cards
    for c in run[1:]:
        pool.remove(c)
    pool[:0] = put_back  # drawn last
    return rest[:start] + run + rest[start + n :]


def random_hand(
    rng: np.random.Generator, target: tuple[float, float] | None = None, side: str | None = None
) -> Hand:
    """An arm reaching in from a table edge (mostly the players' sides) to `target`."""
    if target is None:
        target = (float(rng.uniform(60, 720)), float(rng.uniform(60, 420)))
    side = side or str(rng.choice(np.array(["bottom", "bottom", "top", "left", "right"])))
    tx, ty = target
    if side == "bottom":
        root = (tx + float(rng.uniform(-250, 250)), 900.0)
    elif side == "top":
        root = (tx + float(rng.uniform(-250, 250)), -460.0)
    elif side == "left":
        root = (-500.0, ty + float(rng.uniform(-200, 200)))
    else:
        root = (1280.0, ty + float(rng.uniform(-200, 200)))
    skin = SKIN_TONES[int(rng.integers(len(SKIN_TONES)))]
    sleeve = None
    if rng.random() < 0.6:
        sleeve = tuple(int(v) for v in rng.integers(20, 220, 3))
    return Hand(
        root,
        target,
        skin,
        float(rng.uniform(75, 95)),
        float(rng.uniform(0.0, 1.0)),
        float(rng.uniform(40, 160)),
        sleeve,  # type: ignore[arg-type]
    )


def _free_spot(rng: np.random.Generator, size: float) -> tuple[float, float]:
    """A point off the regions: the table margins, or between the regions and the markers."""
    for _ in range(20):
        x = float(rng.uniform(-120, 900))
        y = float(rng.uniform(-100, 540))
        inside_play = 0 <= x <= layout.PLAY_W_MM and 0 <= y <= layout.PLAY_H_MM
        if not inside_play or layout.region_at(x, y) is None:
            return (x, y)
    return (float(rng.uniform(-120, -40)), float(rng.uniform(0, 440)))


def _distractors(rng: np.random.Generator, style: SceneStyle) -> list[Distractor]:
    out = []
    n = int(rng.integers(style.distractors[0], style.distractors[1] + 1))
    kinds = np.array(["back", "cup", "phone", "other_card", "other_card", "coin"])
    for _ in range(n):
        kind = str(rng.choice(kinds))
        seed = int(rng.integers(1 << 30))
        color = tuple(int(v) for v in rng.integers(0, 256, 3))
        angle = float(rng.uniform(-180, 180))
        if kind == "back":
            size = (layout.CARD_W_MM, layout.CARD_H_MM)
        elif kind == "cup":
            d = float(rng.uniform(75, 95))
            size = (d, d)
        elif kind == "phone":
            size = (float(rng.uniform(68, 78)), float(rng.uniform(140, 165)))
            color = tuple(int(v) for v in rng.integers(10, 60, 3))
        elif kind == "other_card":
            w = float(rng.choice([44.0, 57.0, 70.0, 80.0]))  # never a 63 mm card of this game
            size = (w, w * float(rng.uniform(1.35, 1.55)))
        else:
            d = float(rng.uniform(16, 27))
            size = (d, d)
        out.append(Distractor(kind, _free_spot(rng, max(size)), angle, size, color, seed))  # type: ignore[arg-type]
    return out


def with_items(scene: Scene, items: list[Item] | tuple[Item, ...]) -> Scene:
    return replace(scene, items=tuple(items))
