"""Does a card's index show in a rendered frame, as a person at the table would see it?

The scoring rule (`eval_detector.expected_cards`) asks for a card when half of one of its top
or bottom 12 mm strips shows and a hand covers no more than half of it. That is the default
deck's index exactly; a design whose numeral sits in one corner only (`ornate`) can show most
of that strip with its corner under a hand or the next card, and then no one can read it.
This module finds each design's index from its own faces (where the 8 cards of an ingredient
differ: numeral, icon, pips) and says whether it shows, so the benchmark can print a second
recall beside the first: of the cards whose index a person still reads (issue 10: hands and
glare "must not cost a card whose index a person still reads"). The scoring rule itself is
unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from companion.cards import parse_card

SHOWN_SHARE = 0.75
"""An index counts as shown when this share of it is uncovered and in frame (a numeral with a
quarter hidden is still read; one half hidden often is not: a 3 or an 8)."""
END_SHARE = 0.35
"""An end's index is looked for in this share of the face's height from that end."""
MASK_FLOOR = 0.25
"""Pixels that differ among an ingredient's 8 faces by under this share of the most differing
pixel of that end are not part of its index."""
WORK_PX = 4
"""Faces are compared at 1 / WORK_PX of their size (10 px/mm -> 2.5 px/mm)."""


def index_masks(faces: Mapping[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per ingredient, (top, bottom) masks of its index on a face (uint8 0/1, faces' size /
    WORK_PX): where its cards differ, near either end."""
    groups: dict[str, list[np.ndarray]] = {}
    for cid in sorted(faces):
        small = cv2.resize(
            faces[cid], None, fx=1 / WORK_PX, fy=1 / WORK_PX, interpolation=cv2.INTER_AREA
        )
        groups.setdefault(parse_card(cid).ingredient, []).append(small.astype(np.float32))
    out = {}
    for ingredient, group in groups.items():
        spread = np.stack(group).std(axis=0).sum(axis=2)
        spread = cv2.GaussianBlur(spread, (0, 0), 2.0)
        h = spread.shape[0]
        end = round(END_SHARE * h)
        masks = []
        for rows in (slice(0, end), slice(h - end, h)):
            part = np.zeros_like(spread)
            part[rows] = spread[rows]
            top = float(part.max())
            masks.append(
                (part >= MASK_FLOOR * top).astype(np.uint8) if top > 0 else part.astype(np.uint8)
            )
        out[ingredient] = (masks[0], masks[1])
    return out


def shown_share(card: dict, masks: dict[str, tuple[np.ndarray, np.ndarray]]) -> float:
    """The larger share of the card's two index ends that shows in the frame (0..1): its
    truth entry's face corners (`polygon_px`, the face's TL, TR, BR, BL) and uncovered parts
    (`visible_polygons_px`)."""
    visible = card.get("visible_polygons_px") or []
    if not visible:
        return 0.0
    top, bottom = masks[parse_card(card["card"]).ingredient]
    h, w = top.shape
    corners = np.asarray(card["polygon_px"], np.float32)
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 1
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 1
    size = (int(x1 - x0), int(y1 - y0))
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    warp = cv2.getPerspectiveTransform(src, corners - np.array([x0, y0], np.float32))
    seen = np.zeros((size[1], size[0]), np.uint8)
    for poly in visible:
        pts = np.round(np.asarray(poly, np.float64) - [x0, y0]).astype(np.int32)
        cv2.fillPoly(seen, [pts], 1)
    best = 0.0
    for mask in (top, bottom):
        on = cv2.warpPerspective(mask, warp, size, flags=cv2.INTER_NEAREST)
        n = int(on.sum())
        if n:
            best = max(best, float((on & seen).sum()) / n)
    return best


def cards_shown(truth: dict, masks: dict[str, tuple[np.ndarray, np.ndarray]]) -> set[str]:
    """Ids of the face-up cards whose index shows (`shown_share` >= SHOWN_SHARE)."""
    return {
        c["card"]
        for c in truth["cards"]
        if c.get("face_up", True) and shown_share(c, masks) >= SHOWN_SHARE
    }
