"""The two ends of one card, read as one: a card lying in full view shows its index twice.

The finder boxes both ends and each is named on its own; when the two readings disagree, one
of them is a card that is not on the table. Geometry says for sure which strips are one card's
two ends (turned 180 degrees to each other, one card length apart along the card's axis, and
nothing of another card between them), so their two readings are joined before the gate: two
agreeing readings make one surer reading, two disagreeing ones leave the better one, less sure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Final

from companion import layout
from companion.vision.naming import Naming

ENDS_APART_MM: Final = layout.CARD_H_MM - layout.INDEX_STRIP_MM
"""Between the centres of a card's two index strips."""
ENDS_TOLERANCE_MM: Final = 6.0
"""How far the other strip may sit from where the first one puts it (skew of a few degrees
over 72 mm, the finder's box edges)."""
ENDS_ANGLE_DEG: Final = 6.0
"""How far each end's own skew may turn from the line joining the two (the skew of a strip
half covered is least sure)."""
INSIDE_MARGIN_MM: Final = 4.0
"""Another strip whose centre lies this far inside the card between the two ends is a card
lying over it: the two strips are then not one card's (a cascade's fifth card laid upside
down sits one card length below the first)."""


def _axis(n: Naming) -> tuple[float, float]:
    """Unit vector from the strip towards the rest of its card, on the table plane."""
    a = math.radians(n.angle_deg)
    ca, sa = math.cos(a), math.sin(a)
    if n.flipped:
        ca, sa = -ca, -sa
    return sa, ca


def _local(n: Naming, point: tuple[float, float]) -> tuple[float, float]:
    """`point` in the strip's card frame: x across the card, y down it from the strip centre."""
    dx, dy = point[0] - n.center_mm[0], point[1] - n.center_mm[1]
    ax, ay = _axis(n)
    return dx * ay - dy * ax, dx * ax + dy * ay


def _faces(end: Naming, towards: tuple[float, float], within_deg: float = ENDS_ANGLE_DEG) -> bool:
    """The end's card lies towards `towards` (a unit vector), within `within_deg`."""
    ax, ay = _axis(end)
    return ax * towards[0] + ay * towards[1] >= math.cos(math.radians(within_deg))


def _one_card_apart(a: Naming, b: Naming) -> tuple[float, float, float] | None:
    """(ux, uy, length): the unit vector from a to b and their distance, when they lie one card
    length apart; else None."""
    dx, dy = b.center_mm[0] - a.center_mm[0], b.center_mm[1] - a.center_mm[1]
    length = math.hypot(dx, dy)
    if abs(length - ENDS_APART_MM) > ENDS_TOLERANCE_MM:
        return None
    return dx / length, dy / length, length


def _nothing_between(
    a: Naming, apart: tuple[float, float, float], others: Iterable[tuple[float, float]]
) -> bool:
    """No other strip centre (`others`) lies on the card between a and the strip `apart`
    (`_one_card_apart`) from it."""
    ux, uy, length = apart
    for point in others:
        px, py = point[0] - a.center_mm[0], point[1] - a.center_mm[1]
        if _between_ends(px * ux + py * uy, px * uy - py * ux, length):
            return False
    return True


def are_two_ends(a: Naming, b: Naming, others: Iterable[tuple[float, float]] = ()) -> bool:
    """`a` and `b` are the two ends of one card: turned to each other, one card length apart
    along the card's axis, and no other strip centre (`others`) on the card between them.

    The axis is the line through the two centres, held against each end's own skew: a strip
    half under a hand was read 5 degrees off its card, which put its partner 6.4 mm to the side
    of where its own axis pointed, over the tolerance."""
    apart = _one_card_apart(a, b)
    if apart is None:
        return False
    ux, uy, _ = apart
    # each end faces the other, within the angle its own skew may be off by
    if not (_faces(a, (ux, uy)) and _faces(b, (-ux, -uy))):
        return False
    return _nothing_between(a, apart, others)


def _between_ends(along: float, across: float, length: float) -> bool:
    """A point `along` / `across` a card's axis from one end's centre lies on the card, clear
    of both of its strips (the other end `length` further along)."""
    lo = layout.INDEX_STRIP_MM / 2 + INSIDE_MARGIN_MM
    return _across_card(across) and lo <= along <= length - lo


def _across_card(across: float) -> bool:
    """A point `across` a card's axis from its centre line lies within its width, clear of
    its long edges by INSIDE_MARGIN_MM."""
    return abs(across) <= layout.CARD_W_MM / 2 - INSIDE_MARGIN_MM


DOUBT_FLOOR: Final = 1e-6
"""The least doubt a reading is given when two ends disagree."""


def joined(a: Naming, b: Naming) -> tuple[Naming, Naming]:
    """Both ends named alike: the card both name, as sure as two independent readings make it
    (both would have to be wrong); or, when they differ, the surer end's card, its probability
    discounted by the other end's (each end keeps its own place and angle)."""
    pa, pb = a.confidence, b.confidence
    if a.card == b.card:
        p = 1.0 - (1.0 - pa) * (1.0 - pb)
        card, runner = a.card, a.runner_up if pa >= pb else b.runner_up
    else:
        win, lose = (a, b) if (pa, a.margin) >= (pb, b.margin) else (b, a)
        # one of them is wrong: the winner right and the loser wrong, against every way one
        # or both are wrong (1 - pw * pl); a floor on the doubts keeps two readings sure to the
        # last bit from dividing nothing by nothing
        rw = max(1.0 - win.confidence, DOUBT_FLOOR)
        rl = max(1.0 - lose.confidence, DOUBT_FLOOR)
        p = (1.0 - rw) * rl / (rw + rl - rw * rl)
        card, runner = win.card, lose.card
    return (
        replace(a, card=card, runner_up=runner, probability=p),
        replace(b, card=card, runner_up=runner, probability=p),
    )


def join_ends(
    namings: Sequence[Naming | None], centres_mm: Sequence[tuple[float, float] | None]
) -> list[Naming | None]:
    """Every pair of strips that are one card's two ends, named as one (see `joined`);
    `centres_mm`: every boxed strip's centre (named or not; None: not a sure strip), for the
    nothing-between test."""
    out = list(namings)
    live = [k for k, n in enumerate(namings) if n is not None]
    pairs: list[tuple[float, int, int]] = []
    for i, k in enumerate(live):
        a = namings[k]
        assert a is not None
        for m in live[i + 1 :]:
            b = namings[m]
            assert b is not None
            # (read only for pairs that pass the geometry: most pairs do not)
            others = (c for j, c in enumerate(centres_mm) if j != k and j != m and c is not None)
            if are_two_ends(a, b, others):
                x, y = _local(a, b.center_mm)
                pairs.append((math.hypot(x, y - ENDS_APART_MM), k, m))
    used: set[int] = set()
    for _, k, m in sorted(pairs):
        if k in used or m in used:
            continue
        used |= {k, m}
        a, b = out[k], out[m]
        assert a is not None and b is not None
        out[k], out[m] = joined(a, b)
    return out


SURE_UPRIGHT: Final = 0.3
"""An upright reading this sure (the detector's gate) speaks against a turned one."""
SURER_BY: Final = 0.05
"""A far end read this much surer than the near one is not dropped for facing away (two sure
readings differ by less: foil-1's phantom nori-7 at 0.999 beside its card's nori-1 at 0.998;
tarot-1's right negi-6 at 0.999 beside a cascade band misread at 0.73, its strips between
under a hand and not sure)."""
TURNED_PARALLEL_DEG: Final = 20.0
"""Strips this close in skew lie in one cascade (a fan turns its cards further apart)."""


def drop_turned_over_upright(
    namings: Sequence[Naming | None],
    centres_mm: Sequence[tuple[float, float] | None],
    found: Sequence[float] | None = None,
) -> list[Naming | None]:
    """Readings that the table's other strips say are read the wrong way up, dropped.

    A strip read turned says its card lies above it (towards its own top). An upright strip
    there, clear of the turned one's own other end, cannot be: its card would cover the turned
    strip, or be covered by the turned card. On 120 plain frames of the 4 held-out designs no
    right reading of 2,054 was the wrong way up, 10 of 27 wrong ones were, 7 of them a cascade's
    top band read turned (the value read upside down: a 2 as a 6). A value that reads the same
    either way (a 0) can be read turned and right: on the hard frames 3 such were dropped.
    `found`: the finder's confidence of each box; given, a turned reading surer by SURER_BY
    (finder times namer) than the upright one stays (held-out ornate-1: a turned card's
    bottom index read kamaboko-2 at 0.85, its top band under a hand, a box on its picture
    read kamaboko-5 at 0.49; `drop_on_shown_face` then drops that one)."""
    sure = _sureness(namings, found)
    out = list(namings)
    for k, turned, m, upright in _turned_and_upright(namings):
        if out[k] is None or centres_mm[m] is None:
            continue
        if upright.confidence < SURE_UPRIGHT or sure[k] >= sure[m] + SURER_BY:
            continue  # a box on a picture, named by nothing (foil-1: a right 3 dropped)
        skew = (upright.angle_deg - turned.angle_deg + 90.0) % 180.0 - 90.0
        if abs(skew) > TURNED_PARALLEL_DEG:
            continue
        x, y = _local(turned, upright.center_mm)
        if _between_ends(y, x, ENDS_APART_MM):
            out[k] = None
    return out


def _turned_and_upright(
    namings: Sequence[Naming | None],
) -> Iterator[tuple[int, Naming, int, Naming]]:
    """Every pair of a reading turned and one upright: (index, turned, index, upright)."""
    for k, turned in enumerate(namings):
        if turned is None or not turned.flipped:
            continue
        for m, upright in enumerate(namings):
            if upright is not None and not upright.flipped:
                yield k, turned, m, upright


def drop_facing_away(
    namings: Sequence[Naming | None], centres_mm: Sequence[tuple[float, float] | None]
) -> list[Naming | None]:
    """Readings of a card's far end read the wrong way up, dropped: a sure strip whose card
    lies towards another strip one card length away, with nothing between, says that strip
    is its card's other end; read facing away (its card beyond it), it is read upside down.
    A design with numerals in both top corners looks alike either way: foil-1 in the demo
    game, a Fridge card's top band read turned as kamaboko-6 above its bottom band's right
    kamaboko-3, both facing up; the phantom fifth Fridge card threw the game's turns off."""
    out = list(namings)
    for k, near in enumerate(namings):
        if near is None or near.confidence < SURE_UPRIGHT:
            continue
        for m, far in enumerate(namings):
            if (
                far is None
                or m == k
                or out[m] is None
                or far.confidence > near.confidence + SURER_BY
            ):
                continue
            apart = _one_card_apart(near, far)
            if apart is None:
                continue
            # both cards lie the same way: near's towards far, far's beyond it (the tilt of a
            # strip read upside down is as wrong as its name: foil-1's menma-4, a lone card in
            # a bowl, showed its top band read turned as nori-1 at 13 degrees, the card at -4)
            if not (_faces(near, apart[:2]) and _faces(far, apart[:2], TURNED_PARALLEL_DEG)):
                continue
            others = (c for j, c in enumerate(centres_mm) if c is not None and j not in (k, m))
            if _nothing_between(near, apart, others):
                out[m] = None
    return out


ONE_STRIP_MM: Final = layout.INDEX_STRIP_MM / 2
"""Two readings whose centres lie closer than this along the card's axis lie on one strip (a
cascade shows each card's strip whole or most of it: its neighbours' centres lie about a strip
apart)."""


def drop_one_strip_read_both_ways(
    namings: Sequence[Naming | None], found: Sequence[float] | None = None
) -> list[Naming | None]:
    """Of two readings of one strip, one upright and one turned, the less sure dropped (finder
    times namer; the turned one only when surer by SURER_BY, most cards lying upright): two
    cards' strips cannot share one place. Held-out foil-1 (numerals in both top corners) in a
    3-player game at 4 frames/s: a bowl's last card, shiitake-5, read upright at 0.83, boxed
    again 7 mm lower and read turned as shiitake-7 at 0.75; a phantom play."""
    sure = _sureness(namings, found)
    out = list(namings)
    for k, turned, m, upright in _turned_and_upright(namings):
        if abs(upright.angle_deg - turned.angle_deg) > TURNED_PARALLEL_DEG:
            continue
        across, along = _local(upright, turned.center_mm)
        if abs(along) >= ONE_STRIP_MM or not _across_card(across):
            continue
        if sure[k] >= sure[m] + SURER_BY:
            out[m] = None
        else:
            out[k] = None
    return out


def _sureness(namings: Sequence[Naming | None], found: Sequence[float] | None) -> list[float]:
    """Each reading's own sureness: the namer's times the finder's (`found`, when given)."""
    return [
        0.0 if n is None else n.confidence * (1.0 if found is None else float(found[k]))
        for k, n in enumerate(namings)
    ]


def _on_face_to_top(along: float, across: float) -> bool:
    """A point `along` / `across` a card's axis from its bottom index lies on the card, above
    that index's centre, anywhere up to and over its top band (a top band read right and in
    place would have been joined to the bottom index instead). Over the index itself too: a
    band there, read upright, is that index boxed again (held-out foil-1 at 15 frames/s: a
    landing menma-5's bottom index read turned at 237 mm and, boxed 7 mm higher, upright as
    ajitama-2, a phantom play)."""
    top = ENDS_APART_MM + layout.INDEX_STRIP_MM / 2
    return _across_card(across) and 0.0 < along <= top


def drop_on_shown_face(
    namings: Sequence[Naming | None], found: Sequence[float] | None = None
) -> list[Naming | None]:
    """Upright readings on the face of a card whose bottom index shows, dropped unless surer
    than that end by SURER_BY: a card laid on its face would hide that end (a cascade card is
    laid lower and is 88 mm long), so a band there is the card's own, boxed off its top and
    misread. Held-out ornate-1 at 15 frames/s: nori-2 landing, its top band boxed 5 mm low
    and read nori-1 (0.93) beside its bottom index's nori-2 (1.0) for five frames, a full
    vote: a phantom that threw the game's turns off. `found`: the finder's confidence of each
    box, given, sureness is the reading's own (finder times namer): at 4 frames/s the same
    band was read nori-1 at 0.96 in a box the finder gave 0.69, its bottom index 1.0 in one of
    0.85. Both ends of one card, named apart and about as sure, are one card, not two (15
    frames/s: a negi-4's top band read negi-6 at 0.85 beside its bottom index's negi-4 at 0.84
    for 2 s, a phantom play and the turns adrift): the bottom index, which nothing can cover
    while it shows, is kept."""
    sure = _sureness(namings, found)
    out = list(namings)
    for f, far, m, other in _turned_and_upright(namings):
        if (
            sure[f] < SURE_UPRIGHT  # a reading the detector would not keep overrules none
            or sure[m] >= sure[f] + SURER_BY
            or abs(other.angle_deg - far.angle_deg) > TURNED_PARALLEL_DEG
        ):
            continue
        across, along = _local(far, other.center_mm)
        if _on_face_to_top(along, across) and not _above_own_top(namings, f, m, along):
            out[m] = None
    return out


def _above_own_top(namings: Sequence[Naming | None], f: int, m: int, along: float) -> bool:
    """Reading m lies above the top band of the card whose bottom index is reading f, that
    top band read as the same card: the card's face ends at that band, so m is the band of
    the card under it in a cascade, boxed a few mm low (held-out ornate-1 plain frame 16:
    chashu-3 read at 1.0, 6 mm low, over the top edge of chashu-2, whose two ends both read
    chashu-2, and dropped as if on chashu-2's face)."""
    far = namings[f]
    assert far is not None
    return any(
        k not in (f, m)
        and top is not None
        and not top.flipped
        and top.card == far.card
        and are_two_ends(far, top)
        and along >= _local(far, top.center_mm)[1] + layout.INDEX_STRIP_MM / 2
        for k, top in enumerate(namings)
    )


INSIDE_BAND_FIT: Final = 0.2
"""A band lying within the top band of one above it (`drop_inside_band`) is dropped when that
one fits its card (`Naming.score`) by this much better. Chosen on the 8 outsider decks' cached
frames (`benchmarks/cascade_pairs.py`, 30 pairs within 12 mm): the two lower readings that were
wrong fitted 0.28 and 0.42 worse than the band above them (the game's phantom below, 0.47);
in the 26 pairs of right readings (tight cascades, 9.6-11.9 mm apart) the upper fitted better
by 0.17 at most."""


def drop_inside_band(
    namings: Sequence[Naming | None], band_mm: float, found: Sequence[float] | None = None
) -> list[Naming | None]:
    """Readings lying less than `band_mm` below a band that lies the same way up over them,
    dropped when that band fits its card INSIDE_BAND_FIT better and is at least as sure: each
    band of a cascade is a card's top, laid at least the tightest step (the top band, 12 mm)
    below the one before, and a band fitting so well shows no card laid over its top band. A
    box straddling two cascaded cards reads one's colour and the other's numeral (outsider
    segment-1's warm 2-player game at 720p: negi-0 read fitting 1.19, a box 9.1 mm below it on
    its lower numeral and the next card's top read negi-4 fitting 0.72, a phantom play that
    threw the turns). Deeper than the top band, a normal cascade's bands fit as differently
    (lettered-1: a right nori-4 13.7 mm below ajitama-1, fitting 0.23 worse)."""
    sure = _sureness(namings, found)
    out = list(namings)
    for k, low in enumerate(namings):
        if low is None:
            continue
        for m, high in enumerate(namings):
            if (
                m == k
                or high is None
                or high.flipped != low.flipped
                or abs(high.angle_deg - low.angle_deg) > TURNED_PARALLEL_DEG
                or high.score < low.score + INSIDE_BAND_FIT
                or sure[m] < sure[k]
            ):
                continue
            across, along = _local(high, low.center_mm)
            if 0.0 < along < band_mm and _across_card(across):
                out[k] = None
                break
    return out
