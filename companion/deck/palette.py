"""The default deck's ingredient colours and names (pure data: the UI uses them without cv2).

Colours are the Okabe-Ito palette, distinct for the common colour-blindnesses; each ingredient
also has its own glyph (faces.py), so colour is never the only cue.
"""

from __future__ import annotations

from typing import Final

INGREDIENT_COLORS: Final[dict[str, tuple[int, int, int]]] = {
    # BGR, Okabe-Ito
    "ajitama": (66, 228, 240),  # yellow  #F0E442
    "chashu": (0, 94, 213),  # vermillion #D55E00
    "kamaboko": (167, 121, 204),  # reddish purple #CC79A7
    "menma": (0, 159, 230),  # orange #E69F00
    "negi": (115, 158, 0),  # bluish green #009E73
    "nori": (38, 38, 38),  # near black
    "shiitake": (178, 114, 0),  # blue #0072B2
}
INGREDIENT_LABELS: Final[dict[str, str]] = {
    "ajitama": "Ajitama",
    "chashu": "Chashu",
    "kamaboko": "Kamaboko",
    "menma": "Menma",
    "negi": "Negi",
    "nori": "Nori",
    "shiitake": "Shiitake",
}
