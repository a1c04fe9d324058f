"""History, recap and BG Stats link of games in a real game log (simulated games followed by the
real follower; the camera's own game is in test_recap.py). What a player would check: each
bowl under the right player with its points, totals equal to `companion tally`, the history's
JSON contract, damaged games listed instead of a crash, one-line errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.recap.bgstats import GAME_NAME, create_play_link, decode_link, play_json, qr_image
from companion.recap.crops import MAX_CROPS_PER_GAME, BowlCropper, CropStore
from companion.recap.history import load_history
from companion.recap.record import DAMAGED, FINISHED, UNFINISHED, GameRecord
from companion.tracking.gamelog import GameLog
from tests.recap_helpers import log_game, served_in

GAME_KEYS = {"id", "started", "ended", "mode", "players", "finished", "scores", "winners"}
PLAYER_KEYS = {"games", "wins", "mean_points", "best_bowl"}


@pytest.fixture(scope="module")
def log_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2p, solo, 4p, 3p finished games (two of them with the same two players), one
    unfinished game."""
    path = tmp_path_factory.mktemp("history") / "games.sqlite"
    with GameLog.open(path) as log:
        log_game(log, "2p", 1, ["Alice", "Bob"])
        log_game(log, "solo", 2, ["Alice"])
        log_game(log, "4p", 3, ["Alice", "Bob", "Chloé", "Dan"])
        log_game(log, "2p", 4, ["Bob", "Alice"])
        log_game(log, "3p", 5, ["Alice", "Bob", "Chloé"])
        log_game(log, "2p", 6, ["Alice", "Bob"], finish=False, steps=25)
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def decode_qr(image: np.ndarray) -> str:
    """OpenCV's QR readers (the classic one, then the ArUco-based one that reads dense codes)."""
    for detector in (cv2.QRCodeDetector(), cv2.QRCodeDetectorAruco()):
        text, _, _ = detector.detectAndDecode(image)
        if text:
            return str(text)
    return ""


# -- history --------------------------------------------------------------------------------
def test_history_json_is_the_contract(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "history", "--log", str(log_path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"games", "players"}
    games = doc["games"]
    assert [g["mode"] for g in games] == ["2p", "solo", "4p", "2p", "3p", "2p"]  # oldest first
    for g in games:
        assert GAME_KEYS <= set(g) <= GAME_KEYS | {"stars", "damaged"}
    assert [g["finished"] for g in games] == [True] * 5 + [False]
    assert games[-1]["scores"] == {} and games[-1]["ended"] is None
    assert games[2]["players"] == ["Alice", "Bob", "Chloé", "Dan"]
    assert set(games[2]["scores"]) == {"A", "B"}
    assert 0 <= games[1]["stars"] <= 5
    for name, stats in doc["players"].items():
        assert set(stats) == PLAYER_KEYS, name
    assert doc["players"]["Alice"]["games"] == 5
    assert doc["players"]["Dan"]["games"] == 1


def test_each_bowl_is_under_the_right_player_with_its_points(log_path: Path) -> None:
    from companion.cards import parse_cards
    from companion.rules.scoring import pile_points
    from companion.rules.simulate import simulate

    history = load_history(log_path)
    for game, (mode, seed, players) in zip(
        history.games[:5],
        [
            ("2p", 1, ["Alice", "Bob"]),
            ("solo", 2, ["Alice"]),
            ("4p", 3, ["Alice", "Bob", "Chloé", "Dan"]),
            ("2p", 4, ["Bob", "Alice"]),
            ("3p", 5, ["Alice", "Bob", "Chloé"]),
        ],
        strict=True,
    ):
        record = simulate(mode, seed, players)
        assert [(b.scorer, b.cards) for b in game.bowls] == served_in(record)
        for b in game.bowls:
            assert b.points == pile_points(parse_cards(b.cards))
        for s in game.standings:
            assert s.points == sum(b.points for b in game.bowls_of(s.name))
            assert s.bowls == len(game.bowls_of(s.name))
        assert game.final == record.final.to_json()


def test_totals_match_companion_tally(
    log_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for game in load_history(log_path).games[:5]:
        served = {s: [list(b.cards) for b in game.bowls_of(s)] for s in game.scorers}
        doc = tmp_path / f"{game.id}.json"
        doc.write_text(json.dumps({"mode": game.mode, "served": served}))
        code, out, _ = cli(capsys, "tally", str(doc), "--json")
        assert code == 0
        tally = json.loads(out)
        assert tally["scores"] == {
            s.name: {"points": s.points, "bowls": s.bowls, "cards": s.cards} for s in game.standings
        }
        assert tally["winners"] == list(game.winners)
        # the timeline ends on the same totals
        assert {n: v[-1] for n, v in game.timeline()} == {s.name: s.points for s in game.standings}


def test_player_stats_across_games(log_path: Path) -> None:
    history = load_history(log_path)
    finished = [g for g in history.games if g.status == FINISHED]
    for p in history.players:
        mine = [
            (g, next(s for s in g.standings if p.name in s.members))
            for g in finished
            if p.name in g.players
        ]
        assert p.games == len(mine)
        assert p.wins == sum(s.winner for _, s in mine)
        assert p.mean_points == round(sum(s.points for _, s in mine) / len(mine), 2)
        assert p.best_bowl == max(b.points for g, s in mine for b in g.bowls_of(s.name))
    solo = history.solo_runs()["Alice"]
    assert len(solo) == 1 and solo[0].best_so_far


def test_text_and_csv(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "history", "--log", str(log_path))
    assert code == 0
    assert "unfinished after" in out and "solo, Alice: best" in out
    code, out, _ = cli(capsys, "history", "--log", str(log_path), "--csv")
    rows = out.splitlines()
    assert rows[0].startswith("game,started,ended,mode,status,scorer")
    assert len(rows) == 1 + (2 + 1 + 2 + 2 + 3) + 1  # one row per scorer, one per unfinished


def test_unfinished_game_is_listed_and_still_resumable(log_path: Path) -> None:
    history = load_history(log_path)
    assert history.games[-1].status == UNFINISHED
    with GameLog.open(log_path) as log:
        last = log.last_unfinished_game()
    assert last is not None and last.id == history.games[-1].id


# -- damaged games --------------------------------------------------------------------------
def damage(path: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("UPDATE games SET players = '[oops' WHERE rowid = 2", "players"),
        ("UPDATE games SET final = '\"oops\"' WHERE rowid = 2", "scores"),
        ('UPDATE games SET final = \'{"scores": {"Zed": {}}}\' WHERE rowid = 2', "scores"),
        ("UPDATE games SET mode = '9p' WHERE rowid = 2", "mode"),
        (
            "UPDATE events SET payload = '{not json' WHERE seq = "
            "(SELECT MIN(seq) FROM events WHERE game_id = (SELECT id FROM games WHERE rowid = 2))",
            "event",
        ),
        (
            'UPDATE events SET payload = \'{"card": "nori-99", "region": "bowl-1"}\' '
            "WHERE seq = (SELECT MIN(seq) FROM events WHERE type = 'card_added' AND game_id = "
            "(SELECT id FROM games WHERE rowid = 2))",
            "nori-99",
        ),
    ],
)
def test_a_damaged_game_is_listed_never_a_crash(
    tmp_path: Path, sql: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "games.sqlite"
    with GameLog.open(path) as log:
        log_game(log, "2p", 1)
        log_game(log, "2p", 2)
        log_game(log, "2p", 3)
    damage(path, sql)
    history = load_history(path)
    assert [g.status for g in history.games] == [FINISHED, DAMAGED, FINISHED]
    assert reason in history.games[1].problem
    code, out, err = cli(capsys, "history", "--log", str(path), "--json")
    assert code == 0, err
    games = json.loads(out)["games"]
    assert games[1]["finished"] is False and reason in games[1]["damaged"]
    code, out, err = cli(capsys, "recap", history.games[1].id, "--log", str(path), "--link")
    assert code == 2 and "damaged" in err and len(err.strip().splitlines()) == 1


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["history", "--log", "{tmp}/none.sqlite"], "no game log at"),
        (["recap", "--log", "{tmp}/none.sqlite", "--link"], "no game log at"),
        (["recap", "nope", "--log", "{log}", "--link"], "no game 'nope'"),
        (["recap", "--log", "{log}"], "--out FILE.png and/or --link"),
        (["recap", "--log", "{log}", "--out", "{tmp}/missing/recap.png"], "cannot write"),
        (["recap", "--log", "{log}", "--out", "{tmp}"], "is a folder"),
        (["history", "--log", "{tmp}/garbage.sqlite"], "unreadable"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str],
    says: str,
    log_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "garbage.sqlite").write_bytes(b"not a database at all" * 100)
    argv = [a.format(tmp=tmp_path, log=log_path) for a in argv]
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert says in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unfinished_game_has_no_recap(log_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = load_history(log_path).games[-1]
    code, _, err = cli(capsys, "recap", game.id, "--log", str(log_path), "--link")
    assert code == 2 and "unfinished" in err


# -- BG Stats --------------------------------------------------------------------------------
def test_link_carries_bg_stats_documented_play(log_path: Path) -> None:
    game = load_history(log_path).games[0]
    play = decode_link(create_play_link(game))
    assert create_play_link(game).startswith("https://app.bgstatsapp.com/createPlay.html?data=")
    assert play == play_json(game)
    assert play["game"]["name"] == GAME_NAME == "Ramen! Ramen!"
    assert play["game"]["highestWins"] is True and play["game"]["noPoints"] is False
    assert play["sourcePlayId"] == game.id
    assert play["playDate"] == game.date_text() + play["playDate"][16:]  # YYYY-mm-dd HH:MM:SS
    assert len(play["playDate"]) == 19
    assert isinstance(play["durationMin"], int) and play["durationMin"] >= 1
    scores = {s.name: s for s in game.standings}
    assert [p["name"] for p in play["players"]] == ["Alice", "Bob"]
    for p in play["players"]:
        assert p["score"] == scores[p["name"]].points
        assert p["winner"] == (p["name"] in game.winners)
    assert [p["startPlayer"] for p in play["players"]] == [True, False]


def test_four_players_are_logged_with_their_team(log_path: Path) -> None:
    game = load_history(log_path).games[2]
    play = play_json(game)
    teams = {s.name: s for s in game.standings}
    for p, team in zip(play["players"], ["A", "B", "A", "B"], strict=True):
        assert p["role"] == f"Team {team}"
        assert p["score"] == teams[team].points
        assert p["winner"] == teams[team].winner


@pytest.mark.parametrize("index", [0, 1, 2, 4])
def test_qr_code_decodes_to_the_link(log_path: Path, index: int) -> None:
    game = load_history(log_path).games[index]
    link = create_play_link(game)
    assert decode_qr(qr_image(link, module_px=4)) == link


def test_recap_picture_and_link(
    log_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "recap.png"
    code, text, err = cli(capsys, "recap", "--log", str(log_path), "--out", str(out), "--link")
    assert code == 0, err
    last = load_history(log_path).last_finished()
    assert text.splitlines()[-1] == create_play_link(last)
    picture = cv2.imread(str(out))
    assert picture.shape == (900, 1600, 3)
    assert decode_qr(picture[540:, :600]) == create_play_link(last)


# -- crops -----------------------------------------------------------------------------------
class FakePipeline:
    def __init__(self) -> None:
        from companion.vision.calibration import TableCalibration

        self.detections = 0
        self.calibration = TableCalibration(np.diag([1.5, 1.5, 1.0]), (1280, 720), (), 0.0)
        self.last_reading: Any = None


class Reading:
    def __init__(self, region: str, n: int) -> None:
        from types import SimpleNamespace

        self.cards = tuple(
            SimpleNamespace(region=region, center_mm=(0.0, 130.0 + 16 * i)) for i in range(n)
        )


def test_cropper_keeps_the_fullest_view_and_writes_it_when_served(tmp_path: Path) -> None:
    from types import SimpleNamespace

    store = CropStore(tmp_path / "crops")
    cropper = BowlCropper(store, lambda: "g1")
    pipe = FakePipeline()
    image = np.full((720, 1280, 3), 90, np.uint8)
    for n in (1, 3, 2):  # the 2-card view (a hand took one) does not replace the 3-card one
        pipe.detections += 1
        pipe.last_reading = Reading("bowl-2", n)
        image[:] = 40 * n
        cropper(pipe, SimpleNamespace(image=image.copy()), [])
    cropper(
        pipe, SimpleNamespace(image=image), [{"t": 12.5, "type": "bowl_served", "region": "bowl-2"}]
    )
    crops = store.crops("g1")
    assert [(c.region, c.t) for c in crops] == [("bowl-2", 12.5)]
    kept = cv2.imread(str(crops[0].path))
    assert abs(float(kept.mean()) - 120) < 3 and max(kept.shape) <= 360
    assert store.find("g1", "bowl-2", 12.5) == crops[0].path


def test_crop_store_is_bounded(tmp_path: Path) -> None:
    tile = np.random.default_rng(0).integers(0, 255, (300, 120, 3), np.uint8)
    store = CropStore(tmp_path / "crops", max_bytes=0)
    for i in range(MAX_CROPS_PER_GAME + 5):
        store.save("20260101-000000-aaaaaa", "bowl-1", float(i), tile)
    assert len(store.crops("20260101-000000-aaaaaa")) == MAX_CROPS_PER_GAME
    one_game = store.size()
    store.max_bytes = one_game + 1
    store.save("20260102-000000-bbbbbb", "bowl-1", 1.0, tile)  # the oldest game goes
    assert store.crops("20260101-000000-aaaaaa") == ()
    assert len(store.crops("20260102-000000-bbbbbb")) == 1
    ro = CropStore(tmp_path / "file-not-folder")
    (tmp_path / "file-not-folder").write_text("x")
    assert ro.save("g", "bowl-1", 1.0, tile) is None  # skipped with a warning, no exception


# -- the explained scoreboard ----------------------------------------------------------------
Row = tuple[str, int, int, int, bool]


def made_record(mode: str, rows: list[Row], stars: float | None = None) -> GameRecord:
    from companion.recap.record import Standing

    standings = tuple(Standing(n, p, b, c, w, (n,)) for n, p, b, c, w in rows)
    return GameRecord(
        "g",
        mode,
        tuple(n for n, *_ in rows),
        0.0,
        60.0,
        FINISHED,
        scorers=tuple(n for n, *_ in rows),
        standings=standings,
        winners=tuple(n for n, *_, w in rows if w),
        stars=stars,
    )


@pytest.mark.parametrize(
    ("rows", "lang", "line"),
    [
        ([("Alice", 20, 7, 30, True), ("Bob", 19, 5, 20, False)], "en", ""),
        (
            [("Alice", 20, 7, 30, True), ("Bob", 20, 5, 20, False)],
            "en",
            "Alice and Bob both 20 points: Alice served 7 bowls to 5",
        ),
        (
            [("Alice", 20, 5, 18, True), ("Bob", 20, 5, 22, False)],
            "fr",
            "Alice et Bob ont 20 points et 5 bols : Alice a utilisé 18 cartes contre 22",
        ),
        (
            [("Alice", 20, 5, 18, True), ("Bob", 20, 5, 18, True)],
            "en",
            "Tied on points, bowls and cards: a shared victory",
        ),
    ],
)
def test_the_tie_break_that_decided_is_said(rows: list[Row], lang: str, line: str) -> None:
    from companion.ui.recap_models import explained_scores

    assert explained_scores(made_record("2p", rows), lang).tie == line


@pytest.mark.parametrize(
    ("points", "stars", "line"),
    [
        (56, 3.5, "Next star at 58 points (2 more)"),
        (37, 0.0, "Next star at 38 points (1 more)"),
        (70, 5.0, "The critics' best: five stars"),
    ],
)
def test_solo_says_what_the_next_star_needed(points: int, stars: float, line: str) -> None:
    from companion.ui.recap_models import explained_scores

    model = explained_scores(made_record("solo", [("Me", points, 10, 40, True)], stars), "en")
    assert model.next_star == line
    assert model.stars.count("★") == int(stars)
