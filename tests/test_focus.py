"""The lens blur measured on the markers' edges (`vision.focus`) and the doctor's focus check:
on rendered frames whose blur is known, and on a golden frame blurred as a lens out of focus."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion import doctor
from companion.deck.deckdir import load_deck
from companion.doctor import OK, SKIP, WARN
from companion.synth.camera import Light, look_at_camera
from companion.synth.frame import render_scene
from companion.synth.raster import Look
from companion.synth.scene import PlacedCard, Scene
from companion.vision.calibration import calibrate
from companion.vision.focus import OUT_OF_FOCUS_PX, lens_blur

GOLDEN = Path(__file__).parent / "data" / "golden"
FLAT_LOOK = Look(shadow_strength=0.3, hand_shadow_strength=0.0, glare=(), paper_noise=0.0)


@cache
def kit_frame(blur_px: float) -> np.ndarray:
    """The kit's camera view (2304 px wide, 700 mm up) of a few cards, lens blur `blur_px`."""
    light = Light(blur_px=blur_px, noise=3.0, jpeg_quality=85, gradient=(0.1, 1.0, 0.1))
    cards = tuple(
        PlacedCard(cid, (120.0 + 70 * k, 60.0), 1.0, True, "fridge")
        for k, cid in enumerate(("nori-3", "negi-5", "menma-0"))
    )
    camera = look_at_camera(2304, (390.0, 220.0), 700.0)
    frame = render_scene(
        load_deck(None), Scene(cards, "felt", 3), camera, light, FLAT_LOOK, np.random.default_rng(3)
    )
    return frame.image


@pytest.mark.parametrize("blur_px", [0.0, 1.0, 1.8, 2.6])
def test_the_blur_measured_on_the_markers_is_the_lens_blur(blur_px: float) -> None:
    image = kit_frame(blur_px)
    cal = calibrate(image)
    assert cal is not None
    sharp = lens_blur(image, cal)
    assert sharp is not None and sharp.profiles >= 100  # 4 markers x 4 sides, most profiles
    # the camera's own softness (resampling, JPEG) adds about half a pixel in quadrature
    expected = float(np.hypot(blur_px, 0.5))
    assert sharp.sigma_px == pytest.approx(expected, abs=0.25), sharp
    # the same blur on the table: the kit's camera sees about 2.7 px a millimetre
    assert sharp.sigma_mm == pytest.approx(sharp.sigma_px / 2.7, rel=0.1)


def test_the_doctor_says_when_the_camera_is_out_of_focus() -> None:
    image = cv2.imread(str(GOLDEN / "table-3.jpg"))
    assert image is not None
    verdicts = {}
    for sigma in (0.0, 2.0):
        blurred = image if sigma == 0 else cv2.GaussianBlur(image, (0, 0), sigma)
        _, cal = doctor.check_markers(blurred)
        verdicts[sigma] = doctor.check_focus(blurred, cal)
    assert verdicts[0.0].status == OK, verdicts[0.0].message
    assert verdicts[0.0].value is not None
    assert verdicts[0.0].value["sigma_px"] < OUT_OF_FOCUS_PX
    assert verdicts[2.0].status == WARN, verdicts[2.0].message
    assert "out of focus" in verdicts[2.0].message and "focus the camera" in verdicts[2.0].advice


def test_no_markers_no_focus_verdict() -> None:
    image = cv2.imread(str(GOLDEN / "table-3.jpg"))
    assert doctor.check_focus(image, None).status == SKIP
    assert lens_blur(np.full((720, 1280, 3), 128, np.uint8), calibrate(image)) is None


def test_a_lens_knocked_out_of_focus_mid_game_is_shown_and_the_game_goes_on() -> None:
    from typing import Any, cast

    from companion.camera import Frame
    from companion.session import CAMERA_CHECK_EVERY, TablePipeline
    from companion.tracking.follower import GameFollower
    from tests.plane_helpers import NoCards

    pipeline = TablePipeline(cast(Any, NoCards()), GameFollower("2p", ["Alice", "Bob"]))
    sharp, blurred = kit_frame(0.0), kit_frame(2.6)
    for i in range(CAMERA_CHECK_EVERY):
        pipeline.process(Frame(sharp, i / 4, i))
    assert pipeline.follower.view().camera == "ok"
    # a still table seen blurred from now on (the motion gate sees one change, then stillness)
    for i in range(CAMERA_CHECK_EVERY, 3 * CAMERA_CHECK_EVERY):
        pipeline.process(Frame(blurred, i / 4, i))
    view = pipeline.follower.view()
    assert view.camera == "out of focus"
    assert view.phase == "setup" and view.error is None
    for i in range(3 * CAMERA_CHECK_EVERY, 5 * CAMERA_CHECK_EVERY):
        pipeline.process(Frame(sharp, i / 4, i))
    assert pipeline.follower.view().camera == "ok"


def test_the_screen_says_too_dark_and_out_of_focus_but_leaves_glare_to_the_doctor() -> None:
    from companion.vision.table_light import camera_state

    image = cv2.imread(str(GOLDEN / "table-3.jpg"))
    cal = calibrate(image)
    assert cal is not None
    assert camera_state(image, cal) == "ok"
    assert camera_state((image * 0.3).astype(np.uint8), cal) == "too dark"  # the lamp went off
    shiny = image.copy()
    h, w = shiny.shape[:2]
    for k in range(6):  # a lamp mirrored in glossy cards, as the doctor's glare test draws it
        centre = (w // 4 + k * w // 8, h // 2 + (k % 2) * h // 8)
        cv2.ellipse(shiny, centre, (w // 30, h // 40), 20, 0, 360, (255, 255, 255), -1)
    assert doctor.check_glare(shiny, cal).status == WARN
    assert camera_state(shiny, cal) == "ok"  # mid-game, white card faces clip like glare
    assert camera_state(cv2.GaussianBlur(image, (0, 0), 2.0), cal) == "out of focus"
