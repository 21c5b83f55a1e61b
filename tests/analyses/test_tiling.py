"""Tile propagation through op rules; every claimed tile is checked against the real read set."""

import itertools

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
        box = {
            tuple(o + k * st for o, k, st in zip(offs, ks, tile.strides))
            for ks in itertools.product(*[range(n) for n in tile.sizes])
        }
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
    (
        "reduce",
        ["f32[16,32,8]", "f32[]"],
        "reduce(p0, p1), dimensions={2}, to_apply=add",
        "f32[16,32]",
        (4, 8),
        [(4, 8, 8), None],
    ),
    (
        "dot",
        ["f32[16,12]", "f32[12,32]"],
        "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "f32[16,32]",
        (4, 8),
        [(4, 12), (12, 8)],
    ),
    (
        "concatenate",
        ["f32[16,16]", "f32[16,16]"],
        "concatenate(p0, p1), dimensions={1}",
        "f32[16,32]",
        (4, 8),
        [(4, 8), (4, 8)],
    ),
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
            assert tile.notes  # tiles outside this operand's part are clipped


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
    _root, per_operand = op_maps(["f32[16,2,16]"], "reshape(p0)", "f32[16,32]")
    tile = propagate(per_operand[0][0], (16, 32), (8, 24))
    assert not tile.is_tile
    assert "splits the tile of size 24 along dim 1" in tile.reason


def test_reshape_split_into_aligned_tile_is_a_tile():
    _root, per_operand = op_maps(["f32[16,2,16]"], "reshape(p0)", "f32[16,32]")
    tile = propagate(per_operand[0][0], (16, 32), (8, 32))
    assert tile.is_tile and tile.sizes == (8, 2, 16)
    check_tile(per_operand[0][0], (16, 32), (8, 32), tile)


def test_gather_index_is_not_a_tile():
    _root, per_operand = op_maps(
        ["f32[100,32]", "s32[16,1]"],
        "gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
        "index_vector_dim=1, slice_sizes={1,32}",
        "f32[16,32]",
    )
    tile = propagate(per_operand[0][0], (16, 32), (4, 8))
    assert not tile.is_tile and "gathered index" in tile.reason


def test_diagonal_is_not_a_tile():
    from hlo_index.affine import parse_map

    m = parse_map("(d0, d1) -> (d0, d0), domain: d0 in [0, 15], d1 in [0, 15]")
    tile = propagate(m, (16, 16), (4, 4))
    assert not tile.is_tile and "diagonal" in tile.reason


CONCAT_TWICE = """HloModule m
fused_concat {
  p0 = f32[6,5]{1,0} parameter(0)
  sl = f32[6,2]{1,0} slice(p0), slice={[0:6], [1:3]}
  ROOT c = f32[6,7]{1,0} concatenate(p0, sl), dimensions={1}
}
ENTRY main {
  c = f32[6,5]{1,0} parameter(0)
  ROOT f = f32[6,7]{1,0} fusion(c), kind=kLoop, calls=fused_concat
}
"""

SHIFTED_TWICE = """HloModule m
fused {
  p0 = f32[16]{0} parameter(0)
  a = f32[8]{0} slice(p0), slice={[0:16:2]}
  b = f32[8]{0} slice(p0), slice={[5:13]}
  ROOT s = f32[8]{0} add(a, b)
}
ENTRY main {
  c = f32[16]{0} parameter(0)
  ROOT f = f32[8]{0} fusion(c), kind=kLoop, calls=fused
}
"""


def _union_reads(maps, out_dims, sizes, t):
    reads = set()
    for e in itertools.product(*[range(s) for s in sizes]):
        d = tuple(ti * s + ei for ti, s, ei in zip(t, sizes, e))
        if all(x < n for x, n in zip(d, out_dims)):
            for m in maps:
                if all(iv.lo <= x <= iv.hi for iv, x in zip(m.dims, d)):
                    reads |= m.read_set(d)
    return reads


@pytest.mark.parametrize(
    "text,sizes,exact", [(CONCAT_TWICE, (2, 7), True), (CONCAT_TWICE, (3, 7), True), (SHIFTED_TWICE, (8,), False)]
)
def test_union_tile_bounds_every_maps_reads(text, sizes, exact):
    from hlo_index.analyses.tiling import union_tile

    fusion = parse_module_text(text).entry.root
    (row,) = output_to_input(fusion)
    assert len(row.maps) == 2
    out_dims = fusion.shape.dims
    union = union_tile([propagate(m, out_dims, sizes) for m in row.maps])
    assert union.tile.is_tile, union.tile.reason
    assert union.exact is exact and union.to_json()["union_of_maps"] == 2
    tile = union.tile
    counts = [-(-d // s) for d, s in zip(out_dims, sizes)]
    for t in itertools.product(*[range(c) for c in counts]):
        reads = _union_reads(row.maps, out_dims, sizes, t)
        offs = tile.offsets.evaluate(t)
        box = {
            tuple(o + k * st for o, k, st in zip(offs, ks, tile.strides))
            for ks in itertools.product(*[range(n) for n in tile.sizes])
        }
        assert reads <= box
        assert (reads == box) is exact


def test_union_tile_reasons():
    from hlo_index.analyses.tiling import union_tile

    fusion = parse_module_text(CONCAT_TWICE).entry.root
    (row,) = output_to_input(fusion)
    # a column tile: the two maps read different tiles, so no single box applies
    union = union_tile([propagate(m, fusion.shape.dims, (6, 1)) for m in row.maps])
    assert not union.tile.is_tile and "different tiles" in union.tile.reason
    assert union_tile([propagate(row.maps[0], fusion.shape.dims, (6, 1))]) is None


def test_tile_command_reports_the_union(tmp_path):
    import json

    from click.testing import CliRunner

    from hlo_index.cli import main

    path = tmp_path / "concat.hlo"
    path.write_text(CONCAT_TWICE)
    result = CliRunner().invoke(main, ["tile", str(path), "--fusion", "f", "--tile", "2,7", "--format", "json"])
    assert result.exit_code == 0, result.output
    (operand,) = json.loads(result.output)["operands"]
    assert len(operand["tiles"]) == 2
    assert operand["union"]["is_tile"] and operand["union"]["sizes"] == [2, 5]
    text = CliRunner().invoke(main, ["tile", str(path), "--fusion", "f", "--tile", "2,7"]).output
    assert "union of 2 maps (bounding tile): sizes [2, 5]" in text


def test_tile_command_refuses_a_name_several_modules_share(tmp_path):
    from click.testing import CliRunner

    from hlo_index.cli import main

    # a dump directory names its fusions alike: which module's fusion is tiled must not be a guess
    for name in ("a", "b"):
        (tmp_path / f"{name}.hlo").write_text(CONCAT_TWICE.replace("HloModule m", f"HloModule module_{name}", 1))
    result = CliRunner().invoke(main, ["tile", str(tmp_path), "--fusion", "f", "--tile", "2,7"])
    assert result.exit_code == 2
    assert "2 modules" in result.output and "module_a" in result.output and "module_b" in result.output
    one = CliRunner().invoke(main, ["tile", str(tmp_path / "a.hlo"), "--fusion", "f", "--tile", "2,7"])
    assert one.exit_code == 0 and "union of 2 maps" in one.output


# ---- padded tiles, XLA's form, size constraints, range-variable tiles ---------------------------


def _box(tile, index):
    starts = tile.offsets.read_set(index)
    if not starts:
        return set()
    [start] = starts
    return set(itertools.product(*[[o + j * k for j in range(n)] for o, n, k in zip(start, tile.sizes, tile.strides)]))


def _reads(m, out_dims, sizes, index):
    reads = set()
    for e in itertools.product(*[range(s) for s in sizes]):
        d = tuple(t * s + x for t, s, x in zip(index, sizes, e))
        if all(v < n for v, n in zip(d, out_dims)):
            reads |= m.read_set(d)
    return reads


def test_padded_tile_is_accepted_and_exact():
    root, [[m]] = op_maps(["f32[2048,12]"], "transpose(p0), dimensions={1,0}", "f32[12,2048]")
    tile = propagate(m, root.shape.dims, (16, 4))
    assert tile.is_tile and any("padded" in n for n in tile.notes)
    assert _box(tile, (0, 3)) == _reads(m, root.shape.dims, (16, 4), (0, 3))


def test_reverse_gives_xla_negative_strides():
    root, [[m]] = op_maps(["f32[179]"], "reverse(p0), dimensions={0}", "f32[179]")
    tile = propagate(m, root.shape.dims, (179,))
    assert tile.signed_strides == (-1,)
    assert tile.first_offsets.evaluate((0,)) == (178,)  # XLA: offset 178, stride -1
    first = tile.first_offsets.evaluate((0,))[0]
    assert {(first - j,) for j in range(179)} == _box(tile, (0,))


def test_size_constraints_are_sufficient():
    """Every tile size meeting the XLA-form constraints gives an exact tile (brute force)."""
    from hlo_index.analyses.tile_constraints import satisfied, size_constraints

    root, [[m]] = op_maps(["f32[1,8,6,4]"], "reshape(p0)", "f32[48,4]")
    constraints = size_constraints(m)
    assert constraints == ["6 mod d0 in [0, 0] || d0 mod 6 in [0, 0]"]
    for t0 in range(1, 49):
        sizes = (t0, 4)
        if all(satisfied(c, sizes) for c in constraints):
            tile = propagate(m, root.shape.dims, sizes)
            assert tile.is_tile, sizes
            for index in [(0, 0), (1, 0)]:
                if (index[0] + 1) * t0 <= 48:  # whole tiles: exact; the last may be clipped
                    assert _box(tile, index) == _reads(m, root.shape.dims, sizes, index), sizes


def test_merge_constraint_in_xla_form():
    from hlo_index.analyses.tile_constraints import size_constraints

    _root, [[m]] = op_maps(["f32[22,17]"], "reshape(p0)", "f32[2,11,17]")
    # operand row = d0 * 11 + d1: the tile merges two output dims into one operand dim
    assert size_constraints(m) == ["d0 in [1, 1] || d1 in [1, 1] || d1 in [11, 11]"]


def test_contraction_dimension_tiles():
    from hlo_index.analyses.tiling import propagate_with_range_tiles

    root, maps = op_maps(
        ["f32[16,12]", "f32[12,32]"], "dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}", "f32[16,32]"
    )
    lhs, rhs = maps[0][0], maps[1][0]
    for m, want in ((lhs, (4, 4)), (rhs, (4, 8))):
        tile = propagate_with_range_tiles(m, root.shape.dims, (4, 8), (4,))
        assert tile.is_tile and tile.sizes == want
        # tile (i, j, k): output rows 4i.., cols 8j.., contracted 4k..: brute force
        for i, j, k in [(0, 0, 0), (1, 2, 1), (3, 3, 2)]:
            reads = set()
            for a, b, s in itertools.product(range(4), range(8), range(4)):
                point = (4 * i + a, 8 * j + b)
                reads.add(m.evaluate(point, (4 * k + s,)))
            assert _box(tile, (i, j, k)) == reads


@pytest.mark.parametrize("sizes", [(1, 1), (2, 2), (4, 3)])
def test_tile_condition_on_a_window_position_no_result_uses(sizes):
    """A padded window's bounds name a range variable that no result uses (what reads a
    per-channel operand beside a padded convolution): the tiles whose window positions all fall
    in the padding read nothing, the others read their rows (brute force per tile)."""
    from hlo_index.affine.text import parse_map

    m = parse_map("(d0, d1)[s0] -> (d0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 2], d1 * 2 + s0 in [4, 20]")
    tile = propagate(m, (4, 6), sizes)
    assert tile.is_tile
    counts = [-(-n // s) for n, s in zip((4, 6), sizes)]
    reading = 0
    for index in itertools.product(*[range(c) for c in counts]):
        reads = _reads(m, (4, 6), sizes, index)
        reading += bool(reads)
        assert reads <= _box(tile, index)
        assert bool(reads) == bool(_box(tile, index))
    if sizes == (1, 1):  # column 0's window lies in the padding: 4 of 24 elements read nothing
        assert reading == 20
