"""A deck loaded for a running game (`load_deck(..., lazy=True)`): its faces are read from their
files at each use, never held together, and are the same as an eager load's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from companion.cards import CARD_IDS
from companion.deck.deckdir import FaceFiles, default_deck, load_deck, save_deck
from companion.errors import BadInputError


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deck") / "small"
    save_deck(default_deck(3.0), out)
    return out


def test_lazy_faces_are_the_eager_ones(folder: Path) -> None:
    eager, lazy = load_deck(folder), load_deck(folder, lazy=True)
    assert isinstance(lazy.faces, FaceFiles) and not isinstance(eager.faces, FaceFiles)
    assert sorted(lazy.faces) == sorted(CARD_IDS) and len(lazy.faces) == len(CARD_IDS)
    assert (lazy.name, lazy.px_per_mm, lazy.folder) == (eager.name, eager.px_per_mm, folder)
    for cid in CARD_IDS:
        assert np.array_equal(lazy.face(cid), eager.face(cid))
    assert lazy.face(CARD_IDS[0]) is not lazy.face(CARD_IDS[0])  # read again, not kept


def test_lazy_load_checks_sizes_from_the_headers_and_damage_at_use(
    folder: Path, tmp_path: Path
) -> None:
    import shutil

    import cv2

    bad = tmp_path / "bad"
    shutil.copytree(folder, bad)
    face = cv2.imread(str(bad / f"{CARD_IDS[3]}.png"))
    cv2.imwrite(str(bad / f"{CARD_IDS[3]}.png"), face[:-10])
    with pytest.raises(BadInputError, match="not all the same size"):
        load_deck(bad, lazy=True)
    cv2.imwrite(str(bad / f"{CARD_IDS[3]}.png"), face)
    data = (bad / f"{CARD_IDS[5]}.png").read_bytes()
    (bad / f"{CARD_IDS[5]}.png").write_bytes(data[: len(data) // 2])  # truncated
    deck = load_deck(bad, lazy=True)  # the header is whole
    with pytest.raises(BadInputError, match="damaged"):
        deck.face(CARD_IDS[5])
    with pytest.raises(BadInputError, match="damaged"):
        load_deck(bad)
