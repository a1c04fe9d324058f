"""How fast the Past games screen and `companion history --json` open on a log of 200 finished
games, and how much disk one game takes (the SQLite events plus the bowls' recap crops).

    .venv/bin/python benchmarks/history_speed.py [--games 200] [--demo-log GAMES.sqlite]

The games are simulated legal games (2p/3p/4p/solo in turn) followed by the real GameFollower
and logged event by event; each served bowl gets a real camera crop, taken from the demo game's
crops (the demo is followed once into a temporary log unless --demo-log names one).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from companion.recap.crops import CropStore  # noqa: E402
from companion.recap.history import load_history  # noqa: E402
from companion.tracking.gamelog import GameLog  # noqa: E402
from companion.ui.recap_models import history_model  # noqa: E402
from tests.recap_helpers import log_game  # noqa: E402

MODES = ("2p", "3p", "4p", "solo")
NAMES = ("Alice", "Bob", "Chloé", "Dan")


def demo_crops(demo_log: Path | None, tmp: Path) -> list[Path]:
    if demo_log is None:
        demo_log = tmp / "demo.sqlite"
        subprocess.run(
            [sys.executable, "-m", "companion", "demo", "--headless", "--log", str(demo_log)],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
    return sorted(CropStore.beside(demo_log).folder.rglob("*.jpg"))


def build(path: Path, n: int, crops: list[Path]) -> float:
    """Log n finished games; returns seconds taken."""
    t0 = time.perf_counter()
    store = CropStore.beside(path)
    with GameLog.open(path) as log:
        # the benchmark's own set-up only: one fsync per event would take minutes here
        log._conn.execute("PRAGMA synchronous=OFF")
        for i in range(n):
            mode = MODES[i % len(MODES)]
            players = {"solo": 1, "2p": 2, "3p": 3, "4p": 4}[mode]
            gid, _, follower = log_game(log, mode, i, list(NAMES[:players]))
            for k, pile in enumerate(follower.view().served):
                target = store.game_folder(gid) / f"{pile.region}_{pile.t:.2f}.jpg"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(crops[k % len(crops)], target)
    return time.perf_counter() - t0


def timed(fn: object, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--demo-log", type=Path, help="a game log holding the demo game's crops")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ramen-history-") as tmp_name:
        tmp = Path(tmp_name)
        crops = demo_crops(args.demo_log, tmp)
        if not crops:
            print("no demo crops found", file=sys.stderr)
            return 1
        path = tmp / "games.sqlite"
        setup = build(path, args.games, crops)
        history = load_history(path)
        finished = sum(g.finished for g in history.games)
        screen = timed(lambda: history_model(load_history(path), "en"))
        cli = timed(
            lambda: subprocess.run(
                [sys.executable, "-m", "companion", "history", "--log", str(path), "--json"],
                check=True,
                capture_output=True,
                cwd=ROOT,
            ),
            repeat=3,
        )
        doc = json.loads(
            subprocess.run(
                [sys.executable, "-m", "companion", "history", "--log", str(path), "--json"],
                check=True,
                capture_output=True,
                cwd=ROOT,
            ).stdout
        )
        log_bytes = sum(p.stat().st_size for p in tmp.glob("games.sqlite*"))
        crop_bytes = CropStore.beside(path).size()
        bowls = sum(len(g.bowls) for g in history.games)
        n = len(history.games)
        print(f"{n} games logged ({finished} finished, {bowls} served bowls) in {setup:.1f} s")
        print(f"history screen data (read + replay + model): {screen * 1000:.0f} ms (median of 5)")
        print(f"`companion history --json` (whole process):   {cli * 1000:.0f} ms (median of 3)")
        print(f"  {len(doc['games'])} games, {len(doc['players'])} players in its JSON")
        print(
            f"game log per game: {log_bytes / n / 1024:.1f} kB events + "
            f"{crop_bytes / n / 1024:.1f} kB crops = {(log_bytes + crop_bytes) / n / 1024:.1f} kB "
            f"({crop_bytes / max(1, bowls) / 1024:.1f} kB a bowl)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
