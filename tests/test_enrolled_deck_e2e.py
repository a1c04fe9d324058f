"""Golden end-to-end with a deck of a design no model was trained on (the held-out `ornate`
family: full-bleed colours, two look-alike browns, script numerals, name ribbons).

The owner's path, as the README tells it: photograph the 7 rows, `companion deck enroll`, then
`companion run --deck` on the camera. The photos are synthesised from the design's faces by
deck/photos.py (a renderer independent of the table's); the game is a recording of a simulated
2-player game (seed 5, Aiko v Ben) drawn with the same faces by the table renderer at the Pi
camera's 2304 x 1296, 4 frames/s: tests/data/ornate-game (re-render with
`companion simulate --mode 2p --seed 5 --players Aiko,Ben --json > record.json`, the deck saved by
`companion.deck.designs.design_deck("ornate", 1)`, then `companion render recording record.json
OUT --fps 4 --width 2304 --deck DECK`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from companion.cards import INGREDIENTS, Card
from companion.deck.designs import design_deck
from companion.deck.photos import row_photo

GAME = Path(__file__).parent / "data" / "ornate-game"

pytestmark = pytest.mark.slow


def served_in_record(record: dict) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (s["bowl"], s["to"], tuple(s["cards"])) for turn in record["turns"] for s in turn["served"]
    ]


@pytest.fixture(scope="module")
def ornate_game(tmp_path_factory) -> tuple[subprocess.CompletedProcess, list[dict], dict, str]:
    tmp = tmp_path_factory.mktemp("ornate")
    deck = design_deck("ornate", 1)
    photos = []
    for i, ing in enumerate(INGREDIENTS):
        faces = [deck.face(Card(ing, v).id) for v in range(8)]
        photo = row_photo(faces, seed=500 + i, cloth=(70, 110, 60))
        path = tmp / f"{i + 1}-{ing}.jpg"
        cv2.imwrite(str(path), photo.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        photos.append(str(path))
    enrol = subprocess.run(
        [sys.executable, "-m", "companion", "deck", "enroll", *photos, "--out", str(tmp / "deck")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert enrol.returncode == 0, enrol.stderr[-1000:]
    events = tmp / "events.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "companion",
            "run",
            "--source",
            str(GAME / "recording.mp4"),
            "--deck",
            str(tmp / "deck"),
            "--mode",
            "2p",
            "--players",
            "Aiko,Ben",
            "--headless",
            "--events",
            str(events),
            "--log",
            str(tmp / "games.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    record = json.loads((GAME / "record.json").read_text())
    lines = (
        [json.loads(line) for line in events.read_text().splitlines()] if events.exists() else []
    )
    return proc, lines, record, enrol.stdout


def test_the_enrolled_game_plays_to_the_right_winner(ornate_game):
    """The whole game is followed to its end and the winner is the simulator's. Measured on
    this recording: 12 of the 12 served bowls followed card for card during play (11 before
    the enrolled deck's photos were balanced through their cloth)."""
    proc, events, record, _ = ornate_game
    assert proc.returncode == 0, proc.stderr[-2000:]
    over = [e for e in events if e["type"] == "game_over"]
    assert len(over) == 1
    assert over[0]["winners"] == record["final"]["winners"]
    served = [
        (e["region"], e["player"], tuple(e["cards"])) for e in events if e["type"] == "bowl_served"
    ]
    right = [s for s in served if s in served_in_record(record)]
    assert len(right) >= 11, served
    assert len(served) - len(right) <= 1, served


def test_the_enrolled_game_scores_exactly_like_the_simulator(ornate_game):
    """Measured 2026-11-26: final scores exact (Aiko 21/8/31, Ben 19/4/18) and all 12 bowls
    right card for card. Until then the end scan missed a card (shiitake-4) and read one the
    game saw discarded (ajitama-1); a scanned pile now counts its served cards too (issue 10)."""
    _, events, record, _ = ornate_game
    over = [e for e in events if e["type"] == "game_over"]
    assert over and over[0]["scores"] == record["final"]["scores"]
    served = [
        (e["region"], e["player"], tuple(e["cards"])) for e in events if e["type"] == "bowl_served"
    ]
    # the order of two bowls served in one settled change (hands moving from one to the other,
    # turn 24 of this game) is not seen; every bowl, its player and its cards in order are
    assert sorted(served) == sorted(served_in_record(record))
