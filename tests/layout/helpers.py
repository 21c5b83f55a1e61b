"""Shared builders for the layout tests."""

from __future__ import annotations

from hypothesis import strategies as st

from hlo_index.hlo.model import Layout, Shape, Tile


def make_shape(dims, minor_to_major=None, *tiles, element_type="f32", element_bits=None) -> Shape:
    if minor_to_major is None:
        minor_to_major = tuple(range(len(dims) - 1, -1, -1))
    layout = Layout(tuple(minor_to_major), tuple(Tile(tuple(t)) for t in tiles), element_bits)
    return Shape(element_type, tuple(dims), layout=layout)


@st.composite
def tiled_shapes(draw, max_rank=5, max_dim=6, max_tiles=2, max_elements=600):
    """Random shape, minor_to_major permutation and 0..max_tiles tiles (with '*' entries)."""
    rank = draw(st.integers(1, max_rank))
    dims = draw(st.lists(st.integers(1, max_dim), min_size=rank, max_size=rank))
    while _product(dims) > max_elements:
        dims[dims.index(max(dims))] -= 1
    m2m = draw(st.permutations(range(rank)))
    tiles = []
    for _ in range(draw(st.integers(0, max_tiles))):
        length = draw(st.integers(1, rank + 1))
        sizes = draw(st.lists(st.integers(1, 5), min_size=length, max_size=length))
        for i in range(length - 1):
            if draw(st.booleans()) and draw(st.booleans()):
                sizes[i] = Tile.COMBINED
        tiles.append(tuple(sizes))
    return make_shape(dims, m2m, *tiles)


def _product(values):
    n = 1
    for v in values:
        n *= v
    return n
