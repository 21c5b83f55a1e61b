"""TPU figures checked by brute force over physical offsets of small tiled shapes.

The reference: ``reference.ref_layout`` (the spec's pad-reshape-transpose, on a numpy array of
element numbers) for offsets and the padded size; the tile of an element from the seed's
formula ``linear_index(floor(e / t), ceil(d / t))``; read sets by evaluating the maps at every
domain point. Nothing here uses ``hlo_index.layout`` or the analysis' own arithmetic.
"""

from __future__ import annotations

import itertools
from math import ceil, prod
from pathlib import Path

import pytest

from hlo_index.affine import parse_map
from hlo_index.analyses.gpu_target import detect_target
from hlo_index.analyses.tpu_tiles import tpu_operand
from hlo_index.hlo import parse_module_text, parse_shape
from hlo_index.reference.ref_layout import physical_memory, reference_offsets

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
BITS = {"f32": 32, "bf16": 16, "s8": 8, "s32": 32, "f64": 64}


def _physical_dims(shape):
    m2m = shape.layout.minor_to_major
    return [shape.dims[d] for d in reversed(m2m)], list(reversed(m2m))


def _tile_of(shape, index) -> int:
    """The seed's tile index of logical ``index`` under the layout's first tile (no '*')."""
    dims, order = _physical_dims(shape)
    e = [index[d] for d in order]
    t = list(shape.layout.tiles[0].dims)
    while len(t) < len(dims):  # a shorter tile leaves the major dims whole
        t.insert(0, 1)
    while len(dims) < len(t):  # a longer one sees leading 1-dims
        dims.insert(0, 1)
        e.insert(0, 0)
    counts = [ceil(d / s) for d, s in zip(dims, t)]
    tile = 0
    for q, c in zip((x // s for x, s in zip(e, t)), counts):
        tile = tile * c + q
    return tile


def _tile_count(shape) -> int:
    dims, _ = _physical_dims(shape)
    t = list(shape.layout.tiles[0].dims)
    while len(t) < len(dims):
        t.insert(0, 1)
    while len(dims) < len(t):
        dims.insert(0, 1)
    return prod(ceil(d / s) for d, s in zip(dims, t))


def _domain(m):
    boxes = [range(b.lo, b.hi + 1) for b in m.dims] + [range(b.lo, b.hi + 1) for b in m.range_vars]
    return itertools.product(*boxes)


def _read(m, point):
    n = m.num_dims
    return m.evaluate(point[:n], point[n:])


def _expected(m, shape, minor):
    bits = BITS[shape.element_type]
    memory = physical_memory(shape)
    offsets = reference_offsets(shape)
    total = prod(shape.dims)
    laid_out = ceil(len(memory) * bits / 8)
    logical = ceil(total * bits / 8)
    read = {_read(m, p) for p in _domain(m)}
    tiles_read = {_tile_of(shape, e) for e in read}
    tiles = _tile_count(shape)
    tile_bytes = laid_out // tiles
    used = ceil(len(read) * bits / 8)
    steps: dict[str, int] = {}
    for p in _domain(m):
        if p[minor] == m.dims[minor].hi:
            continue
        q = list(p)
        q[minor] += 1
        a, b = _read(m, p), _read(m, tuple(q))
        oa, ob = int(offsets[a]), int(offsets[b])
        wa, wb = oa * bits // 32, ob * bits // 32
        if a == b:
            kind = "invariant"
        elif _tile_of(shape, a) != _tile_of(shape, b):
            kind = "across tiles"
        elif wa == wb:
            kind = "sublanes"  # the other element of a packed word: the (2,1) sub-tile packs rows
        elif wa // 128 == wb // 128:
            kind = "lanes"
        elif wa % 128 == wb % 128:
            kind = "sublanes"
        else:
            kind = "mixed"
        steps[kind] = steps.get(kind, 0) + 1
    return {
        "laid_out_bytes": laid_out,
        "logical_bytes": logical,
        "padding_share": (laid_out - logical) / laid_out,
        "tiles": tiles,
        "tile_bytes": tile_bytes,
        "tiles_read": len(tiles_read),
        "bytes_used": used,
        "tile_utilization": used / (len(tiles_read) * tile_bytes),
        "steps": steps,
    }


CASES = [
    # (operand shape, map from the output, output shape)
    ("bf16[20,260]{1,0:T(8,128)(2,1)}", "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 259]", "bf16[20,260]"),
    ("bf16[20,260]{1,0:T(8,128)(2,1)}", "(d0, d1) -> (d1, d0), domain: d0 in [0, 259], d1 in [0, 19]", "bf16[260,20]"),
    ("f32[3,5]{1,0:T(2,2)}", "(d0, d1) -> (d1, d0), domain: d0 in [0, 4], d1 in [0, 2]", "f32[5,3]"),
    ("f32[20,300]{0,1:T(8,128)}", "(d0, d1) -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 299]", "f32[20,300]"),
    ("f32[20,300]{1,0:T(8,128)}", "(d0, d1) -> (d0 + 4, d1 * 2), domain: d0 in [0, 9], d1 in [0, 149]", "f32[10,150]"),
    ("f32[20,300]{1,0:T(8,128)}", "(d0)[s0] -> (d0, s0), domain: d0 in [0, 19], s0 in [0, 299]", "f32[20]"),
    ("bf16[300]{0:T(256)(128)(2,1)}", "(d0, d1) -> (d1), domain: d0 in [0, 3], d1 in [0, 299]", "bf16[4,300]"),
    ("bf16[300]{0:T(256)(128)(2,1)}", "(d0, d1) -> (d0), domain: d0 in [0, 299], d1 in [0, 3]", "bf16[300,4]"),
    ("s8[17,260]{1,0:T(8,128)(4,1)}", "(d0, d1) -> (d1, d0), domain: d0 in [0, 259], d1 in [0, 16]", "s8[260,17]"),
    ("f32[2,8,130]{2,1,0:T(8,128)}", "(d0, d1) -> (d0, 3, d1), domain: d0 in [0, 1], d1 in [0, 129]", "f32[2,130]"),
    ("f32[]{:T(256)}", "(d0) -> (), domain: d0 in [0, 7]", "f32[8]"),
    # sparse reads: tiles counted per box of the logical index space, under a permuted layout
    # and a tile longer than the shape
    (
        "f32[3,20,300]{2,0,1:T(8,128)}",
        "(d0, d1, d2) -> (d0, d1 * 2 + 1, d2 * 3), domain: d0 in [0, 2], d1 in [0, 9], d2 in [0, 99]",
        "f32[3,10,100]",
    ),
    ("f32[300]{0:T(2,128)}", "(d0) -> (d0 * 3), domain: d0 in [0, 99]", "f32[100]"),
    ("bf16[40,7]{0,1:T(16,4)(2,1)}", "(d0) -> (d0 * 3, 6), domain: d0 in [0, 13]", "bf16[14]"),
]


@pytest.mark.parametrize("shape_text, map_text, output_text", CASES)
def test_tpu_figures_match_brute_force_over_physical_offsets(shape_text, map_text, output_text):
    shape, output = parse_shape(shape_text), parse_shape(output_text)
    m = parse_map(map_text)
    minor = output.rank - 1 - next(i for i, d in enumerate(reversed(output.dims)) if d > 1)
    figure = tpu_operand([m], shape, output)
    expected = _expected(m, shape, minor)
    assert figure["target"] == "tpu"
    assert figure["minor_output_dim"] == minor
    for key, value in expected.items():
        assert figure[key] == pytest.approx(value) if isinstance(value, float) else figure[key] == value, key
    best = max(expected["steps"].values())
    assert expected["steps"][figure["minor_walk"]] == best
    assert "contiguous" not in figure["summary"] and "th element" not in figure["summary"]


def test_bf16_rows_share_a_word_and_columns_walk_lanes():
    shape = parse_shape("bf16[16,256]{1,0:T(8,128)(2,1)}")
    rows = tpu_operand([parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 15], d1 in [0, 255]")], shape, shape)
    assert rows["minor_walk"] == "lanes"
    cols = tpu_operand(
        [parse_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 255], d1 in [0, 15]")], shape, parse_shape("bf16[256,16]")
    )
    assert cols["minor_walk"] == "sublanes"


def test_padding_and_partial_tiles():
    # f32[3,5] in 2x2 tiles (the spec's figure 1): 6 tiles of 4 elements, 9 of 24 slots padding.
    shape = parse_shape("f32[3,5]{1,0:T(2,2)}")
    figure = tpu_operand([parse_map("(d0) -> (2, d0), domain: d0 in [0, 4]")], shape, parse_shape("f32[5]"))
    assert (figure["tiles"], figure["tile_bytes"], figure["laid_out_bytes"]) == (6, 16, 96)
    assert figure["padding_share"] == pytest.approx(36 / 96)
    assert figure["tiles_read"] == 3 and figure["bytes_used"] == 20
    assert figure["tile_utilization"] == pytest.approx(20 / 48)


def test_auto_picks_tpu_for_tiled_layouts_memory_spaces_and_pallas():
    tiled = parse_module_text(
        "HloModule m\nENTRY e {\n  p = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
        "  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)\n}\n"
    )
    assert detect_target(tiled).target == "tpu"
    spaced = parse_module_text(
        "HloModule m\nENTRY e {\n  p = f32[8]{0:S(1)} parameter(0)\n  ROOT n = f32[8]{0} negate(p)\n}\n"
    )
    assert detect_target(spaced).target == "tpu"
    plain = parse_module_text(
        "HloModule m\nENTRY e {\n  p = f32[8]{0} parameter(0)\n  ROOT n = f32[8]{0} negate(p)\n}\n"
    )
    assert detect_target(plain).target == "cpu"
    assert detect_target(tiled, "cpu").target == "cpu"


def test_layouts_decide_only_where_no_gpu_or_cpu_construct_does():
    # XLA:GPU dumps may write S(n) memory spaces (and tile): a GPU construct decides first
    gpu = parse_module_text(
        "HloModule m\nENTRY e {\n  p = f32[8,128]{1,0:T(8,128)S(1)} parameter(0)\n"
        '  ROOT c = f32[8,128]{1,0} custom-call(p), custom_call_target="__cublas$gemm"\n}\n'
    )
    choice = detect_target(gpu)
    assert choice.target == "gpu" and "tiled" not in choice.evidence and "S(n)" not in choice.evidence
    # a Pallas call decides TPU even beside a GPU construct
    pallas = parse_module_text(
        "HloModule m\nENTRY e {\n  p = f32[8,128]{1,0} parameter(0)\n"
        '  g = f32[8,128]{1,0} custom-call(p), custom_call_target="__cublas$gemm"\n'
        '  ROOT t = f32[8,128]{1,0} custom-call(g), custom_call_target="tpu_custom_call"\n}\n'
    )
    assert detect_target(pallas).target == "tpu"
    assert detect_target(pallas).evidence == "custom-call tpu_custom_call"


@pytest.mark.skipif(not (SHARED / "field" / "tpu").is_dir(), reason="the field dumps are not on this machine")
def test_tpu_dumps_are_labelled_tpu_without_cpu_words():
    from click.testing import CliRunner

    from hlo_index.cli import main

    for path in sorted((SHARED / "field" / "tpu").iterdir()):
        result = CliRunner().invoke(main, ["analyze", str(path), "--no-pager", "--color", "never"])
        assert result.exit_code == 0, (path, result.output[-2000:])
        assert "target: tpu" in result.output and "target: cpu" not in result.output
        for words in ("not contiguous", "th element", "vectorisable", "coalescing:"):
            assert words not in result.output, (path, words)
        assert "tpu: " in result.output


TPU_SLICE = """HloModule m
fused {
  p = bf16[3,130]{1,0:T(8,128)(2,1)} parameter(0)
  ROOT s = bf16[2,10]{1,0:T(8,128)(2,1)} slice(p), slice={[0:2], [0:10]}
}
ENTRY e {
  p0 = bf16[3,130]{1,0:T(8,128)(2,1)} parameter(0)
  ROOT f = bf16[2,10]{1,0:T(8,128)(2,1)} fusion(p0), kind=kLoop, calls=fused
}
"""


def test_the_cost_counts_the_tiles_a_tpu_moves(tmp_path):
    import json

    from tests.spec.helpers import run_cli

    path = tmp_path / "m.hlo"
    path.write_text(TPU_SLICE)
    code, out = run_cli(["analyze", str(path), "--format", "json", "--target", "tpu"])
    assert code == 0, out
    (target,) = [t for t in json.loads(out)["modules"][0]["targets"] if t["name"] == "f"]
    exact = target["cost"]["exact"]
    # bf16[3,130] in (8,128) tiles: 1 x 2 tiles of 8 x 128 x 2 B = 2048 B each; rows 0-1, columns 0-9
    # lie in the first tile only, so one tile moves: 2048 B for 20 elements (40 B) used
    assert exact["operand_tile_bytes_read"] == [2048]
    assert exact["tile_bytes_read"] == 2048
    assert target["cost"]["operand_bytes_accessed"] == [40]
