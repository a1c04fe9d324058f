"""Where things lie on the table, in millimetres on the table plane (pure data, no I/O).

The printed kit puts four ArUco markers at the corners of a 780 x 440 mm play area. Table-plane
coordinates have their origin at the outer top-left corner of marker 0, x to the right and y
towards the bottom of the camera image (the side of the table nearest the screen).

Cascade convention (printed on the kit): each card played into a bowl is laid on the previous one
about INDEX_STRIP_MM lower, so the top index strip of every card stays visible. Every face
carries the same index strip at both ends (the bottom one turned 180 degrees), so a card laid
upside down still shows its index.

Camera assumption: Camera Module 3, standard 66 degree (horizontal) lens, 16:9 stream, looking
straight down from DEFAULT_CAMERA_HEIGHT_MM above the centre of the play area. At height h it
covers about 2 h tan(33 deg) = 1.30 h by 0.73 h; at 700 mm that is 910 x 511 mm, leaving a
margin round the 780 x 440 mm play area for a few degrees of tilt. The layout scales: print
the markers and place the regions scaled by s, and mount the camera at s x 700 mm.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

CARD_W_MM: Final = 63.0
CARD_H_MM: Final = 88.0
INDEX_STRIP_MM: Final = 16.0
"""Height of the index strip at each end of a face; also the nominal cascade offset."""
CARD_CORNER_MM: Final = 3.0

PLAY_W_MM: Final = 780.0
PLAY_H_MM: Final = 440.0
MARKER_MM: Final = 40.0
"""Side of the black ArUco square (the printed tile adds a white quiet zone around it)."""
ARUCO_DICT: Final = "DICT_4X4_50"
MARKER_IDS: Final[tuple[int, int, int, int]] = (0, 1, 2, 3)
"""Top-left, top-right, bottom-right, bottom-left."""

RECTIFIED_PX_PER_MM: Final = 1.0
"""Scale of the top-down view the strip detector sees (780 x 440 px for the play area)."""

DEFAULT_CAMERA_HEIGHT_MM: Final = 700.0
CAMERA_HFOV_DEG: Final = 66.0


@dataclass(frozen=True, slots=True)
class Rect:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


@dataclass(frozen=True, slots=True)
class Region:
    id: str
    """`fridge`, `bowl-1`, `bowl-2`, `bowl-3` or `scan` (PRODUCT.md)."""
    rect: Rect
    label: str
    """What the printed kit writes in the region."""


def marker_squares() -> dict[int, Rect]:
    """Marker id -> its black square on the table plane."""
    m = MARKER_MM
    return {
        0: Rect(0, 0, m, m),
        1: Rect(PLAY_W_MM - m, 0, PLAY_W_MM, m),
        2: Rect(PLAY_W_MM - m, PLAY_H_MM - m, PLAY_W_MM, PLAY_H_MM),
        3: Rect(0, PLAY_H_MM - m, m, PLAY_H_MM),
    }


DECK_SPOT: Final = Rect(55.0, 12.0, 55.0 + CARD_W_MM, 12.0 + CARD_H_MM)
"""Where the face-down draw deck sits, left of the Fridge row."""

FRIDGE_SLOT_GAP_MM: Final = 10.0


def fridge_slots() -> tuple[Rect, ...]:
    """The four face-up Fridge places, left to right."""
    x = DECK_SPOT.x1 + 22.0
    slots = []
    for _ in range(4):
        slots.append(Rect(x, DECK_SPOT.y0, x + CARD_W_MM, DECK_SPOT.y1))
        x += CARD_W_MM + FRIDGE_SLOT_GAP_MM
    return tuple(slots)


def _bowl(n: int) -> Region:
    x0 = 55.0 + (n - 1) * 135.0
    return Region(f"bowl-{n}", Rect(x0, 118.0, x0 + 120.0, 432.0), f"Bowl {n}")


REGIONS: Final[tuple[Region, ...]] = (
    Region(
        "fridge",
        Rect(fridge_slots()[0].x0 - 8, 6.0, fridge_slots()[-1].x1 + 8, 106.0),
        "Fridge",
    ),
    _bowl(1),
    _bowl(2),
    _bowl(3),
    Region("scan", Rect(470.0, 60.0, 732.0, 432.0), "Scan area"),
)
REGION_IDS: Final[tuple[str, ...]] = tuple(r.id for r in REGIONS)


def region_by_id(region_id: str) -> Region:
    for region in REGIONS:
        if region.id == region_id:
            return region
    raise KeyError(region_id)


def region_at(x: float, y: float) -> str | None:
    """Region id holding a table-plane point (a card's index strip centre), or None."""
    for region in REGIONS:
        if region.rect.contains(x, y):
            return region.id
    return None
