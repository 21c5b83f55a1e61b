"""Offsets of layouts: the spec's worked examples, and random layouts against the numpy reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings

from hlo_index.layout import layout_cells, padded_logical_dims, physical_element_count, physical_offsets
from hlo_index.reference.ref_layout import physical_memory, reference_offsets

from .helpers import make_shape, tiled_shapes


def test_spec_figure_1_element_2_3_is_at_17():
    shape = make_shape((3, 5), (1, 0), (2, 2))
    offsets = physical_offsets(shape)
    assert offsets[2, 3] == 17
    # Tile index (1,1) of a 2 x 3 tile grid, in-tile index (0,1): (1*3 + 1)*2*2 + (0*2 + 1).
    assert offsets[2, 3] == (1 * 3 + 1) * 2 * 2 + (0 * 2 + 1)
    assert physical_element_count(shape) == 2 * 3 * 2 * 2


def test_spec_figure_1_padding_fills_whole_tiles():
    shape = make_shape((3, 5), (1, 0), (2, 2))
    offsets = physical_offsets(shape)
    padding = set(range(physical_element_count(shape))) - set(offsets.ravel().tolist())
    # The last tile of the first tile row holds (0,4), pad, (1,4), pad.
    assert offsets[0, 4] == 8 and offsets[1, 4] == 10 and {9, 11} <= padding
    # The second tile row: row 2 is real, row 3 is padding in each of its 4-element tiles.
    second_row_tiles = [list(range(start, start + 4)) for start in (12, 16, 20)]
    for tile, columns in zip(second_row_tiles, ((0, 1), (2, 3), (4, None))):
        real = [offsets[2, c] for c in columns if c is not None]
        assert real == tile[: len(real)]
        assert set(tile[len(real) :]) <= padding
    assert len(padding) == 24 - 15


def test_spec_figure_2_repeated_tiling_4x8():
    shape = make_shape((4, 8), (1, 0), (2, 4), (2, 1))
    offsets = physical_offsets(shape)
    rows, cols = np.indices((4, 8))
    # Each 2x4 tile is 8 consecutive elements; inside it, 2x1 tiles pair the two rows.
    tile_number = (rows // 2) * 2 + cols // 4
    expected = tile_number * 8 + (cols % 4) * 2 + rows % 2
    assert np.array_equal(offsets, expected)
    assert physical_element_count(shape) == 32


def test_spec_combined_dims_equal_the_folded_2d_shape():
    shape = make_shape((2, 7, 8, 11, 10), (4, 3, 2, 1, 0), (-1, -1, 2, -1, 3))
    folded = make_shape((112, 110), (1, 0), (2, 3))
    assert np.array_equal(physical_offsets(shape).reshape(112, 110), physical_offsets(folded))
    assert physical_element_count(shape) == physical_element_count(folded) == 56 * 37 * 2 * 3


def test_column_major_and_permuted_layouts():
    assert np.array_equal(physical_offsets(make_shape((3, 4), (0, 1))), np.arange(12).reshape(4, 3).T)
    # {0,2,1}: dim 1 is major, then 2, then 0 minor.
    offsets = physical_offsets(make_shape((2, 3, 4), (0, 2, 1)))
    i, j, k = np.indices((2, 3, 4))
    assert np.array_equal(offsets, j * 4 * 2 + k * 2 + i)


def test_one_dimensional_tiles_on_2d_shapes():
    row_major = make_shape((5, 3), (1, 0), (4,))
    i, j = np.indices((5, 3))
    assert np.array_equal(physical_offsets(row_major), i * 4 + j)
    assert physical_element_count(row_major) == 20
    column_major = make_shape((5, 3), (0, 1), (4,))
    assert np.array_equal(physical_offsets(column_major), j * 8 + i)
    assert physical_element_count(column_major) == 24


def test_ranks_1_to_5_match_the_reference():
    cases = [
        ((7,), (0,), [(4,)]),
        ((3, 5), (0, 1), [(2, 2)]),
        ((2, 3, 5), (1, 2, 0), [(2, 4)]),
        ((2, 3, 2, 5), (3, 1, 0, 2), [(-1, 2, 3), (2,)]),
        ((2, 3, 2, 3, 4), (4, 3, 2, 1, 0), [(2, 2, 2), (2, 1)]),
    ]
    for dims, m2m, tiles in cases:
        shape = make_shape(dims, m2m, *tiles)
        assert np.array_equal(physical_offsets(shape), reference_offsets(shape)), shape


def test_scalar_with_a_tile_occupies_a_whole_tile():
    shape = make_shape((), (), (256,))
    assert physical_element_count(shape) == 256
    assert physical_offsets(shape) == 0


def test_sub_byte_element_size_does_not_change_element_offsets():
    wide = make_shape((16, 8), (1, 0), (8, 4), (2, 1))
    narrow = make_shape((16, 8), (1, 0), (8, 4), (2, 1), element_type="s4", element_bits=4)
    assert np.array_equal(physical_offsets(wide), physical_offsets(narrow))


@settings(deadline=None, derandomize=True, max_examples=400)
@given(tiled_shapes())
def test_random_layouts_match_the_pad_reshape_transpose_reference(shape):
    offsets = physical_offsets(shape)
    total = physical_element_count(shape)
    assert len(physical_memory(shape)) == total
    assert np.array_equal(offsets, reference_offsets(shape))
    assert len(np.unique(offsets)) == offsets.size  # injective
    assert offsets.min() >= 0 and offsets.max() < total


@settings(deadline=None, derandomize=True, max_examples=80)
@given(tiled_shapes(max_rank=4))
def test_drawn_padding_lands_on_padding_slots(shape):
    padded = padded_logical_dims(shape)
    points = np.indices(padded).reshape(len(padded), -1).T
    offsets, _ = layout_cells(shape, points)
    inside = np.all(points < np.array(shape.dims), axis=1)
    memory = physical_memory(shape)
    assert len(np.unique(offsets)) == len(offsets)
    assert np.all(memory[offsets[~inside]] == -1)  # drawn padding is real padding
