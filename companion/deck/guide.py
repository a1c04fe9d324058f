"""The enrolment guide a player follows (kept free of OpenCV so `--help` stays quick)."""

from __future__ import annotations

from typing import Final

from companion.cards import INGREDIENTS

MIN_CARD_WIDTH_PX: Final = 150
"""A card narrower than this in the photo holds too little detail to train on."""

GUIDE: Final = """\
Enrolment guide (7 photos, one per ingredient, in this order):
{steps}
For every photo:
  - lay the 8 cards of that ingredient face up in one row, values 0 to 7 from left to right,
    each card upright (taller than wide, its top towards the top of the photo: published cards
    are not always symmetric, so the photo's orientation is kept as given);
  - use a plain surface on which you can see every card's edge: its colour or its lightness
    differs from the edges' (a mottled cloth is fine; white cards on a cloth a tone darker,
    dark cards on one a tone lighter or of another colour); uneven light and a soft reflection
    are fine, glare that washes out an edge is not; cards not touching (a finger's width
    apart), nothing covering them; the same surface for all 7 photos, with a band of it
    showing round the row (its colour is what makes the 7 photos' colours comparable);
  - photograph from above (a little off vertical is fine), all 8 cards fully in view with a
    margin round them, filling most of the photo (each card at least {minw} pixels wide),
    in focus.
Give the photos in that order, or a folder holding exactly 7 photos whose names sort in that
order (e.g. 1-ajitama.jpg ... 7-shiitake.jpg).

After enrolling: nothing is trained, the deck is named at once by comparing what the camera
sees with these 56 faces. Colours are balanced on the cards' white; cards with no white
(full-bleed colour) keep your photos' light until play, where the first frames' surely read
cards correct it. Run `companion deck check DIR` before playing: it lists the cards
that look most alike and reads table scenes drawn with your faces (ready / usable / hard to
tell apart). A deck of another design is not yet read as surely as the default deck (see the
README). To make it surer, `companion deck tune DIR` (optional, 5-8 minutes on a 2-core
CPU, needs torch) teaches the band comparison your own cards from these faces; detect, run
and check use it for that deck from then on. If cards are listed as alike: tune the deck,
retake those photos in even light, sharp; lay bowl cards with the full 16 mm step so each
numeral shows; use the Pi camera at full resolution."""


def guide_text() -> str:
    steps = "\n".join(
        f"  photo {i + 1}: the 8 {ing.capitalize()} cards"
        + (" (values 0 to 7, left to right)" if i == 0 else "")
        for i, ing in enumerate(INGREDIENTS)
    )
    return GUIDE.format(steps=steps, minw=MIN_CARD_WIDTH_PX)
