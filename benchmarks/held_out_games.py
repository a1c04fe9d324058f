"""Whole games of held-out deck designs, played as the README tells a user (figures).

A single frame read right is not yet a game followed right: a phantom end read for one
second, a card laid and served before the camera settles, a bowl covered as a turn ends,
each can throw a game's turns off. For every design (held-out families, never trained on,
and the default deck beside them) and every table set-up:

1. enrolment: `companion deck enroll` on the design's 7 rendered row photos
   (`foreign_decks.enrol`, the same photos and cloths), the default deck needs none;
2. a game: `companion simulate --mode M --seed S --json` (greedy bots);
3. a recording: `companion render recording` drawn with the design's TRUE faces, with the
   set-up's options (warm light, sloppy cascades and a resting hand, a camera bumped
   mid-game, ...), cached under runs/held-out-games/ by design, game, set-up and a
   fingerprint of the art and the renderer's code;
4. the follower: `companion demo --recording DIR --headless --deck ENROLLED --events F`,
   the real pipeline (OpenCV decoding, markers, finder, namer, settler, game follower).

Printed per game: whether the final result is the recorded game's exactly (demo's own check:
every player's points, bowls and cards), the served bowls right card for card and credited to
the right player (matched to the truth's serves) against the truth's count, served bowls the
truth has not (wrong), and the rule warnings given (a legal game should give none; `scan_differs` is
one of them: a scanned pile that differs from the bowl seen served).

    .venv/bin/python benchmarks/held_out_games.py --backend ncnn   # 4 designs + default, 4 set-ups
    .venv/bin/python benchmarks/held_out_games.py --families foil --setups bump --fps 15
    .venv/bin/python benchmarks/held_out_games.py --json           # last line: JSON
    .venv/bin/python benchmarks/held_out_games.py --decks runs/foreign-decks/decks --no-default
        # the decks foreign_decks.py enrolled (and, with its --tune, tuned), not enrolled again

Same arguments, same games and same figures (times aside).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.foreign_decks import (  # noqa: E402
    DEFAULT,
    _companion,
    _env,
    add_tune_arguments,
    enrol,
    fingerprint,
    load_design,
    provenance,
    tune,
)
from companion.vision.backends import BACKENDS  # noqa: E402

SETUPS: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "warm": ("2p", 102, ("--warm",)),
    "sloppy": ("3p", 103, ("--cascade-mm", "12,22", "--hand-rest", "1,3")),
    "bump": ("4p", 104, ("--bump",)),
    "solo": ("solo", 105, ()),
}
"""Table set-up -> (mode, game seed, `render recording` options)."""
RECORDING_SOURCES: tuple[str, ...] = ("companion/synth", "companion/layout.py")
"""Code that draws the cached recordings: part of the cache key, with the deck's art."""


@dataclass(frozen=True, slots=True)
class GameResult:
    design: str
    setup: str
    mode: str
    exact: bool
    bowls_right: int
    bowls_true: int
    bowls_false: int
    warnings: int
    seconds: float
    failure: str = ""


def _run(cmd: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), capture_output=True, text=True, env=_env(), check=False, **kw)


def _recording(design: str, setup: str, fps: float, out: Path) -> Path:
    """The rendered game of `design` at `setup` (cached): folder with recording + truth."""
    from companion.deck.deckdir import save_deck

    mode, seed, options = SETUPS[setup]
    deck = load_design(design)
    key = fingerprint(deck, RECORDING_SOURCES)
    folder = out / "games" / design / f"{setup}-{mode}-{seed}-{fps:g}fps-{key}"
    if (folder / "done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "record.json"
    sim = _run([_companion(), "simulate", "--mode", mode, "--seed", str(seed), "--json"])
    if sim.returncode != 0:
        raise SystemExit(f"simulate failed: {sim.stderr.strip()}")
    record.write_text(sim.stdout, encoding="utf-8")
    cmd = [
        _companion(),
        "render",
        "recording",
        str(record),
        str(folder / "rec"),
        "--fps",
        f"{fps:g}",
    ]
    if design != DEFAULT:
        art = out / "art" / f"{design}-{key}"
        if not (art / "deck.json").exists():
            save_deck(deck, art)
        cmd += ["--deck", str(art)]
    rendered = _run([*cmd, *options])
    if rendered.returncode != 0:
        raise SystemExit(f"render failed: {rendered.stderr.strip().splitlines()[-1:]}")
    (folder / "done").write_text(f"{design} {setup} {key}\n")
    return folder


def _served(events: Sequence[dict[str, Any]]) -> list[tuple[str, frozenset[str]]]:
    return [
        (str(e.get("player")), frozenset(e["cards"]))
        for e in events
        if e.get("type") == "bowl_served"
    ]


def match_served(
    seen: Sequence[dict[str, Any]], truth: Sequence[dict[str, Any]]
) -> tuple[int, int, int]:
    """(served bowls right, bowls the truth served, served bowls it did not): a followed serve
    is right when a true serve not yet matched holds the same cards, served to the same player
    (team, in 4p)."""
    left = Counter(_served(truth))
    right = false = 0
    for pile in _served(seen):
        if left[pile] > 0:
            left[pile] -= 1
            right += 1
        else:
            false += 1
    return right, len(_served(truth)), false


def play(
    design: str,
    setup: str,
    fps: float,
    deck_dir: Path | None,
    out: Path,
    backend: str | None = None,
) -> GameResult:
    """Follow one rendered game through `companion demo` and compare it with its truth."""
    folder = _recording(design, setup, fps, out)
    events_file = folder / "events.jsonl"
    events_file.unlink(missing_ok=True)
    cmd = [_companion(), "demo", "--recording", str(folder / "rec"), "--headless"]
    cmd += ["--events", str(events_file)]
    if deck_dir is not None:
        cmd += ["--deck", str(deck_dir)]
    if backend is not None:
        cmd += ["--backend", backend]
    t = time.perf_counter()
    proc = _run(cmd)
    seconds = time.perf_counter() - t
    mode = SETUPS[setup][0]
    if proc.returncode not in (0, 1) or not events_file.exists():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return GameResult(design, setup, mode, False, 0, 0, 0, 0, seconds, last)
    seen = [json.loads(line) for line in events_file.read_text().splitlines() if line.strip()]
    truth_file = folder / "rec" / "truth.jsonl"
    truth = [json.loads(line) for line in truth_file.read_text().splitlines() if line.strip()]
    right, true, false = match_served(seen, truth)
    exact = "matches the recorded game's result: yes" in proc.stdout
    warnings = sum(1 for e in seen if e.get("type") == "rule_warning")
    return GameResult(design, setup, mode, exact, right, true, false, warnings, seconds)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--families",
        default=None,
        help="design families (default the held-out ones)",
    )
    p.add_argument("--seeds", default="1", help="design seeds, comma-separated (1)")
    p.add_argument(
        "--setups",
        default=",".join(SETUPS),
        help=f"table set-ups, any of {', '.join(SETUPS)} (all)",
    )
    p.add_argument(
        "--fps",
        type=float,
        default=4.0,
        help="recording frame rate: 4 = the bundled demo's, 15 = the Pi camera's (the "
        "renderer's game then runs faster: 121 s of play against 179 s, both harsh)",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        help="the finder's backend (default demo's own: ONNX on x86, NCNN on the Pi's ARM)",
    )
    p.add_argument("--no-default", action="store_true", help="leave out the default deck row")
    add_tune_arguments(p)
    p.add_argument(
        "--decks",
        type=Path,
        help="read each design with its folder here, as enrolled (and tuned) already, e.g. by "
        "foreign_decks.py (runs/foreign-decks/decks), instead of enrolling it again",
    )
    p.add_argument("--jobs", type=int, default=2, help="games followed at once (2)")
    p.add_argument("--out", type=Path, default=ROOT / "runs" / "held-out-games", help="cache")
    p.add_argument("--json", action="store_true", help="last line: one JSON object")
    args = p.parse_args(argv)
    if args.decks is not None and args.tune:
        p.error("--decks reads the folders as they are: tune them there, not with --tune")
    bad = [s for s in args.setups.split(",") if s not in SETUPS]
    if bad:
        p.error(f"unknown set-up {bad[0]!r}: choose from {', '.join(SETUPS)}")
    if not 0.5 <= args.fps <= 60 or args.jobs < 1:
        p.error("--fps must be 0.5..60 and --jobs at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    from tqdm import tqdm

    from companion.deck.designs import HELD_OUT_FAMILIES

    args = parse_args(argv)
    families = args.families.split(",") if args.families else HELD_OUT_FAMILIES
    names = [f"{f}-{s}" for f in families for s in args.seeds.split(",")]
    if not args.no_default:
        names.append(DEFAULT)
    decks: dict[str, Path | None] = {DEFAULT: None}
    for name in names:
        if name == DEFAULT:
            continue
        if args.decks is not None:
            folder = args.decks / name
            if not (folder / "deck.json").exists():
                raise SystemExit(f"error: no enrolled deck {name} under {args.decks}")
            decks[name] = folder
            continue
        print(f"enrolling {name} ...", file=sys.stderr, flush=True)
        enrolment, folder = enrol(load_design(name), name, args.out)
        if not enrolment.accepted:
            print(f"{name}: enrolment refused ({enrolment.message})", file=sys.stderr)
            continue
        if args.tune:
            tune(enrolment, folder, args.tune, args.tune_scenes)
        decks[name] = folder
    todo = [(n, s) for n in names if n in decks for s in args.setups.split(",")]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [
            pool.submit(play, n, s, args.fps, decks[n], args.out, args.backend) for n, s in todo
        ]
        results = [f.result() for f in tqdm(futures, desc="games", unit="game")]
    print(
        f"\n{'design':<12}{'set-up':<8}{'mode':<6}{'result':<8}{'bowls right':>13}"
        f"{'wrong':>7}{'warnings':>10}{'s':>7}"
    )
    for r in results:
        verdict = "exact" if r.exact else "WRONG"
        print(
            f"{r.design:<12}{r.setup:<8}{r.mode:<6}{verdict:<8}"
            f"{f'{r.bowls_right}/{r.bowls_true}':>13}{r.bowls_false:>7}{r.warnings:>10}"
            f"{r.seconds:>7.0f}" + (f"  {r.failure}" if r.failure else "")
        )
    held = [r for r in results if r.design != DEFAULT]
    for label, rows in (
        ("held-out designs", held),
        ("default deck", [r for r in results if r.design == DEFAULT]),
    ):
        if rows:
            right = sum(r.bowls_right for r in rows)
            true = sum(r.bowls_true for r in rows)
            print(
                f"{label}: {sum(r.exact for r in rows)} of {len(rows)} games exact, "
                f"{right} of {true} bowls right, {sum(r.bowls_false for r in rows)} served wrong, "
                f"{sum(r.warnings for r in rows)} warnings"
            )
    print(
        f"{len(results)} games at {args.fps:g} fps in {time.perf_counter() - t0:.0f} s; "
        f"code {provenance()}"
    )
    if args.json:
        print(json.dumps({"fps": args.fps, "games": [asdict(r) for r in results]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
