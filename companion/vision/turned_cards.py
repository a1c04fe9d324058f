"""Whole cards lying turned on the table (a fanned scan pile, a card dropped askew).

The strip finder boxes bands lying along the table's axes (to ~15 degrees); a card turned
further is found here by its outline instead, whatever its print: two long straight edges,
parallel, one card width apart (or two short ones one card length apart) whose extent along
them is a card's, or one edge along a card's side with the card on either side of it (the
fan's next card hides the other edges). A rim that is light here and dark there against the
cloth (foil, stripes, art to the edge) is found as a ridge of the gradient and from its
pieces. A pose is kept when most of its outline shows an edge across it. Such a card is named
through a calibration turned with it, so the namers see it upright and read it as they read
any other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Final

import cv2
import numpy as np

from companion import layout
from companion.vision.calibration import TableCalibration
from companion.vision.naming import Naming

MIN_TURN_DEG: Final = 12.0
"""Cards turned less than this from the table's axes are the strip finder's (its namers
deskew by up to 14 degrees)."""
WORK_PX_PER_MM: Final = 1.0
"""Edges are looked for at this scale (a card's rim is sharp enough at 1 px/mm)."""
MIN_EDGE_MM: Final = 40.0
"""A side must show this much of its straight edge (the other card of a fan hides the rest)."""
MAX_EDGES: Final = 96
"""The longest straight edges turned off the table's axes that are looked at (a frame shows a
few dozen: hands, art, the fan's other cards; most are found twice, as edge and as ridge)."""
APART_TOLERANCE_MM: Final = 5.0
"""Two parallel sides are one card's when they lie its width (or length) apart to this much."""
PARALLEL_DEG: Final = 4.0
"""Two edges this close in direction are parallel (LSD's angles at 1 px/mm: ~1 degree)."""
SPAN_TOLERANCE_MM: Final = 9.0
"""The two sides' joint extent along them is the card's other dimension to this much."""
SAME_CARD_MM: Final = 12.0
"""Poses whose centres are closer than this are one card (the best-supported is kept)."""
SNAP_MM: Final = 18.0
SNAP_ACROSS_MM: Final = 2.0
"""A pose found from edges is snapped onto the best outline this far along the card's long
side (a fan's cards are offset along it, their edges parallel) and across it."""
EDGE_STEP_MM: Final = 4.0
"""Places tried along a card's side for an edge shorter than it (snapped to 2 mm after)."""
FRAGMENT_MIN_MM: Final = 8.0
FRAGMENT_PARALLEL_DEG: Final = 8.0
FRAGMENT_OFF_MM: Final = 1.5
FRAGMENT_GAP_MM: Final = 16.0
"""Pieces of one straight edge (_joined_fragments): at least this long, this parallel, this far
off each other's line at most, with gaps along it no longer than this."""
MIN_SUPPORT: Final = 0.85
"""Share of a pose's outline that must show an edge across it."""
QUICK_MARGIN: Final = 0.15
"""A pose whose outline's every third point shows MIN_SUPPORT less this is looked at whole."""
EDGE_LEVEL: Final = 40.0
"""Sobel response (3 x 3, grey levels) of an edge: a card's rim on cloth gives 100-400, on
another card 40-150."""
MAX_CARDS: Final = 6
"""At most this many turned cards are named per frame (a fanned pile shows one whole)."""


@dataclass(frozen=True, slots=True)
class CardPose:
    """A whole card on the table plane."""

    center_mm: tuple[float, float]
    angle_deg: float
    """The card's turn on the plane, 0 when its long side runs along the table's y axis; which
    end is the top is not known (the namers read both ways up)."""

    @property
    def rotation(self) -> np.ndarray:
        """2 x 2: the card's frame (x across it, y along its long side, mm from its centre)
        turned onto the plane; its long axis is (sin a, cos a) there, as Naming.angle_deg's."""
        a = math.radians(self.angle_deg)
        ca, sa = math.cos(a), math.sin(a)
        return np.array([[ca, sa], [-sa, ca]])

    def to_plane(self, local_mm: np.ndarray) -> np.ndarray:
        """Points (n x 2) of the card's frame on the table plane, mm."""
        return np.asarray(local_mm, np.float64) @ self.rotation.T + np.asarray(self.center_mm)

    def to_card(self, point_mm: tuple[float, float]) -> tuple[float, float]:
        """A point of the table plane in the card's frame."""
        x, y = self.rotation.T @ (np.asarray(point_mm, np.float64) - np.asarray(self.center_mm))
        return float(x), float(y)

    def corners_mm(self) -> np.ndarray:
        """The card's 4 corners on the plane (4 x 2, mm)."""
        hw, hh = layout.CARD_W_MM / 2, layout.CARD_H_MM / 2
        return self.to_plane(np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]]))


LSD_SCALE: Final = 0.6
"""LSD looks at the view scaled by this (its default 0.8 took 14 ms a view here, 0.6 about 8,
and found as many cards; 0.5 lost 2 of 48)."""


def _segments(gray: np.ndarray) -> np.ndarray:
    """Straight edges (x0, y0, x1, y1 px) of a grey view."""
    lsd = cv2.createLineSegmentDetector(cv2.LSD_REFINE_NONE, LSD_SCALE)
    found = lsd.detect(gray)[0]
    return np.zeros((0, 4), np.float32) if found is None else found.reshape(-1, 4)


def _joined_fragments(segs: np.ndarray) -> np.ndarray:
    """Edges rebuilt from collinear pieces (x0, y0, x1, y1, mm), each spanning its pieces.

    LSD follows one polarity of an edge: a card whose rim is light here and dark there against
    the cloth (foil, stripes, full-bleed art reaching the edge) shows its side as short pieces
    on one line, none MIN_EDGE_MM long."""
    d = segs[:, 2:] - segs[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    angle = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 90.0
    turned = np.minimum(angle, 90.0 - angle) >= MIN_TURN_DEG - 2 * PARALLEL_DEG
    pieces = np.flatnonzero((length >= FRAGMENT_MIN_MM) & turned)
    if len(pieces) < 2:
        return np.zeros((0, 4))
    u = d[pieces] / length[pieces, None]
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    mid = (segs[pieces, :2] + segs[pieces, 2:]) / 2
    # j on i's line: both of j's ends within FRAGMENT_OFF_MM of it (a short piece's own
    # direction is a few degrees off), the gap between them along it short
    starts, ends = segs[pieces, :2], segs[pieces, 2:]
    off = np.maximum(
        np.abs(np.einsum("ik,ijk->ij", n, starts[None, :, :] - mid[:, None, :])),
        np.abs(np.einsum("ik,ijk->ij", n, ends[None, :, :] - mid[:, None, :])),
    )
    along = np.abs(np.einsum("ik,ijk->ij", u, mid[None, :, :] - mid[:, None, :]))
    half = length[pieces] / 2
    gap = along - half[:, None] - half[None, :]
    longer = length[pieces][:, None] >= length[pieces][None, :]
    on_line = np.where(longer, off, off.T) <= FRAGMENT_OFF_MM
    link = (np.abs(u @ u.T) >= math.cos(math.radians(FRAGMENT_PARALLEL_DEG))) & on_line
    link &= gap <= FRAGMENT_GAP_MM
    count, label = _components(link)
    out = []
    for k in range(count):
        members = np.flatnonzero(label == k)
        if len(members) < 2:
            continue
        lead = members[np.argmax(length[pieces[members]])]
        ends = np.concatenate([segs[pieces[members], :2], segs[pieces[members], 2:]])
        t = (ends - mid[lead]) @ u[lead]
        out.append(np.concatenate([mid[lead] + u[lead] * t.min(), mid[lead] + u[lead] * t.max()]))
    return np.array(out).reshape(-1, 4)


def _components(link: np.ndarray) -> tuple[int, np.ndarray]:
    """Connected components of a symmetric boolean adjacency matrix."""
    label = np.full(len(link), -1)
    count = 0
    for start in range(len(link)):
        if label[start] >= 0:
            continue
        stack = [start]
        label[start] = count
        while stack:
            i = stack.pop()
            for j in np.flatnonzero(link[i] & (label < 0)):
                label[j] = count
                stack.append(int(j))
        count += 1
    return count, label


def turned_cards(view: np.ndarray, ppm: float = layout.RECTIFIED_PX_PER_MM) -> list[CardPose]:
    """Whole cards turned MIN_TURN_DEG or more in a top-down view at `ppm` px/mm, best first."""
    gray = view if view.ndim == 2 else cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
    s = WORK_PX_PER_MM / ppm
    if s != 1.0:
        gray = cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA)
    segs = _segments(gray).astype(np.float64) / WORK_PX_PER_MM
    if len(segs) == 0:
        return []
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    # LSD follows one polarity of an edge; the gradient's magnitude has none: a rim light
    # here and dark there against the cloth is one ridge there (halved: rims stay in 8 bits)
    ridges = _segments(cv2.convertScaleAbs(cv2.magnitude(gx, gy), alpha=0.5))
    segs = np.concatenate([segs, ridges / WORK_PX_PER_MM, _joined_fragments(segs)])
    d = segs[:, 2:] - segs[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    angle = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180.0
    off = np.minimum(angle % 90.0, 90.0 - angle % 90.0)
    keep = (length >= MIN_EDGE_MM) & (off >= MIN_TURN_DEG - PARALLEL_DEG)
    longest = np.argsort(-length[keep])[:MAX_EDGES]
    segs, angle = segs[keep][longest], angle[keep][longest]
    hypotheses: list[CardPose] = []
    da = np.abs(angle[:, None] - angle[None, :])
    parallel = np.triu(np.minimum(da, 180.0 - da) <= PARALLEL_DEG, 1)
    for i, j in zip(*np.nonzero(parallel), strict=True):
        hypotheses.extend(_pair_poses(segs[i], segs[j]))
    for seg in segs:
        hypotheses.extend(_edge_poses(seg))
    if not hypotheses:
        return []
    # a quick look at every third outline point first: most hypotheses are far off
    support = outline_support(gx, gy, hypotheses, every=3)
    near = np.flatnonzero(support >= MIN_SUPPORT - QUICK_MARGIN)
    if len(near):
        support[near] = outline_support(gx, gy, [hypotheses[k] for k in near])
    out: list[tuple[float, CardPose]] = []
    tried: list[CardPose] = []
    for k in np.argsort(-support, kind="stable"):
        if support[k] < MIN_SUPPORT or len(out) == MAX_CARDS:
            break
        if any(_same_pose(hypotheses[k], t) for t in tried):
            continue  # one edge found twice (as itself and as a ridge) poses a card twice
        tried.append(hypotheses[k])
        # snapped onto the outline that fits best nearby: a fan's other cards lay edges
        # parallel to this one's a few millimetres away, and one of them may have made it
        best, pose = _snapped(gx, gy, hypotheses[k])
        if all(math.dist(pose.center_mm, o.center_mm) > SAME_CARD_MM for _, o in out):
            out.append((best, pose))
    out.sort(key=lambda f: -f[0])
    return [pose for _, pose in out]


def _same_pose(a: CardPose, b: CardPose) -> bool:
    """Within a millimetre and a degree: snapped alike."""
    turn = abs((a.angle_deg - b.angle_deg + 90.0) % 180.0 - 90.0)
    return math.dist(a.center_mm, b.center_mm) <= 1.0 and turn <= 1.0


def _snapped(gx: np.ndarray, gy: np.ndarray, pose: CardPose) -> tuple[float, CardPose]:
    """The pose within SNAP_MM along and SNAP_ACROSS_MM across the card of `pose` whose
    outline shows the most edge (the nearest such), and that share; `gx`, `gy`: the view's
    Sobel gradients."""
    shifts = np.array(
        [
            (dx, dy)
            for dx in (-SNAP_ACROSS_MM, 0.0, SNAP_ACROSS_MM)
            for dy in np.arange(-SNAP_MM, SNAP_MM + 1e-6, 2.0)
        ]
    )
    cands = [CardPose((float(x), float(y)), pose.angle_deg) for x, y in pose.to_plane(shifts)]
    support = outline_support(gx, gy, cands)
    k = int(np.lexsort((np.hypot(shifts[:, 0], shifts[:, 1]), -support))[0])
    return float(support[k]), cands[k]


def _pose(centre: np.ndarray, long_axis: np.ndarray) -> CardPose | None:
    turn = math.degrees(math.atan2(long_axis[0], long_axis[1]))
    turn = (turn + 90.0) % 180.0 - 90.0
    if abs((turn + 45.0) % 90.0 - 45.0) < MIN_TURN_DEG:
        return None
    return CardPose((float(centre[0]), float(centre[1])), turn)


def _frame(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u = seg[2:] - seg[:2]
    u = u / np.linalg.norm(u)
    return u, np.array([-u[1], u[0]])


def _pair_poses(a: np.ndarray, b: np.ndarray) -> list[CardPose]:
    """Two parallel edges as a card's two long (or two short) sides, if they fit one."""
    u, n = _frame(a)
    apart = float(np.dot((b[:2] + b[2:]) / 2 - (a[:2] + a[2:]) / 2, n))
    along_a = sorted((float(np.dot(a[:2], u)), float(np.dot(a[2:], u))))
    along_b = sorted((float(np.dot(b[:2], u)), float(np.dot(b[2:], u))))
    lo, hi = min(along_a[0], along_b[0]), max(along_a[1], along_b[1])
    if min(along_a[1], along_b[1]) - max(along_a[0], along_b[0]) < MIN_EDGE_MM / 2:
        return []  # the two edges must face each other
    w, h = layout.CARD_W_MM, layout.CARD_H_MM
    for across, along, long_sides in ((w, h, True), (h, w, False)):
        if abs(abs(apart) - across) > APART_TOLERANCE_MM:
            continue
        if abs((hi - lo) - along) > SPAN_TOLERANCE_MM:
            continue
        base = float(np.dot(a[:2], n))
        centre = u * (lo + hi) / 2 + n * (base + apart / 2)
        pose = _pose(centre, u if long_sides else n)
        return [] if pose is None else [pose]
    return []


def _edge_poses(seg: np.ndarray) -> list[CardPose]:
    """One straight edge along a card's side: the card lies on one side of it or the other
    (the fan's next card hides its other edges). An edge shorter than the side (the rest lost
    to glare or to a rim the cloth matches) leaves the card's place along it open: every place
    that covers it, EDGE_STEP_MM apart."""
    u, n = _frame(seg)
    length = float(np.linalg.norm(seg[2:] - seg[:2]))
    mid = (seg[:2] + seg[2:]) / 2
    w, h = layout.CARD_W_MM, layout.CARD_H_MM
    out = []
    for side, across, long_side in ((h, w, True), (w, h, False)):
        if not MIN_EDGE_MM <= length <= side + APART_TOLERANCE_MM:
            continue
        slack = max(0.0, side - SPAN_TOLERANCE_MM - length) / 2
        steps = np.arange(-slack, slack + 1e-6, EDGE_STEP_MM) if slack else np.zeros(1)
        for shift in steps:
            for sign in (1.0, -1.0):
                pose = _pose(mid + u * shift + sign * n * across / 2, u if long_side else n)
                if pose is not None:
                    out.append(pose)
    return out


def _outline_template() -> tuple[np.ndarray, np.ndarray]:
    """Points every ~2 mm along an upright card's outline (card frame, mm), and the normal of
    the side each lies on."""
    hw, hh = layout.CARD_W_MM / 2, layout.CARD_H_MM / 2
    pts, normals = [], []
    for (x0, y0), (x1, y1), nrm in (
        ((-hw, -hh), (hw, -hh), (0.0, 1.0)),
        ((hw, -hh), (hw, hh), (1.0, 0.0)),
        ((hw, hh), (-hw, hh), (0.0, 1.0)),
        ((-hw, hh), (-hw, -hh), (1.0, 0.0)),
    ):
        k = max(2, round(math.hypot(x1 - x0, y1 - y0) / 2.0))
        t = np.linspace(0.05, 0.95, k)
        pts.append(np.stack([x0 + t * (x1 - x0), y0 + t * (y1 - y0)], axis=1))
        normals.append(np.tile(nrm, (k, 1)))
    return np.concatenate(pts), np.concatenate(normals)


_OUTLINE: Final = _outline_template()


def outline_support(
    gx: np.ndarray, gy: np.ndarray, poses: list[CardPose], every: int = 1
) -> np.ndarray:
    """Per pose, the share of its outline where the view (its Sobel gradients `gx`, `gy`) has
    an edge across it within a pixel: a real card shows most of its outline, a pose on the
    wrong side of an edge little. `every`: only every so many outline points (a quick look)."""
    a = np.radians([p.angle_deg for p in poses])
    ca, sa = np.cos(a)[:, None], np.sin(a)[:, None]
    local, normals = _OUTLINE[0][::every], _OUTLINE[1][::every]
    cx = np.array([p.center_mm[0] for p in poses])[:, None]
    cy = np.array([p.center_mm[1] for p in poses])[:, None]
    # each card's frame turned onto the plane (CardPose.rotation, all poses at once)
    x = (ca * local[:, 0] + sa * local[:, 1] + cx) * WORK_PX_PER_MM
    y = (-sa * local[:, 0] + ca * local[:, 1] + cy) * WORK_PX_PER_MM
    nx = ca * normals[:, 0] + sa * normals[:, 1]
    ny = -sa * normals[:, 0] + ca * normals[:, 1]
    h, w = gx.shape
    inside = (x >= 0) & (x < w) & (y >= 0) & (y < h)
    across = edge_across(gx, gy, np.round(x).astype(int), np.round(y).astype(int), nx, ny)
    return np.mean((across >= EDGE_LEVEL) & inside, axis=1)


def edge_across(
    gx: np.ndarray,
    gy: np.ndarray,
    xi: np.ndarray,
    yi: np.ndarray,
    nx: np.ndarray | float,
    ny: np.ndarray | float,
) -> np.ndarray:
    """At each pixel (`xi`, `yi`), the strongest edge across the direction (`nx`, `ny`) within a
    pixel of it (Sobel gradients `gx`, `gy`): a drawn outline a pixel off still meets its edge."""
    h, w = gx.shape
    across = np.zeros(np.shape(xi), np.float32)
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            xs, ys = np.clip(xi + dx, 0, w - 1), np.clip(yi + dy, 0, h - 1)
            across = np.maximum(across, np.abs(gx[ys, xs] * nx + gy[ys, xs] * ny))
    return across


def turned_calibration(
    cal: TableCalibration, pose: CardPose, at_mm: tuple[float, float] | None = None
) -> TableCalibration:
    """`cal` turned about the card's centre so that the card lies upright in it (its centre
    where it is, or moved to `at_mm`): the namers, which read bands along the plane's axes, see
    it straight."""
    rot = pose.rotation
    c = np.asarray(pose.center_mm, np.float64)
    at = c if at_mm is None else np.asarray(at_mm, np.float64)
    plane_from_upright = np.eye(3)
    plane_from_upright[:2, :2] = rot
    plane_from_upright[:2, 2] = c - rot @ at
    return replace(cal, image_from_plane=cal.image_from_plane @ plane_from_upright)


def band_boxes(pose: CardPose) -> tuple[tuple[float, float, float, float], ...]:
    """The card's two end bands (x0, y0, x1, y1 mm) in its turned calibration."""
    cx, cy = pose.center_mm
    hw, hh, band = layout.CARD_W_MM / 2, layout.CARD_H_MM / 2, layout.INDEX_STRIP_MM
    return (cx - hw, cy - hh, cx + hw, cy - hh + band), (cx - hw, cy + hh - band, cx + hw, cy + hh)


def from_turned(
    point_mm: tuple[float, float], pose: CardPose, at_mm: tuple[float, float] | None = None
) -> tuple[float, float]:
    """A point of the pose's turned calibration (`turned_calibration`, the same `at_mm`) on
    the table plane."""
    at = pose.center_mm if at_mm is None else at_mm
    local = np.asarray(point_mm, np.float64) - np.asarray(at)
    x, y = pose.to_plane(local[None])[0]
    return float(x), float(y)


def on_plane(naming: Naming, pose: CardPose, at_mm: tuple[float, float] | None = None) -> Naming:
    """A naming read in the pose's turned calibration (`turned_calibration`, the same
    `at_mm`), placed back on the table plane."""
    return replace(
        naming,
        center_mm=from_turned(naming.center_mm, pose, at_mm),
        angle_deg=naming.angle_deg + pose.angle_deg,
    )
