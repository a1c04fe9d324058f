"""Enrolment round trip on synthetic photos of the default deck, and bad photos rejected."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cards import CARD_IDS, INGREDIENTS, Card
from companion.cli import main
from companion.deck.deckdir import default_deck, load_deck
from companion.deck.enroll import (
    EnrolmentError,
    face_similarity,
    find_cards,
    read_photo,
    rectify,
)
from companion.deck.photos import row_photo

SAME_FACE_MIN = 0.90
"""A recovered face scores at least this against its original (a bad warp scores far less)."""
CLOTH = (60, 110, 60)  # green felt: contrasts with every ingredient's edge colour


def ingredient_faces(ingredient: str) -> list[np.ndarray]:
    deck = default_deck()
    return [deck.face(Card(ingredient, v).id) for v in range(8)]


def mismatches(faces: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> list[str]:
    """Cards whose face is not recognisably their original: too unlike it (bad warp), or
    more like another card of the deck (wrong label). Cards of one ingredient differ only by
    numerals and pips, so the label is checked by ranking against all 56, not by a constant."""
    bad = []
    for cid, face in faces.items():
        scores = {other: face_similarity(face, ref) for other, ref in reference.items()}
        best_other = max(s for other, s in scores.items() if other != cid)
        if scores[cid] < SAME_FACE_MIN or scores[cid] <= best_other:
            bad.append(cid)
    return bad


@pytest.fixture(scope="module")
def photo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("photos")
    for i, ingredient in enumerate(INGREDIENTS):
        photo = row_photo(ingredient_faces(ingredient), seed=100 + i, cloth=CLOTH)
        path = folder / f"{i + 1}-{ingredient}.jpg"
        cv2.imwrite(str(path), photo.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return folder


@pytest.fixture(scope="module")
def enrolled(photo_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deck") / "my-deck"
    assert main(["deck", "enroll", str(photo_dir), "--out", str(out), "--name", "mine"]) == 0
    return out


@pytest.mark.slow
def test_enrolment_recovers_all_56_faces_with_their_labels(enrolled: Path) -> None:
    deck = load_deck(enrolled)
    assert deck.name == "mine" and sorted(deck.faces) == sorted(CARD_IDS)
    assert deck.faces["nori-4"].shape[:2] == (880, 630)  # upright 63 x 88 mm at 10 px/mm
    reference = default_deck().faces
    assert mismatches(deck.faces, reference) == []
    scores = [face_similarity(deck.faces[c], reference[c]) for c in CARD_IDS]
    assert min(scores) >= SAME_FACE_MIN


@pytest.mark.slow
def test_the_check_catches_swapped_labels(enrolled: Path) -> None:
    faces = dict(load_deck(enrolled).faces)
    faces["nori-6"], faces["nori-7"] = faces["nori-7"], faces["nori-6"]  # nearest look-alikes
    faces["ajitama-2"], faces["chashu-2"] = faces["chashu-2"], faces["ajitama-2"]
    assert sorted(mismatches(faces, default_deck().faces)) == sorted(
        ["nori-6", "nori-7", "ajitama-2", "chashu-2"]
    )


@pytest.mark.slow
def test_deck_json_records_sources_and_outline_quality(enrolled: Path, photo_dir: Path) -> None:
    meta = json.loads((enrolled / "deck.json").read_text())
    assert [p["ingredient"] for p in meta["photos"]] == list(INGREDIENTS)
    assert meta["photos"][5]["path"].endswith("6-nori.jpg")
    assert meta["outlines"]["negi-3"]["fill"] > 0.95
    assert meta["outlines"]["negi-3"]["photo"].endswith("5-negi.jpg")
    assert "orientation" in meta


def test_rectified_faces_match_and_a_bad_warp_does_not() -> None:
    faces = ingredient_faces("menma")
    photo = row_photo(faces, seed=7, cloth=CLOTH)
    reading = read_photo(photo.image, "menma")
    assert len(reading.faces) == 8
    for i, (outline, truth) in enumerate(zip(reading.outlines, photo.corners, strict=True)):
        assert np.abs(outline.corners - truth).max() < 4.0  # px, about 1 mm
        assert face_similarity(reading.faces[i], faces[i]) >= SAME_FACE_MIN
    # 3 mm off at two corners: the face is no longer recovered
    off = reading.outlines[2].corners.copy()
    off[0] += (10, 10)
    off[1] += (-10, 10)
    assert face_similarity(rectify(photo.image, off), faces[2]) < SAME_FACE_MIN


def test_cards_are_ordered_left_to_right_even_with_a_tilted_row() -> None:
    faces = ingredient_faces("kamaboko")
    photo = row_photo(faces, seed=3, cloth=(120, 120, 118), tilt=0.04)
    outlines = find_cards(photo.image)
    xs = [o.center[0] for o in outlines]
    assert xs == sorted(xs)
    for o, truth in zip(outlines, photo.corners, strict=True):
        assert np.abs(o.corners - truth).max() < 5.0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: row_photo(ingredient_faces("negi")[:7], seed=1, cloth=CLOTH).image,
            "found 7 cards, expected 8: make sure all 8 cards are fully in view and do not touch",
        ),
        (
            lambda: (
                row_photo(ingredient_faces("negi"), seed=1, cloth=CLOTH, shift_mm=(60, 0)).image
            ),
            "a card at the right edge of the photo is cut off",
        ),
        (
            lambda: np.full((900, 1600, 3), 128, np.uint8),
            "found 0 cards, expected 8",
        ),
        (
            lambda: cv2.GaussianBlur(
                row_photo(ingredient_faces("negi"), seed=1, cloth=CLOTH).image, (0, 0), 6
            ),
            "the photo is blurred",
        ),
        (
            lambda: cv2.resize(
                row_photo(ingredient_faces("negi"), seed=1, cloth=CLOTH).image, (960, 560)
            ),
            "cards are too small in the photo",
        ),
    ],
    ids=["seven-cards", "cut-off", "blank", "blurred", "too-far"],
)
def test_bad_photos_are_rejected_with_what_to_fix(make, message: str) -> None:
    with pytest.raises(EnrolmentError, match="^" + message.replace("(", r"\(")):
        read_photo(make(), "negi")


@pytest.mark.slow
def test_cli_rejects_bad_input_in_one_line(
    photo_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    photos = sorted(photo_dir.iterdir())
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"\xff\xd8 not really a jpeg")
    cases = [
        (photos[:6], "got 6 photos, expected 7"),
        ([*photos[:6], tmp_path / "missing.jpg"], "missing.jpg: no such photo"),
        ([corrupt, *photos[1:]], "not a readable image"),
    ]
    for paths, message in cases:
        code = main(["deck", "enroll", *map(str, paths), "--out", str(tmp_path / "d")])
        err = capsys.readouterr().err
        assert code == 2 and message in err
        assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "d").exists()


def test_enroll_help_carries_the_guide(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["deck", "enroll", "--help"])
    out = capsys.readouterr().out
    assert "photo 1: the 8 Ajitama cards (values 0 to 7, left to right)" in out
    assert "photo 7: the 8 Shiitake cards" in out
    assert "upright" in out
