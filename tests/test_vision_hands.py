"""HandWatch: a hand resting still over the table is a hand; a card laid is not."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.vision.calibration import calibrate
from companion.vision.hands import HandConfig, HandWatch
from companion.vision.motion import MotionGate


def table(h: int = 360, w: int = 640) -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((h, w, 3), (90, 120, 150), np.uint8)
    img += rng.integers(0, 6, img.shape, dtype=np.uint8)  # fixed texture
    return img


def with_card(img: np.ndarray, x: int, y: int) -> np.ndarray:
    out = img.copy()
    cv2.rectangle(out, (x, y), (x + 50, y + 70), (240, 240, 235), -1)
    return out


def with_arm(
    img: np.ndarray, tip: tuple[int, int], root: tuple[int, int] | None = None
) -> np.ndarray:
    out = img.copy()
    root = root or (tip[0] + 20, img.shape[0] + 40)  # from beyond the bottom edge
    cv2.line(out, root, tip, (110, 150, 210), 45)
    cv2.circle(out, tip, 35, (110, 150, 210), -1)
    return out


@pytest.mark.parametrize(
    ("second", "hand"),
    [
        pytest.param(lambda im: with_card(im, 300, 140), False, id="a card laid mid-table"),
        pytest.param(lambda im: with_arm(im, (320, 180)), True, id="an arm from the bottom"),
        pytest.param(
            lambda im: with_arm(im, (200, 120), (-40, 100)), True, id="an arm from the left"
        ),
        pytest.param(lambda im: (im * 0.6).astype(np.uint8), False, id="the light dims"),
        pytest.param(lambda im: im.copy(), False, id="nothing changes"),
    ],
)
def test_what_is_a_hand(second, hand: bool) -> None:  # type: ignore[no-untyped-def]
    w = HandWatch()
    base = table()
    assert w.update(0.0, base).hand is False
    assert w.update(0.2, second(base)).hand is hand


def test_a_resting_hand_stays_a_hand_and_the_table_under_it_is_kept() -> None:
    w = HandWatch()
    base = table()
    w.update(0.0, base)
    laid = with_card(base, 300, 140)
    assert not w.update(0.2, laid).hand  # the card is part of the table now
    arm = with_arm(laid, (325, 175))  # resting on the new card
    for k in range(15):  # 3 s perfectly still
        assert w.update(0.4 + 0.2 * k, arm).hand
    assert w.update(3.6, arm, still=False).hand  # moving away: still a hand
    assert not w.update(3.8, laid).hand  # gone: the table as it was


def test_a_still_change_from_the_edge_is_taken_as_scenery_after_a_while() -> None:
    w = HandWatch(HandConfig(adopt_after_s=5.0))
    base = table()
    w.update(0.0, base)
    cup = with_arm(base, (40, 330), (-30, 330))  # something pushed in at the edge
    assert w.update(0.2, cup).hand
    assert w.update(4.0, cup).hand
    assert not w.update(5.4, cup).hand
    assert not w.update(5.6, cup).hand


def test_a_hand_taken_for_scenery_that_then_leaves_is_over_at_once() -> None:
    """A hand resting still longer than adopt_after_s is taken as scenery; when it leaves,
    the table as it was before is recognised: no phantom hand for another adopt_after_s."""
    w = HandWatch(HandConfig(adopt_after_s=5.0))
    base = table()
    w.update(0.0, base)
    arm = with_arm(base, (320, 180))
    assert w.update(0.2, arm).hand
    assert not w.update(5.4, arm).hand  # scenery now
    assert not w.update(5.6, base, still=False).hand  # it moves away
    assert not w.update(5.8, base).hand  # and the empty table is no hand
    assert w.update(6.0, arm).hand  # a hand reaching in again is one


@pytest.fixture(scope="module")
def resting_game(tmp_path_factory):  # type: ignore[no-untyped-def]
    """The first three turns of a 3-player game, rendered small with hands that rest."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["simulate", "--mode", "3p", "--seed", "61", "--json"]) == 0
    record = json.loads(buf.getvalue())
    record["turns"] = record["turns"][:3]
    folder = tmp_path_factory.mktemp("rest")
    (folder / "game.json").write_text(json.dumps(record))
    out = folder / "out"
    args = ["render", "recording", str(folder / "game.json"), str(out), "--no-scoring"]
    args += ["--width", "800", "--fps", "5", "--hand-rest", "0.6,2", "--cascade-mm", "12,22"]
    assert main(args) == 0
    return out


def test_on_a_rendered_game_every_still_hand_is_seen_and_no_table_is_a_hand(resting_game):  # type: ignore[no-untyped-def]
    out = resting_game
    meta = json.loads((out / "meta.json").read_text())
    assert meta["rest_frames"], "the recording has hands resting"
    hands = np.zeros(meta["frames"], bool)
    for a, b in meta["hand_frames"]:
        hands[a:b] = True
    cap = cv2.VideoCapture(str(out / meta["video"]))
    gate, watch = MotionGate(), HandWatch()
    cal = None
    missed, false, resting = [], [], 0
    for i in range(meta["frames"]):
        ok, frame = cap.read()
        assert ok
        still = gate.update(frame) <= 0.02
        cal = cal or (calibrate(frame) if still else None)
        seen = watch.update(i / meta["fps"], frame, cal, still).hand
        if still and hands[i] and not seen:
            missed.append(i)
        if still and not hands[i] and seen:  # (moving frames never vote: not judged)
            false.append(i)
        resting += still and hands[i]
    assert resting >= 10
    assert missed == []
    assert false == []
