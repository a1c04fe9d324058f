"""Render scene JSONs (benchmarks/pathtraced/scenes.py) with Blender Cycles. Runs in .venv-bpy.

Why path tracing: the project's own renderer (companion/synth) paints sprites on a plane, so
its frames share its idea of light. Here light transport is simulated: soft contact shadows
under cards and curled edges, a glossy coating catching the area light and a lamp's glare,
coloured light the camera does not white-balance, denoised low-sample noise. The scene JSON
holds every number; this file only builds and renders it.

    .venv-bpy/bin/python benchmarks/pathtraced/scene_bpy.py SCENE.json... [--scale 0.25]
        [--samples N]

Each scene's `output` (a PNG path) is written; the camera frame is 8-bit sRGB, "Standard"
view transform (no filmic tone curve, as a phone or Pi camera's JPEG).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import bpy
import numpy as np
from mathutils import Matrix, Vector

GRID = (8, 12)
"""Vertices across / along a card: enough for a smooth curl."""


def world(p_mm: Any, z_mm: float = 0.0) -> Vector:
    return Vector((p_mm[0] / 1000.0, -p_mm[1] / 1000.0, z_mm / 1000.0))


def reset() -> bpy.types.Scene:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def image(path: str) -> bpy.types.Image:
    img = bpy.data.images.load(path, check_existing=True)
    img.colorspace_settings.name = "sRGB"
    return img


def principled(name: str) -> tuple[bpy.types.Material, Any, Any]:
    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    nodes = mat.node_tree.nodes
    bsdf = nodes["Principled BSDF"]
    return mat, nodes, bsdf


def textured(name: str, path: str, gloss: dict[str, float] | None) -> bpy.types.Material:
    """A printed surface: the image as base colour; glossy card coating when `gloss`."""
    mat, nodes, bsdf = principled(name)
    tex = nodes.new("ShaderNodeTexImage")
    tex.image = image(path)
    tex.interpolation = "Cubic"
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    if gloss:
        bsdf.inputs["Roughness"].default_value = gloss["roughness"]
        bsdf.inputs["Coat Weight"].default_value = gloss["coat"]
        bsdf.inputs["Coat Roughness"].default_value = gloss["coat_roughness"]
    else:
        bsdf.inputs["Roughness"].default_value = 0.85
    return mat


def paper_edge() -> bpy.types.Material:
    mat, _, bsdf = principled("edge")
    bsdf.inputs["Base Color"].default_value = (0.75, 0.74, 0.70, 1)
    bsdf.inputs["Roughness"].default_value = 0.9
    return mat


def cloth(kind: str, seed: int) -> bpy.types.Material:
    """Felt, wood or plaid, procedural (so the texture never repeats or pixelates)."""
    rng = np.random.default_rng(seed)
    mat, nodes, bsdf = principled(kind)
    links = mat.node_tree.links
    coord = nodes.new("ShaderNodeTexCoord")
    fine = nodes.new("ShaderNodeTexNoise")
    fine.inputs["Scale"].default_value = 900.0
    fine.inputs["Detail"].default_value = 4.0
    links.new(coord.outputs["Object"], fine.inputs["Vector"])
    broad = nodes.new("ShaderNodeTexNoise")
    broad.inputs["Scale"].default_value = 3.0
    links.new(coord.outputs["Object"], broad.inputs["Vector"])
    bump = nodes.new("ShaderNodeBump")
    bump.inputs["Strength"].default_value = 0.15
    links.new(fine.outputs["Fac"], bump.inputs["Height"])
    links.new(bump.outputs["Normal"], bsdf.inputs["Normal"])

    def rgb(base: tuple[float, float, float], spread: float = 0.25) -> tuple:
        c = np.clip(np.array(base) * rng.uniform(1 - spread, 1 + spread, 3), 0, 1)
        return (*c.tolist(), 1.0)

    if kind == "wood":
        wave = nodes.new("ShaderNodeTexWave")
        wave.wave_type = "RINGS" if rng.random() < 0.5 else "BANDS"
        wave.inputs["Scale"].default_value = float(rng.uniform(3, 8))
        wave.inputs["Distortion"].default_value = float(rng.uniform(2, 6))
        wave.inputs["Detail"].default_value = 6.0
        mapping = nodes.new("ShaderNodeMapping")
        mapping.inputs["Scale"].default_value = (0.6, 3.0, 1.0)
        links.new(coord.outputs["Object"], mapping.inputs["Vector"])
        links.new(mapping.outputs["Vector"], wave.inputs["Vector"])
        ramp = nodes.new("ShaderNodeValToRGB")
        dark = rgb((0.18, 0.08, 0.03))
        ramp.color_ramp.elements[0].color = dark
        ramp.color_ramp.elements[1].color = rgb((0.45, 0.25, 0.11))
        links.new(wave.outputs["Fac"], ramp.inputs["Fac"])
        links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
        bsdf.inputs["Roughness"].default_value = float(rng.uniform(0.3, 0.55))
        bsdf.inputs["Coat Weight"].default_value = float(rng.uniform(0.0, 0.3))
        bump.inputs["Strength"].default_value = 0.03
        return mat
    mix = nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    links.new(fine.outputs["Fac"], mix.inputs["Factor"])
    if kind == "plaid":
        # two colour stripes crossing on a base: stripe masks from the object's x and y
        sep = nodes.new("ShaderNodeSeparateXYZ")
        links.new(coord.outputs["Object"], sep.inputs["Vector"])
        period = float(rng.uniform(0.04, 0.09))
        masks = []
        for axis in ("X", "Y"):
            m = nodes.new("ShaderNodeMath")
            m.operation = "PINGPONG"
            m.inputs[1].default_value = period / 2
            links.new(sep.outputs[axis], m.inputs[0])
            gt = nodes.new("ShaderNodeMath")
            gt.operation = "GREATER_THAN"
            gt.inputs[1].default_value = period * float(rng.uniform(0.25, 0.4))
            links.new(m.outputs[0], gt.inputs[0])
            masks.append(gt)
        base = [(0.35, 0.05, 0.05), (0.05, 0.12, 0.3), (0.08, 0.2, 0.08)][int(rng.integers(3))]
        c1 = nodes.new("ShaderNodeMix")
        c1.data_type = "RGBA"
        c1.inputs["A"].default_value = rgb(base)
        c1.inputs["B"].default_value = rgb((0.02, 0.02, 0.03), 0.5)
        links.new(masks[0].outputs[0], c1.inputs["Factor"])
        c2 = nodes.new("ShaderNodeMix")
        c2.data_type = "RGBA"
        c2.blend_type = "MULTIPLY"
        c2.inputs["Factor"].default_value = 0.6
        links.new(c1.outputs["Result"], c2.inputs["A"])
        gray = nodes.new("ShaderNodeMix")
        gray.data_type = "RGBA"
        gray.inputs["A"].default_value = (1, 1, 1, 1)
        gray.inputs["B"].default_value = rgb((0.5, 0.5, 0.4))
        links.new(masks[1].outputs[0], gray.inputs["Factor"])
        links.new(gray.outputs["Result"], c2.inputs["B"])
        links.new(c2.outputs["Result"], mix.inputs["A"])
        links.new(c2.outputs["Result"], mix.inputs["B"])
        mix.blend_type = "MULTIPLY"
        mix.inputs["Factor"].default_value = 0.15
    else:  # felt: mottled, very rough, a little sheen
        base = [
            (0.05, 0.18, 0.07),
            (0.16, 0.16, 0.15),
            (0.04, 0.08, 0.22),
            (0.25, 0.05, 0.05),
            (0.05, 0.05, 0.05),
        ][int(rng.integers(5))]
        mix.inputs["A"].default_value = rgb(base)
        mix.inputs["B"].default_value = rgb(tuple(0.7 * v for v in base), 0.1)
        bsdf.inputs["Sheen Weight"].default_value = 0.4
    shade = nodes.new("ShaderNodeMix")
    shade.data_type = "RGBA"
    shade.blend_type = "MULTIPLY"
    shade.inputs["Factor"].default_value = float(rng.uniform(0.05, 0.2))
    links.new(mix.outputs["Result"], shade.inputs["A"])
    links.new(broad.outputs["Color"], shade.inputs["B"])
    links.new(shade.outputs["Result"], bsdf.inputs["Base Color"])
    bsdf.inputs["Roughness"].default_value = 0.95
    return mat


def card_mesh(name: str, card: dict[str, Any], mats: list[bpy.types.Material]) -> None:
    """A thin box on the card's four corners: top (face or back, UV'd), bottom, and the edge;
    `curl_mm` lifts both long edges (a card that bowed in its box)."""
    nx, ny = GRID
    c = np.asarray(card["corners_mm"], np.float64)  # TL, TR, BR, BL
    z0, th, curl = card["z_mm"], card["thickness_mm"], card["curl_mm"]
    verts: list[Vector] = []
    uvs: list[tuple[float, float]] = []
    for top in (True, False):
        for j in range(ny + 1):
            t = j / ny
            for i in range(nx + 1):
                s = i / nx
                p = (1 - t) * ((1 - s) * c[0] + s * c[1]) + t * ((1 - s) * c[3] + s * c[2])
                lift = curl * (2 * s - 1) ** 2
                verts.append(world(p, z0 + lift + (th if top else 0.0)))
                uvs.append((s, 1 - t))
    n = (nx + 1) * (ny + 1)

    def vid(top: bool, i: int, j: int) -> int:
        return (0 if top else n) + j * (nx + 1) + i

    faces: list[tuple[int, ...]] = []
    mat_ids: list[int] = []
    for j in range(ny):
        for i in range(nx):
            faces.append(
                (vid(True, i, j + 1), vid(True, i + 1, j + 1), vid(True, i + 1, j), vid(True, i, j))
            )
            mat_ids.append(0)
            faces.append(
                (
                    vid(False, i, j),
                    vid(False, i + 1, j),
                    vid(False, i + 1, j + 1),
                    vid(False, i, j + 1),
                )
            )
            mat_ids.append(1)
    ring = (
        [(i, 0) for i in range(nx)]
        + [(nx, j) for j in range(ny)]
        + [(i, ny) for i in range(nx, 0, -1)]
        + [(0, j) for j in range(ny, 0, -1)]
    )
    for k, (i, j) in enumerate(ring):
        i2, j2 = ring[(k + 1) % len(ring)]
        faces.append((vid(True, i, j), vid(True, i2, j2), vid(False, i2, j2), vid(False, i, j)))
        mat_ids.append(2)
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in verts], [], faces)
    uv = mesh.uv_layers.new(name="UV")
    for poly in mesh.polygons:
        for li in poly.loop_indices:
            uv.data[li].uv = uvs[mesh.loops[li].vertex_index]
    for m in mats:
        mesh.materials.append(m)
    mesh.polygons.foreach_set("material_index", mat_ids)
    mesh.polygons.foreach_set("use_smooth", [curl > 0] * len(mat_ids))
    mesh.validate()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)


def quad(name: str, x0: float, y0: float, x1: float, y1: float, z: float, mat: Any) -> None:
    verts = [world((x0, y1), z), world((x1, y1), z), world((x1, y0), z), world((x0, y0), z)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata([tuple(v) for v in verts], [], [(0, 1, 2, 3)])
    uv = mesh.uv_layers.new(name="UV")
    for li, (u, v) in zip(range(4), [(0, 0), (1, 0), (1, 1), (0, 1)], strict=True):
        uv.data[li].uv = (u, v)
    mesh.materials.append(mat)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)


def aim(obj: bpy.types.Object, target: Vector) -> None:
    obj.rotation_euler = (target - obj.location).to_track_quat("-Z", "Y").to_euler()


def build(scene_json: dict[str, Any], scale: float, samples: int | None) -> bpy.types.Scene:
    sc = reset()
    light = scene_json["light"]
    colour = (*light["colour"], 1.0)
    # table
    quad("table", -560, -460, 1340, 900, 0.0, cloth(scene_json["cloth"], scene_json["cloth_seed"]))
    # marker tiles: paper 0.1 mm thick, the black square inside a white quiet zone
    for m in scene_json["markers"]:
        x0, y0, x1, y1 = m["square_mm"]
        q = m["quiet_mm"]
        quad(
            f"marker{m['id']}",
            x0 - q,
            y0 - q,
            x1 + q,
            y1 + q,
            0.1,
            textured(f"m{m['id']}", m["png"], None),
        )
    # cards, in draw order
    edge = paper_edge()
    back = textured("back", scene_json["back_png"], scene_json["gloss"])
    for k, card in enumerate(scene_json["cards"]):
        top = textured(f"face{k}", card["png"], scene_json["gloss"]) if card["face_up"] else back
        card_mesh(f"card{k}", card, [top, back, edge])
    # lights
    area = light["area"]
    ld = bpy.data.lights.new("area", "AREA")
    ld.shape = "DISK"
    ld.size = area["size_mm"] / 1000.0
    ld.energy = area["power_w"]
    ld.color = colour[:3]
    lo = bpy.data.objects.new("area", ld)
    lo.location = world(area["position_mm"][:2], area["position_mm"][2])
    sc.collection.objects.link(lo)
    aim(lo, world((390, 220)))
    if light["lamp"]:
        lamp = light["lamp"]
        pd = bpy.data.lights.new("lamp", "POINT")
        pd.shadow_soft_size = lamp["radius_mm"] / 1000.0
        pd.energy = lamp["power_w"]
        pd.color = colour[:3]
        po = bpy.data.objects.new("lamp", pd)
        po.location = world(lamp["position_mm"][:2], lamp["position_mm"][2])
        po.visible_camera = False
        sc.collection.objects.link(po)
    wo = bpy.data.worlds.new("room")
    wo.use_nodes = True
    bg = wo.node_tree.nodes["Background"]
    bg.inputs["Color"].default_value = colour
    bg.inputs["Strength"].default_value = light["ambient"]
    sc.world = wo
    # camera
    cam = scene_json["camera"]
    cd = bpy.data.cameras.new("cam")
    cd.sensor_fit = "HORIZONTAL"
    cd.sensor_width = 36.0
    cd.lens = 18.0 / math.tan(math.radians(cam["hfov_deg"]) / 2)
    cd.clip_start = 0.01
    co = bpy.data.objects.new("cam", cd)
    r = Matrix(cam["rotation"]).to_4x4()
    r.translation = Vector(cam["position"])
    co.matrix_world = r
    sc.collection.objects.link(co)
    sc.camera = co
    # render settings
    sc.render.engine = "CYCLES"
    sc.cycles.device = "CPU"
    sc.cycles.samples = samples or scene_json.get("samples", 6)
    sc.cycles.use_adaptive_sampling = False
    sc.cycles.use_denoising = True
    sc.cycles.denoiser = "OPENIMAGEDENOISE"
    sc.cycles.denoising_input_passes = "RGB_ALBEDO_NORMAL"
    sc.cycles.max_bounces = 4
    sc.cycles.diffuse_bounces = 2
    sc.cycles.glossy_bounces = 2
    sc.cycles.transmission_bounces = 0
    sc.cycles.transparent_max_bounces = 0
    sc.cycles.seed = zlib.crc32(json.dumps(scene_json["seed"]).encode()) % (1 << 30)
    sc.render.threads_mode = "AUTO"
    sc.render.resolution_x = cam["width"]
    sc.render.resolution_y = cam["height"]
    sc.render.resolution_percentage = round(100 * scale)
    sc.render.pixel_aspect_x = sc.render.pixel_aspect_y = 1.0
    sc.view_settings.view_transform = "Standard"
    sc.view_settings.look = "None"
    sc.view_settings.exposure = light["exposure"]
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    sc.render.image_settings.color_depth = "8"
    return sc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("scenes", nargs="+", type=Path)
    ap.add_argument("--scale", type=float, default=1.0, help="resolution scale (previews)")
    ap.add_argument("--samples", type=int, help="samples per pixel (default: the scene's)")
    args = ap.parse_args(argv)
    for path in args.scenes:
        data = json.loads(path.read_text())
        t = time.perf_counter()
        sc = build(data, args.scale, args.samples)
        sc.render.filepath = str(Path(data["output"]).resolve())
        bpy.ops.render.render(write_still=True)
        print(f"rendered {data['output']} in {time.perf_counter() - t:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else None))
