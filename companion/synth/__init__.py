"""Synthetic table scenes: what the Pi camera would see, with exact ground truth.

Nobody has photos of these cards, so the detector is trained and judged on rendered frames.
Flow: `scene` (what lies where, in table-plane mm) -> `plane` (top-down raster with an object-id
buffer, so visibility is exact) -> `camera` (perspective, lens, light, noise, JPEG) -> `truth`
(per-card polygons and visible fractions) -> `dataset` (ultralytics training set) and
`recording` (a whole simulated game as a video with its true events). Everything is
deterministic by seed.
"""
