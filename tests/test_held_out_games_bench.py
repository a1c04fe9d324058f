"""Smoke test of benchmarks/held_out_games.py: how a followed game is held against its truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.held_out_games import SETUPS, match_served, parse_args


def _serve(*cards: str, player: str = "Alice") -> dict:
    return {"type": "bowl_served", "region": "bowl-1", "cards": list(cards), "player": player}


def test_a_serve_is_right_only_card_for_card_to_its_player_and_once() -> None:
    truth = [_serve("nori-1", "negi-2"), _serve("menma-3"), {"type": "card_added"}]
    seen = [
        _serve("negi-2", "nori-1"),  # the same cards in another order: right
        _serve("negi-2", "nori-1"),  # served twice: the second is false
        _serve("menma-3", "ajitama-0"),  # a card too many: false
    ]
    assert match_served(seen, truth) == (1, 2, 2)
    assert match_served([_serve("menma-3", player="Bob")], truth) == (0, 2, 1)  # wrong player
    assert match_served([], truth) == (0, 2, 0)


def test_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse_args(["--families", "foil", "--setups", "bump,solo", "--fps", "15"])
    assert args.setups.split(",") == ["bump", "solo"] and args.fps == 15.0
    assert set(SETUPS) == {"warm", "sloppy", "bump", "solo"}
    with pytest.raises(SystemExit):
        parse_args(["--setups", "windy"])
    assert "unknown set-up 'windy'" in capsys.readouterr().err
    assert parse_args(["--tune", "450", "--tune-scenes", "24"]).tune == 450
    with pytest.raises(SystemExit):
        parse_args(["--tune", "-1"])
    err = capsys.readouterr().err
    assert "argument --tune: must be a whole number from 0 to 20000, got '-1'" in err


def test_enrolled_decks_are_read_as_they_are_never_tuned_again(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert parse_args(["--decks", str(tmp_path)]).decks == tmp_path
    with pytest.raises(SystemExit):
        parse_args(["--decks", str(tmp_path), "--tune", "450"])
    assert "--decks reads the folders as they are" in capsys.readouterr().err
