"""reshape, bitcast, bitcast-convert vs the reference; the spec's Reshape examples."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo.build import array_shape, instruction
from hlo_index.hlo.model import Layout, Shape, Tile
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text
from .strategies import dims_strategy, factorization, permutation

SETTINGS = settings(deadline=None, derandomize=True, max_examples=40)


def f32(*dims, m2m=None):
    return array_shape("f32", dims, m2m)


@SETTINGS
@given(st.data())
def test_reshape_matches_reference(data):
    src = data.draw(dims_strategy(0, 4, max_size=6))
    dst = data.draw(factorization(math.prod(src)))
    instr = instruction("reshape", f32(*dst), [f32(*src)])
    check_out2in(instr)
    check_in2out(instr, 0)


@SETTINGS
@given(st.data())
def test_bitcast_matches_reference(data):
    src = data.draw(dims_strategy(0, 4, max_size=5))
    src_type, dst_type = data.draw(
        st.sampled_from(
            [
                ("f32", "f32"),
                ("f32", "s32"),
                ("f32", "u8"),
                ("u8", "f32"),
                ("bf16", "u32"),
                ("f64", "s16"),
                ("s4", "u8"),
            ]
        )
    )
    src_bits, dst_bits = array_shape(src_type, ()).element_bits, array_shape(dst_type, ()).element_bits
    if src_bits < dst_bits:  # the narrow side's element count must fill whole wide elements
        src = tuple(src) + (dst_bits // src_bits,)
    src_m2m = data.draw(permutation(len(src)))
    physical = data.draw(factorization(math.prod(src) * src_bits // dst_bits))
    dst_m2m = data.draw(permutation(len(physical)))
    # Logical dst dims: the physical (major-to-minor) dims placed at their logical positions.
    dst = [0] * len(physical)
    for position, logical in enumerate(reversed(dst_m2m)):
        dst[logical] = physical[position]
    instr = instruction("bitcast", array_shape(dst_type, dst, dst_m2m), [array_shape(src_type, src, src_m2m)])
    check_out2in(instr)
    check_in2out(instr, 0)


@settings(deadline=None, derandomize=True, max_examples=20)
@given(
    dims_strategy(0, 3),
    st.sampled_from([("f32", "s32"), ("f32", "u8"), ("f32", "u16"), ("u8", "f32"), ("s16", "f64"), ("f64", "bf16")]),
)
def test_bitcast_convert_matches_reference(dims, types):
    src_type, dst_type = types
    src_bits, dst_bits = array_shape(src_type, ()).element_bits, array_shape(dst_type, ()).element_bits
    src, dst = list(dims), list(dims)
    if src_bits > dst_bits:
        dst.append(src_bits // dst_bits)
    elif src_bits < dst_bits:
        src.append(dst_bits // src_bits)
    instr = instruction("bitcast-convert", array_shape(dst_type, dst), [array_shape(src_type, src)])
    check_out2in(instr)
    check_in2out(instr, 0)


def test_tiled_bitcast_reads_through_memory():
    """A tiled operand is read through its tile-major memory image (independent numpy model)."""
    import numpy as np

    from hlo_index.reference.ref_layout import physical_memory

    tiled = Shape("f32", (4, 6), (False, False), Layout((1, 0), (Tile((2, 4)),)))
    flat = f32(32)  # 2 x 2 tiles of 8 elements: 32 slots, 8 of them padding
    m = output_to_input(instruction("bitcast", flat, [tiled]))[0].maps[0]
    assert not m.is_undefined
    memory = physical_memory(tiled)
    for slot in range(32):
        expected = set() if memory[slot] < 0 else {tuple(int(v) for v in np.unravel_index(memory[slot], (4, 6)))}
        assert m.read_set((slot,)) == expected, slot


def _tiled(element: str, dims: tuple, m2m: tuple, *tiles: tuple) -> Shape:
    return Shape(element, dims, (False,) * len(dims), Layout(m2m, tuple(Tile(t) for t in tiles)))


TILED_BITCASTS = {
    # bf16 tiles of 2 x 128 over [4,256] read as [8,128] in the same tiles: output (r, c) is memory
    # slot 256 (r // 2) + 128 (r % 2) + c, which holds operand (2 (r // 4) + r % 2, 128 ((r // 2) % 2) + c)
    "tile_rows_regrouped": (
        _tiled("bf16", (8, 128), (1, 0), (2, 128)),
        _tiled("bf16", (4, 256), (1, 0), (2, 128)),
        lambda r, c: (2 * (r // 4) + r % 2, 128 * ((r // 2) % 2) + c),
    ),
    # TPU's bf16 (8,128)(2,1) tiles: pairs of rows interleaved per 32-bit word, read as a flat array
    "sub_tiles_flattened": (
        _tiled("bf16", (2048,), (0,), (1024,)),
        _tiled("bf16", (16, 128), (1, 0), (8, 128), (2, 1)),
        None,
    ),
    # a padded operand: [3,5] in 2 x 4 tiles is 2 x 2 tiles of 8 slots, 32 in all, 17 of them padding
    "padding_read_as_data": (
        _tiled("f32", (32,), (0,), (32,)),
        _tiled("f32", (3, 5), (1, 0), (2, 4)),
        None,
    ),
    # a tiled transpose: column-major [16,128] tiles read as row-major [128,16]
    "tiled_transpose": (
        _tiled("f32", (128, 16), (1, 0), (8, 8)),
        _tiled("f32", (16, 128), (0, 1), (8, 8)),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(TILED_BITCASTS))
def test_tiled_bitcasts_match_the_reference(name):
    dst, src, formula = TILED_BITCASTS[name]
    instr = instruction("bitcast", dst, [src])
    assert not output_to_input(instr)[0].maps[0].is_undefined
    assert check_out2in(instr, sample=4096) > 0
    assert check_in2out(instr, 0, sample=4096) > 0
    if formula is not None:  # and the hand-derived element order
        m = output_to_input(instr)[0].maps[0]
        for r in range(dst.dims[0]):
            for c in range(dst.dims[1]):
                assert m.read_set((r, c)) == {formula(r, c)}, (r, c)


def test_bitcast_undefined_cases():
    m = output_to_input(instruction("bitcast", array_shape("u8", (4, 3)), [f32(4)]))[0].maps[0]
    assert m.is_undefined and "bit sizes" in m.undefined_reason
    m = output_to_input(instruction("bitcast", array_shape("f6e2m3fn", (16,)), [f32(3)]))[0].maps[0]
    assert m.is_undefined and "divide" in m.undefined_reason


def test_bitcast_changing_width():
    # f32[4] as u8[16]: output byte j is part of float j floordiv 4.
    narrow = instruction("bitcast", array_shape("u8", (16,)), [f32(4)])
    assert_map_text(output_to_input(narrow)[0].maps[0], "(d0) -> (d0 floordiv 4), domain: d0 in [0, 15]")
    assert_map_text(input_to_output(narrow, 0)[0][0], "(d0)[s0] -> (d0 * 4 + s0), domain: d0 in [0, 3], s0 in [0, 3]")


def test_spec_collapse_and_expand():
    collapse = instruction("reshape", f32(32), [f32(4, 8)])
    assert_map_text(output_to_input(collapse)[0].maps[0], "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    assert_map_text(input_to_output(collapse, 0)[0][0], "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]")
    expand = instruction("reshape", f32(4, 8), [f32(32)])
    assert_map_text(output_to_input(expand)[0].maps[0], "(d0, d1) -> (d0 * 8 + d1), domain: d0 in [0, 3], d1 in [0, 7]")
    assert_map_text(input_to_output(expand, 0)[0][0], "(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")


def test_spec_generic_reshape_linearize_delinearize():
    r = instruction("reshape", f32(2, 4, 4), [f32(4, 8)])
    assert_map_text(
        output_to_input(r)[0].maps[0],
        "(d0, d1, d2) -> (d0 * 2 + d1 floordiv 2, d2 + (d1 mod 2) * 4), "
        "domain: d0 in [0, 1], d1 in [0, 3], d2 in [0, 3]",
    )
    assert_map_text(
        input_to_output(r, 0)[0][0],
        "(d0, d1) -> (d0 floordiv 2, d1 floordiv 4 + (d0 mod 2) * 2, d1 mod 4), domain: d0 in [0, 3], d1 in [0, 7]",
    )


def test_spec_generic_reshape_subshapes():
    r = instruction("reshape", f32(32, 3, 4), [f32(4, 8, 12)])
    assert_map_text(
        output_to_input(r)[0].maps[0],
        "(d0, d1, d2) -> (d0 floordiv 8, d0 mod 8, d1 * 4 + d2), domain: d0 in [0, 31], d1 in [0, 2] d2 in [0, 3]",
    )
    assert_map_text(
        input_to_output(r, 0)[0][0],
        "(d0, d1, d2) -> (d0 * 8 + d1, d2 floordiv 4, d2 mod 4), domain: d0 in [0, 3], d1 in [0, 7], d2 in [0, 11]",
    )


def test_bitcast_as_transpose():
    # f32[4,8]{0,1} holds the same memory as f32[8,4]{1,0}: a bitcast that is a transpose.
    b = instruction("bitcast", f32(8, 4), [f32(4, 8, m2m=(0, 1))])
    assert_map_text(output_to_input(b)[0].maps[0], "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]")
