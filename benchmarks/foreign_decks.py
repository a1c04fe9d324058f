"""Foreign decks (issue 10): is any enrolled deck named as surely as the default one? (figures)

Each deck is a generated design (`companion/deck/designs.py`); the held-out families, never
used in any training, are the subject, and the default deck is the reference row. For every
design, the whole user path runs through the real commands:

1. enrolment: the 7 row photos (one per ingredient, the 8 cards valued 0..7 left to right,
   `companion.deck.photos.row_photo`, green felt, grey felt if that is rejected) are written
   as JPEGs and enrolled by `companion deck enroll P1..P7 --out DIR` (accepted? seconds);
2. scenes: table frames in the kit layout drawn with the design's TRUE faces (not the
   enrolled ones), held-out split, a `plain` and a `hard` slice (hands, glare, warm light,
   blur, long bowls), JPEG 92, cached under runs/foreign-decks/frames/ by
   design/slice/count/seed and a fingerprint of the art and the renderer's code;
3. detection: `companion detect IMG... --json --deck DIR` (one process per design and slice;
   the default deck without --deck). A design whose enrolment is refused is not detected:
   all its must-cards count missed (in its rows and the totals).

Scoring is the rule of `benchmarks/eval_detector.py` (its `expected_cards`): a card must be read
when one of its index strips shows >= 50 % and is not half under a hand; a reading of a card
that is face up and visible at all is not a false positive; any other reading is; a card read
twice counts once. A confusion is a false positive paired with the card really at that place
(box overlap with its strips, else a strip centre within 30 px). Beside recall, `idx shows` is
the recall over the must-cards whose index a person could still read (`index_shown.py`: the
part of the face where an ingredient's cards differ, >= 75 % uncovered at one end): a design
with its numeral in one corner can show most of a strip whose corner is under a hand.

    .venv/bin/python benchmarks/foreign_decks.py                       # 30 plain + 15 hard
    .venv/bin/python benchmarks/foreign_decks.py --frames 10 --hard-frames 5
    .venv/bin/python benchmarks/foreign_decks.py --frames 3 --hard-frames 2 --families ornate
    .venv/bin/python benchmarks/foreign_decks.py --families ornate,foil --seeds 1,2 --no-default
    .venv/bin/python benchmarks/foreign_decks.py --json --backend onnx   # last line: JSON
    .venv/bin/python benchmarks/foreign_decks.py --min-confidence 0   # what the gate hides
    .venv/bin/python benchmarks/foreign_decks.py --skew 10   # cards laid as the README allows
    .venv/bin/python benchmarks/foreign_decks.py --alike   # bowls of one ingredient, like cloth

Same arguments, same frames and same figures (times aside).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.eval_detector import expected_cards  # noqa: E402
from benchmarks.index_shown import SHOWN_SHARE, cards_shown, index_masks  # noqa: E402

DEFAULT = "default"
SLICES: tuple[str, ...] = ("plain", "hard")
CLOTHS: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("green", (60, 110, 60)),  # the enrolment guide's advice: green or mid-grey felt
    ("grey", (120, 120, 118)),
)
JPEG_QUALITY = 92
PAIR_IOU = 0.25
"""A false positive is paired with the card whose strip (or whole card) its box overlaps this
much; failing that, with the card whose strip centre is within PAIR_PX of the box centre."""
PAIR_PX = 30.0
FRAME_SOURCES: tuple[str, ...] = ("companion/synth", "companion/layout.py")
PHOTO_SOURCES: tuple[str, ...] = ("companion/deck/photos.py",)
"""Code that draws the cached frames / photos: part of the cache key, with the deck's art."""
TARGETS: dict[str, dict[str, float]] = {
    "plain": {"precision": 0.995, "recall": 0.99, "all_right": 0.95},
    "hard": {"precision": 0.995, "recall": 0.97},
}
"""Issue 10's targets, per slice."""
SHARP_BLUR_PX = 2.0
"""Frames whose lens blur (the renderer's Gaussian sigma, camera pixels at 2304 wide: 2.7 px a
millimetre on the table) is under this are `sharp`: the hard slice draws 1.2-2.8 px, and over
2 px the small numerals of some designs blur into one another for a person too (ornate-1 hard
frame 8, 2.7 px: a 6 and a 0 look alike)."""


@dataclass
class Enrolment:
    """Outcome of `companion deck enroll` for one design."""

    accepted: bool
    seconds: float
    cloth: str
    message: str
    tune_seconds: float | None = None
    """Wall seconds of `companion deck tune` when --tune asked for it (None: not tuned)."""


@dataclass
class SliceScore:
    """Figures of one design on one slice."""

    design: str
    slice: str
    frames: int = 0
    must: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    misnamed: int = 0
    """Missed must-cards read as another card at their place (the rest of FN: not read)."""
    frames_ok: int = 0
    must_shown: int = 0
    """Must-cards whose index shows as a person sees it (`index_shown`)..."""
    tp_shown: int = 0
    """... and of them, those read."""
    must_sharp: int = 0
    """Must-cards in frames whose lens blur is under SHARP_BLUR_PX..."""
    tp_sharp: int = 0
    """... and of them, those read."""
    detect_seconds: float = 0.0
    seconds_per_frame: float | None = None
    failed_images: int = 0
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def precision(self) -> float:
        return self.tp / max(1, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return self.tp / max(1, self.tp + self.fn)

    @property
    def recall_shown(self) -> float | None:
        """Recall over the must-cards whose index shows (beside `recall`, not instead of it);
        None when the scenes did not say what shows (path-traced truth has no uncovered
        outlines)."""
        return self.tp_shown / self.must_shown if self.must_shown else None

    @property
    def recall_sharp(self) -> float | None:
        """Recall in the frames whose lens blur is under SHARP_BLUR_PX (beside `recall`, not
        instead of it); None when the slice has none or its truth gives no blur."""
        return self.tp_sharp / self.must_sharp if self.must_sharp else None

    @property
    def all_right(self) -> float:
        return self.frames_ok / max(1, self.frames)

    def add(self, other: SliceScore) -> None:
        """Sum `other`'s counts into this one (for totals)."""
        for k in (
            "frames",
            "must",
            "tp",
            "fp",
            "fn",
            "misnamed",
            "frames_ok",
            "must_shown",
            "tp_shown",
            "must_sharp",
            "tp_sharp",
            "failed_images",
        ):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.detect_seconds += other.detect_seconds
        self.confusions.update(other.confusions)

    def missed_targets(self) -> list[str]:
        """Names of the issue's targets this slice misses."""
        return [k for k, v in TARGETS[self.slice].items() if getattr(self, k) < v]

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k != "confusions"}
        d.update(
            precision=round(self.precision, 5) if self.tp + self.fp else None,
            recall=round(self.recall, 5),
            recall_shown=None if self.recall_shown is None else round(self.recall_shown, 5),
            recall_sharp=None if self.recall_sharp is None else round(self.recall_sharp, 5),
            all_right=round(self.all_right, 5),
            missed_targets=self.missed_targets(),
            confusions=[[a, b, n] for (a, b), n in self.confusions.most_common()],
        )
        return d


# ------------------------------------------------------------------ scoring


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _bbox(points: Iterable[Sequence[float]]) -> tuple[float, float, float, float]:
    pts = list(points)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (min(xs), min(ys), max(xs), max(ys))


def _centre(points: Sequence[Sequence[float]]) -> tuple[float, float]:
    return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))


def true_card_at(box: Sequence[float], truth: dict, prefer: set[str]) -> str | None:
    """The card really at a reading's box: best overlap with a shown strip (or the whole card,
    as a box spans both strips when both show), missed cards (`prefer`) first; failing that the
    shown strip whose centre is nearest the box centre within PAIR_PX. Face-down: `back`."""
    overlap: list[tuple[bool, float, str]] = []
    near: list[tuple[float, str]] = []
    bc = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    for c in truth["cards"]:
        shown = [s for s in c.get("strips", []) if s["visible_fraction"] > 0]
        if not shown:
            continue
        name = c["card"] if c.get("face_up", True) else "back"
        boxes = [_bbox(s["polygon_px"]) for s in shown]
        if len(shown) == len(c["strips"]):
            boxes.append(_bbox(c["polygon_px"]))
        overlap.append((c["card"] in prefer, max(_iou(box, b) for b in boxes), name))
        near.extend((math.dist(bc, _centre(s["polygon_px"])), name) for s in shown)
    for preferred in (True, False):
        cands = [(iou, name) for p, iou, name in overlap if p == preferred and iou >= PAIR_IOU]
        if cands:
            return max(cands)[1]
    if near:
        dist, name = min(near)
        if dist <= PAIR_PX:
            return name
    return None


def score_frame(
    truth: dict, readings: list[dict], out: SliceScore, shown: set[str] | None = None
) -> None:
    """Add one frame's readings (detect's JSON `cards`) to `out`; `shown`: the ids of the cards
    whose index shows (`index_shown.cards_shown`), counted apart for `recall_shown`."""
    must, may = expected_cards(truth)
    got: dict[str, dict] = {}
    for r in readings:  # a card read twice counts once (the surer reading)
        if r["card"] not in got or r["confidence"] > got[r["card"]]["confidence"]:
            got[r["card"]] = r
    hit = set(got) & set(must)
    wrong = set(got) - may
    missed = set(must) - set(got)
    out.frames += 1
    out.must += len(must)
    out.tp += len(hit)
    out.fp += len(wrong)
    out.fn += len(missed)
    out.frames_ok += not wrong and not missed
    if shown is not None:
        out.must_shown += len(set(must) & shown)
        out.tp_shown += len(hit & shown)
    blur = truth.get("light", {}).get("blur_px")
    if blur is not None and blur < SHARP_BLUR_PX:
        out.must_sharp += len(must)
        out.tp_sharp += len(hit)
    misnamed: set[str] = set()
    for cid in sorted(wrong):
        true = true_card_at(got[cid]["box"], truth, missed)
        out.confusions[(true or "(nothing)", cid)] += 1
        if true in missed:
            misnamed.add(true)
    out.misnamed += len(misnamed)


# ------------------------------------------------------------------ decks, photos, frames


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("YOLO_OFFLINE", "1")
    env.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".yolo"))
    env.setdefault("KIVY_NO_ARGS", "1")
    return env


def _companion() -> str:
    exe = Path(sys.executable).parent / "companion"
    return str(exe if exe.exists() else ROOT / ".venv" / "bin" / "companion")


def load_design(name: str) -> Any:
    """The Deck of `family-seed` (a design family, or an outsider style:
    `benchmarks/outsider_decks.py`), or the default deck."""
    if name == DEFAULT:
        from companion.deck.deckdir import default_deck

        return default_deck()
    from benchmarks.outsider_decks import STYLES, outsider_deck
    from companion.deck.designs import design_deck

    family, seed = name.rsplit("-", 1)
    if family in STYLES:
        return outsider_deck(family, int(seed))
    return design_deck(family, int(seed))


def fingerprint(deck: Any, sources: Sequence[str]) -> str:
    """8 hex digits over the deck's faces and the source files that draw with them, so a cache
    made from other art or by other rendering code is never reused."""
    h = hashlib.sha1()
    for cid in sorted(deck.faces):
        h.update(cid.encode())
        h.update(deck.faces[cid].tobytes())
    for rel in sources:
        path = ROOT / rel
        for f in sorted(path.glob("*.py")) if path.is_dir() else [path]:
            h.update(f.read_bytes())
    return h.hexdigest()[:8]


def _fresh_folder(parent: Path, prefix: str, key: str) -> Path:
    """parent/prefix-key, emptied, after removing caches of the same prefix with other keys."""
    for old in parent.glob(f"{prefix}-*"):
        if old.is_dir() and old.name.rsplit("-", 1)[0] == prefix:
            shutil.rmtree(old)
    folder = parent / f"{prefix}-{key}"
    folder.mkdir(parents=True)
    return folder


def provenance() -> str:
    """The checkout the figures come from: commit, how many files differ from it, and the
    OpenCV that drew the decks and scenes (5.1 draws text and shapes unlike 5.0)."""
    import cv2

    return f"{_commit()}, OpenCV {cv2.__version__}"


def _commit() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "companion", "models"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except OSError:
        return "unknown"
    return f"{head or 'unknown'}" + (f" + {len(dirty)} changed files" if dirty else "")


def _write_jpeg(path: Path, image: Any) -> None:
    import cv2

    if not cv2.imwrite(str(path), image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY]):
        raise OSError(f"could not write {path}")


def row_photos(deck: Any, name: str, cloth: tuple[str, tuple[int, int, int]], out: Path) -> list:
    """The 7 enrolment photos of `deck` (cached), in INGREDIENTS order."""
    from companion.cards import INGREDIENTS, Card
    from companion.deck.photos import row_photo

    prefix, key = f"{name}-{cloth[0]}", fingerprint(deck, PHOTO_SOURCES)
    folder = out / "photos" / f"{prefix}-{key}"
    paths = [folder / f"P{i + 1}-{ing}.jpg" for i, ing in enumerate(INGREDIENTS)]
    if (folder / "done").exists() and all(p.exists() for p in paths):
        return paths
    folder = _fresh_folder(out / "photos", prefix, key)
    base = sum(ord(ch) * 31**i for i, ch in enumerate(name)) % 100_000  # stable, unlike hash()
    for i, ing in enumerate(INGREDIENTS):
        faces = [deck.face(Card(ing, v).id) for v in range(8)]
        photo = row_photo(faces, seed=base * 10 + i, cloth=cloth[1])
        _write_jpeg(paths[i], photo.image)
    (folder / "done").write_text(f"{prefix} {key}\n")
    return paths


def enrol(deck: Any, name: str, out: Path) -> tuple[Enrolment, Path]:
    """Run `companion deck enroll` on the design's photos: green felt, then grey if refused."""
    target = out / "decks" / name
    messages: list[str] = []
    t_all = 0.0
    for cloth in CLOTHS:
        photos = row_photos(deck, name, cloth, out)
        shutil.rmtree(target, ignore_errors=True)
        cmd = [_companion(), "deck", "enroll", *map(str, photos), "--out", str(target)]
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), check=False)
        t_all += time.perf_counter() - t
        messages.append(f"{cloth[0]}: {_last_line(proc)}")
        if proc.returncode == 0:
            return Enrolment(True, t_all, cloth[0], "; ".join(messages)), target
    return Enrolment(False, t_all, "-", "; ".join(messages)), target


def tune(enrolment: Enrolment, target: Path, steps: int, scenes: int | None) -> None:
    """Run `companion deck tune DIR` on an accepted deck (what a user may add after enrolment)."""
    cmd = [_companion(), "deck", "tune", str(target), "--steps", str(steps)]
    if scenes is not None:
        cmd += ["--scenes", str(scenes)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), check=False)
    enrolment.tune_seconds = time.perf_counter() - t
    enrolment.message += f"; tune: {_last_line(proc)}"
    if proc.returncode != 0:
        raise SystemExit(f"companion deck tune {target} failed: {enrolment.message}")
    print(f"  {_last_line(proc)}", file=sys.stderr, flush=True)


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    """What a command said last (stdout, else stderr), else its exit code."""
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return lines[-1] if lines else str(proc.returncode)


def render_slice(
    deck: Any,
    name: str,
    slice_: str,
    n: int,
    seed: int,
    out: Path,
    width: int | None = None,
    skew: float | None = None,
    alike: bool = False,
) -> list[Path]:
    """The slice's frames of one design as JPEG + truth JSON, cached by name/slice/n/seed/skew
    (and `alike`) and a fingerprint of the art and the renderer."""
    from tqdm import tqdm

    from companion.synth.frame import FrameSpec, render_frame

    prefix = f"{slice_}-n{n}-s{seed}-w{width}" + ("" if skew is None else f"-k{skew:g}")
    prefix += "-alike" if alike else ""
    key = fingerprint(deck, FRAME_SOURCES)
    folder = out / "frames" / name / f"{prefix}-{key}"
    paths = [folder / f"{i:05d}.jpg" for i in range(n)]
    if (folder / "done").exists() and all(p.exists() for p in paths):
        return paths
    folder = _fresh_folder(out / "frames" / name, prefix, key)
    spec = FrameSpec(hard=slice_ == "hard", split="test", width=width, skew_deg=skew, alike=alike)
    for i, path in enumerate(tqdm(paths, desc=f"render {name} {slice_}", unit="frame")):
        frame = render_frame(deck, seed, i, spec)
        _write_jpeg(path, frame.image)
        path.with_suffix(".json").write_text(json.dumps(frame.truth))
    (folder / "done").write_text(f"{name} {prefix} {key}\n")
    return paths


def detect(
    paths: list[Path],
    deck_dir: Path | None,
    backend: str | None,
    label: str,
    min_confidence: float | None = None,
    models: Path | None = None,
) -> tuple:
    """`companion detect --json` on all images in one process: ({image: cards}, failed,
    wall seconds, seconds per frame once the model is loaded)."""
    from tqdm import tqdm

    cmd = [_companion(), "detect", *map(str, paths), "--json"]
    if deck_dir is not None:
        cmd += ["--deck", str(deck_dir)]
    if backend:
        cmd += ["--backend", backend]
    if min_confidence is not None:
        cmd += ["--min-confidence", str(min_confidence)]
    if models is not None:
        cmd += ["--models", str(models)]
    results: dict[str, list[dict]] = {}
    stamps: list[float] = []
    t0 = time.perf_counter()
    with subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        with tqdm(total=len(paths), desc=f"detect {label}", unit="frame") as bar:
            for line in proc.stdout:
                if not line.startswith("{"):
                    continue
                row = json.loads(line)
                results[row["image"]] = row["cards"]
                stamps.append(time.perf_counter())
                bar.update(1)
        err = proc.stderr.read()
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 2) or not results:
        raise RuntimeError(f"companion detect failed ({proc.returncode}): {err.strip()[-500:]}")
    per_frame = (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else wall
    return results, len(paths) - len(results), wall, per_frame


# ------------------------------------------------------------------ report


def _mark(s: SliceScore, key: str, value: float) -> str:
    if key == "precision" and s.tp + s.fp == 0:
        return "n/a "  # nothing read
    goal = TARGETS[s.slice].get(key)
    flag = " " if goal is None else ("+" if value >= goal else "-")
    return f"{value:.4f}{flag}"


def _row(s: SliceScore, enrolment: Enrolment | None) -> str:
    if enrolment is None:
        enr = "built in" if s.design == DEFAULT else ""
    else:
        yn = "y" if enrolment.accepted else "n"
        cloth = f" {enrolment.cloth}" if enrolment.accepted else ""
        enr = f"{yn} {enrolment.seconds:5.1f} s{cloth}"
    spf = "" if s.seconds_per_frame is None else f"{s.seconds_per_frame:.2f}"
    shown = "n/a" if s.recall_shown is None else f"{s.recall_shown:.4f}"
    sharp = "n/a" if s.recall_sharp is None else f"{s.recall_sharp:.4f}"
    return (
        f"{s.design:<18} {s.slice:<5} {s.frames:>6} {s.must:>5} "
        f"{s.fp:>4} {s.fn:>4} {s.misnamed:>5}  "
        f"{_mark(s, 'precision', s.precision):>9} {_mark(s, 'recall', s.recall):>9} "
        f"{_mark(s, 'all_right', s.all_right):>9} {shown:>9} {sharp:>7}  {enr:<16} {spf:>7}"
    )


def report(
    scores: list[SliceScore], enrolments: dict[str, Enrolment], totals: list[SliceScore]
) -> None:
    """Print the table, the totals, the targets and the worst confusions."""
    head = (
        f"{'design':<18} {'slice':<5} {'frames':>6} {'must':>5} {'FP':>4} {'FN':>4} {'misn.':>5}  "
        f"{'precision':>9} {'recall':>9} {'all right':>9} {'idx shows':>9} {'sharp':>7}  "
        f"{'enrolled (s)':<16} "
        f"{'s/frame':>7}"
    )
    print("\n" + head + "\n" + "-" * len(head))
    for s in scores:
        if s.design != DEFAULT:
            print(_row(s, enrolments.get(s.design)))
    for t in totals:
        print(_row(t, None))
    for s in scores:
        if s.design == DEFAULT:
            print(_row(s, None))
    print(
        "\ntargets (issue 10; + met, - missed): precision >= 99.5 %; recall >= 99 % plain, "
        ">= 97 % hard; >= 95 % of plain frames all right"
    )
    print(
        "must = cards that must be read; misn. = FN read as another card at their place "
        "(the rest were not read at all); s/frame = companion detect once the model is loaded; "
        "enrolled = accepted (y/n), wall seconds of `companion deck enroll`, cloth"
    )
    print(
        "idx shows = recall over the must-cards whose index (where the cards of an ingredient "
        f"differ) is >= {SHOWN_SHARE:.0%} uncovered at one end (benchmarks/index_shown.py): "
        "a person could read them; the targets are on recall"
    )
    print(
        f"sharp = recall in the frames whose lens blur is under {SHARP_BLUR_PX:g} camera px "
        "(hard frames draw 1.2-2.8 px; plain 0-1.3): how much of the hard slice's loss is blur"
    )
    for name, e in enrolments.items():
        if not e.accepted:
            print(f"enrolment of {name} rejected, all its must-cards count missed: {e.message}")
    held = Counter[tuple[str, str]]()
    for s in scores:
        if s.design != DEFAULT:
            held.update(s.confusions)
    for title, conf in (
        ("held-out designs", held),
        ("default deck", sum((s.confusions for s in scores if s.design == DEFAULT), Counter())),
    ):
        if not any(s.design == DEFAULT for s in scores) and title == "default deck":
            continue
        worst = ", ".join(f"{a} -> {b} x{n}" for (a, b), n in conf.most_common(12)) or "none"
        print(f"worst confusions, {title} (true -> read): {worst}")


# ------------------------------------------------------------------ main


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def add_tune_arguments(ap: argparse.ArgumentParser) -> None:
    """--tune STEPS and --tune-scenes N: `companion deck tune` after each enrolment."""
    from companion.inputs import integer

    ap.add_argument(
        "--tune",
        type=integer(0, 20000),
        default=0,
        metavar="STEPS",
        help="run `companion deck tune DIR --steps STEPS` on each enrolled deck (0: not)",
    )
    ap.add_argument(
        "--tune-scenes", type=int, metavar="N", help="deck tune's --scenes (default: its own)"
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from benchmarks.outsider_decks import STYLES
    from companion.deck.designs import FAMILIES, HELD_OUT_FAMILIES

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--frames", type=int, default=30, help="plain frames per design (30)")
    ap.add_argument("--hard-frames", type=int, default=15, help="hard frames per design (15)")
    ap.add_argument(
        "--families",
        default=",".join(HELD_OUT_FAMILIES),
        help=f"design families (default the held-out ones); any of {', '.join(FAMILIES)}, "
        f"or an outsider style: {', '.join(STYLES)} (benchmarks/outsider_decks.py)",
    )
    ap.add_argument("--seeds", default="1", help="design seeds, comma-separated (default 1)")
    ap.add_argument("--frame-seed", type=int, default=90_000, help="scene seed (90000)")
    ap.add_argument("--no-default", action="store_true", help="leave out the default deck row")
    ap.add_argument(
        "--width",
        type=int,
        default=2304,
        help="camera frame width: 2304 = the Pi camera's full-field stream the kit uses "
        "(2.5 px/mm at 700 mm); 0 = the renderer's mix of 1280..2304",
    )
    ap.add_argument(
        "--skew",
        type=float,
        help="lay every Fridge, bowl and scan-cascade card turned uniformly within +- this many "
        "degrees (the README asks for about 10); default: the scenes' own, mostly within 5",
    )
    ap.add_argument(
        "--alike",
        action="store_true",
        help="sets of one ingredient: 70 %% of cascades hold 2-4 cards of one ingredient in a "
        "row (players collect sets), on a table top of one card's colour",
    )
    ap.add_argument("--backend", choices=("ncnn", "onnx", "torch"), help="detect's backend")
    ap.add_argument(
        "--min-confidence",
        type=float,
        help="detect's reading gate (default: detect's own); 0 shows what the gate hides",
    )
    ap.add_argument("--models", type=Path, help="strip finder folder for detect (default models/)")
    add_tune_arguments(ap)
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "foreign-decks", help="cache")
    ap.add_argument("--json", action="store_true", help="last line: one JSON object")
    args = ap.parse_args(argv)
    args.families = _csv(args.families)
    bad = [f for f in args.families if f not in FAMILIES and f not in STYLES]
    if bad:
        ap.error(f"unknown famil{'ies' if len(bad) > 1 else 'y'} {', '.join(bad)}")
    try:
        args.seeds = [int(s) for s in _csv(args.seeds)]
    except ValueError:
        ap.error(f"--seeds {args.seeds!r}: integers, comma-separated")
    if args.frames < 0 or args.hard_frames < 0:
        ap.error("--frames and --hard-frames must be >= 0")
    return args


def json_report(
    run_args: dict[str, Any],
    enrolments: dict[str, Any],
    scores: Sequence[Any],
    totals: Sequence[Any],
    elapsed: float,
    source: str,
) -> str:
    """The last line other tools read: the run's arguments, the targets, every row."""
    return json.dumps(
        {
            "args": run_args,
            "targets": TARGETS,
            "enrolments": enrolments,
            "rows": [s.to_json() for s in scores],
            "totals": [t.to_json() for t in totals],
            "seconds": round(elapsed, 1),
            "code": source,
        }
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    counts = {"plain": args.frames, "hard": args.hard_frames}
    slices = [s for s in SLICES if counts[s] > 0]
    names = [f"{f}-{s}" for f in args.families for s in args.seeds]
    if not args.no_default:
        names.append(DEFAULT)
    scores: list[SliceScore] = []
    enrolments: dict[str, Enrolment] = {}
    for name in names:
        deck = load_design(name)
        masks = index_masks(deck.faces)
        deck_dir: Path | None = None
        if name != DEFAULT:
            print(f"enrolling {name} ...", file=sys.stderr, flush=True)
            enrolments[name], deck_dir = enrol(deck, name, args.out)
            if args.tune > 0 and enrolments[name].accepted:
                tune(enrolments[name], deck_dir, args.tune, args.tune_scenes)
        for slice_ in slices:
            paths = render_slice(
                deck,
                name,
                slice_,
                counts[slice_],
                args.frame_seed,
                args.out,
                args.width or None,
                args.skew,
                args.alike,
            )
            s = SliceScore(name, slice_)
            found: dict[str, list[dict]] = {}
            if name == DEFAULT or enrolments[name].accepted:
                found, s.failed_images, s.detect_seconds, s.seconds_per_frame = detect(
                    paths,
                    deck_dir,
                    args.backend,
                    f"{name} {slice_}",
                    args.min_confidence,
                    args.models,
                )
            for p in paths:
                truth = json.loads(p.with_suffix(".json").read_text())
                score_frame(truth, found.get(str(p), []), s, cards_shown(truth, masks))
            scores.append(s)
    totals = []
    for slice_ in slices:
        parts = [s for s in scores if s.slice == slice_ and s.design != DEFAULT]
        total = SliceScore(f"total, {len(parts)} designs", slice_)
        for s in parts:
            total.add(s)
        timed = [s for s in parts if s.seconds_per_frame is not None]
        if timed:
            n = sum(s.frames for s in timed)
            total.seconds_per_frame = (
                sum((s.seconds_per_frame or 0.0) * s.frames for s in timed) / n
            )
        if parts:
            totals.append(total)
    report(scores, enrolments, totals)
    elapsed = time.perf_counter() - t_start
    source = provenance()
    print(
        f"\n{len(names)} decks, {sum(s.frames for s in scores)} frames, {elapsed:.0f} s; "
        f"code {source}"
    )
    if args.json:
        run_args = {
            "frames": args.frames,
            "hard_frames": args.hard_frames,
            "families": args.families,
            "seeds": args.seeds,
            "frame_seed": args.frame_seed,
            "default": not args.no_default,
            "backend": args.backend,
            "min_confidence": args.min_confidence,
            "tune": args.tune,
            "tune_scenes": args.tune_scenes,
            "width": args.width,
            "skew": args.skew,
            "alike": args.alike,
        }
        enrolled = {k: asdict(v) for k, v in enrolments.items()}
        print(json_report(run_args, enrolled, scores, totals, elapsed, source))
    return 0


if __name__ == "__main__":
    sys.exit(main())
