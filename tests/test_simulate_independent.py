"""An independent referee for `simulate` records, written straight from the rulebook.

It reads only the record's JSON and never imports the engine's state, mode or scoring code, so
a misreading in the engine does not hide itself here. Its own reading of the rules:
setup (4 cards per hand, 4 in the Fridge, solo discards 4), then per turn: play min(2, hand)
cards into two different bowls among bowl-1..3; then every bowl with sum >= 14 or 7 types is
served (2p/solo: to the player; 3p: bowl-N to player N; 4p: bowl-1 to the player's team,
bowl-2 to A, bowl-3 to B); take a Fridge card; refill from the deck; draw, or with an empty
deck take another Fridge card (FAQ). The game ends when deck, Fridge and hands are empty.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from companion.rules import record_to_json, simulate

KINDS = ("ajitama", "chashu", "kamaboko", "menma", "negi", "nori", "shiitake")
EVERY_CARD = {f"{k}-{v}" for k in KINDS for v in range(8)}
POINTS = {1: 0, 2: 1, 3: 2, 4: 3, 5: 5, 6: 7, 7: 10}
SEATS = {"solo": 1, "2p": 2, "3p": 3, "4p": 4}
# French critics' table: (lowest, highest, stars)
CRITICS = [(0, 37, 0), (38, 43, 1), (44, 47, 2), (48, 52, 2.5), (53, 55, 3), (56, 57, 3.5)]
CRITICS += [(58, 59, 4), (60, 61, 4.5), (62, 10_000, 5)]


class Foul(AssertionError):
    """The record breaks the rules."""


def kind(card: str) -> str:
    return card.rsplit("-", 1)[0]


def value(card: str) -> int:
    return int(card.rsplit("-", 1)[1])


def ready(bowl: list[str]) -> bool:
    return sum(map(value, bowl)) >= 14 or len({kind(c) for c in bowl}) == 7


def require(ok: bool, why: str) -> None:
    if not ok:
        raise Foul(why)


def referee(rec: dict[str, Any]) -> dict[str, Any]:
    """Check a record move by move; return the tally JSON the rulebook gives."""
    mode, players, setup = rec["mode"], rec["players"], rec["setup"]
    n = SEATS[mode]
    require(len(players) == n, "player count")
    deck, fridge = list(setup["deck"]), list(setup["fridge"])
    hands = {p: list(setup["hands"][p]) for p in players}
    everything = deck + fridge + setup["discarded"] + [c for h in hands.values() for c in h]
    require(sorted(everything) == sorted(EVERY_CARD), "setup is not the 56 cards once each")
    require(len(setup["discarded"]) == (4 if mode == "solo" else 0), "discard")
    require(all(len(h) == 4 for h in hands.values()) and len(fridge) == 4, "deal")
    bowls: dict[str, list[str]] = {"bowl-1": [], "bowl-2": [], "bowl-3": []}
    scorers = ["A", "B"] if mode == "4p" else players
    piles: dict[str, list[list[str]]] = {s: [] for s in scorers}

    def owner(bowl: str, seat: int) -> str:
        if mode == "3p":
            return players[int(bowl[-1]) - 1]
        if mode == "4p":
            return {"bowl-1": "AB"[seat % 2], "bowl-2": "A", "bowl-3": "B"}[bowl]
        return players[seat]

    def everything_played() -> bool:
        return not deck and not fridge and not any(hands.values())

    seat = 0
    for t in rec["turns"]:
        require(not everything_played(), "a turn after the game ended")
        for _ in range(n):  # a player with nothing in hand and nothing to take has no turn
            if hands[players[seat]] or fridge:
                break
            seat = (seat + 1) % n
        me = players[seat]
        require(t["player"] == me, f"turn order: {t['player']} instead of {me}")
        hand = hands[me]
        plays = t["plays"]
        require(len(plays) == min(2, len(hand)), f"{me} played {len(plays)} of {len(hand)}")
        require(len({p["bowl"] for p in plays}) == len(plays), "two cards into one bowl")
        for p in plays:
            require(p["card"] in hand, f"{p['card']} not in {me}'s hand")
            require(p["bowl"] in bowls, f"no such bowl {p['bowl']}")
            hand.remove(p["card"])
            bowls[p["bowl"]].append(p["card"])
        expected = []
        for b, cards in bowls.items():
            if ready(cards):
                expected.append({"bowl": b, "to": owner(b, seat), "cards": list(cards)})
                piles[owner(b, seat)].append(list(cards))
                cards.clear()
        require(t["served"] == expected, f"served {t['served']} but the rules serve {expected}")
        takes = list(t["took"])
        if fridge:
            require(bool(takes) and takes[0] in fridge, "step 3: take a Fridge card")
            fridge.remove(takes[0])
            hand.append(takes.pop(0))
        refill = [deck.pop(0)] if deck else []
        fridge += refill
        require(t["refilled"] == refill, f"refilled {t['refilled']} instead of {refill}")
        drew = [deck.pop(0)] if deck else []
        require(t["drew"] == drew, f"drew {t['drew']} instead of {drew}")
        hand += drew
        if not drew and fridge:
            require(bool(takes) and takes[0] in fridge, "FAQ: empty deck, take from the Fridge")
            fridge.remove(takes[0])
            hand.append(takes.pop(0))
        require(not takes, f"took too many cards: {t['took']}")
        require(not any(ready(c) for c in bowls.values()), "a ready bowl left unserved")
        seat = (seat + 1) % n
    require(everything_played(), "the record stops before all cards are played")
    scores = {
        s: {
            "points": sum(POINTS[len({kind(c) for c in p})] for p in ps),
            "bowls": len(ps),
            "cards": sum(len(p) for p in ps),
        }
        for s, ps in piles.items()
    }
    key = {s: (v["points"], v["bowls"], -v["cards"]) for s, v in scores.items()}
    final: dict[str, Any] = {
        "scores": scores,
        "winners": [s for s in scorers if key[s] == max(key.values())],
    }
    if mode == "solo":
        pts = scores[players[0]]["points"]
        final["stars"] = next(stars for lo, hi, stars in CRITICS if lo <= pts <= hi)
    return final


@pytest.mark.parametrize("mode", ["solo", "2p", "3p", "4p"])
@pytest.mark.parametrize("bot", ["greedy", "random"])
@pytest.mark.parametrize("seed", range(6))
def test_simulated_games_are_legal_with_identical_tallies(mode: str, bot: str, seed: int) -> None:
    rec = record_to_json(simulate(mode, seed, bot=bot))
    assert rec["mode"] == mode and rec["seed"] == seed
    assert rec["final"] == referee(rec)


def test_named_players_and_teams_in_records() -> None:
    rec = record_to_json(simulate("4p", 3, players=["Ann", "Bea", "Cid", "Dan"]))
    assert rec["players"] == ["Ann", "Bea", "Cid", "Dan"]
    assert list(rec["setup"]["hands"]) == ["Ann", "Bea", "Cid", "Dan"]
    assert set(rec["final"]["scores"]) == {"A", "B"}
    assert {s["to"] for t in rec["turns"] for s in t["served"]} <= {"A", "B"}
    assert rec["final"] == referee(rec)


def _break_bowl(rec: dict) -> None:
    plays = rec["turns"][0]["plays"]
    plays[1]["bowl"] = plays[0]["bowl"]


def _break_owner(rec: dict) -> None:
    turn = next(t for t in rec["turns"] if t["served"])
    turn["served"][0]["to"] = "somebody"


def _break_draw(rec: dict) -> None:
    rec["turns"][0]["drew"] = []


def _break_end(rec: dict) -> None:
    rec["turns"].pop()


@pytest.mark.parametrize("corrupt", [_break_bowl, _break_owner, _break_draw, _break_end])
def test_the_referee_catches_broken_records(corrupt) -> None:
    rec = record_to_json(simulate("3p", 11))
    bad = copy.deepcopy(rec)
    corrupt(bad)
    with pytest.raises(Foul):
        referee(bad)


def test_engine_replay_rejects_the_same_broken_records() -> None:
    from companion.rules import replay

    rec = record_to_json(simulate("2p", 5))
    assert replay(rec).is_over
    for corrupt in (_break_bowl, _break_owner, _break_draw, _break_end):
        bad = copy.deepcopy(rec)
        corrupt(bad)
        with pytest.raises(ValueError):
            replay(bad)
    bad = copy.deepcopy(rec)
    bad["final"]["winners"] = ["nobody"]
    with pytest.raises(ValueError, match="final tally"):
        replay(bad)
