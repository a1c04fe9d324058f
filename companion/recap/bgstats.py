"""Log a finished game in BG Stats (the app board gamers keep their plays in) with one scan.

BG Stats documents a "push plays from other apps" link (bgstatsapp.com, support page "Push
plays to BG Stats from other apps or websites"):
`https://app.bgstatsapp.com/createPlay.html?data=<data>` (or `bgstats://...`), where `<data>` is
the URL-encoded JSON of one play:

    {"sourceName", "sourcePlayId", "playDate": "YYYY-MM-DD HH:MM:SS", "durationMin",
     "game": {"name", "highestWins", "noPoints", "sourceGameId", "bggId"?},
     "players": [{"name", "score", "winner", "rank", "startPlayer", "sourcePlayerId",
                  "role"?}], "comments"?, "board"?, "location"?}

Opening the link on a phone with BG Stats shows its import dialog with everything filled in.
We send no BGG id (BG Stats matches the game by name, and remembers the match) and no
comment: every character makes the QR code denser, harder to read off a screen. In 4p each
player is listed with their team's score and result, the team as their role.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np

from companion.errors import BadInputError
from companion.recap.record import GameRecord

CREATE_PLAY_URL: Final = "https://app.bgstatsapp.com/createPlay.html"
GAME_NAME: Final = "Ramen! Ramen!"
SOURCE_NAME: Final = "Ramen! Ramen! Table Companion"
SOURCE_GAME_ID: Final = "ramen-ramen"
URL_SAFE: Final = ":,@!$'()*"
"""Characters left as they are in the data parameter (all legal in a URL query): a shorter
link is a smaller QR code, easier for a phone to read off a 7-inch screen."""


def play_json(record: GameRecord) -> dict[str, Any]:
    """The createPlay JSON of a finished game; BadInputError when it is not finished."""
    if not record.finished:
        raise BadInputError(f"game {record.id} is {record.status}: only a finished game is logged")
    # rank by the tally's order (points, then bowls, then fewest cards); full ties share it
    key = {s.name: (-s.points, -s.bowls, s.cards) for s in record.standings}
    rank = {n: 1 + sum(k < key[n] for k in key.values()) for n in key}
    by_scorer = {s.name: s for s in record.standings}
    team_mode = record.mode == "4p"
    players = []
    for seat, name in enumerate(record.players):
        scorer = record.scorer_of(name)
        s = by_scorer[scorer]
        entry: dict[str, Any] = {
            "name": name,
            "score": s.points,
            "winner": s.winner,
            "rank": rank[scorer],
            "startPlayer": seat == 0,
            "sourcePlayerId": name,
        }
        if team_mode:
            entry["role"] = f"Team {scorer}"
        players.append(entry)
    return {
        "sourceName": SOURCE_NAME,
        "sourcePlayId": record.id,
        "playDate": datetime.fromtimestamp(record.started).strftime("%Y-%m-%d %H:%M:%S"),
        "durationMin": max(1, round(record.duration_s / 60)),
        "game": {
            "name": GAME_NAME,
            "highestWins": True,
            "noPoints": False,
            "sourceGameId": SOURCE_GAME_ID,
        },
        "players": players,
    }


def create_play_link(record: GameRecord) -> str:
    """The link that opens BG Stats' import dialog with this game filled in."""
    data = json.dumps(play_json(record), ensure_ascii=False, separators=(",", ":"))
    return f"{CREATE_PLAY_URL}?data={quote(data, safe=URL_SAFE)}"


def decode_link(link: str) -> dict[str, Any]:
    """The play JSON a createPlay link carries (what BG Stats reads); BadInputError if none."""
    parts = urlsplit(link)
    values = parse_qs(parts.query).get("data")
    if not parts.path.endswith("/createPlay.html") or not values:
        raise BadInputError(f"not a BG Stats createPlay link: {link[:60]!r}")
    doc = json.loads(values[0])
    if not isinstance(doc, dict):
        raise BadInputError("the createPlay data is not a JSON object")
    return doc


def qr_matrix(link: str, border: int = 4) -> np.ndarray:
    """The link's QR code as a bool array (True = dark module), quiet zone included."""
    import segno

    qr = segno.make_qr(link, error="l")
    return np.array([[bool(v) for v in row] for row in qr.matrix_iter(border=border)])


def qr_image(link: str, module_px: int = 6, border: int = 4) -> np.ndarray:
    """The QR code as a white-background BGR image, `module_px` pixels a module."""
    m = qr_matrix(link, border)
    img = np.where(m, 0, 255).astype(np.uint8)
    img = np.kron(img, np.ones((module_px, module_px), np.uint8))
    return np.dstack([img, img, img])
