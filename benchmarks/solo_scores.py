"""Solo scores of the simulator's bots over many games, against the critics' bands.

    .venv/bin/python benchmarks/solo_scores.py [--games 1000] [--bots greedy,random]

Prints, per bot, how many games fall in each critics' band (French table), the mean, median and
range of points, and how long the games took. A fun, honest figure for the README: what a
simple one-turn-lookahead bot earns compared with what the critics expect of a human.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from tqdm import tqdm

from companion.rules import CRITICS_BANDS, critics_stars, simulate


def band_label(i: int) -> str:
    lo = CRITICS_BANDS[i][0]
    if i + 1 == len(CRITICS_BANDS):
        return f"{lo}+"
    hi = CRITICS_BANDS[i + 1][0] - 1
    return f"<{hi + 1}" if lo == 0 else f"{lo}-{hi}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--bots", default="greedy,random")
    args = parser.parse_args()
    bots = args.bots.split(",")
    results: dict[str, list[int]] = {}
    seconds: dict[str, float] = {}
    for bot in bots:
        start = time.perf_counter()
        results[bot] = [
            simulate("solo", seed, bot=bot).final.scores[0][1].points
            for seed in tqdm(range(args.games), desc=f"{bot} solo", unit="game")
        ]
        seconds[bot] = time.perf_counter() - start
    print(f"\nSolo scores over {args.games} games (seeds 0..{args.games - 1})\n")
    header = f"{'points':>7} {'stars':>5} " + " ".join(f"{b:>8}" for b in bots)
    print(header)
    print("-" * len(header))
    counts = {b: Counter(critics_stars(p) for p in results[b]) for b in bots}
    for i, (_, stars) in enumerate(CRITICS_BANDS):
        cells = " ".join(f"{100 * counts[b][stars] / args.games:7.1f}%" for b in bots)
        print(f"{band_label(i):>7} {stars:5g} {cells}")
    print("-" * len(header))
    for label, fn in (
        ("mean", statistics.mean),
        ("median", statistics.median),
        ("min", min),
        ("max", max),
    ):
        print(f"{label:>13} " + " ".join(f"{fn(results[b]):8.1f}" for b in bots))
    print(
        f"{'mean stars':>13} "
        + " ".join(f"{statistics.mean(critics_stars(p) for p in results[b]):8.2f}" for b in bots)
    )
    for b in bots:
        per = 1000 * seconds[b] / args.games
        print(f"{b}: {seconds[b]:.1f} s for {args.games} games ({per:.1f} ms per game)")


if __name__ == "__main__":
    main()
