"""Two ingredients of alike colour are told apart by their icons when the frame's colour is off:
the light's colour is not always measured right (a warm lamp clips the markers' white), and
then colour alone reads one brown for the other."""

from __future__ import annotations

import numpy as np
import pytest

from companion.deck.designs import design_deck
from companion.synth.camera import Light, look_at_camera
from companion.synth.frame import render_scene
from companion.synth.scene import Scene
from companion.vision import band_naming
from companion.vision.detector import CardDetector
from tests.plane_helpers import FLAT_LOOK, three_bowls

WHITE_OFF = np.array((1.15, 1.0, 0.87), np.float32)
"""The markers' white as the namer takes it out, off by this (B, G, R): blue 15 % up, red
13 % down."""
WARM = Light(kelvin=3000, wb_error=0.6, blur_px=1.0, noise=3.0, jpeg_quality=80)


def alternating(a: str, b: str) -> tuple[str, ...]:
    """Twelve cards of two ingredients, one of each in turn down three cascades."""
    values = (0, 3, 6, 1, 4, 7, 2, 5, 5, 2, 7, 4)
    return tuple(f"{a if k % 2 == 0 else b}-{v}" for k, v in enumerate(values))


@pytest.mark.parametrize(
    ("family", "cards"),
    [
        (("ornate", 1), alternating("nori", "shiitake")),
        (("minimal", 1), alternating("ajitama", "kamaboko")),
    ],
    ids=["ornate-browns", "minimal-pastels"],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_look_alike_cascades_in_a_light_measured_off_are_read_by_their_icons(
    monkeypatch: pytest.MonkeyPatch, family: tuple[str, int], cards: tuple[str, ...], seed: int
) -> None:
    """Every card of three cascades of two look-alike ingredients is read and none as a card not
    on the table. Compared by colour and outline where their whole bands differ (as before this
    test), the ornate browns lost 1 and 5 noris (seeds 1, 2), each time a nori announced as a
    shiitake, and the minimal pastels 1 and 2 ajitamas, two announced as chashus."""
    deck = design_deck(*family)
    camera = look_at_camera(2304, (390.0, 220.0), 700.0)
    scene = Scene(three_bowls(cards), "felt", seed)
    frame = render_scene(deck, scene, camera, WARM, FLAT_LOOK, np.random.default_rng(seed))
    true_gains = band_naming.frame_white_gains
    monkeypatch.setattr(
        band_naming, "frame_white_gains", lambda img, cal: true_gains(img, cal) * WHITE_OFF
    )
    read = {r.card for r in CardDetector(deck=deck, reuse_names=False).detect(frame.image).cards}
    assert read == set(cards), (sorted(set(cards) - read), sorted(read - set(cards)))
