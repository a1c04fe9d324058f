"""What each screen shows for given GameViews, without a window (no Kivy import)."""

from __future__ import annotations

import pytest

from companion.rules.scoring import critics_review
from companion.ui import viewmodels as vm
from companion.ui.controller import Controller
from companion.ui.i18n import STRINGS, stars_text, tr
from tests.ui_scripted import ScriptedController, bowl, make_view

SERVED_2P = (
    ("Alice", "bowl-1", ("nori-1", "nori-4", "chashu-3", "shiitake-0", "negi-6")),
    ("Bob", "bowl-2", ("menma-7", "menma-6", "ajitama-2")),
)


def test_scripted_controller_satisfies_the_protocol() -> None:
    assert isinstance(ScriptedController([make_view()]), Controller)


def test_every_key_exists_in_both_languages() -> None:
    assert set(STRINGS["en"]) == set(STRINGS["fr"])


@pytest.mark.parametrize(
    ("lang", "sum_text", "types_text", "title"),
    [("en", "9/14", "4/7", "Bowl 1"), ("fr", "9/14", "4/7", "Bol 1")],
)
def test_bowl_panel_shows_sum_towards_14_and_types_towards_7(
    lang: str, sum_text: str, types_text: str, title: str
) -> None:
    view = make_view(bowls=(bowl("bowl-1", "nori-1", "chashu-3", "negi-5", "menma-0"),))
    panel = vm.table_model(view, lang).bowls[0]
    assert (panel.title, panel.sum_text, panel.types_text) == (title, sum_text, types_text)
    assert panel.sum_fraction == pytest.approx(9 / 14)
    assert [c.card for c in panel.chips] == ["nori-1", "chashu-3", "negi-5", "menma-0"]
    assert panel.chips[0].label == "1 Nori"
    assert not panel.ready


def test_bowl_panel_names_the_owner_in_3p_and_team_in_4p() -> None:
    v3 = make_view("3p", ("Ann", "Ben", "Cy"), bowls=(bowl("bowl-2", "nori-1", owner="Ben"),))
    assert vm.table_model(v3, "en").bowls[0].title == "Bowl 2 · Ben"
    v4 = make_view("4p", ("a", "b", "c", "d"), bowls=(bowl("bowl-3", "nori-1", owner="B"),))
    assert vm.table_model(v4, "fr").bowls[0].title == "Bol 3 · Équipe B"


def test_full_bowl_is_marked_ready_with_a_full_meter() -> None:
    view = make_view(bowls=(bowl("bowl-2", "nori-7", "negi-7"),))
    model = vm.table_model(view, "en")
    assert model.bowls[0].ready and model.bowls[0].sum_fraction == 1.0
    assert model.banner_text == "Bowl 2 — ready to serve!"
    assert vm.table_model(view, "fr").banner_text == "Bol 2 — prêt à servir !"


@pytest.mark.parametrize(
    ("mode", "players"),
    [("2p", ("Alice", "Bob")), ("3p", ("Alice", "Bob", "Cy")), ("4p", ("Alice", "Bob", "C", "D"))],
)
def test_served_bowls_show_counts_only_in_multiplayer(mode: str, players: tuple[str, ...]) -> None:
    scorer = "A" if mode == "4p" else "Alice"
    view = make_view(mode, players, served=[(scorer, "bowl-1", ("nori-1", "chashu-3"))])
    model = vm.table_model(view, "en")
    assert not model.can_peek
    assert all(row.peek == () for row in model.served)
    texts = [row.text for row in model.served]
    assert (texts[0] == "Team A: 1") if mode == "4p" else (texts[0] == "Alice: 1")
    # Nothing about the pile's contents or points leaks into any visible string.
    everything = repr(model)
    assert "Nori" not in everything and "nori-1" not in everything and "pts" not in everything


def test_solo_may_peek_at_served_bowls() -> None:
    view = make_view("solo", ("Me",), served=[("Me", "bowl-1", ("nori-1", "chashu-3"))])
    model = vm.table_model(view, "en")
    assert model.can_peek
    assert [c.card for c in model.served[0].peek[0]] == ["nori-1", "chashu-3"]


def test_turn_line() -> None:
    assert vm.table_model(make_view(turn=5, current_player="Bob"), "en").turn_text == (
        "Turn 5 · Bob"
    )
    assert vm.table_model(make_view(turn=0), "fr").turn_text == "En attente du premier coup"


@pytest.mark.parametrize(
    ("state", "en", "fr"),
    [
        ("ok", "Camera ready", "Caméra prête"),
        ("markers not found", "Markers not found", "Repères introuvables"),
        ("too dark", "Too dark", "Trop sombre"),
        ("glare", "Glare on the table", "Reflets sur la table"),
        (
            "out of focus",
            "Camera out of focus: focus it on the table",
            "Caméra floue : faites la mise au point sur la table",
        ),
    ],
)
def test_camera_messages(state: str, en: str, fr: str) -> None:
    assert (vm.camera_text(state, "en"), vm.camera_text(state, "fr")) == (en, fr)


# -- announcements -------------------------------------------------------------------------
def test_ready_bowl_is_announced_once_not_every_poll() -> None:
    ann = vm.Announcer()
    quiet = make_view(bowls=(bowl("bowl-2", "nori-7"),))
    ready = make_view(bowls=(bowl("bowl-2", "nori-7", "negi-7"),))
    assert ann.update(quiet, "en") == []
    first = ann.update(ready, "en")
    assert [a.region for a in first] == ["bowl-2"]
    assert first[0].speech == "Bowl 2 is ready to serve"
    for _ in range(10):
        assert ann.update(ready, "en") == []


def test_a_new_ready_bowl_in_the_same_place_is_announced_again() -> None:
    ann = vm.Announcer()
    ann.update(make_view(bowls=(bowl("bowl-2", "nori-7", "negi-7"),)), "en")
    ann.update(make_view(), "en")  # served: the place is empty
    again = ann.update(make_view(bowls=(bowl("bowl-2", "menma-7", "chashu-7"),)), "fr")
    assert [a.speech for a in again] == ["Le bol 2 est prêt à servir"]


def test_two_bowls_ready_at_once_are_both_announced() -> None:
    ann = vm.Announcer()
    view = make_view(
        bowls=(bowl("bowl-1", "nori-7", "negi-7"), bowl("bowl-3", "menma-7", "chashu-7"))
    )
    assert [a.region for a in ann.update(view, "en")] == ["bowl-1", "bowl-3"]
    assert vm.banner_text(view.ready_bowls, "en") == "Bowls 1 & 3 — ready to serve!"


def test_warnings_toast_once() -> None:
    ann = vm.Announcer()
    assert ann.new_warnings(make_view(warnings=("two cards in one bowl",))) == [
        "two cards in one bowl"
    ]
    assert ann.new_warnings(make_view(warnings=("two cards in one bowl",))) == []
    assert ann.new_warnings(make_view(warnings=("two cards in one bowl", "four bowls"))) == [
        "four bowls"
    ]


# -- corrections ---------------------------------------------------------------------------
def test_card_fix_takes_two_taps_and_calls_correct_card() -> None:
    ctl = ScriptedController([make_view()])
    fix = vm.CardFix("nori-1")
    assert fix.prompt("en") == "Which ingredient?"
    fix.pick_ingredient("negi")
    assert fix.prompt("fr") == "Negi : quelle valeur ?"
    assert fix.pick_value(7, ctl) == "negi-7"
    assert ctl.calls == [("correct_card", ("nori-1", "negi-7"))]


def test_card_fix_to_the_same_card_sends_nothing() -> None:
    ctl = ScriptedController([make_view()])
    fix = vm.CardFix("nori-1")
    fix.pick_ingredient("nori")
    assert fix.pick_value(1, ctl) is None
    assert ctl.calls == []


def test_value_before_ingredient_is_refused() -> None:
    with pytest.raises(ValueError, match="ingredient first"):
        vm.CardFix("nori-1").pick_value(3, ScriptedController([make_view()]))


def test_served_list_names_place_and_owner_never_contents() -> None:
    view = make_view(served=SERVED_2P)
    items = vm.served_items(view, "en")
    assert [i.text for i in items] == ["#1 · Bowl 1 · Alice", "#2 · Bowl 2 · Bob"]
    ctl = ScriptedController([view])
    assert vm.reassign(ctl, items[0], "Bob")
    assert not vm.reassign(ctl, items[1], "Bob")
    assert ctl.calls == [("reassign_served", (0, "Bob"))]


# -- end game ------------------------------------------------------------------------------
def test_end_game_reads_a_matching_pile_and_confirms_it() -> None:
    view = make_view(phase="scoring", served=SERVED_2P, scan=SERVED_2P[0][2])
    ctl = ScriptedController([view])
    flow = vm.EndGame(view)
    assert flow.guide("en") == ("Alice: spread your served bowls one at a time in the scan area")
    assert flow.progress("en") == "0 of 1 read"
    read = flow.read(view.scan, "en")
    assert read.line == "4 types · 3 pts"
    assert (
        flow.read(("nori-7", "negi-7"), "fr").line == "2 types · 1 pt"
    )  # the rulebook's first example
    assert read.check.status == "match"
    flow.confirm(ctl, view.scan)
    assert ctl.called("resolve_scan") == [("Alice", SERVED_2P[0][2])]
    assert flow.progress("fr") == "1 sur 1 lus"
    assert flow.already_confirmed(view.scan)


def test_end_game_flags_a_difference_and_can_use_what_was_served() -> None:
    scan = ("menma-7", "menma-5", "ajitama-2")  # menma-6 misread as menma-5
    view = make_view(phase="scoring", served=SERVED_2P, scan=scan)
    ctl = ScriptedController([view])
    flow = vm.EndGame(view)
    flow.next_scorer()  # Bob
    read = flow.read(scan, "fr")
    assert read.check.status == "differs"
    assert read.check.missing == ("menma-6",) and read.check.extra == ("menma-5",)
    assert read.check_lines == (
        "Différent du bol servi",
        "Manque : 6 Menma",
        "En trop : 5 Menma",
    )
    flow.use_seen(ctl, scan)
    assert ctl.called("resolve_scan") == [("Bob", SERVED_2P[1][2])]


def test_more_piles_than_served_are_flagged() -> None:
    view = make_view(phase="scoring", served=SERVED_2P)
    flow = vm.EndGame(view)
    ctl = ScriptedController([view])
    flow.confirm(ctl, SERVED_2P[0][2])
    read = flow.read(("negi-0", "negi-1"), "en")
    assert read.check.status == "differs" and read.check.seen == ()
    flow.confirm(ctl, ("negi-0", "negi-1"))
    assert flow.count_lines("en") == ("Alice: 2 read, 1 served", "Bob: 0 read, 1 served")


def test_empty_scan_says_nothing_read() -> None:
    flow = vm.EndGame(make_view(phase="scoring"))
    assert flow.read((), "fr").line == "Rien de lu pour l’instant"


def test_local_tally_and_scoreboard_with_winner() -> None:
    view = make_view(phase="scoring", served=SERVED_2P)
    flow = vm.EndGame(view)
    ctl = ScriptedController([view])
    flow.confirm(ctl, SERVED_2P[0][2])
    flow.next_scorer()
    flow.confirm(ctl, SERVED_2P[1][2])
    flow.next_scorer()
    assert flow.done
    board = vm.scoreboard(flow.local_tally(), "2p", "en")
    assert [(r.name, r.points, r.bowls, r.cards, r.winner) for r in board.rows] == [
        ("Alice", 3, 1, 5, True),
        ("Bob", 1, 1, 3, False),
    ]
    assert board.result == "Alice wins!" and board.tie_text == "" and board.stars == ""


def test_scoreboard_tie_breaks_and_shared_victory() -> None:
    by_bowls = {
        "scores": {
            "Ann": {"points": 5, "bowls": 2, "cards": 9},
            "Ben": {"points": 5, "bowls": 1, "cards": 4},
        },
        "winners": ["Ann"],
    }
    board = vm.scoreboard(by_bowls, "2p", "en")
    assert board.result == "Ann wins!"
    assert board.tie_text == "Tie on points: most bowls served wins"
    shared = {
        "scores": {
            "A": {"points": 5, "bowls": 2, "cards": 9},
            "B": {"points": 5, "bowls": 2, "cards": 9},
        },
        "winners": ["A", "B"],
    }
    board = vm.scoreboard(shared, "4p", "fr")
    assert board.result == "Victoire partagée : Équipe A, Équipe B"
    assert board.tie_text == "Égalité : le moins de cartes gagne"


@pytest.mark.parametrize(
    ("points", "stars", "review_start"),
    [(37, "☆☆☆☆☆", "Was that meant"), (50, "★★½☆☆", "You've got"), (62, "★★★★★", "A world")],
)
def test_solo_scoreboard_shows_stars_and_review(points: int, stars: str, review_start: str) -> None:
    final = {"scores": {"Me": {"points": points, "bowls": 9, "cards": 40}}, "winners": ["Me"]}
    board = vm.scoreboard(final, "solo", "en")
    assert board.stars == stars
    assert board.review.startswith(review_start)
    assert board.result == f"{points} pts"
    assert vm.scoreboard(final, "solo", "fr").review == critics_review(points, "fr")


def test_stars_text_halves() -> None:
    assert stars_text(3.5) == "★★★½☆" and stars_text(0) == "☆☆☆☆☆" and stars_text(5) == "★★★★★"


# -- new game ------------------------------------------------------------------------------
def test_player_names_fill_blanks_and_repeats_with_defaults() -> None:
    assert vm.player_names("3p", ["Ann", "", "Ann"], "en") == ("Ann", "Player 2", "Player 3")
    assert vm.player_names("2p", [], "fr") == ("Joueur 1", "Joueur 2")
    assert vm.player_names("solo", ["  Me "], "en") == ("Me",)


def test_translation_falls_back_to_english() -> None:
    assert tr("start", "de") == "Start"
    assert tr("no-such-key", "fr") == "no-such-key"
