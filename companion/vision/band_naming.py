"""Naming the top band of a card of *any* deck by comparing it with the deck's own 56 faces.

No training per deck and no knowledge of the design: an enrolled deck is named from its faces
alone. What makes it work on unknown art:

- both ends of every face are references (the top band, and the bottom band turned), so a card
  whose corner index is turned at the bottom is named from either end even when the art is not
  symmetric;
- colour is compared after white balance (the frame's from the printed markers' white, the
  deck's from the white of its own faces), in an opponent space where brightness and gain drop
  out but hue stays, so two ingredients that differ mainly by colour stay apart and a warm lamp
  does not merge them;
- the value is judged on the pixels where the 8 cards of one ingredient differ (numeral, icon
  count...), learned from the enrolled faces themselves, so a corner numeral that is a few
  percent of the band still decides the value instead of drowning in the shared illustration;
- each shortlisted card finds its own best alignment within a few millimetres, so the finder's
  box needs no precise edges.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final

import cv2
import numpy as np

from companion.cards import CARD_IDS, INGREDIENTS
from companion.deck.deckdir import Deck
from companion.layout import CARD_H_MM, CARD_W_MM, INDEX_STRIP_MM
from companion.vision.band_embedding import (
    TOP_MM,
    AnyBandEmbedder,
    embedding_dir,
    load_embedder,
)
from companion.vision.calibration import TableCalibration
from companion.vision.card_body import (
    BODY_PPM,
    Bodies,
    Box,
    bodies_of,
    body_of_face,
    body_patch,
    card_scores,
    masked_unit,
    outline_shown,
    pair_lead,
)
from companion.vision.focus import lens_blur
from companion.vision.naming import Naming
from companion.vision.plane import scale_matrix, turned_patch
from companion.vision.shadows import lift_shadows
from companion.vision.sheen import remove_sheen
from companion.vision.skew import band_edge_skews, edge_skew_deg
from companion.vision.turned_cards import MIN_SUPPORT

PPM: Final = 2.5
"""Resolution the bands are compared at: a 7 mm numeral keeps 14 px."""
TOP_ROWS: Final = round(TOP_MM * PPM)
"""The rows of a band's top TOP_MM at PPM: what the learned comparison and the colours see."""
SEARCH_X_MM: Final = 4.0
SEARCH_Y_MM: Final = 4.0
"""How far a band may sit from the finder's box (its top edge up to 4 mm off)."""
BLUR_MM: Final = 0.3
REF_BLUR_MM: Final = 0.7
"""The camera already blurs what it sees (lens, sensor, JPEG, resampling: about 0.5 mm), the
deck's faces are sharp: blurring the references more makes the two alike."""
COLOUR_WEIGHT: Final = 2.0
"""Score lost per unit of colour distance (white-referenced RMS: look-alike browns are 0.05-0.1
apart, clearly different colours 0.2-0.6)."""
MAX_EXPOSURE: Final = 1.2
"""A card may look this much brighter or darker than its face (a lamp's gradient), no more: a
yellow is not an olive."""
MAX_VEIL: Final = 0.5
"""The strongest sheen a glossy card shows over its print (white-referenced lightness)..."""
WASH_PER_VEIL: Final = 2.0
"""... and how much it washes the colour out: a veil of 0.4 halves the colour (path-traced
coated cards under a ceiling light: 0.3-0.45 and a half)."""
LUM_WEIGHT: Final = 0.7
"""Lightness counts a little less than hue in that distance."""
MAX_SHADE: Final = 3.0
"""A band may look this much darker than MAX_EXPOSURE allows (a hand's shadow: a third of the
light)..."""
SHADE_COST: Final = 0.05
"""... at this colour distance per unit of log exposure beyond MAX_EXPOSURE: a shadow keeps a
colour's hue and saturation, so a light brown in a hand's shadow (held-out ornate-1 nori, 2.4 x
darker) fits its own colour darkened better than a darker brown's (shiitake); in even light the
darker brown still costs the light one its exposure. 0.03 and 0.08 measured alike (held-out
plain recall 0.9532 and 0.9523)."""
MIN_SCORE: Final = 0.3
"""A band that correlates this poorly with every card is not a card of this deck..."""
ASK_SCORE: Final = 0.0
"""... unless the learned comparison names the same card: a glossy card mirroring a ceiling
panel is washed out over its inner part only, no single sheen fits it, and its right reading
scores 0.1-0.2 (path-traced ornate-1). Asked down to 0.0: path-traced held-out recall plain
+2.1 points, hard +1.7 (2 more wrong readings); at 0.1 a little less of both."""
REFINE_INGREDIENTS: Final = 4
SHORTLIST_CLOSE: Final = 0.1
"""A coarse fit this close to the best is aligned in full whatever its rank (three pastels
that differ by a small icon: 0.03-0.035 apart; an ingredient of another colour 0.13+)."""
REFINE_PX: Final = 3
ING_CLOSE: Final = 0.06
"""Ingredients whose whole-band scores are this close are told apart where they differ."""
PAIR_SCALE: Final = 0.25
NO_SAY: Final = 0.05
"""Two ingredients that differ where the band shows, unclipped, by under this share of their
largest difference are not compared there (a tie)."""
PAIR_COLOUR: Final = 2.0
PAIR_TIE: Final = 0.02
"""Where they differ, a lead this small is a tie (the whole-band scores decide): a light brown
in a hand's shadow led a dark one by 0.002 there, and by 0.01 the other way a millimetre
further along its box."""
VALUE_SEARCH_PX: Final = 3
NUMERAL_SHIFT_PX: Final = 8
"""The values are compared up to this far (px at PPM, 3.2 mm) above or below where the band's
top edge puts them (`_numeral_row`): a card's top edge lost against a like-coloured card above
it in a cascade left a held-out ornate-1 band 3.6 mm high, its 7 half outside the compared
region and read as a 4 at probability 1.0..."""
NUMERAL_LEAD: Final = 0.1
"""... when the ingredient's 8 numerals on average fit this much better there. All values are
compared at that one row: each value searched 3.2 mm either way on its own found a 1 in a 7's
lower half (the hand-covered foil test) and the numeral of the card beneath a sloppy cascade
(held-out game ornate-1 sloppy went wrong); at a lead of 0.05 the foil test still read the 1.
Training families' scenes (foreign_decks.py --families band,corner,bordered,photo,badge,mixed
--seeds 5 --frames 15 --hard-frames 8), before -> now: plain 0.9452 / 0.9916 -> 0.9466 /
0.9923, hard 0.8121 / 0.9904 -> 0.8145 / 0.9933."""
VALUE_MISFIT_REF: Final = 0.3
VALUE_MISFIT_FLOOR: Final = 0.15
"""A value's lead over the next one is scaled by VALUE_MISFIT_REF / (1 - its fit), the fit's
misfit floored at VALUE_MISFIT_FLOOR: a lead of 0.02 between two numerals that fit at 0.85 says
more than one between two at 0.5 (half the bands fit at 0.72, hence the reference 0.3, and the
confidence of a typical band is as it was). Measured on the true boxes of tuned held-out foil-2's
bands and ornate-1's (hard, and a third of plain), the ingredient read right, the best-fitting
way of each: with 5 of the 28 wrong values above a bar, the scaled lead keeps 1,208 of the
1,392 right ones above it, the lead alone 993; with 10, 1,368 and 1,325."""
VALUE_BLURS_MM: Final = (0.0, 0.5, 0.9)
"""Extra blur of the value templates, each value scored at its best: a blurred camera (hard
frames: 1.2-2.8 px) or a 720p video leaves a numeral far softer than the deck's sharp faces."""
VALUE_MASK_FLOOR: Final = 0.25
"""Pixels where an ingredient's 8 faces differ by less than this share of the most differing
pixel do not vote on the value."""
INDEX_SHARE: Final = 0.75
INDEX_SHARE_PERCENTILE: Final = 5.0
"""A deck's bands are compared over their top TOP_MM (what the tightest cascade shows) unless
its values differ mostly lower down: then over the fewest whole millimetres, up to
INDEX_STRIP_MM (the kit's cascade step), that hold INDEX_SHARE of the difference between two
values of one ingredient for all but INDEX_SHARE_PERCENTILE % of such pairs (`index_rows`).
A seven-segment 5 and 6, or 2 and 3, differ only in their lower half, below 12 mm on a deck
with a tall corner index (benchmarks/outsider_decks.py: 5-14 % of the pairs' difference in the
top 12 mm, and 60 % of its cards read); every generated design keeps 83-98 % there."""
EMBED_SHIFTS: Final = tuple((dy, dx) for dy in (-4, 0, 4) for dx in (-5, 0, 5))
"""Offsets (px at PPM) of the crops the learned comparison sees around the aligned band."""
EMBED_SOFT_MM: Final = 0.35
EMBED_BLUR_STEP_MM: Final = 0.2
EMBED_MAX_BLUR_MM: Final = 1.6
"""The learned comparison sees a blurred band against its references blurred alike: a frame's
lens blur (`focus.lens_blur`, on the markers' edges) beyond EMBED_SOFT_MM (what a sharp frame
measures: 0.32 mm on a held-out scene) blurs the references by the rest, in steps of
EMBED_BLUR_STEP_MM up to EMBED_MAX_BLUR_MM. Against its sharp references it named the held-out
scenes blurred 2 / 2.5 camera px as ornate 15 / 9 of 33 and minimal 20 / 16; blurred alike, 31 /
26 and 32 / 29. As one step of `detect` (held-out designs' cached frames, `cached_decks.py`):
hard 349 -> 340 missed and 14 -> 12 read wrong of 3,280, plain 141 -> 139 and 17 -> 17 of
4,400. The hand-made references blurred alike as well read worse (hard 374 missed, 15 wrong):
their VALUE_BLURS_MM already meet a blurred numeral."""
SURE: Final = 0.999
"""A hand-made reading this probable is not shown to the learned comparison: fused, it could
only confirm the card (a disagreement keeps the hand-made card) and raise the probability by
under 1 - SURE, which no gate or tie between readings turns on; that saves its 9-crop
inference on about half the bands."""
SHAPE_WEIGHT: Final = 0.5
"""Added to an ingredient's score per unit of correlation of the band's outlines (`_shape`)
with the ingredient's: a glare or a warm lamp washes colours out, the icon's outline stays.
Chosen on the training families (0.5 and 1.0 tried: 1.0 cost precision on hard scenes)."""
TUNED_WINS: Final = 0.9
"""A deck's own tuned comparison this sure of a card overrules ... (`_fuse`)"""
HAND_DOUBT: Final = 0.9
"""... a hand-made reading less sure than this that names another card of its ingredient or
of its value."""
CAST_SURE: Final = 0.99
"""Bands read at least this surely measure the deck's colour against the table's..."""
CAST_MIN_BANDS: Final = 6
CAST_MIN_INGREDIENTS: Final = 3
"""... when a frame has this many, of this many ingredients..."""
CAST_FRAMES: Final = 3
CAST_KEEP: Final = 15
"""... and the median of the last CAST_KEEP frames' measures is taken once there are
CAST_FRAMES (one frame's white, from its markers, is a few percent off either way)..."""
CAST_STEP: Final = 0.05
"""... and is used when it moved this much a channel (each move reads the frame again)."""
MAX_CAST: Final = 1.25
FRAME_CAST_STEP: Final = 0.02
"""A frame whose own sure bands measure its light this far (a channel) off the one it was read
in has its other bands read again in its own: the light of a still is its own, and a warm
lamp's white, clipped on the markers, comes out of them only in part (held-out minimal-1's
pale tints, hard frames: 2-8 % off). Chosen on the training families' scenes (0.02 and 0.04
tried; hard recall 0.807 -> 0.812 and 0.810)."""
CHART_SIGMA: Final = 0.15
"""A sure band speaks for a band read again as far as their colours are alike: weight
exp(-d^2 / 2 CHART_SIGMA^2), d the distance of their log chromaticities (two browns about 0.16
apart, a brown and a pink 0.5+). A lamp and a camera's tone curve do not move every colour
alike: one mean measure of the frame moved a light brown (held-out ornate-1's nori) towards
the darker one. Set from that distance; the training families' scenes read alike at 0.08, 0.15
and with every sure band alike (hard recall 0.812 each)..."""
CHART_MIN: Final = 2.0
"""... and when the bands alike weigh less than this all of them speak alike."""
BODY_FOREIGN: Final = 0.35
"""A card seen whole whose body correlates less than this with its ingredient's is not that
card (the face-down deck's back read as a like-coloured band; a misread ingredient)..."""
BODY_SURE: Final = 0.6
BODY_AHEAD: Final = 0.2
"""... and one whose body correlates this well with an ingredient's, this far ahead of every
other ingredient's, is that ingredient. Measured on the training families' dev scenes (seed
70000, plain and hard, readings over the gate): bodies of cards seen whole correlate 0.92+
with their own ingredient's in 9 of 10, backs and misread cards 0.35 or less."""
BODY_OUTLINE: Final = 0.5
"""A card whose outline shows along this share of it (less than MIN_SUPPORT, no other band
on its body) is checked whole too, as `_whole_card` says. Held-out plain frames had 4 false
readings there (a tartan stripe read as chashu-1, three ajitama/nori/kamaboko mix-ups whose
bodies said the right ingredient at 0.77-0.91); dropping every such body like no face lost
right cards under hands (training families' dev scenes: 4 more plain misses), so a partial
outline only renames, or drops a loose fit. Cached A/B, held-out plain / hard misses-false
93-11 / 80-0 -> 90-7 / 80-0; dev (corner, bordered, photo, badge seed 901, frames 70000)
69-8 / 112-4 -> 67-7 / 111-4."""
BODY_PAIR_LEAD: Final = 0.2
"""A card whose picture shows (its outline along BODY_OUTLINE of it) and fits another likely
ingredient's this much better where the two pictures differ (`card_body.pair_lead`) is that
ingredient's; a card seen whole whose picture fits its own this much better than every likely
rival's is surely its ingredient. Two ingredients of one colour (an outsider deck's two pinks,
told apart on the band by a small icon under the numeral, below the part compared) share most
of their picture, so its whole correlation parts them by about 0.1 where BODY_AHEAD asks 0.2.
Where they differ, cards seen whole (outline 0.85+) fitted their own ingredient better by 0.02
at least and 0.10 at the 1st percentile (669 right readings of 6 outsider decks' cached
frames); the 4 bands read as another ingredient whose picture fitted it at BODY_CLEAR fitted
it better by 0.27-0.47."""
BODY_CLEAR: Final = 0.85
"""... when the picture fits that ingredient's this well as a whole, as a card in clear view
does (631 right readings of those seen whole fitted their own at 0.905+ in 19 of 20). A picture
half under something else is not judged so: a held-out minimal-2 kamaboko-6 under a dark
distractor fitted menma's better where the two differ (menma's olive blob lies there), 0.73 as
a whole, and its band's sure reading stayed right only with this bar."""
LOOSE_FIT: Final = 0.4
"""A band that fits its ingredient below this (whole-band score) fits it loosely."""
WAY_UP_CLOSE: Final = 0.15
"""Ways up whose coarse fit is this close to the best are each read in full."""
SKEW_AGREE_DEG: Final = 2.0
"""Tilts found for the two ways up further apart than this: each way up is tried at the other's
tilt too. In a loosely laid cascade one way's edge may be the card above's (held-out foil-1:
8.3 degrees for a band at 0.8, read upside down, its numerals taken for another value), and a
lone card's may be the face-down deck's beside it (ornate-1: -12.4 for a nori at 2.4, which
fitted the ingredients' mean bands better there, 0.797 against 0.770, and read as a shiitake):
both tilts are read in full when their coarse fits are close (WAY_UP_CLOSE)."""
LINE_CANDIDATES: Final = 3
"""Edges tried per way up as the band's tilt (`band_edge_skews`): the longest first, the next
ones only for a band that fits badly at it (`FIT_DOUBT`)."""
FIT_DOUBT: Final = 0.75
"""A band whose best coarse fit is below this is tried at the next-longest edges too. Held-out
foil-1 at 4 frames/s: a landing nori-6's top band at 8 and -8 degrees (its sheen's edges) fit
0.52, at its card's 2 degrees (the third-longest edge) 0.84, and was read right there. On 16
frames (8 plain, 8 hard) of each of the 4 held-out designs (1585 true bands), retrying the 23 %
of boxes fitting between FIT_FLOOR and this named 14 bands more right and 2 fewer; retrying
every box, 15 and 3."""
FIT_FLOOR: Final = 0.3
"""...and above this: a box on no band (a picture, the cloth) fits nothing at any tilt, and
retrying those doubled the naming time for no card."""
UNSURE_RETRY: Final = 0.5
RETRY_FIT_SLACK: Final = 0.05
"""A band of this deck (score >= FIT_FLOOR) read under this probability is read again, its way
up kept, at the other candidate edges' tilts, and a surer reading is kept when it fits well
(score >= FIT_DOUBT: without that bar a path-traced ornate-1 band read shiitake-5 at 0.84 at a
7-degree garbage fit, score 0.34) and within RETRY_FIT_SLACK of the first reading's fit. In a
cascade the card above's edge can outvote the band's own top edge by several degrees, where
a light brown still fits a darker one well but is sure of nothing (held-out game ornate-1
warm, 73 s: a nori-6's top band at -9.8 degrees read shiitake-0 at 0.004, at its own edge's
-1.5 nori-6 at 0.94: missed, the follower lost the turn order there, 10 of 12 bowls right and
20 warnings; now 12 of 12, 4 warnings). Held-out designs' hard scenes 162 -> 158 misses, no
reading more wrong; plain unchanged; no time measurable (`benchmarks/foreign_decks.py`: 0.97 /
1.51 s a plain / hard frame, 0.97 / 1.52 in a run the same day without it)."""
LIFT_GAIN: Final = 0.4
"""A band read with a shadow lifted off part of it (`shadows`) or a sheen taken off (`sheen`)
is read so only if it fits this much better than as it was and fits at all (MIN_SCORE).
Lifting makes most bands a little more even: on the tartan cloth of held-out ornate-1 frame 6
ghost boxes gained at most 0.19 by it, the bands half in a forearm's shadow of frame 1 0.73
and 1.25, those of tests/test_shadowed_bands.py about 1.5; path-traced ornate-1 plain frame
1's chashu-0 under a sheen 0.9 (0.74 -> 1.64)."""
LIFT_COARSE_GAIN: Final = 0.1
"""... and it is read in full so only if its coarse fit gains this much over the best way's
(most bands lifted gain nothing: on held-out ornate-1's 20 frames 20 of 992 lifted ways gained
0.1 or more, the 3 read so in the end 0.21-0.63; reading all 992 in full cost 40 % more time a
frame)."""
Relight = Callable[[np.ndarray, float], np.ndarray | None]
"""Evens the light over a band's patch (BGR float32, white-balanced, pixels a mm): None when
it finds nothing to even."""
RELIGHTS: Final[tuple[Relight, ...]] = (lift_shadows, remove_sheen)
"""How an unsure band is read again: a hand's shadow over part of it lifted, a glossy card's
sheen over part of it taken off (path-traced frames: the sheen veils the middle of a card and
not its curled rim)."""
_CARD_INDEX: Final = {cid: i for i, cid in enumerate(CARD_IDS)}
N_ING: Final = len(INGREDIENTS)
N_VAL: Final = len(CARD_IDS) // N_ING


def _opponent(bgr: np.ndarray) -> np.ndarray:
    """Luminance and two colour-opponent channels (float32, 3 channels)."""
    b, g, r = cv2.split(bgr.astype(np.float32))
    lum = (b + g + r) * np.float32(1 / 3)
    rg = r - g
    by = b - (r + g) * np.float32(0.5)
    return cv2.merge([lum, rg, by])


def _rep(bgr: np.ndarray, blur_mm: float = BLUR_MM) -> np.ndarray:
    """Opponent image (luminance, red-green, blue-yellow), blurred alike on both sides."""
    f = cv2.GaussianBlur(bgr.astype(np.float32), (0, 0), blur_mm * PPM)
    return _opponent(f)


def _colour_distance(obs: np.ndarray, ref: np.ndarray, weights: np.ndarray | None = None) -> float:
    """RMS difference of two aligned bands in white-referenced units, after the best exposure
    factor within MAX_EXPOSURE (a lamp's gradient brightens or darkens a card a little, but a
    yellow never becomes an olive) and the best sheen (`_sheen`); a band darker still (a
    shadow) pays SHADE_COST for it."""
    o = obs.reshape(-1, 3) * np.float32(1 / 255)
    r = ref.reshape(-1, 3) * np.float32(1 / 255)
    w = None if weights is None else weights.reshape(-1, 1)
    k, veil, shade = _sheen(o, r, w)
    d = k * o - r
    d[:, 0] -= np.float32(veil)
    d[:, 0] *= np.float32(LUM_WEIGHT)
    if w is None:
        mean_square = float(np.mean(d * d))
    else:
        mean_square = float((d * d * w).sum()) / max(float(w.sum()) * 3, 1e-6)
    return math.sqrt(mean_square) + SHADE_COST * shade


def _sheen(o: np.ndarray, r: np.ndarray, w: np.ndarray | None) -> tuple[float, float, float]:
    """(k, veil, shade) that bring the observed band `o` (opponent, white-referenced) closest to the
    reference `r`: r = k o in colour, k (o - veil) in lightness. A glossy card's sheen lays
    grey light over the print, lightness up by an offset and colour washed out by a factor:
    so k may exceed MAX_EXPOSURE only as far as a veil of that strength washes colour out
    (WASH_PER_VEIL). Returns the veil as scaled by k (what the lightness loses), and the log of
    how far k went past its bound, up to MAX_SHADE times it (a shadow)."""
    ow = o if w is None else o * w
    lw2 = LUM_WEIGHT**2
    oo, orr = (ow * o).sum(axis=0), (ow * r).sum(axis=0)  # per channel
    n = float(len(o)) if w is None else max(float(w.sum()), 1e-6)
    so = float(ow[:, 0].sum())
    sr = float(r[:, 0].sum()) if w is None else float((r[:, 0] * w[:, 0]).sum())
    a11 = float(oo[1] + oo[2]) + lw2 * float(oo[0])
    b1 = float(orr[1] + orr[2]) + lw2 * float(orr[0])

    def fit(veil: float) -> float:
        """k at that veil, by least squares."""
        num = b1 - lw2 * veil * sr
        den = a11 - lw2 * (2 * veil * so - veil * veil * n)
        return num / max(den, 1e-9)

    k, veil = fit(0.0), 0.0
    # k and the scaled veil (k veil) by least squares together, the veil then kept within
    # bounds and k fitted again at it
    a12, a22, b2 = -lw2 * so, lw2 * n, -lw2 * sr
    det = a11 * a22 - a12 * a12
    if abs(det) > 1e-12:
        k_both = (b1 * a22 - a12 * b2) / det
        if k_both > 1e-6:
            veil = min(max((a11 * b2 - a12 * b1) / det / k_both, 0.0), MAX_VEIL)
            k = fit(veil)
    bound = MAX_EXPOSURE + WASH_PER_VEIL * veil
    k = max(k, 1 / MAX_EXPOSURE)
    shade = 0.0
    if k > bound:
        k = min(k, MAX_SHADE * bound)
        shade = math.log(k / bound)
    return k, k * veil, shade


def ingredient_score(
    window: np.ndarray, templ: np.ndarray, clipped: np.ndarray | None = None
) -> tuple[float, tuple[int, int]]:
    """An ingredient's band against the best-aligned place in `window`: structure (normalised
    correlation) minus the colour penalty there; and that place (x, y). `clipped`: where the
    camera clipped (the window's size): no colour is compared there."""
    res = cv2.matchTemplate(window, templ, cv2.TM_CCOEFF_NORMED)
    _, sc, _, (x, y) = cv2.minMaxLoc(res)
    h, w = templ.shape[:2]
    crop = window[y : y + h, x : x + w]
    weights = None
    if clipped is not None:
        seen = ~clipped[y : y + h, x : x + w]
        if not seen.all() and seen.mean() >= MIN_SEEN and not _clipped_in_colour(crop, seen):
            weights = seen.astype(np.float32)
    return sc - COLOUR_WEIGHT * _colour_distance(crop, templ, weights), (x, y)


def _clipped_in_colour(rep: np.ndarray, seen: np.ndarray) -> bool:
    """Whether a band is clipped over all but MOSTLY_CLIPPED of it while still showing its
    colour there: a bright card clipped in one channel, not a pale one clipped white."""
    if seen.mean() >= MOSTLY_CLIPPED:
        return False
    white = np.all(_bgr(rep) >= WHITE - 1.0, axis=-1)
    return float(white.mean()) < MOSTLY_CLIPPED


def _bgr(rep: np.ndarray) -> np.ndarray:
    """`_opponent`'s inverse: the BGR image of an opponent one."""
    lum, rg, by = rep[..., 0], rep[..., 1], rep[..., 2]
    s = (3 * lum - by) * np.float32(2 / 3)  # red + green
    return np.stack([by + s / 2, (s - rg) / 2, (s + rg) / 2], axis=-1)


MIN_SEEN: Final = 0.1
"""A band clipped over more than all but this share has its colour compared as it reads..."""
MOSTLY_CLIPPED: Final = 0.3
"""... and so has one clipped over all but this share whose clipped pixels mostly keep a colour
(a channel or two under the clip): what stays unclipped of a bright band is mostly its numeral's
ink and its edges, alike for every ingredient (held-out ornate-2: orange ajitama bands 74 %
clipped in red read as the darker kamaboko over their other 26 %). A pale band clipped white
keeps the old rule: its tint is gone, its icon decides."""


def _place_on_edge(
    windows: Sequence[np.ndarray], templs: Sequence[np.ndarray], top_edge: np.ndarray
) -> tuple[int, int]:
    """Where `templs` fit `windows` best (x, y), each pair alike in size, by their mean
    correlation plus `top_edge[y]`, the bonus for its top on a card's top edge (`_top_edges`,
    per row of the window)."""
    pairs = zip(windows, templs, strict=True)
    res = np.mean([cv2.matchTemplate(w, t, cv2.TM_CCOEFF_NORMED) for w, t in pairs], axis=0)
    _, _, _, (x, y) = cv2.minMaxLoc(res + top_edge[: res.shape[0], None])
    return x, y


EDGE_WEIGHT: Final = 1.0
"""Correlation a band's alignment gives up to put its top on the card's top edge, per unit of
that edge's contrast (white-referenced, capped at EDGE_CAP): a blurred band of flat colour
correlates about alike anywhere along its height (0.49-0.54 over 4 mm on ornate-1's hard
frames), and an alignment 4 mm low put its numeral's top where a 1's foot would be."""
EDGE_CAP: Final = 0.2
EDGE_ROWS: Final = 4
"""Rows either side of an edge averaged: a blurred camera spreads a card's edge over 4-6 px."""


def _top_edges(rep: np.ndarray, margin_px: int) -> np.ndarray:
    """(H,) per row y of `rep` (an opponent patch, the band `margin_px` in from either side):
    EDGE_WEIGHT times the contrast between the EDGE_ROWS rows above y and those from y on, across
    the band's width (white-referenced, capped at EDGE_CAP): where a card's top edge lies."""
    inner = rep[:, margin_px : rep.shape[1] - margin_px].mean(axis=1) * np.float32(1 / 255)
    inner[:, 0] *= np.float32(LUM_WEIGHT)
    n, k = len(inner), EDGE_ROWS
    out = np.zeros(n, np.float32)
    if n > 2 * k:
        sums = np.concatenate([np.zeros((1, 3), np.float32), np.cumsum(inner, axis=0)])
        below = sums[2 * k :] - sums[k:-k]  # rows y .. y + k - 1, for y = k .. n - k
        above = sums[k:-k] - sums[: -2 * k]  # rows y - k .. y - 1
        contrast = np.abs(below - above).sum(axis=1) / k
        out[k : n - k + 1] = EDGE_WEIGHT * np.minimum(contrast, EDGE_CAP)
    return out


def value_score(region: np.ndarray, templ: np.ndarray) -> float | None:
    """One value's numeral area at its best place in `region` (None when it does not fit)."""
    if region.shape[0] < templ.shape[0] or region.shape[1] < templ.shape[1]:
        return None
    return float(cv2.matchTemplate(region, templ, cv2.TM_CCOEFF_NORMED).max())


REGISTER_PX: Final = 4


def _registered(group: np.ndarray) -> np.ndarray:
    """The faces of one ingredient shifted onto their median band: enrolment outlines are a
    fraction of a millimetre off each in its own way, which would otherwise pass for a
    difference between the cards."""
    median = np.median(group, axis=0).astype(np.float32)
    m = REGISTER_PX
    inner = np.ascontiguousarray(median[m:-m, m:-m])
    out = np.empty_like(group)
    for i, band in enumerate(group):
        res = cv2.matchTemplate(band, inner, cv2.TM_CCOEFF_NORMED)
        _, _, _, (x, y) = cv2.minMaxLoc(res)
        shift = np.array([[1, 0, m - x], [0, 1, m - y]], np.float32)
        out[i] = cv2.warpAffine(
            band, shift, (band.shape[1], band.shape[0]), borderMode=cv2.BORDER_REPLICATE
        )
    return out


VALUE_SHAPE_MM: Final = 1.0
"""The value is judged on the band minus its blur at this scale: a numeral's strokes and pips
stay, a foil's sheen or a lamp's gradient (which differ from card to card) go."""


def _shape(rep: np.ndarray) -> np.ndarray:
    return rep - cv2.GaussianBlur(rep, (0, 0), VALUE_SHAPE_MM * PPM)


def _index_outlines(group: np.ndarray, outlines: np.ndarray) -> np.ndarray:
    """One ingredient's 8 registered bands' outlines (`_shape`) with the exposure taken out (a
    photo's light gradient) and the card's edges zeroed (a photographed outline a millimetre
    off shows cloth there): what is left is the index."""
    lum = np.maximum(group[..., :1].mean(axis=(1, 2), keepdims=True), 8.0)
    out = outlines / lum
    edge = round(1.5 * PPM)
    out[:, :edge] = 0
    out[:, :, :edge] = 0
    out[:, :, -edge:] = 0
    return out


def index_rows(bands: Sequence[np.ndarray]) -> int:
    """How many rows (at PPM) of a deck's bands (`BandNamer._bands`: 2 x 56, INDEX_STRIP_MM
    high) hold its index (`INDEX_SHARE`)."""
    full = np.stack([_rep(b, REF_BLUR_MM) for b in bands])
    rows = np.zeros((0, full.shape[1]), np.float32)
    for g in range(len(full) // N_VAL):
        group = _registered(full[g * N_VAL : (g + 1) * N_VAL])
        outlines = _index_outlines(group, np.stack([_shape(b) for b in group]))
        a, b = np.triu_indices(N_VAL, 1)
        diff = ((outlines[a] - outlines[b]) ** 2).sum(axis=(2, 3))  # (pairs, rows)
        rows = np.concatenate([rows, diff])
    share = np.cumsum(rows, axis=1) / np.maximum(rows.sum(axis=1, keepdims=True), 1e-9)
    held = np.percentile(share, INDEX_SHARE_PERCENTILE, axis=0)
    for mm in range(math.ceil(TOP_MM), math.floor(INDEX_STRIP_MM) + 1):
        if held[min(round(mm * PPM), len(held)) - 1] >= INDEX_SHARE:
            return round(mm * PPM)
    return full.shape[1]


def _unit(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.float32).ravel()
    return v / max(float(np.linalg.norm(v)), 1e-6)


WHITE: Final = 245.0
"""What the printed markers' white paper reads on a well-exposed frame."""
CLIPPED: Final = 250.0
"""A white channel read this high may be clipped: the light is brighter there than it shows."""
EDGE_MM: Final = 2.0
"""How far past the markers' black squares their edges' mid-tones are looked for (inside the
printed quiet zone, never on the cloth)."""


def frame_white_gains(image: np.ndarray, cal: TableCalibration) -> np.ndarray:
    """Per-channel gains that bring the printed markers' white to WHITE: the light's colour
    and the exposure go, the cards' own colour and lightness stay comparable with the deck's
    faces. Ones when no marker is seen. A bright frame clips the white in some channels
    (7 of 10 plain benchmark frames: a warm lamp's red at 255 like its green), which would
    hide the light's colour: then the colour comes from the markers' edges (`_edge_shares`)."""
    if not cal.markers:
        return np.ones(3, np.float32)
    white = markers_white(image, cal)
    if bool((white >= CLIPPED).any()):
        shares = _edge_shares(image, cal)
        if shares is not None:
            white = _unclipped_white(white, shares)
    # a clipped channel reads 255 whatever the light: no channel is lowered below what it
    # reads unless the edges said how much brighter it is
    return (WHITE / np.maximum(white, 60.0)).astype(np.float32)


def markers_white(image: np.ndarray, cal: TableCalibration) -> np.ndarray:
    """The printed markers' white as the camera reads it (BGR): the median of the brightest
    15 % of the pixels round the markers' squares, clipped channels included."""
    from companion import layout
    from companion.vision.plane import plane_patch

    pixels = []
    for r in layout.marker_squares().values():
        patch = plane_patch(image, cal, r.x0 - 4, r.y0 - 4, r.width + 8, r.height + 8, 1.0)
        pixels.append(patch.reshape(-1, 3))
    px = np.concatenate(pixels).astype(np.float32)
    lum = px.mean(axis=1)
    white: np.ndarray = np.median(px[lum >= np.percentile(lum, 85)], axis=0)
    return white


def _clipped(raw: np.ndarray) -> np.ndarray:
    """Where the camera clipped a channel (bool): the colour there is not what it reads (an
    overexposed pink, pale yellow or cream all read paper white; a glare washes a band to
    white). Its colour is left out of the comparison; its structure stays. Measured against
    leaving out only pale clipped pixels (every white-balanced channel 200+): 2D held-out hard
    recall 0.8104 against 0.8110, path-traced hard 0.9053 against 0.8877 (glare)."""
    b, g, r = raw[..., 0], raw[..., 1], raw[..., 2]
    clipped: np.ndarray = np.maximum(np.maximum(b, g), r) >= CLIPPED
    return clipped


def balanced(patch: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """`patch` (uint8 BGR) times the frame's white balance gains, float32. A channel the camera
    clipped is at least as bright as the paper: it stays paper white (a pale pink background
    clipped to 255 keeps no tint, and dimming its clipped red to the lamp's gains would paint it
    cyan)."""
    out = patch.astype(np.float32) * gains
    if float(gains.min()) < WHITE / 255.0:
        clipped = patch >= CLIPPED
        out[clipped] = np.maximum(out[clipped], WHITE)
    return out


def _edge_shares(image: np.ndarray, cal: TableCalibration) -> np.ndarray | None:
    """The light's colour (each channel's share, summing to 1) from the markers' mid-tones:
    where the lens blurs black ink into white paper, a pixel is part ink, part paper, and
    (pixel - ink) has the paper's colour at a fraction of its brightness, so it shows the
    light's colour even where the paper itself clips. Taken from the camera's own pixels
    (resampling a clipped white would blend the clipped colour in). None with too few."""
    from companion import layout

    d = EDGE_MM
    picked = []
    h, w = image.shape[:2]
    squares = layout.marker_squares()
    for r in (squares[i] for i in cal.markers if i in squares):
        x0_mm, y0_mm, x1_mm, y1_mm = r.x0 - d, r.y0 - d, r.x1 + d, r.y1 + d
        quad = cal.to_image(
            np.array([[x0_mm, y0_mm], [x1_mm, y0_mm], [x1_mm, y1_mm], [x0_mm, y1_mm]])
        )
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int), 0)
        x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 1, (w, h))
        if x1 - x0 < 4 or y1 - y0 < 4:
            continue
        crop = image[y0:y1, x0:x1]
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, np.round(quad - (x0, y0)).astype(np.int32), 1)
        # a JPEG's colour is shared by neighbouring pixels: none of them may be clipped
        fine = cv2.erode((crop.max(axis=2) < CLIPPED).astype(np.uint8), np.ones((3, 3), np.uint8))
        picked.append((crop[mask > 0].astype(np.float32), fine[mask > 0] > 0))
    if not picked:
        return None
    px = np.concatenate([p for p, _ in picked])
    fine = np.concatenate([f for _, f in picked])
    lum = px.mean(axis=1)
    lo, hi = np.percentile(lum, (10, 90))
    if hi - lo < 40:
        return None
    ink = np.median(px[lum <= lo], axis=0)
    part = (lum >= lo + 0.2 * (hi - lo)) & (lum <= lo + 0.6 * (hi - lo)) & fine
    if int(part.sum()) < 30:
        return None
    paper = (px[part] - ink).sum(axis=0)
    if float(paper.min()) <= 0:
        return None
    return (paper / paper.sum()).astype(np.float32)


def _unclipped_white(white: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """The white as bright as the light's colour (`shares`) says, scaled on the channels that
    did not clip (all clipped: on the least one, which is then at least 255)."""
    fine = white < CLIPPED
    if fine.any():
        scale = float(np.median(white[fine] / shares[fine]))
    else:
        scale = 255.0 / float(shares.min())
    return np.where(fine, white, np.maximum(white, scale * shares)).astype(np.float32)


def _channel_sums(px: np.ndarray) -> np.ndarray:
    """(n,) sums of the 3 channels of (n, 3 uint8) pixels, 0..765."""
    total: np.ndarray = px[:, 0].astype(np.uint16) + px[:, 1] + px[:, 2]
    return total


def _bright_cut(histogram: np.ndarray, share: float = 0.05) -> int:
    """The channel sum at or above which a pixel is in the brightest `share` (the 95th
    percentile of the mean channel, as `mean(axis=1) >= np.percentile(..., 95)` selects), from
    the histogram of the 766 channel sums instead of a float copy and a partial sort of
    millions of values (an enrolled deck's 7 photos: 1.6 s of its 2.3 s of references)."""
    counts = np.cumsum(histogram)
    n = int(counts[-1])
    # np.percentile's linear rule: position q (n - 1) between the sorted values v[i], v[i + 1]
    position = (1.0 - share) * (n - 1)
    i = math.floor(position)
    low = int(np.searchsorted(counts, i, side="right"))  # the sum at sorted position i
    high = int(np.searchsorted(counts, min(i + 1, n - 1), side="right"))
    # a threshold strictly between two consecutive values keeps the higher one and up
    return high if position > i and high > low else low


def paper_gains_of(images: Sequence[np.ndarray], max_cast: float = 0.3) -> np.ndarray:
    """Gains that bring the bright, nearly neutral pixels of a photo's cards (white paper,
    light print) to WHITE: an enrolment photo taken under a warm lamp or darker than the table
    becomes comparable with the marker-balanced frames. Ones when the cards have no such white
    (a gold-on-black design): then the photo is used as taken. Of several uint8 BGR images
    taken together (the same figures as of their concatenation) without a copy of them all:
    only each image's channel sums, one image at a time, and the brightest pixels."""
    parts = [im.reshape(-1, 3) for im in images]
    histogram = sum(np.bincount(_channel_sums(px), minlength=766) for px in parts)
    cut = _bright_cut(np.asarray(histogram))
    bright = np.concatenate([px[_channel_sums(px) >= cut] for px in parts]).astype(np.float32)
    return _gains(bright, sum(len(px) for px in parts), max_cast)


def _gains(bright: np.ndarray, n_pixels: int, max_cast: float) -> np.ndarray:
    """`paper_gains_of` from the brightest of the photo's `n_pixels` pixels (n, 3 float32)."""
    m = bright.mean(axis=1, keepdims=True)
    neutral = bright[np.all(np.abs(bright / np.maximum(m, 1.0) - 1) < max_cast, axis=1)]
    if len(neutral) < max(50, 0.01 * n_pixels) or float(neutral.mean()) < 60:
        return np.ones(3, np.float32)
    return (WHITE / np.maximum(np.median(neutral, axis=0), 1.0)).astype(np.float32)


CLOTH_SAME: Final = 0.06
"""Enrolment photos whose cloths' chromaticities (each channel's share of the sum) are all
within this of their median lie on one cloth: a camera's white balance moving 12 % a channel
shifts a green felt's shares by up to about 0.05; a green felt and a grey cloth are 0.12
apart."""


WHITE_AGREE: Final = 0.1
"""The cards' white of two photos, their light made alike through the cloth, differs by at most
this share per channel: 0.075 at most on 7 decks with white card stock, 0.24-0.40 where the
"white" was a pale part of the art or a foil's sheen."""
MIN_WHITE_PHOTOS: Final = 4
"""Photos that must agree on the cards' white before it sets the deck's colour."""


def cloth_corrections(meta: dict, paper: np.ndarray) -> np.ndarray | None:
    """Per ingredient (7, 3): the factors that turn each enrolment photo's own white balance
    (`paper`: the gains that made its cards' brightest pale pixels white) into one shared by
    all 7 photos, taken from the cloth they all lie on. A per-photo white balance takes a
    deck's pale pink, pale yellow and pale blue backgrounds all for white; the cloth, the same
    in every photo, keeps those tints apart as the camera at the table sees them. None when
    the photos' cloths are unknown (an older enrolment) or are not one cloth: then each
    photo's own white balance stands."""
    by_ing = {p.get("ingredient"): p.get("cloth_bgr") for p in meta.get("photos", [])}
    cloths = [by_ing.get(ing) for ing in INGREDIENTS]
    if any(c is None for c in cloths):
        return None
    cloth = np.maximum(np.asarray(cloths, np.float32), 1.0)
    shares = cloth / cloth.sum(axis=1, keepdims=True)
    if float(np.abs(shares - np.median(shares, axis=0)).max()) > CLOTH_SAME:
        return None
    common = cloth_gains = np.median(cloth, axis=0) / cloth  # each photo's light made alike
    found = ~np.all(np.isclose(paper, 1.0), axis=1)
    if found.any():
        # the cards' white in the photos made alike, then brought to WHITE once for all: if
        # the photos agree on it (one card stock under light made alike). A pale patch of art
        # a photo took for paper does not agree with the others, and one such patch set the
        # whole deck's colour (a full-bleed deck turned 1.8 x green: its two browns swapped)
        whites = (WHITE / paper[found]) * cloth_gains[found]
        agree = np.all(np.abs(whites / np.median(whites, axis=0) - 1) <= WHITE_AGREE, axis=1)
        if int(agree.sum()) >= MIN_WHITE_PHOTOS:
            white = np.median(whites[agree], axis=0)
            common = cloth_gains * (WHITE / np.maximum(white, 1.0))
    return (common / paper).astype(np.float32)


def face_ends(
    face: np.ndarray, band_mm: float, size: tuple[int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The top `band_mm` of a face and its bottom `band_mm` turned upright, resized to
    `size` (w, h): both ends a card can show in a cascade."""
    fh = face.shape[0]
    rows = round(fh * band_mm / CARD_H_MM)
    top = cv2.resize(face[:rows], size, interpolation=cv2.INTER_AREA)
    bottom = np.ascontiguousarray(face[fh - rows :][::-1, ::-1])
    return top, cv2.resize(bottom, size, interpolation=cv2.INTER_AREA)


def _ends_scaled(face: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """`face * gains` (float32) on the rows `face_ends` reads (its top and bottom
    INDEX_STRIP_MM); the rows between are left unset and never touched, neither computed nor
    paged in (the whole faces were a third of the time to build an enrolled deck's
    references)."""
    fh = face.shape[0]
    rows = round(fh * INDEX_STRIP_MM / CARD_H_MM)
    out = np.empty(face.shape, np.float32)
    out[:rows] = face[:rows] * gains
    out[fh - rows :] = face[fh - rows :] * gains
    return out


_PairParts = tuple[np.ndarray, float, tuple[np.ndarray, list[np.ndarray]] | None]
"""`BandNamer._pair_parts`: two ingredient means' difference map, the share of it with no say,
and the weights and both means' units where nothing is clipped (None: the means are equal)."""


@dataclass(frozen=True)
class _WayUp:
    """The band cut out upright one way it may lie, and its coarse comparison."""

    patch: np.ndarray
    """BGR float32 at PPM, white-balanced: the band and the search margins round it."""
    rep: np.ndarray
    """The patch's opponent rep (`_rep`)."""
    cx: float
    cy: float
    """The box's centre on the table, mm: the patch's centre."""
    angle: float
    flipped: bool
    coarse: np.ndarray
    """(2 * 7,) every (end, ingredient) mean band's coarse score..."""
    coarse_at: np.ndarray
    """... and where it fits (full-size px)."""
    margin_x: float
    """The patch's margin beside the band, mm (wider for a box shorter than a card)."""
    clipped: np.ndarray
    """Where the camera clipped a channel (`_clipped`; the patch's size)."""

    @property
    def fit(self) -> float:
        return float(self.coarse.max())


@dataclass(frozen=True)
class _HandReading:
    naming: Naming
    crops: np.ndarray | None
    """What the learned comparison is to see (None: it has no say)."""
    ref: int
    """The reference band read: end * 56 + card."""
    colour: np.ndarray
    """The band's mean BGR (white-balanced) over the top TOP_MM, where it was read."""
    value_probability: float
    """The probability were the ingredient sure: the value's part alone."""
    fit: float
    """How well the band fits the card read (ingredient plus value score)."""
    relit: Relight | None = None
    """Read with a shadow lifted off part of it (`shadows`) or a sheen taken off (`sheen`):
    its card's body is looked at so too."""


@dataclass(frozen=True)
class _Refs:
    full: np.ndarray
    """(2 * 56, H, W, 3) fine reps, [end * 56 + card]: end 0 = top band, 1 = bottom turned."""
    ing_mean: np.ndarray
    """(2 * 7, H, W, 3) each ingredient's mean band [end * 7 + ingredient]."""
    ing_small: np.ndarray
    """The same at half size (the coarse pass)."""
    ing_shape: np.ndarray
    """(2 * 7, H, W, 3) each ingredient's mean band high-passed (`_shape`): the icon's and the
    art's outlines, which a colour cast, a foil's sheen or a light falling off down the band
    leave as they are..."""
    ing_shape_unit: np.ndarray
    """(2 * 7, H * W * 3) ... and the same as unit vectors."""
    value_box: tuple[tuple[int, int, int, int], ...]
    """Per (end, ingredient): y0, y1, x0, x1 of where its 8 faces differ (numeral, pips)."""
    value_templ: tuple[tuple[np.ndarray, ...], ...]
    """Per reference band: its value box, high-passed (`_shape`), at each of VALUE_BLURS_MM."""
    numeral_mean: tuple[np.ndarray, ...]
    """Per (end, ingredient): its 8 unblurred value templates' mean (`_numeral_row`)."""
    embedded: np.ndarray | None
    """(2 * 56, D) the learned embedding of each reference band (None without the model)."""
    colour: np.ndarray
    """(2 * 56, 3) each reference band's mean BGR over its top TOP_MM."""


class BandNamer:
    """Names the top bands of one deck's cards, whatever the design."""

    def __init__(
        self,
        deck: Deck,
        embedder: AnyBandEmbedder | bool | None = True,
        fuse: bool = True,
        backend: str | None = None,
    ) -> None:
        """`embedder`: True for the deck's own tuned band embedding (`companion deck tune`),
        else the shipped one, when present; False for the hand-made scores alone, or a loaded
        one; `fuse`: False to let it name alone (for
        measuring it); `backend`: the finder's ("ncnn": the embedding's NCNN export, so no
        ONNX Runtime on the Pi). The deck's faces are not kept (an enrolled deck's are about
        100 MB): only the references drawn from them, and those before the embedding's session
        is made: the faces are asked for one ingredient (8 faces) at a time, so a deck whose
        faces are read at each use (`load_deck(..., lazy=True)`) never has them all in memory
        at once."""
        self.deck_name = deck.name
        self._fuse = fuse
        bands, bodies = self._bands(deck)
        self._bodies: Bodies = bodies_of(bodies)
        """Every card's body (`card_body`): what a card seen whole is checked against."""
        own = embedding_dir(deck.folder)
        self.tuned = embedder is True and own == deck.folder
        """Whether the deck's own tuned comparison (`companion deck tune`) is used."""
        self._embedder = load_embedder(own, backend) if embedder is True else (embedder or None)
        self.index_mm = index_rows(bands) / PPM
        """How deep the bands are compared (`INDEX_SHARE`), mm."""
        self._refs = self._build(bands, round(self.index_mm * PPM))
        self._pairs: dict[tuple[int, int], _PairParts] = {}
        self._ref_bands = np.stack([b[:TOP_ROWS] for b in bands]) if self._embedder else None
        """The references' bands, kept to embed them blurred as a frame is (`_embed_blur`)."""
        self._embedded_at: dict[int, np.ndarray] = {}
        """The references embedded at each blur a frame asked for so far (in steps)."""
        self._last_blur: tuple[np.ndarray, TableCalibration, int] | None = None
        """The last frame's blur (`_embed_blur`): a frame's turned cards and scan columns are
        named in calls of their own, and the measure (about 50 ms) is the frame's."""
        self._cast = np.ones(3, np.float32)
        """Per-channel factors from the table's white to the deck's references' (`_learn_cast`)."""
        self._casts: list[np.ndarray] = []
        """The last CAST_KEEP frames' own estimates of it."""

    @staticmethod
    def _bands(deck: Deck) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Top bands then bottom bands turned, INDEX_STRIP_MM high; and every card's body
        (`card_body.body_of_face`), its face's light made the bands' alike."""
        w = round(CARD_W_MM * PPM)
        h = round(INDEX_STRIP_MM * PPM)
        tops: list[np.ndarray] = []
        bottoms: list[np.ndarray] = []
        bodies: list[np.ndarray] = []
        photographed = deck.meta.get("source") == "companion deck enroll"
        paper = np.ones((N_ING, 3), np.float32)
        for k in range(N_ING):
            faces = [deck.face(CARD_IDS[k * N_VAL + v]) for v in range(N_VAL)]
            # one enrolment photo per ingredient: its light and exposure are that photo's own
            gains = paper_gains_of(faces) if photographed else np.ones(3, np.float32)
            paper[k] = gains
            for face in faces:
                top, bottom = face_ends(_ends_scaled(face, gains), INDEX_STRIP_MM, (w, h))
                tops.append(top)
                bottoms.append(bottom)
            bodies.extend(body_of_face(face, gains) for face in faces)
            del faces, face  # before the next ingredient's are read
        if photographed:
            fix = cloth_corrections(deck.meta, paper)
            if fix is not None:
                for i in range(len(tops)):
                    tops[i] *= fix[i // N_VAL]
                    bottoms[i] *= fix[i // N_VAL]
                    bodies[i] *= fix[i // N_VAL]
        return tops + bottoms, bodies

    def _build(self, bands: list[np.ndarray], rows: int) -> _Refs:
        """The references from the bands' top `rows` (the learned comparison and the colours:
        their top TOP_MM)."""
        tops = [b[:TOP_ROWS] for b in bands]
        embedded = self._embedder.embed(np.stack(tops)) if self._embedder else None
        full = np.stack([_rep(b[:rows], REF_BLUR_MM) for b in bands])
        th = full.shape[1]
        for g in range(2 * N_ING):
            full[g * N_VAL : (g + 1) * N_VAL] = _registered(full[g * N_VAL : (g + 1) * N_VAL])
        shapes = np.stack([_shape(b) for b in full])  # where the values differ, and by what
        boxes = []
        for end in range(2):
            for k in range(N_ING):
                group = slice(end * 56 + k * N_VAL, end * 56 + (k + 1) * N_VAL)
                spread = _index_outlines(full[group], shapes[group]).std(axis=0).sum(axis=2)
                spread = cv2.GaussianBlur(spread, (0, 0), 1.0 * PPM)
                ys, xs = np.nonzero(spread >= VALUE_MASK_FLOOR * float(spread.max()))
                if len(xs) == 0:
                    boxes.append((0, th, 0, full.shape[2]))
                    continue
                m = round(1.0 * PPM)
                boxes.append(
                    (
                        max(0, int(ys.min()) - m),
                        min(th, int(ys.max()) + 1 + m),
                        max(0, int(xs.min()) - m),
                        min(full.shape[2], int(xs.max()) + 1 + m),
                    )
                )
        value_templ = tuple(
            tuple(
                np.ascontiguousarray(outline[y0:y1, x0:x1])
                for outline in (
                    _shape(cv2.GaussianBlur(rep, (0, 0), b * PPM)) if b else shape
                    for b in VALUE_BLURS_MM
                )
            )
            for rep, shape, (y0, y1, x0, x1) in zip(
                full, shapes, (boxes[i // N_VAL] for i in range(len(full))), strict=True
            )
        )
        numeral_mean = tuple(
            np.mean([value_templ[j * N_VAL + v][0] for v in range(N_VAL)], axis=0).astype(
                np.float32
            )
            for j in range(2 * N_ING)
        )
        ing_mean = full.reshape(2 * N_ING, N_VAL, *full.shape[1:]).mean(axis=1)
        ing_small = np.stack(
            [cv2.resize(m, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA) for m in ing_mean]
        )
        ing_shape = np.stack([_shape(m) for m in ing_mean])
        ing_shape_unit = np.stack([_unit(m) for m in ing_shape])
        colour = np.stack([b.reshape(-1, 3).mean(axis=0) for b in tops]).astype(np.float32)
        return _Refs(
            full,
            ing_mean,
            ing_small,
            ing_shape,
            ing_shape_unit,
            tuple(boxes),
            value_templ,
            numeral_mean,
            embedded,
            colour,
        )

    # ------------------------------------------------------------------ reading

    def name_boxes(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes_mm: Sequence[tuple[float, float, float, float]],
        light: TableCalibration | None = None,
        found: Sequence[Box] | None = None,
    ) -> list[Naming | None]:
        """Name the bands the finder boxed (x0, y0, x1, y1 on the table plane, mm): the
        hand-made reading of each (those not sure read again in the light the sure ones
        measure, `_read_in`), then the learned comparison of those it does not settle, all
        their crops in one inference (one call per band cost a call's overhead each).
        `light`: the table's own calibration, whose markers give the light, when `cal` is one
        turned with a card (turned_cards). `found`: every band the finder boxed in the
        frame; given, a card that lies whole in view is checked against its whole face
        (`_whole_card`)."""
        gains = frame_white_gains(image, light or cal)
        balance = gains * self._cast
        hand = [self._hand_reading(image, cal, box, balance) for box in boxes_mm]
        chart = self._frame_chart(hand)
        if (light or cal).markers and chart is not None and self._learn_cast(chart):
            balance = gains * self._cast
            hand = [self._hand_reading(image, cal, box, balance) for box in boxes_mm]
            chart = self._frame_chart(hand)
        if chart is not None:
            # the frame's own sure bands say how its light shows the deck's colours: the
            # bands not yet sure are read again in it, as the sure bands of like colour say
            hand = [
                h
                if h is not None and (h.naming.probability or 0.0) >= CAST_SURE
                else self._read_in(image, cal, box, balance, h, chart)
                for h, box in zip(hand, boxes_mm, strict=True)
            ]
        out = [None if h is None else h.naming for h in hand]
        asks = [(k, h.crops) for k, h in enumerate(hand) if h is not None and h.crops is not None]
        if asks:
            out = self._learned(out, asks, self._embed_blur(image, light or cal))
        if found is None:
            return out
        return [
            n if n is None or h is None else self._whole_card(image, cal, n, h, found, balance)
            for n, h in zip(out, hand, strict=True)
        ]

    def _embed_blur(self, image: np.ndarray, table: TableCalibration) -> int:
        """How many EMBED_BLUR_STEP_MM the learned comparison's references are to be blurred
        by to look as this frame's bands do (0 without markers to measure its blur on)."""
        last = self._last_blur
        if last is not None and last[0] is image and last[1] is table:
            return last[2]
        sharp = lens_blur(image, table) if table.markers else None
        steps = 0
        if sharp is not None:
            extra = math.sqrt(max(0.0, sharp.sigma_mm**2 - EMBED_SOFT_MM**2))
            steps = round(min(extra, EMBED_MAX_BLUR_MM) / EMBED_BLUR_STEP_MM)
        self._last_blur = (image, table, steps)
        return steps

    def _learned(
        self, out: list[Naming | None], asks: list[tuple[int, np.ndarray]], blur: int = 0
    ) -> list[Naming | None]:
        """`out` with the learned comparison's say on the bands `asks` (index, crops), against
        the references blurred `blur` EMBED_BLUR_STEP_MM (`_embed_blur`)."""
        out = list(out)
        learned = self._embedded_readings(np.concatenate([crops for _, crops in asks]), blur)
        for (k, _), reading in zip(asks, learned, strict=True):
            n = out[k]
            assert n is not None and n.probability is not None
            if self._fuse:
                own = (_CARD_INDEX[n.card], _CARD_INDEX[n.runner_up], n.probability)
                reading = _fuse(own, reading, overrule=self.tuned)
            card, runner, probability = reading
            out[k] = replace(
                n, card=CARD_IDS[card], runner_up=CARD_IDS[runner], probability=probability
            )
        return out

    def _whole_card(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        naming: Naming,
        hand: _HandReading,
        found: Sequence[Box],
        gains: np.ndarray,
    ) -> Naming | None:
        """A band whose card lies whole in view, checked against its whole face: a body like
        no face of its ingredient is no such card (None); one surely another ingredient's
        is that ingredient's card of the value read (two look-alike bands: a negi read as an
        ajitama), one surely its own ingredient's leaves only the value in doubt. A card
        whose outline shows only in part (BODY_OUTLINE) may have a hand or another card over
        its body: a body surely another ingredient's still says which, but one like no face
        only drops a band that fits its card loosely (LOOSE_FIT). Other bands as read."""
        c, a, f = naming.center_mm, naming.angle_deg, naming.flipped
        ing, value = divmod(_CARD_INDEX[naming.card], N_VAL)
        plain = self._bodies.plain
        if plain[ing * N_VAL : (ing + 1) * N_VAL].any():
            return naming
        outline = outline_shown(image, cal, c, a, f, found)
        whole = outline >= MIN_SUPPORT
        if not whole and outline < BODY_OUTLINE:
            return naming
        patch = balanced(body_patch(image, cal, c, a, f), gains)
        # a band read relit: its body in either light (evening a whole picture can go wrong
        # where evening a band did not: a white ribbon under a sheen taken off turns grey)
        relit = hand.relit(patch, BODY_PPM) if hand.relit is not None else None
        looks = [patch] if relit is None else [patch, relit]
        by_card = np.max([card_scores(p, self._bodies) for p in looks], axis=0)
        # each ingredient's best card: a deck whose pictures differ by value (pips) too
        scores = by_card.reshape(N_ING, N_VAL).max(axis=1)
        best = int(np.argmax(scores))
        second = float(np.partition(scores, -2)[-2])
        swap = not plain[best * N_VAL : (best + 1) * N_VAL].any()
        if (
            swap
            and best != ing
            and scores[best] >= BODY_SURE
            and scores[best] - scores[ing] >= BODY_AHEAD
        ):
            card = CARD_IDS[best * N_VAL + value]
            return replace(
                naming, card=card, runner_up=naming.card, probability=hand.value_probability
            )
        leads = self._pair_leads(looks, ing, naming, scores)
        rival = min(leads, key=lambda r: leads[r]) if leads else ing
        if rival != ing and leads[rival] <= -BODY_PAIR_LEAD and scores[rival] >= BODY_CLEAR:
            card = CARD_IDS[rival * N_VAL + value]
            return replace(
                naming, card=card, runner_up=naming.card, probability=hand.value_probability
            )
        own = float(scores[ing])
        foreign = own < BODY_FOREIGN or own - float(scores[best]) <= -BODY_AHEAD
        if foreign and (whole or naming.score < LOOSE_FIT):
            return None
        if (best == ing and own >= BODY_SURE and own - second >= BODY_AHEAD) or (
            whole and own >= BODY_CLEAR and leads and min(leads.values()) >= BODY_PAIR_LEAD
        ):
            sure = max(naming.confidence, hand.value_probability)
            return replace(naming, probability=sure)
        return naming

    def _pair_leads(
        self, looks: list[np.ndarray], ing: int, naming: Naming, scores: np.ndarray
    ) -> dict[int, float]:
        """How much better the read ingredient's picture fits a card seen whole than each
        likely rival's (the band's runner-up and the body's next-best ingredient), where the
        two pictures differ (`card_body.pair_lead`), in the look that says least for it."""
        plain = np.asarray(self._bodies.plain.reshape(N_ING, N_VAL).any(axis=1), bool)
        by_body = [int(k) for k in np.argsort(scores)[::-1] if k != ing][:1]
        rivals = {_CARD_INDEX[naming.runner_up] // N_VAL, *by_body} - {ing}
        return {
            r: min(pair_lead(look, self._bodies, ing, r) for look in looks)
            for r in rivals
            if not plain[r]
        }

    @property
    def colour_cast(self) -> np.ndarray:
        """(B, G, R) factors the frames' white is carried into the references' by, learned
        from the table (`_learn_cast`); ones until then."""
        return self._cast.copy()

    def _learn_cast(self, chart: tuple[np.ndarray, np.ndarray]) -> bool:
        """Learn the deck's colour from the table: True when the references' cast changed
        and this frame is to be read again.

        Enrolment balances its photos on the cards' white; a deck with none keeps the light
        of its photos (a warm lamp: blue 15 % low), enough to swap two browns. The bands a
        frame reads surely, against the references they were read as, say by how much: once
        CAST_FRAMES frames agree (their median), the frames' white is carried into the
        references' by it. Decks whose white was found measure about 1 (no change). `chart`:
        the frame's `_frame_chart`."""
        frame = _chart_light(*chart, np.ones(len(chart[0]), np.float32))
        self._casts = [*self._casts[-(CAST_KEEP - 1) :], self._cast * frame]
        if len(self._casts) < CAST_FRAMES:
            return False
        cast = np.median(np.stack(self._casts), axis=0)
        cast = np.clip(cast / cast.mean(), 1 / MAX_CAST, MAX_CAST).astype(np.float32)
        if float(np.abs(cast / self._cast - 1).max()) < CAST_STEP:
            return False
        self._cast = cast
        return True

    def _read_in(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        box: Box,
        balance: np.ndarray,
        h: _HandReading | None,
        chart: tuple[np.ndarray, np.ndarray],
    ) -> _HandReading | None:
        """The band in `box` read again in the frame's light as its sure bands of like colour
        measure it (`chart`: `_frame_chart`); `h` as it stands when that light is within
        FRAME_CAST_STEP of `balance`'s, or when the band does not fit better in it."""
        seen, ref = chart
        w = np.ones(len(seen), np.float32)
        if h is not None:
            alike = np.exp(-_chroma_distance2(seen, h.colour) / (2 * CHART_SIGMA**2))
            if float(alike.sum()) >= CHART_MIN:
                w = alike
        light = _chart_light(seen, ref, w)
        if float(np.abs(light - 1).max()) < FRAME_CAST_STEP:
            return h
        again = self._hand_reading(
            image, cal, box, balance * np.clip(light, 1 / MAX_CAST, MAX_CAST), lift=False
        )
        # kept only where the band fits its card better in it: a glossy card's sheen skews
        # the chart (path-traced ornate-1: a purple read pink in a light it measured)
        if h is not None and (again is None or again.fit < h.fit):
            return h
        return again

    def _frame_chart(
        self, hand: Sequence[_HandReading | None]
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The deck's own cards as a colour chart of this frame: (mean BGR of its sure bands
        as seen, of their references), n x 3 each. None when too few bands, of too few
        ingredients, were read surely."""
        sure = [h for h in hand if h is not None and (h.naming.probability or 0.0) >= CAST_SURE]
        ingredients = {h.ref % 56 // N_VAL for h in sure}
        if len(sure) < CAST_MIN_BANDS or len(ingredients) < CAST_MIN_INGREDIENTS:
            return None
        ref = self._refs.colour[[h.ref for h in sure]]
        seen = np.maximum(np.stack([h.colour for h in sure]), 20.0)
        ratios = ref / seen
        # a band read surely but wrong (or half in a shadow) is no measure of the light
        keep = np.all(np.abs(ratios / np.median(ratios, axis=0) - 1) <= 0.25, axis=1)
        if int(keep.sum()) < CAST_MIN_BANDS:
            return None
        return seen[keep], ref[keep]

    def crop_for_box(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        box: tuple[float, float, float, float],
        gains: np.ndarray,
    ) -> np.ndarray | None:
        """The band's top TOP_MM as the learned comparison gets it (None when the band is no
        card of this deck): what the embedding is trained on from rendered scenes."""
        found = self._locate(image, cal, box, gains)
        if found is None:
            return None
        best_j, _, ing_scores, ing_at, _ = self._ingredient(found, _shape(found.rep))
        if ing_scores[best_j] < MIN_SCORE:
            return None
        return self._crop(found.patch, *ing_at[best_j])

    def _locate(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        box: tuple[float, float, float, float],
        gains: np.ndarray,
    ) -> _WayUp | None:
        """The band upright, the way up and quarter turn that fit the ingredients best on the
        coarse pass."""
        found, _ = self._ways_up(image, cal, box, gains)
        return found[0] if found else None

    def _ways_up(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        box: tuple[float, float, float, float],
        gains: np.ndarray,
    ) -> tuple[list[_WayUp], dict[bool, list[float]]]:
        """The band upright each way it may lie, best coarse fit first (none for an empty
        box); and per way up, the candidate tilts not read (`UNSURE_RETRY`)."""
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        bw, bh = box[2] - box[0], box[3] - box[1]
        if bw <= 0 or bh <= 0:
            return [], {False: [], True: []}
        # the band's top edge sits near the box's top (upright) or bottom (turned) edge
        squarish = bh > 0.5 * bw
        # a box shorter than a card shows part of a band (a hand or a card over the rest): the
        # band may reach beyond either end, so it is looked for that much further each way
        margin_x = SEARCH_X_MM + (0.0 if squarish else max(0.0, (CARD_W_MM - bw) / 2))
        out: list[_WayUp] = []
        up = self._skews(image, cal, cx, cy, squarish)
        # a squarish box's tilt is its whole patch's, the same either way up
        lines = {False: up, True: up if squarish else self._skews(image, cal, cx, cy, False, True)}
        tried: dict[bool, list[float]] = {False: [], True: []}

        def new(flipped: bool, angles: Iterable[float]) -> list[float]:
            fresh: list[float] = []
            for a in angles:
                if all(abs(a - b) > SKEW_AGREE_DEG for b in (*tried[flipped], *fresh)):
                    fresh.append(a)
            return fresh

        def try_angles(flipped: bool, angles: Iterable[float]) -> None:
            for a in new(flipped, angles):
                tried[flipped].append(a)
                out.append(self._way_up(image, cal, cx, cy, a, flipped, margin_x, gains))

        for flipped in (False, True):
            if squarish:  # turned more than ~15 degrees: edges give the skew modulo 90 only
                a = lines[flipped][0]
                out.append(self._way_up(image, cal, cx, cy, a, flipped, margin_x, gains))
                out.append(self._way_up(image, cal, cx, cy, a + 90.0, flipped, margin_x, gains))
            else:
                # the edge found for one way up may be another card's (the card above in a
                # cascade): the other way's may be the band's own, and the coarse fit does
                # not tell a band's tilt well (read in full, the better one is kept)
                try_angles(flipped, (lines[flipped][0], lines[not flipped][0]))
        if not squarish and FIT_FLOOR <= max(f.fit for f in out) < FIT_DOUBT:
            # a band that fits no ingredient well at those tilts may lie at the next-longest
            # edges' (a foil's sheen or a shadow's edge outvoting the card's own top edge)
            for flipped in (False, True):
                try_angles(flipped, (*lines[flipped][1:], *lines[not flipped][1:]))
        out.sort(key=lambda f: -f.fit)
        if squarish:
            return out, {False: [], True: []}
        return out, {f: new(f, (*lines[f][1:], *lines[not f][1:])) for f in (False, True)}

    def _way_up(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        cx: float,
        cy: float,
        angle: float,
        flipped: bool,
        margin_x: float,
        gains: np.ndarray,
    ) -> _WayUp:
        """The band upright at `angle`, this way up, with its coarse fit."""
        raw = self._patch(image, cal, cx, cy, angle, flipped, margin_x)
        patch = balanced(raw, gains)
        rep = _rep(patch)
        clipped = _clipped(raw)
        scores, at = self._coarse(rep, clipped)
        return _WayUp(patch, rep, cx, cy, angle, flipped, scores, at, margin_x, clipped)

    def _hand_reading(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        box: tuple[float, float, float, float],
        gains: np.ndarray,
        lift: bool = True,
    ) -> _HandReading | None:
        """The hand-made reading of the band the way up it fits best. Ways up whose coarse fit
        is within WAY_UP_CLOSE of the best are each read in full and the better whole reading
        (ingredient and value) is kept: a design whose band looks alike both ways (numerals
        in both corners, a diagonal sheen) was often read upside down, its colour telling
        nothing and its numerals too small for the coarse pass. `lift`: a band still unsure
        is read again with a shadow lifted off part of it or a sheen taken off (not when
        reading again in the frame's own light, `_read_in`: a band relit is kept there by
        its better fit)."""
        ways, untried = self._ways_up(image, cal, box, gains)
        if not ways:
            return None
        best: tuple[float, _HandReading] | None = None
        for found in ways:
            if found.fit < ways[0].fit - WAY_UP_CLOSE:
                break
            reading, fit = self._read(found)
            if best is None or fit > best[0]:
                best = (fit, reading)
        assert best is not None
        naming = best[1].naming
        if naming.confidence < UNSURE_RETRY and naming.score >= FIT_FLOOR:
            # a band of this deck read unsure: maybe at a tilt a few degrees off (`UNSURE_RETRY`)
            first = ways[0]
            for angle in untried[naming.flipped]:
                found = self._way_up(
                    image, cal, first.cx, first.cy, angle, naming.flipped, first.margin_x, gains
                )
                reading, fit = self._read(found)
                if (
                    reading.naming.confidence > best[1].naming.confidence
                    and reading.naming.score >= FIT_DOUBT
                    and fit >= best[0] - RETRY_FIT_SLACK
                ):
                    best = (fit, reading)
        unsure = best[1].naming.confidence < UNSURE_RETRY or best[1].naming.score < LOOSE_FIT
        if lift and unsure:
            # still unsure, or sure of a band that fits loosely (which the detector may take
            # for the cloth's: `_on_no_card`): maybe part of it lies in a hand's shadow
            # (`shadows`) or under a glossy card's sheen (`sheen`), which also mislead the way
            # up; each way's best tilt is read again in even light
            for found in _best_per_way(ways):
                for relight in RELIGHTS:
                    relit = self._relit(found, relight)
                    if relit is None or relit.fit < ways[0].fit + LIFT_COARSE_GAIN:
                        continue
                    reading, fit = self._read(relit)
                    if fit > best[0] + LIFT_GAIN and reading.naming.score >= MIN_SCORE:
                        best = (fit, replace(reading, relit=relight))
        return best[1]

    def _relit(self, way: _WayUp, relight: Relight) -> _WayUp | None:
        """`way` with its patch evened by `relight`; None when it found nothing to even."""
        patch = relight(way.patch, PPM)
        if patch is None:
            return None
        rep = _rep(patch)
        scores, at = self._coarse(rep, way.clipped)
        return replace(way, patch=patch, rep=rep, coarse=scores, coarse_at=at)

    def _skews(
        self, image, cal, cx: float, cy: float, squarish: bool, flipped: bool = False
    ) -> list[float]:
        """The band's tilt, candidates longest first: the longest straight edges near the box
        (the card's top edge, 63 mm of it, among lines within SKEW_RANGE_DEG of
        horizontal); turned cards (fans) the dominant edge direction modulo 90 degrees."""
        if not squarish:
            return band_edge_skews(image, cal, cx, cy, LINE_CANDIDATES, flipped)
        ppm = 2.0
        w = h = CARD_W_MM + 8
        view = scale_matrix(ppm, cx - w / 2, cy - h / 2) @ cal.plane_from_image
        size = (max(8, round(w * ppm)), max(8, round(h * ppm)))
        patch = cv2.warpPerspective(image, view, size, flags=cv2.INTER_LINEAR)
        return [edge_skew_deg(cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY).astype(np.float32))]

    def _coarse(self, rep: np.ndarray, clipped: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every ingredient's mean band against the band at half size: (scores, positions in
        full-size pixels), the positions good to a pixel or two. `clipped`: `_clipped`."""
        refs = self._refs
        small = cv2.resize(rep, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        small_clipped = None
        if clipped.any():
            share = cv2.resize(
                clipped.astype(np.float32), small.shape[1::-1], interpolation=cv2.INTER_AREA
            )
            small_clipped = share >= 0.5
        scores = np.empty(2 * N_ING, np.float32)
        at = np.empty((2 * N_ING, 2), np.int32)
        for j in range(2 * N_ING):
            scores[j], (x, y) = ingredient_score(small, refs.ing_small[j], small_clipped)
            at[j] = (2 * x, 2 * y)
        return scores, at

    def _pair(self, way: _WayUp, a: int, b: int, at: list[tuple[int, int]]) -> tuple[float, float]:
        """The band compared with ingredient means a and b where they differ: structure minus
        PAIR_COLOUR times the colour distance there. Pixels the camera clipped have no say: an
        overexposed pale background reads white for every tint, and two pastels that differ
        there would otherwise outvote the small icon that still tells them apart."""
        ta, tb = self._refs.ing_mean[a], self._refs.ing_mean[b]
        th, tw = ta.shape[:2]
        diff, no_say, unclipped_units = self._pair_parts(a, b)
        h, w = way.rep.shape[:2]
        # each at its best of both alignments found and a pixel around them: the two are
        # aligned on what they share, a pixel apart as often as not, and compared each at
        # its own a pixel off decided for the one placed right (a band 1 mm across its box)
        places = {
            (min(max(x + dx, 0), w - tw), min(max(y + dy, 0), h - th))
            for x, y in (at[a], at[b])
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
        }
        best = [-math.inf, -math.inf]
        for x, y in places:
            crop = way.rep[y : y + th, x : x + tw]
            clipped = way.clipped[y : y + th, x : x + tw]
            if clipped.any():
                seen = diff * ~clipped
                peak = float(seen.max())
                if peak <= no_say:  # all they differ by is clipped
                    best = [max(b, 0.0) for b in best]
                    continue
                weights = (seen / peak)[..., None].astype(np.float32)
                units = [masked_unit(templ, weights) for templ in (ta, tb)]
            elif unclipped_units is None:  # identical means: nothing to compare
                best = [max(b, 0.0) for b in best]
                continue
            else:
                weights, units = unclipped_units
            unit = masked_unit(crop, weights)
            for k, templ in enumerate((ta, tb)):
                score = float(unit @ units[k])
                score -= PAIR_COLOUR * _colour_distance(crop, templ, weights)
                best[k] = max(best[k], score)
        return best[0], best[1]

    def _pair_parts(self, a: int, b: int) -> _PairParts:
        """What `_pair` compares of ingredient means a and b that no frame changes: where they
        differ (blurred), the share of it that has no say, and the weights and both means'
        units where nothing is clipped (None if the means are the same). Kept per pair: a
        deck whose cards share a seal and a paper compares most of its ingredients with each
        other on every band."""
        parts = self._pairs.get((a, b))
        if parts is None:
            ta, tb = self._refs.ing_mean[a], self._refs.ing_mean[b]
            diff = np.abs(ta - tb).sum(axis=2)
            diff = cv2.GaussianBlur(diff, (0, 0), 1.0 * PPM)
            peak = float(diff.max())
            no_say = NO_SAY * peak
            unclipped = None
            if peak > no_say:
                weights = (diff / peak)[..., None].astype(np.float32)
                unclipped = (weights, [masked_unit(templ, weights) for templ in (ta, tb)])
            parts = (diff, no_say, unclipped)
            self._pairs[a, b] = parts
        return parts

    def _patch(
        self,
        image,
        cal,
        cx: float,
        cy: float,
        angle: float,
        flipped: bool,
        margin_x: float = SEARCH_X_MM,
    ) -> np.ndarray:
        """Upright patch around the band (band top TOP_MM plus search margins) at PPM, as the
        camera read it (uint8 BGR)."""
        w = CARD_W_MM + 2 * margin_x
        h = INDEX_STRIP_MM + 2 * SEARCH_Y_MM
        turn = angle + (180.0 if flipped else 0.0)
        size = (round(w * PPM), round(h * PPM))
        return turned_patch(image, cal, (cx, cy), turn, (-w / 2, -h / 2), size, PPM)

    def _ingredient(
        self, way: _WayUp, shape: np.ndarray
    ) -> tuple[int, int, np.ndarray, list[tuple[int, int]], float]:
        """(best end*ingredient, its rival, their scores, alignments, margin); `shape`: the
        way's `_shape(rep)`."""
        refs = self._refs
        rep, coarse, coarse_at = way.rep, way.coarse, way.coarse_at
        th, tw = refs.full.shape[1:3]
        # the ingredient: the best few ingredients' mean bands (their 8 values averaged:
        # colour, icon and art exact, the numeral a blur) each find their own alignment near
        # the coarse one and are scored there on structure and colour
        ing_scores = np.full(2 * N_ING, -math.inf)
        ing_at: list[tuple[int, int]] = [(0, 0)] * (2 * N_ING)
        r = REFINE_PX
        for j in _shortlist(coarse):
            x0 = int(min(max(coarse_at[j][0] - r, 0), rep.shape[1] - tw))
            y0 = int(min(max(coarse_at[j][1] - r, 0), rep.shape[0] - th))
            window = rep[y0 : y0 + th + 2 * r, x0 : x0 + tw + 2 * r]
            clipped = way.clipped[y0 : y0 + th + 2 * r, x0 : x0 + tw + 2 * r]
            ing_scores[j], (x, y) = ingredient_score(window, refs.ing_mean[j], clipped)
            ing_at[j] = (x0 + x, y0 + y)
            crop = shape[y0 + y : y0 + y + th, x0 + x : x0 + x + tw]
            ing_scores[j] += SHAPE_WEIGHT * float(_unit(crop) @ refs.ing_shape_unit[j])
        order = [int(j) for j in np.argsort(ing_scores)[::-1] if ing_scores[j] > -math.inf]
        best_j = order[0]
        others = _per_ingredient(j for j in order if j % N_ING != best_j % N_ING)
        if not others:  # the shortlist held one ingredient: its rival is the coarse one
            rival = next(j for j in np.argsort(coarse)[::-1] if j % N_ING != best_j % N_ING)
            ing_scores[rival] = coarse[rival]
            others = [int(rival)]
        close = [j for j in others if ing_scores[best_j] - ing_scores[j] < ING_CLOSE]
        if close:
            # ingredients alike overall (two browns, three pastels): the pixels where they
            # differ (icon, art) decide
            best_j, rival, i_margin = self._look_alikes(way, [best_j, *close], ing_scores, ing_at)
        else:
            rival = others[0]
            i_margin = float(ing_scores[best_j] - ing_scores[rival])
        return best_j, rival, ing_scores, ing_at, i_margin

    def _look_alikes(
        self,
        way: _WayUp,
        group: list[int],
        ing_scores: np.ndarray,
        ing_at: list[tuple[int, int]],
    ) -> tuple[int, int, float]:
        """(winner, rival, margin) of ingredients whose whole-band scores are close: every
        two of them compared where they differ (`_pair`), each at its own alignment; the one
        that wins the most comparisons (then the best score) is the ingredient, its margin
        the smallest over the others of its score lead or its comparison lead."""
        lead: dict[tuple[int, int], float] = {}
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                s_a, s_b = self._pair(way, a, b, ing_at)
                lead[a, b], lead[b, a] = s_a - s_b, s_b - s_a
        wins = {a: sum(lead[a, b] > PAIR_TIE for b in group if b != a) for a in group}
        best = max(group, key=lambda a: (wins[a], ing_scores[a]))
        margins = {
            b: max(abs(float(ing_scores[best] - ing_scores[b])), lead[best, b] * PAIR_SCALE)
            for b in group
            if b != best
        }
        rival = min(margins, key=lambda b: margins[b])
        return best, rival, margins[rival]

    def _on_top_edge(self, way: _WayUp, j: int, ax: int, shape: np.ndarray) -> tuple[int, int]:
        """Where band j fits with its top on the card's top edge (`_top_edges`), anywhere up or
        down the patch, within REFINE_PX of `ax` across (a hand or a glare beside the band
        must not pull it sideways). Fitted on the colours and the outlines (`shape`: the way's
        `_shape`) alike: on the colours alone, a band of flat colour whose light falls off down
        its height correlates best where the gradient is (held-out ornate-1 frame 12: an
        ajitama-3 placed 8 mm low, its numeral's foot and icon compared, announced as an
        ajitama-7 6 mm below its band); on the outlines alone, a hand's edge across the band
        outweighs the card's (test_a_band_partly_under_a_hand_is_read_from_what_shows: a
        shiitake-7 read as a shiitake-1). Both, the held-out decks' cached frames read as on
        the outlines alone."""
        tw = self._refs.full.shape[2]
        r = REFINE_PX
        x0 = int(min(max(ax - r, 0), way.rep.shape[1] - tw))
        cols = slice(x0, x0 + tw + 2 * r)
        top_edge = _top_edges(way.rep, round(way.margin_x * PPM))
        x, y = _place_on_edge(
            (way.rep[:, cols], shape[:, cols]),
            (self._refs.ing_mean[j], self._refs.ing_shape[j]),
            top_edge,
        )
        return x0 + x, y

    def _read(self, way: _WayUp) -> tuple[_HandReading, float]:
        """The hand-made reading, the crops the learned comparison is to see (None when it
        has no say: no model, no card of this deck, or a reading already SURE), and how well
        the band fits the card read (ingredient plus value score)."""
        refs = self._refs
        tw = refs.full.shape[2]
        shape = _shape(way.rep)  # one high-pass for the ingredient's outlines and the value
        best_j, rival, ing_scores, ing_at, i_margin = self._ingredient(way, shape)
        best_s = float(ing_scores[best_j])
        end, ing = divmod(best_j, N_ING)
        runner_ing = rival % N_ING
        # the value: compare the 8 cards of that ingredient where they differ, each aligned
        # on its own within a millimetre or so (a numeral is a few pixels wide), around where
        # the ingredient's band fits with its top on the card's top edge (`_top_edges`)
        ax, ay = ing_at[best_j]
        vx, vy = self._on_top_edge(way, best_j, ax, shape)
        (my0, my1, mx0, mx1) = refs.value_box[best_j]
        pad = VALUE_SEARCH_PX
        # the band's place on the table is where its top sits on the card's top edge; the
        # learned comparison's crops and the colour stay at the colours' alignment (taken at
        # the top edge too, a pastel whose tint clipped was announced as a card not in view:
        # test_pastel_look_alikes_are_told_apart_by_their_icons_when_their_tint_clips)
        top_y = vy
        vy = self._numeral_row(shape, best_j, vx, vy)
        region = shape[
            max(0, vy + my0 - pad) : vy + my1 + pad, max(0, vx + mx0 - pad) : vx + mx1 + pad
        ]
        base = end * 56 + ing * N_VAL
        vscores = np.full(N_VAL, -1.0)
        for v in range(N_VAL):
            for templ in refs.value_templ[base + v]:
                score = value_score(region, templ)
                if score is not None:
                    vscores[v] = max(vscores[v], score)
        ranked = np.argsort(vscores)[::-1]
        value = int(ranked[0])
        v_margin = float(vscores[ranked[0]] - vscores[ranked[1]])
        card = ing * N_VAL + value
        runner = ing * N_VAL + int(ranked[1]) if v_margin < i_margin else runner_ing * N_VAL + value
        # a band partly hidden showed only part of what tells the cards apart
        shown = (CARD_W_MM + 2 * SEARCH_X_MM) / (CARD_W_MM + 2 * way.margin_x)
        v_sure = _value_lead(v_margin, float(vscores[ranked[0]]))
        probability = _confidence(best_s, v_sure, i_margin) * shown
        value_probability = _value_confidence(best_s, v_sure) * shown
        ask = (
            refs.embedded is not None
            and best_s >= ASK_SCORE
            and not (self._fuse and probability >= SURE)
        )
        # where the band is: centre of the matched top part, back on the plane
        local_x = (vx + tw / 2) / PPM - (CARD_W_MM / 2 + way.margin_x)
        local_y = (top_y / PPM + INDEX_STRIP_MM / 2) - (INDEX_STRIP_MM / 2 + SEARCH_Y_MM)
        a = math.radians(way.angle + (180.0 if way.flipped else 0.0))
        ca, sa = math.cos(a), math.sin(a)
        centre = (way.cx + ca * local_x + sa * local_y, way.cy - sa * local_x + ca * local_y)
        naming = Naming(
            card=CARD_IDS[card],
            score=best_s,
            margin=min(v_margin * 0.5, i_margin),
            runner_up=CARD_IDS[runner],
            flipped=way.flipped,
            angle_deg=way.angle,
            center_mm=(float(centre[0]), float(centre[1])),
            probability=probability,
        )
        crops = self.aligned_crops(way.patch, ax, ay) if ask else None
        colour = self._crop(way.patch, ax, ay).reshape(-1, 3).mean(axis=0)
        fit = best_s + float(vscores[ranked[0]])
        reading = _HandReading(naming, crops, end * 56 + card, colour, value_probability, fit)
        return reading, fit

    def _numeral_row(self, shape: np.ndarray, j: int, vx: int, vy: int) -> int:
        """The band's top row for the value comparison: `vy` (its top edge), unless the
        ingredient's numerals on average (all 8 at one place, so no single value picks its own
        spot) fit NUMERAL_LEAD better within NUMERAL_SHIFT_PX of it. Judged on the top
        TOP_MM of a deeper index (`INDEX_SHARE`): a tall numeral's mean, searched upwards,
        fitted the card above's edge in a cascade better than its own place (a lettered-2 4
        read as a 7, 3.6 mm high)."""
        (my0, my1, mx0, mx1) = self._refs.value_box[j]
        my1 = max(my0 + 1, min(my1, TOP_ROWS))
        mean = self._refs.numeral_mean[j][: my1 - my0]
        pad, shift = VALUE_SEARCH_PX, NUMERAL_SHIFT_PX
        r0 = max(0, vy + my0 - pad - shift)
        region = shape[r0 : vy + my1 + pad + shift, max(0, vx + mx0 - pad) : vx + mx1 + pad]
        if region.shape[0] < mean.shape[0] + 2 * pad + 1 or region.shape[1] < mean.shape[1]:
            return vy
        rows = cv2.matchTemplate(region, mean, cv2.TM_CCOEFF_NORMED).max(axis=1)
        here = vy + my0 - r0
        near = float(rows[max(0, here - pad) : here + pad + 1].max(initial=-1.0))
        best = int(np.argmax(rows))
        return r0 + best - my0 if float(rows[best]) > near + NUMERAL_LEAD else vy

    def aligned_crops(self, patch: np.ndarray, ax: int, ay: int) -> np.ndarray:
        """The band's top TOP_MM where the hand-made pass aligned it, and around it: the
        alignment of an ingredient's mean band can be a few pixels off (a flat full-bleed
        colour anchors it poorly), so the learned comparison looks at EMBED_SHIFTS of it."""
        return np.stack([self._crop(patch, ax + dx, ay + dy) for dy, dx in EMBED_SHIFTS])

    def _crop(self, patch: np.ndarray, x: int, y: int) -> np.ndarray:
        """The band's top TOP_MM at (x, y) of the patch, kept inside it."""
        th, tw = TOP_ROWS, self._refs.full.shape[2]
        y0 = min(max(y, 0), patch.shape[0] - th)
        x0 = min(max(x, 0), patch.shape[1] - tw)
        return patch[y0 : y0 + th, x0 : x0 + tw]

    def _embedded_refs(self, blur: int) -> np.ndarray:
        """The references' embedding, their bands blurred `blur` EMBED_BLUR_STEP_MM first."""
        refs = self._refs
        assert refs.embedded is not None and self._embedder is not None
        if blur <= 0 or self._ref_bands is None:
            return refs.embedded
        if blur not in self._embedded_at:
            sigma = blur * EMBED_BLUR_STEP_MM * PPM
            bands = np.stack([cv2.GaussianBlur(b, (0, 0), sigma) for b in self._ref_bands])
            self._embedded_at[blur] = self._embedder.embed(bands)
        return self._embedded_at[blur]

    def _embedded_readings(self, crops: np.ndarray, blur: int = 0) -> list[tuple[int, int, float]]:
        """The learned comparison of bands with every reference, each at the best of its
        EMBED_SHIFTS crops (`crops`: len(EMBED_SHIFTS) per band, band after band, embedded in
        one call): per band (card, runner-up, softmax probability of the card). `blur`: the
        references blurred that many EMBED_BLUR_STEP_MM (`_embed_blur`)."""
        assert self._embedder is not None
        embedded = self._embedded_refs(blur)
        q = self._embedder.embed(crops)
        sims = (q @ embedded.T).reshape(-1, len(EMBED_SHIFTS), len(embedded)).max(axis=1)
        out = []
        for band in sims:
            logits = self._embedder.card_logits(band)
            p = np.exp(logits - logits.max())
            p /= p.sum()
            ranked = np.argsort(p)[::-1]
            out.append((int(ranked[0]), int(ranked[1]), float(p[ranked[0]])))
        return out


def _chart_light(seen: np.ndarray, ref: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(B, G, R) factors (mean 1) that carry a colour chart's bands as seen (n x 3) into their
    references' (n x 3), each band weighing `weights` (n)."""
    light = (weights @ ref) / (weights @ seen)
    return light / light.mean()


def _chroma_distance2(colours: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Squared distances of the log chromaticities (lightness out) of `colours` (n x 3) from
    `colour`'s (3)."""
    c = np.log(np.maximum(colour, 1.0))
    cs = np.log(np.maximum(colours, 1.0))
    d = (cs - cs.mean(axis=1, keepdims=True)) - (c - c.mean())
    return (d * d).sum(axis=1)


def _shortlist(coarse: np.ndarray) -> list[int]:
    """The (end, ingredient) bands to align in full: the REFINE_INGREDIENTS best coarse fits,
    and any other ingredient's better end within SHORTLIST_CLOSE of the best (a design alike
    both ways up puts each ingredient in twice: four bands were two ingredients, and a third
    look-alike was never compared)."""
    order = [int(j) for j in np.argsort(coarse)[::-1]]
    out = order[:REFINE_INGREDIENTS]
    have = {j % N_ING for j in out}
    for j in order[REFINE_INGREDIENTS:]:
        if coarse[j] < coarse[order[0]] - SHORTLIST_CLOSE:
            break
        if j % N_ING not in have:
            out.append(j)
            have.add(j % N_ING)
    return out


def _best_per_way(ways: Sequence[_WayUp]) -> list[_WayUp]:
    """The best-fitting tilt of each way up (`ways` best first)."""
    return [
        next(w for w in ways if w.flipped == f)
        for f in (False, True)
        if any(w.flipped == f for w in ways)
    ]


def _per_ingredient(order: Iterable[int]) -> list[int]:
    """The first (end, ingredient) band of each ingredient in `order`: each at its better end."""
    seen: set[int] = set()
    out = []
    for j in order:
        if j % N_ING not in seen:
            seen.add(j % N_ING)
            out.append(j)
    return out


def _fuse(
    hand: tuple[int, int, float], learned: tuple[int, int, float], overrule: bool = False
) -> tuple[int, int, float]:
    """The hand-made reading (card, runner-up, probability), confirmed by the learned one when
    both name the same card (both would have to be wrong), left as it was otherwise. Chosen on
    the training families' scenes (benchmarks/band_namer_designs.py --families
    band,corner,bordered,photo,badge --seeds 5): letting the learned card win a disagreement cut
    precision at the gate on hard scenes from 0.96 to 0.79, and doubting the hand-made card
    when they disagree cost recall on enrolled decks' hard scenes.

    `overrule`: the learned reading is the deck's own tuned one (`companion deck tune`), and a
    card it is TUNED_WINS sure of wins over a hand-made one under HAND_DOUBT, at the chance
    that the one is right and the other wrong. Chosen on the training families' tuned decks
    (benchmarks/tuned_fusion.py, 1662 plain and 1542 hard bands at the gate): misses 98 -> 80
    plain and 174 -> 149 hard, wrong readings 22 -> 22 and 29 -> 26; the shipped comparison,
    never shown the deck, is not trusted so (87 and 225 misses alone, but 64 and 189 wrong).
    Only a card sharing the ingredient or the value with the hand-made one overrules it: two
    readings that differ in both are reading little of the band (held-out minimal-1's solo game,
    a chashu-3 half covered by the next card: hand-made ajitama-3 at 0.4-0.5, tuned chashu-2 at
    0.92-0.96, announced as a chashu-2 that was served early and threw the game; per frame this
    costs 2 of the 21 cards the overrule gained on the held-out designs' plain and hard scenes)."""
    if hand[0] == learned[0]:
        return hand[0], hand[1], 1.0 - (1.0 - hand[2]) * (1.0 - learned[2])
    if (
        overrule
        and learned[2] >= TUNED_WINS
        and hand[2] < HAND_DOUBT
        and _one_part_alike(hand[0], learned[0])
    ):
        return learned[0], hand[0], learned[2] * (1.0 - hand[2])
    return hand


def _value_lead(v_margin: float, fit: float) -> float:
    """The value's lead over the next value, as sure as it is at a typical fit: a lead counts
    more when the numeral read fits its template well (`VALUE_MISFIT_REF`)."""
    return v_margin * VALUE_MISFIT_REF / max(1.0 - fit, VALUE_MISFIT_FLOOR)


def _one_part_alike(a: int, b: int) -> bool:
    """Whether two cards share their ingredient or their value."""
    return a // N_VAL == b // N_VAL or a % N_VAL == b % N_VAL


def _confidence(score: float, v_margin: float, i_margin: float) -> float:
    """0..1 from how far the card is ahead of its rivals: of the other values of its ingredient
    (where they differ) and of the other ingredients. Fitted on the training families' bands
    (enrolled and drawn faces): wrong values had margins under 0.024 in 95 % of cases, wrong
    ingredients under 0.033."""
    pi = 1.0 / (1.0 + math.exp(-(i_margin - 0.035) / 0.008))
    return _value_confidence(score, v_margin) * pi


def _value_confidence(score: float, v_margin: float) -> float:
    """`_confidence` were the ingredient sure: the value's part alone."""
    if score < MIN_SCORE:
        return 0.0
    return float(1.0 / (1.0 + math.exp(-(v_margin - 0.018) / 0.004)))
