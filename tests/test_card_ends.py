"""A card in full view shows its index at both ends: the two readings become one."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from companion import layout
from companion.vision.card_ends import (
    ENDS_APART_MM,
    are_two_ends,
    drop_facing_away,
    drop_inside_band,
    drop_on_shown_face,
    drop_one_strip_read_both_ways,
    drop_turned_over_upright,
    join_ends,
)
from companion.vision.naming import Naming


def _strip(card: str, centre: tuple[float, float], p: float, flipped: bool = False, angle=0.0):
    return Naming(
        card=card,
        score=0.8,
        margin=0.1,
        runner_up="nori-0",
        flipped=flipped,
        angle_deg=angle,
        center_mm=centre,
        probability=p,
    )


def _card(centre_top: tuple[float, float], angle: float = 0.0) -> tuple[tuple[float, float], ...]:
    """Centres of an upright card's top strip and of its bottom strip, the card turned
    `angle` degrees counter-clockwise on the table."""
    a = math.radians(angle)
    return centre_top, (
        centre_top[0] + ENDS_APART_MM * math.sin(a),
        centre_top[1] + ENDS_APART_MM * math.cos(a),
    )


@pytest.mark.parametrize("angle", [0.0, 8.0, -12.0])
def test_a_card_whose_ends_disagree_is_read_once_as_the_surer_end_says(angle):
    top, bottom = _card((200.0, 150.0), angle)
    a = _strip("negi-3", top, 0.9, angle=angle)
    b = _strip("ajitama-3", bottom, 0.4, flipped=True, angle=angle)
    joined = join_ends([a, b], [top, bottom])
    assert [n.card for n in joined if n] == ["negi-3", "negi-3"]
    # the disagreement costs certainty: one end is wrong, and it is the other one with
    # odds 0.9 * (1 - 0.4) against 0.4 * (1 - 0.9) + 0.1 * 0.6 (both wrong)
    assert all(n is not None and n.confidence == pytest.approx(0.54 / 0.64) for n in joined)
    assert joined[0] is not None and joined[0].runner_up == "ajitama-3"


def test_two_sure_ends_that_disagree_keep_the_card_the_surer_one_reads():
    """ornate-1 plain frame 16 of foreign_decks.py: the last card of a cascade, its top band
    read chashu-4 (0.9996, value margin 0.02) and its bottom one chashu-2 (1.0); the card
    was read at 0.0004 (under the gate: lost), though the top end's doubt is 400 times the
    other's."""
    top, bottom = _card((260.0, 279.0), -3.0)
    a = _strip("chashu-4", top, 0.9996, angle=-3.0)
    b = _strip("chashu-2", bottom, 1.0, flipped=True, angle=-3.0)
    joined = join_ends([a, b], [top, bottom])
    assert [n.card for n in joined if n] == ["chashu-2", "chashu-2"]
    assert all(n is not None and n.confidence > 0.99 for n in joined)
    # two ends equally sure of different cards: a coin toss, not a sure reading
    c = _strip("chashu-2", bottom, 0.9996, flipped=True, angle=-3.0)
    assert all(n is not None and n.confidence < 0.51 for n in join_ends([a, c], [top, bottom]))


def test_two_agreeing_ends_make_a_surer_reading():
    top, bottom = _card((120.0, 90.0))
    a = _strip("menma-5", top, 0.3)
    b = _strip("menma-5", bottom, 0.3, flipped=True)
    joined = join_ends([a, b, None], [top, bottom, (400.0, 40.0)])
    assert joined[2] is None
    # under the detector's gate alone, past it together: 1 - 0.7 * 0.7
    assert [n.confidence for n in joined if n] == pytest.approx([0.51, 0.51])


def test_a_cascade_is_not_taken_for_one_card():
    """The first card of a bowl and its fifth, laid upside down, show strips one card length
    apart facing each other; the three strips between them say they are different cards."""
    step = ENDS_APART_MM / 4
    centres = [(300.0, 100.0 + k * step) for k in range(5)]
    namings = [_strip(f"nori-{k}", c, 0.6) for k, c in enumerate(centres[:4])]
    namings.append(_strip("chashu-7", centres[4], 0.9, flipped=True))
    assert are_two_ends(namings[0], namings[4])  # by geometry alone they could be one card
    assert join_ends(namings, centres) == namings


def test_strips_of_two_cards_side_by_side_or_one_below_the_other_stay_apart():
    left, right = (100.0, 100.0), (100.0 + layout.CARD_W_MM + 5, 100.0)
    below = (100.0, 100.0 + ENDS_APART_MM)
    a = _strip("kamaboko-1", left, 0.8)
    assert not are_two_ends(a, _strip("kamaboko-2", right, 0.8, flipped=True))
    # the next card below, the same way up: its strip faces away from the first card
    assert not are_two_ends(a, _strip("kamaboko-2", below, 0.8))


def test_an_end_whose_skew_a_hand_threw_off_is_still_joined_to_its_other_end():
    """Fridge card of benchmark frame foil-1 1: its bottom end, 28 % under a hand, was read
    5 degrees off the card and as another value; its partner then lay 6.4 mm to the side of
    where that end's own axis pointed."""
    top, bottom = _card((170.0, 20.0), 4.0)
    a = _strip("ajitama-0", top, 0.9, angle=4.0)
    b = _strip("ajitama-5", bottom, 0.6, flipped=True, angle=-1.0)
    assert are_two_ends(a, b)
    assert [n.card for n in join_ends([a, b], [top, bottom]) if n] == ["ajitama-0"] * 2


def test_a_box_the_finder_is_unsure_of_does_not_part_two_ends():
    """A box on the card's picture between its ends (None: under the finder's sureness for
    the between test) leaves them one card; a sure strip there makes them two."""
    top, bottom = _card((380.0, 218.0))
    a = _strip("shiitake-2", top, 0.6)
    b = _strip("shiitake-5", bottom, 0.8, flipped=True)
    picture = (378.0, 273.0)
    assert [n.card for n in join_ends([a, b, None], [top, bottom, None]) if n] == ["shiitake-5"] * 2
    assert join_ends([a, b, None], [top, bottom, picture]) == [a, b, None]


def test_a_cascade_band_read_turned_under_the_bands_above_it_is_dropped():
    """foil-1 frame 2: the last card of a bowl had its top band read turned, a 2 as a 6; the
    bands of the cards under it, upright, lie where that turned reading puts its card."""
    step = 16.0
    centres = [(300.0, 100.0 + k * step) for k in range(4)]
    namings: list[Naming | None] = [_strip(f"nori-{k}", c, 0.8) for k, c in enumerate(centres[:3])]
    namings.append(_strip("kamaboko-6", centres[3], 0.7, flipped=True))
    kept = drop_turned_over_upright(namings, centres)
    assert kept[:3] == namings[:3] and kept[3] is None


def test_turned_readings_the_table_agrees_with_are_kept():
    # the bottom end of a bowl's last card, 72 mm under its own top band
    top, bottom = _card((300.0, 100.0))
    ends = [_strip("nori-2", top, 0.8), _strip("nori-2", bottom, 0.8, flipped=True)]
    assert drop_turned_over_upright(ends, [top, bottom]) == ends
    # a row of cards laid upward, each turned: every band's card lies above it
    centres = [(300.0, 200.0 - k * 16.0) for k in range(4)]
    turned = [_strip(f"menma-{k}", c, 0.8, flipped=True) for k, c in enumerate(centres)]
    assert drop_turned_over_upright(turned, centres) == turned
    # an upright band beside a turned one (the next bowl), and one the finder is unsure of
    side = [
        _strip("negi-1", (300.0, 150.0), 0.8, flipped=True),
        _strip("chashu-3", (440.0, 120.0), 0.8),
    ]
    assert drop_turned_over_upright(side, [(300.0, 150.0), (440.0, 120.0)]) == side
    unsure = [side[0], _strip("chashu-3", (300.0, 120.0), 0.8)]
    assert drop_turned_over_upright(unsure, [(300.0, 150.0), None]) == unsure
    # a box on a card's picture that the namer names with no confidence
    blank = [side[0], _strip("chashu-3", (300.0, 120.0), 0.05)]
    assert drop_turned_over_upright(blank, [(300.0, 150.0), (300.0, 120.0)]) == blank


def test_a_cards_top_band_read_upside_down_above_its_bottom_band_is_dropped():
    """foil-1 (numerals in both top corners) in the demo game at 720p: a Fridge card's top band
    was read turned as kamaboko-6, facing up, above its own bottom band's right kamaboko-3,
    also facing up: a fifth Fridge card at setup, which threw the game's turns off."""
    top, bottom = _card((317.0, 16.0))
    wrong = _strip("kamaboko-6", top, 0.75, flipped=True)
    right = _strip("kamaboko-3", bottom, 1.0, flipped=True)
    assert drop_facing_away([wrong, right], [top, bottom]) == [None, right]
    # the two ends read each the right way up face each other: both kept (and joined)
    upright = _strip("kamaboko-3", top, 0.75)
    assert drop_facing_away([upright, right], [top, bottom]) == [upright, right]
    # a strip between them (another card's) says they are two cards: both kept
    between = (317.0, 52.0)
    assert drop_facing_away([wrong, right, None], [top, bottom, between]) == [wrong, right, None]
    # the one facing away read clearly surer than the other: no say
    unsure = _strip("kamaboko-3", bottom, 0.6, flipped=True)
    assert drop_facing_away([wrong, unsure], [top, bottom]) == [wrong, unsure]


def test_a_last_cascade_cards_bottom_band_read_upright_is_dropped_however_sure():
    """foil-1 in a 4-player game: a cascade's last card, nori-1, showed its bottom band too,
    read the right way up as nori-7 a card length below, both ends named at 1.0 (the far one
    0.999 against 0.998): a phantom nori-7 in the bowl took the next turn's plays. Two sure
    readings are equally sure: the geometry decides."""
    top, bottom = _card((113.2, 163.9))
    near = _strip("nori-1", top, 0.998, angle=-0.4)
    far = _strip("nori-7", bottom, 0.999, angle=4.6)
    assert drop_facing_away([near, far], [top, bottom]) == [near, None]
    # the card above it in the cascade lies the other way: no say
    above = _strip("ajitama-3", (117.6, 153.5), 1.0)
    assert drop_facing_away([above, near, far], [(117.6, 153.5), top, bottom])[0] is above


def test_a_box_the_namer_reads_nothing_in_does_not_part_two_ends():
    """foil-1, the same game: the finder boxed nori-1's picture (0.52 sure) and the namer read
    nothing there (0.0); that box, between nori-1's two ends, kept the phantom alive. A box
    the namer reads a card in still parts them, and so does one it reads nothing in that the
    finder is sure of (the default deck's cascade under a hand: 0.70 and 0.81, named 0.0)."""
    from companion.vision.detector import strip_centres

    box = (90.0, 170.0, 140.0, 185.0)
    named = _strip("chashu-4", (115.0, 177.5), 0.5)
    junk = _strip("chashu-4", (115.0, 177.5), 0.0)
    assert strip_centres([box], [0.52], [named]) == [(115.0, 177.5)]
    assert strip_centres([box], [0.52], [junk]) == [None]
    assert strip_centres([box], [0.52], [None]) == [None]
    assert strip_centres([box], [0.7], [junk]) == [(115.0, 177.5)]
    assert strip_centres([box], [0.3], [named]) == [None]


def test_a_lone_cards_top_band_read_turned_and_tilted_is_dropped():
    """foil-1 in a 4-player game at 15 frames a second: a lone card in a bowl, menma-4, its
    bottom band read right (turned, -6 degrees), its top band read turned as nori-1 with a
    tilt of 13 degrees: a phantom second card in the bowl. A strip read upside down has its
    tilt wrong too; turned further than TURNED_PARALLEL_DEG it is not the same card's."""
    near = _strip("menma-4", (112.7, 205.3), 1.0, flipped=True, angle=-6.3)
    far = _strip("nori-1", (115.6, 135.5), 0.622, flipped=True, angle=13.2)
    centres = [near.center_mm, far.center_mm]
    assert drop_facing_away([near, far], centres) == [near, None]
    across = _strip("nori-1", (115.6, 135.5), 0.622, flipped=True, angle=35.0)
    assert drop_facing_away([near, across], centres) == [near, across]


def test_a_band_read_on_a_card_whose_bottom_index_shows_is_that_cards_own_misread():
    """Held-out ornate-1 at 15 frames/s, nori-2 landing: its top band boxed 5 mm low and read
    nori-1 (0.93, 7 mm below where its top band lies, 12 degrees off) beside its bottom
    index's nori-2 (1.0); five frames of it were a full vote and a phantom in the bowl."""
    _top, bottom = _card((112.0, 172.0))
    phantom = _strip("nori-1", (111.0, 179.0), 0.93, angle=-12.4)
    card = _strip("nori-2", bottom, 1.0, flipped=True, angle=1.2)
    assert drop_on_shown_face([phantom, card]) == [None, card]


def test_bands_beside_above_or_surer_than_a_shown_bottom_index_stay():
    """The cascade's earlier cards' bands lie above the card (under it), another bowl's beside
    it; a band on its face read surer than its bottom index is not overruled by it."""
    top, bottom = _card((112.0, 172.0))
    card = _strip("nori-2", bottom, 0.9, flipped=True)
    above = _strip("nori-3", (112.0, top[1] - 16.0), 0.8)
    beside = _strip("negi-1", (112.0 + layout.CARD_W_MM + 10.0, 200.0), 0.5)
    surer = _strip("menma-4", (112.0, 200.0), 0.99)
    readings = [above, beside, surer, card]
    assert drop_on_shown_face(readings) == readings


def test_a_band_boxed_low_over_a_cards_own_top_band_is_the_card_under_it():
    """Held-out ornate-1 plain frame 16: chashu-2 ends a cascade, both its ends read chashu-2;
    chashu-3's band just above it, boxed 6 mm low (over chashu-2's top edge), was read right at
    1.0 and dropped as if on chashu-2's face: a band above the card's own top band is the
    card's under it. Without that top band read, the band there is still dropped (the phantom
    of a landing card's top band boxed low)."""
    top, bottom = _card((254.0, 274.0))
    own_top = _strip("chashu-2", (top[0], top[1] + 4.0), 1.0)
    card = _strip("chashu-2", bottom, 1.0, flipped=True)
    under = _strip("chashu-3", (254.0, top[1] - 6.0), 1.0)  # 2 mm onto chashu-2's face
    readings = [under, own_top, card]
    assert drop_on_shown_face(readings, [0.84, 0.81, 0.87]) == [under, None, card]
    # the own top band read as another card says nothing of where the face ends
    misread = _strip("chashu-6", own_top.center_mm, 1.0)
    assert drop_on_shown_face([under, misread, card], [0.84, 0.81, 0.87])[0] is None


def test_the_finders_doubt_counts_in_which_end_is_surer():
    """Held-out ornate-1 at 4 frames/s, nori-2 landing: its top band read nori-1 at 0.96 in a
    box the finder gave 0.69, its bottom index nori-2 at 1.0 in one of 0.85: named alike,
    but the reading (finder times namer, 0.66 against 0.85) is the bottom index's."""
    _top, bottom = _card((112.0, 172.0))
    phantom = _strip("nori-1", (111.0, 179.0), 0.96)
    card = _strip("nori-2", bottom, 1.0, flipped=True)
    assert drop_on_shown_face([phantom, card], [0.69, 0.85]) == [None, card]
    # named apart and as sure: one card, not two; its bottom index (nothing covers it) stays
    assert drop_on_shown_face([phantom, card], [0.85, 0.85]) == [None, card]
    surer = _strip("nori-1", (111.0, 179.0), 1.0)
    assert drop_on_shown_face([surer, card], [0.85, 0.75]) == [surer, card]


def test_a_band_boxed_over_a_shown_bottom_index_and_read_upright_is_that_index():
    """Held-out foil-1 at 15 frames/s: menma-5's bottom index read turned at 237 mm (0.75),
    and boxed again 7 mm higher, read upright as ajitama-2 (0.55): not a card laid there
    (it would hide the index). A card laid below it, its band under the card's edge, stays."""
    card = _strip("menma-5", (386.0, 237.0), 1.0, flipped=True)
    again = _strip("ajitama-2", (389.0, 230.0), 0.99)
    below = _strip("negi-1", (386.0, 237.0 + layout.INDEX_STRIP_MM + 2.0), 0.99)
    assert drop_on_shown_face([again, card, below], [0.55, 0.75, 0.55]) == [None, card, below]


def test_a_turned_reading_the_detector_would_not_keep_overrules_no_band():
    """A bottom index read turned below the detector's gate (finder times namer under 0.3) is
    no card the table shows: a real band on "its" face, not surer by SURER_BY, stays."""
    _top, bottom = _card((112.0, 172.0))
    junk = _strip("nori-2", bottom, 0.5, flipped=True)
    band = _strip("negi-5", (111.0, 179.0), 0.45)
    assert drop_on_shown_face([band, junk], [0.6, 0.5]) == [band, junk]
    # the same index surely read still overrules it
    assert drop_on_shown_face([band, junk], [0.6, 0.9]) == [None, junk]


def test_a_turned_index_surer_than_a_box_on_its_picture_stays():
    """Held-out ornate-1 plain frame 8: a card's top band under a hand, its bottom index shown
    and read turned as kamaboko-2 (namer 1.0, finder 0.85); a box on its picture 56 mm above
    read upright as kamaboko-5 (0.8, finder 0.61). The index stays, the picture's box goes."""
    index = _strip("kamaboko-2", (254.0, 216.0), 1.0, flipped=True, angle=2.1)
    picture = _strip("kamaboko-5", (254.0, 160.0), 0.8, angle=6.9)
    namings: list[Naming | None] = [index, picture]
    centres = [index.center_mm, picture.center_mm]
    found = [0.85, 0.61]
    kept = drop_on_shown_face(drop_turned_over_upright(namings, centres, found), found)
    assert kept == [index, None]
    # about as sure as the band there (0.5 against 0.49): the band's reading stands, as before
    assert drop_turned_over_upright(namings, centres, [0.5, 0.61]) == [None, picture]


def test_one_strip_read_both_ways_up_keeps_the_surer_reading():
    """Held-out foil-1 (numerals in both top corners) at 4 frames/s: a bowl's last card read
    upright as shiitake-5 (finder 0.83) and, boxed again 7 mm lower, turned as shiitake-7
    (0.75): one strip, two cards; the phantom went into the bowl. The surer one stays."""
    upright = _strip("shiitake-5", (251.0, 240.0), 1.0, angle=0.4)
    turned = _strip("shiitake-7", (249.0, 247.0), 1.0, flipped=True, angle=0.3)
    assert drop_one_strip_read_both_ways([upright, turned], [0.83, 0.75]) == [upright, None]
    # the turned one clearly surer (a card laid turned, a box on its picture read upright)
    assert drop_one_strip_read_both_ways([upright, turned], [0.5, 0.75]) == [None, turned]
    # a cascade's neighbour a strip away, and the next bowl's card beside it, stay
    below = _strip("shiitake-7", (249.0, 240.0 + layout.INDEX_STRIP_MM), 1.0, flipped=True)
    beside = _strip("negi-2", (251.0 + layout.CARD_W_MM + 8.0, 243.0), 1.0, flipped=True)
    readings = [upright, below, beside]
    assert drop_one_strip_read_both_ways(readings, [0.83, 0.75, 0.75]) == readings


def _fitted(n: Naming, score: float) -> Naming:
    return replace(n, score=score)


@pytest.mark.parametrize("angle", [0.0, 10.0])
def test_a_box_straddling_two_cascaded_cards_is_dropped_not_a_tight_cascade(angle):
    """Outsider segment-1's warm game: negi-0 read fitting 1.19, a box 9.1 mm below it (its
    lower numeral and the next card's top) read negi-4 fitting 0.72, a phantom play. Two
    cards of a tight cascade 9.5 mm apart fit alike and both stay; so does a band deeper than
    the top band, however loosely it fits (lettered-1: a right nori-4 13.7 mm below a band
    fitting 0.23 better)."""
    a = math.radians(angle)

    def below(mm: float) -> tuple[float, float]:
        return (100.0 + mm * math.sin(a), 150.0 + mm * math.cos(a))

    upper = _fitted(_strip("negi-0", below(0), 0.82, angle=angle), 1.19)
    straddle = _fitted(_strip("negi-4", below(9.1), 0.44, angle=angle), 0.72)
    tight = _fitted(_strip("chashu-7", below(9.5), 0.75, angle=angle), 1.07)
    next_card = _fitted(_strip("ajitama-4", below(26.0), 0.3, angle=angle), 0.7)
    out = drop_inside_band([upper, straddle, next_card], 12.0)
    assert [n.card for n in out if n] == ["negi-0", "ajitama-4"]
    out = drop_inside_band([upper, tight], 12.0)
    assert [n.card for n in out if n] == ["negi-0", "chashu-7"]
    # deeper than the top band: another card's band, kept however loosely it fits
    deeper = _fitted(_strip("nori-4", below(13.7), 0.7, angle=angle), 0.76)
    assert drop_inside_band([upper, deeper], 12.0) == [upper, deeper]


def test_a_band_inside_the_index_of_a_band_less_sure_or_turned_stays():
    """Only a band surer and lying the same way up speaks for its whole index: a straddle read
    surer than the band above it, or a turned end over an upright band, is not judged so."""
    upper = _fitted(_strip("negi-0", (100.0, 150.0), 0.4), 1.19)
    surer = _fitted(_strip("negi-4", (100.0, 159.0), 0.6), 0.72)
    assert drop_inside_band([upper, surer], 12.0) == [upper, surer]
    turned = _fitted(_strip("negi-4", (100.0, 159.0), 0.3, flipped=True), 0.72)
    assert drop_inside_band([upper, turned], 12.0) == [upper, turned]
    # the finder's doubt counts: a straddle the namer is less sure of, in a box the finder
    # is surer of than of the band above it, stays
    sure_upper = _fitted(_strip("negi-0", (100.0, 150.0), 0.8), 1.19)
    assert drop_inside_band([sure_upper, surer], 12.0) == [sure_upper, None]
    assert drop_inside_band([sure_upper, surer], 12.0, found=[0.3, 0.9]) == [sure_upper, surer]
