"""Tile propagation through op rules; every claimed tile is checked against the real read set."""
import itertools

import numpy as np
import pytest

from hlo_index.analyses.tiling import propagate
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text


def op_maps(params, body, root_shape):
    decl = "\n".join(f"  p{i} = {s} parameter({i})" for i, s in enumerate(params))
    module = parse_module_text(f"HloModule m\nENTRY e {{\n{decl}\n  ROOT r = {root_shape} {body}\n}}\n")
    root = module.entry.root
    return root, [row.maps for row in output_to_input(root)]


def check_tile(m, out_dims, sizes, tile):
    """Every tile's true read set equals offsets + sizes * strides box (brute force)."""
    counts = [-(-d // s) for d, s in zip(out_dims, sizes)]
    for t in itertools.product(*[range(c) for c in counts]):
        reads = set()
        for e in itertools.product(*[range(s) for s in sizes]):
            d = tuple(ti * s + ei for ti, s, ei in zip(t, sizes, e))
            if all(x < n for x, n in zip(d, out_dims)):
                reads |= m.read_set(d)
        offs = tile.offsets.evaluate(t)
        box = {tuple(o + k * st for o, k, st in zip(offs, ks, tile.strides))
               for ks in itertools.product(*[range(n) for n in tile.sizes])}
        assert reads <= box
        if not tile.notes and all((ti + 1) * s <= n for ti, s, n in zip(t, sizes, out_dims)):
            assert reads == box


CASES = [
    ("elementwise", ["f32[16,32]"], "add(p0, p0)", "f32[16,32]", (4, 8), [(4, 8)]),
    ("broadcast", ["f32[32]"], "broadcast(p0), dimensions={1}", "f32[16,32]", (4, 8), [(8,)]),
    ("transpose", ["f32[32,16]"], "transpose(p0), dimensions={1,0}", "f32[16,32]", (4, 8), [(8, 4)]),
    ("reshape expand", ["f32[512]"], "reshape(p0)", "f32[16,32]", (4, 32), [(128,)]),
    ("reshape collapse", ["f32[4,4,32]"], "reshape(p0)", "f32[16,32]", (4, 8), [(1, 4, 8)]),
    ("slice", ["f32[40,64]"], "slice(p0), slice={[8:40:2], [0:64:2]}", "f32[16,32]", (4, 8), [(4, 8)]),
    ("reduce", ["f32[16,32,8]", "f32[]"], "reduce(p0, p1), dimensions={2}, to_apply=add",
     "f32[16,32]", (4, 8), [(4, 8, 8), None]),
    ("dot", ["f32[16,12]", "f32[12,32]"], "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
     "f32[16,32]", (4, 8), [(4, 12), (12, 8)]),
    ("concatenate", ["f32[16,16]", "f32[16,16]"], "concatenate(p0, p1), dimensions={1}", "f32[16,32]",
     (4, 8), [(4, 8), (4, 8)]),
]


@pytest.mark.parametrize("name,params,body,root_shape,sizes,expected", CASES, ids=[c[0] for c in CASES])
def test_tiles(name, params, body, root_shape, sizes, expected):
    if "to_apply" in body:
        pytest.skip("reduce needs a computation; covered in test_reduce_tile")
    root, per_operand = op_maps(params, body, root_shape)
    out_dims = root.shape.dims
    for maps, want in zip(per_operand, expected):
        tile = propagate(maps[0], out_dims, sizes)
        assert tile.is_tile, tile.reason
        assert tile.sizes == want
        check_tile(maps[0], out_dims, sizes, tile)
        if name == "concatenate":
            assert tile.notes   # tiles outside this operand's part are clipped


def test_reduce_tile():
    module = parse_module_text("""HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[16,32,8] parameter(0)
  p1 = f32[] parameter(1)
  ROOT r = f32[16,32] reduce(p0, p1), dimensions={2}, to_apply=add
}
""")
    root = module.entry.root
    m = output_to_input(root)[0].maps[0]
    tile = propagate(m, (16, 32), (4, 8))
    assert tile.is_tile and tile.sizes == (4, 8, 8)
    check_tile(m, (16, 32), (4, 8), tile)


def test_mod_splits_the_tile():
    root, per_operand = op_maps(["f32[16,2,16]"], "reshape(p0)", "f32[16,32]")
    tile = propagate(per_operand[0][0], (16, 32), (8, 24))
    assert not tile.is_tile
    assert "splits the tile of size 24 along dim 1" in tile.reason


def test_reshape_split_into_aligned_tile_is_a_tile():
    root, per_operand = op_maps(["f32[16,2,16]"], "reshape(p0)", "f32[16,32]")
    tile = propagate(per_operand[0][0], (16, 32), (8, 32))
    assert tile.is_tile and tile.sizes == (8, 2, 16)
    check_tile(per_operand[0][0], (16, 32), (8, 32), tile)


def test_gather_index_is_not_a_tile():
    root, per_operand = op_maps(
        ["f32[100,32]", "s32[16,1]"],
        "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
        "index_vector_dim=1, slice_sizes={1,32}", "f32[16,32]")
    tile = propagate(per_operand[0][0], (16, 32), (4, 8))
    assert not tile.is_tile and "gathered index" in tile.reason


def test_diagonal_is_not_a_tile():
    from hlo_index.affine import parse_map
    m = parse_map("(d0, d1) -> (d0, d0), domain: d0 in [0, 15], d1 in [0, 15]")
    tile = propagate(m, (16, 16), (4, 4))
    assert not tile.is_tile and "diagonal" in tile.reason
