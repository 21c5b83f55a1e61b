"""Indexing maps of layouts, checked by brute-force evaluation against the numpy reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, dim
from hlo_index.hlo.model import Layout, Shape, Tile
from hlo_index.layout import (
    bitcast_map,
    physical_element_count,
    physical_offset_map,
    physical_offsets,
    physical_to_logical_map,
    to_physical,
)
from hlo_index.reference.ref_layout import PADDING, physical_memory, reference_offsets

from .helpers import make_shape, tiled_shapes


def table(indexing_map: IndexingMap) -> dict[tuple, tuple]:
    """{domain point: result} over every feasible point (the maps here have no symbols)."""
    points, results = indexing_map.enumerate()
    return {tuple(p): tuple(r) for p, r in zip(points.tolist(), results.tolist())}


def test_spec_example_map_puts_2_3_at_17_and_back():
    shape = make_shape((3, 5), (1, 0), (2, 2))
    forward, inverse = physical_offset_map(shape), physical_to_logical_map(shape)
    assert forward.evaluate((2, 3)) == (17,)
    assert inverse.evaluate((17,)) == (2, 3)
    assert "floordiv" in str(forward) and "mod" in str(forward)
    assert sorted(table(inverse)) == sorted((o,) for o in physical_offsets(shape).ravel().tolist())


def check_forward_and_inverse(shape: Shape) -> None:
    offsets = reference_offsets(shape)
    forward = table(physical_offset_map(shape))
    assert len(forward) == shape.num_elements
    for point, (offset,) in forward.items():
        assert offset == offsets[point]
    inverse = physical_to_logical_map(shape)
    # The simplifier may tighten the domain to the last real offset, never beyond the memory.
    assert inverse.dims[0].lo == 0
    assert offsets.max() <= inverse.dims[0].hi < physical_element_count(shape)
    backward = table(inverse)  # padding offsets are excluded by the constraints
    memory = physical_memory(shape)
    assert sorted(o for (o,) in backward) == np.nonzero(memory != PADDING)[0].tolist()
    for (offset,), logical in backward.items():
        assert offsets[logical] == offset
    round_trip = table(inverse.compose(physical_offset_map(shape)))
    assert len(round_trip) == shape.num_elements
    assert all(point == result for point, result in round_trip.items())


def test_worked_examples_round_trip():
    for shape in (
        make_shape((3, 5), (1, 0), (2, 2)),
        make_shape((4, 8), (1, 0), (2, 4), (2, 1)),
        make_shape((2, 7, 8, 11, 10), (4, 3, 2, 1, 0), (-1, -1, 2, -1, 3)),
        make_shape((5, 3), (0, 1), (4,)),
        make_shape((3,), (0,), (2, 4)),
        make_shape((), (), (8,)),
    ):
        check_forward_and_inverse(shape)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(tiled_shapes(max_rank=4, max_elements=120))
def test_random_layout_maps(shape):
    check_forward_and_inverse(shape)


def expected_bitcast(out_shape: Shape, in_shape: Shape) -> dict[tuple, tuple]:
    """Through memory: out element -> its slot -> the in element stored there (if any)."""
    out_offsets = reference_offsets(out_shape)
    memory = physical_memory(in_shape)
    expected = {}
    for point in np.ndindex(*out_shape.dims):
        offset = out_offsets[point]
        if offset < len(memory) and memory[offset] != PADDING:
            expected[point] = tuple(int(v) for v in np.unravel_index(memory[offset], in_shape.dims))
    return expected


def test_bitcast_through_tiles():
    tiled = make_shape((4, 8), (1, 0), (2, 4), (2, 1), element_type="bf16")
    flat = make_shape((32,), (0,), element_type="bf16")
    m = bitcast_map(flat, tiled)
    assert m.evaluate((1,)) == (1, 0)  # the 2x1 tile puts (1,0) right after (0,0)
    assert table(m) == expected_bitcast(flat, tiled)
    assert table(bitcast_map(tiled, flat)) == expected_bitcast(tiled, flat)


def test_bitcast_onto_padding_reads_nothing():
    padded = make_shape((3, 5), (1, 0), (2, 2))
    flat = make_shape((24,), (0,))
    got = table(bitcast_map(flat, padded))
    assert len(got) == 15 and (9,) not in got and got[(17,)] == (2, 3)


def test_bitcast_that_changes_element_width_is_undefined():
    m = bitcast_map(make_shape((8,), (0,), element_type="s8"), make_shape((2,), (0,)))
    assert m.is_undefined and "width" in m.undefined_reason


@st.composite
def bitcast_pairs(draw):
    source = draw(tiled_shapes(max_rank=3, max_elements=100))
    count = physical_element_count(source)
    first = draw(st.sampled_from([d for d in range(1, count + 1) if count % d == 0]))
    dims = (first, count // first)
    m2m = draw(st.permutations(range(2)))
    tiles = []
    if draw(st.booleans()):
        tiles.append((draw(st.integers(1, 4)), draw(st.integers(1, 4))))
    target = Shape("f32", dims, layout=Layout(tuple(m2m), tuple(Tile(t) for t in tiles)))
    return (source, target) if draw(st.booleans()) else (target, source)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(bitcast_pairs())
def test_random_bitcasts_match_memory(pair):
    out_shape, in_shape = pair
    assert table(bitcast_map(out_shape, in_shape)) == expected_bitcast(out_shape, in_shape)


def test_to_physical_composes_with_the_operand_layout():
    operand = make_shape((3, 5), (1, 0), (2, 2))
    transpose = IndexingMap.from_shape_dims((5, 3), [dim(1), dim(0)])
    physical = to_physical(transpose, operand)
    offsets = physical_offsets(operand)
    got = table(physical)
    assert len(got) == 15
    assert all(got[(j, i)] == (offsets[i, j],) for i in range(3) for j in range(5))
    assert to_physical(IndexingMap.undefined("opaque"), operand).is_undefined


def test_invalid_layouts_are_reported_not_guessed():
    import pytest

    from hlo_index.layout import LayoutError

    with pytest.raises(LayoutError):
        physical_offsets(make_shape((3, 4), (0, 0)))
    with pytest.raises(LayoutError):
        physical_offset_map(make_shape((-1, 4), (1, 0)))  # unbounded dynamic dim '?'
    with pytest.raises(LayoutError):
        physical_offsets(make_shape((3, 4), (1, 0), (2, -1)))
    bad = bitcast_map(make_shape((12,), (0,)), make_shape((3, 4), (1, 1)))
    assert bad.is_undefined and "layout" in bad.undefined_reason


@st.composite
def untiled_bitcast_pairs(draw):
    count = draw(st.sampled_from([6, 12, 24, 30, 36]))
    shapes = []
    for _ in range(2):
        dims, left = [], count
        for _ in range(draw(st.integers(0, 3))):
            d = draw(st.sampled_from([d for d in range(1, left + 1) if left % d == 0]))
            dims.append(d)
            left //= d
        dims.append(left)
        shapes.append(make_shape(dims, draw(st.permutations(range(len(dims))))))
    return shapes


@settings(deadline=None, derandomize=True, max_examples=100)
@given(untiled_bitcast_pairs())
def test_general_bitcast_agrees_with_the_untiled_op_rule(pair):
    from hlo_index.ops.rules_reshape import bitcast_map as untiled_bitcast_map

    out_shape, in_shape = pair
    assert table(bitcast_map(out_shape, in_shape)) == table(untiled_bitcast_map(out_shape, in_shape))
