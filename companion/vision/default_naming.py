"""The default deck: named by its own strip layout, with a second opinion from its faces.

The strip namer (`naming.StripNamer`: numeral panel, glyph, pips, and the shipped classifier)
knows where the default strip keeps what, and is fast and sure in kind light. Under a lamp's
glare, a hand or a colour cast it falls unsure, where the namer every other deck is read by
(`band_naming.BandNamer`: the whole band against the deck's faces, its light evened first, the
card's body checked) still reads many cards. So a strip the first names unsurely is named again
by the second, and keeps the surer naming; a sure strip, most of them, costs nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from companion.deck.deckdir import Deck, default_deck
from companion.vision.band_naming import BandNamer
from companion.vision.calibration import TableCalibration
from companion.vision.naming import Naming, StripNamer
from companion.vision.strip_classifier import AnyStripClassifier

SECOND_OPINION: Final = 0.5
"""A strip the strip namer names less surely than this (or not at all) is named against the
faces too: a naming more likely wrong than right."""


class DefaultNamer:
    """Names the default deck's strips (the `StripNamer` first, `BandNamer` when it is unsure)."""

    def __init__(
        self, strips: StripNamer, deck: Deck | None = None, backend: str | None = None
    ) -> None:
        """`deck`: the default deck whose faces the second namer reads (None: drawn one at a
        time, `default_deck(lazy=True)`); `backend`: the finder's, for the band embedding."""
        self.strips = strips
        self._deck = deck
        self._backend = backend
        self._faces: BandNamer | None = None

    @property
    def classifier(self) -> AnyStripClassifier | None:
        return self.strips.classifier

    def faces(self) -> BandNamer:
        """The second namer, made when first needed or by `CardDetector.prepare` (about a
        second: a still photo in kind light may never need it)."""
        if self._faces is None:
            deck = self._deck if self._deck is not None else default_deck(lazy=True)
            self._faces = BandNamer(deck, backend=self._backend)
        return self._faces

    def name_boxes(
        self,
        image: np.ndarray,
        cal: TableCalibration,
        boxes_mm: Sequence[tuple[float, float, float, float]],
        light: TableCalibration | None = None,
        found: Sequence[tuple[float, float, float, float]] | None = None,
    ) -> list[Naming | None]:
        """As `StripNamer.name_boxes`; the unsure strips' namings are the surer of both."""
        out = self.strips.name_boxes(image, cal, boxes_mm, light=light, found=found)
        unsure = [k for k, n in enumerate(out) if n is None or n.confidence < SECOND_OPINION]
        if not unsure:
            return out
        again = self.faces().name_boxes(
            image, cal, [boxes_mm[k] for k in unsure], light=light, found=found
        )
        for k, second in zip(unsure, again, strict=True):
            first = out[k]
            # the surer of both (asking the second to name one of the first's two best cards,
            # to be sure on its own or to agree with the glyph's silhouette lost more right
            # readings than false ones: models/README, stop 52)
            if second is not None and (first is None or second.confidence > first.confidence):
                out[k] = second
        return out
