"""dynamic-slice, dynamic-update-slice, gather (general dimension numbers), scatter: rules vs
the numpy reference for random shapes, dimension numbers and concrete (often out-of-range)
runtime indices; constant and iota starts folded; the spec's printed examples.

Gather/scatter runtime variables stand for the start of the batch position being mapped, so
the maps are evaluated per batch position G with the runtime values G's index vector implies
(clamped for gather; scatter windows starting out of range are skipped and read nothing).
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap
from hlo_index.hlo import parse_module_text
from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import input_to_output, output_to_input
from hlo_index.reference import read_set as reference

from .oracle_check import Runtime, check_in2out, check_out2in
from .spec_text import assert_map_text
from .strategies import dims_strategy

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)


def f32(*dims):
    return array_shape("f32", dims)


def s32(*dims):
    return array_shape("s32", dims)


def every(dims):
    return itertools.product(*(range(n) for n in dims))


def rule_reads(maps, point, runtime_values=()) -> set:
    found = set()
    for m in maps:
        assert not m.is_undefined, m.undefined_reason
        if m.is_known_empty:
            continue
        found |= {tuple(int(v) for v in r) for r in m.read_set(point, tuple(runtime_values) or None)}
    return found


def constant(shape, literal: str, name="c"):
    c = instruction("constant", shape, name=name)
    c.literal = literal
    return c


# ---- dynamic-slice ------------------------------------------------------------------------


@st.composite
def slice_case(draw):
    dims = draw(dims_strategy(1, 3, max_size=6))
    sizes = [draw(st.integers(1, n)) for n in dims]
    offsets = [draw(st.integers(-2, n + 1)) for n in dims]
    return dims, sizes, offsets


def clamped(offsets, dims, sizes):
    return tuple(min(max(o, 0), n - s) for o, n, s in zip(offsets, dims, sizes))


@SETTINGS
@given(slice_case())
def test_dynamic_slice_matches_reference(case):
    dims, sizes, offsets = case
    instr = instruction(
        "dynamic-slice", f32(*sizes), [f32(*dims)] + [s32()] * len(dims), dynamic_slice_sizes=tuple(sizes)
    )
    runtime = Runtime(clamped(offsets, dims, sizes), {1 + k: np.array(o) for k, o in enumerate(offsets)})
    check_out2in(instr, runtime=runtime)
    for i in range(len(instr.operands)):
        check_in2out(instr, i, runtime=runtime)
    rt = output_to_input(instr)[0].maps[0].runtime_vars
    assert [v.interval for v in rt] == [(0, n - s) for n, s in zip(dims, sizes)]


@SETTINGS
@given(slice_case())
def test_dynamic_slice_constant_offsets_fold_with_clamping(case):
    dims, sizes, offsets = case
    operands = [f32(*dims)] + [constant(s32(), str(o), name=f"c{k}") for k, o in enumerate(offsets)]
    instr = instruction("dynamic-slice", f32(*sizes), operands, dynamic_slice_sizes=tuple(sizes))
    assert output_to_input(instr)[0].maps[0].runtime_vars == ()
    check_out2in(instr)
    check_in2out(instr, 0)


def test_dynamic_slice_spec_example():
    instr = instruction(
        "dynamic-slice", s32(1, 2, 32), [s32(2, 2, 258), s32(), s32(), s32()], dynamic_slice_sizes=(1, 2, 32)
    )
    maps = output_to_input(instr)
    assert_map_text(
        maps[0].maps[0],
        "(d0, d1, d2){rt0, rt1, rt2} -> (d0 + rt0, d1 + rt1, d2 + rt2), domain: "
        "d0 in [0, 0], d1 in [0, 1], d2 in [0, 31], rt0 in [0, 1], rt1 in [0, 0], "
        "rt2 in [0, 226]",
        exact_text=False,
    )
    assert_map_text(maps[1].maps[0], "(d0, d1, d2) -> (), domain: d0 in [0, 0], d1 in [0, 1], d2 in [0, 31]")


# ---- dynamic-update-slice -----------------------------------------------------------------


@SETTINGS
@given(slice_case(), st.booleans())
def test_dynamic_update_slice_matches_reference(case, fold):
    dims, sizes, offsets = case
    offset_ops = [constant(s32(), str(o), name=f"c{k}") for k, o in enumerate(offsets)] if fold else [s32()] * len(dims)
    instr = instruction("dynamic-update-slice", f32(*dims), [f32(*dims), f32(*sizes)] + offset_ops)
    starts = clamped(offsets, dims, sizes)
    rt = () if fold else starts
    ref_values = None if fold else {2 + k: np.array(o) for k, o in enumerate(offsets)}
    out2in = output_to_input(instr)
    for y in every(dims):
        for i, om in enumerate(out2in):
            got, want = rule_reads(om.maps, y, rt), reference(instr, 0, y, i, ref_values)
            assert got == want, (y, i, got, want, [str(m) for m in om.maps])
    # The update's elements in their landing places; offsets read everywhere; the operand's
    # elements exactly where the update does not land (static offsets, or at the runtime values).
    check_in2out(instr, 0, runtime=Runtime(rt, ref_values))
    check_in2out(instr, 1, runtime=Runtime(rt, ref_values))
    check_in2out(instr, 2, runtime=Runtime(rt, ref_values))


def test_dynamic_update_slice_spec_example():
    instr = instruction("dynamic-update-slice", s32(20, 30), [s32(20, 30), s32(5, 10), s32(), s32()])
    maps = output_to_input(instr)
    # Operand 0 where the update does not land: left of, right of, above, below the runtime box.
    assert sorted(str(m) for m in maps[0].maps) == sorted(
        f"(d0, d1){{rt0, rt1}} -> (d0, d1), domain: d0 in [0, 19], d1 in [0, 29], rt0 in [0, 15], rt1 in [0, 20], {c}"
        for c in ("d0 - rt0 in [-15, -1]", "d0 - rt0 in [5, 19]", "d1 - rt1 in [-20, -1]", "d1 - rt1 in [10, 29]")
    )
    assert (7, 3) not in rule_reads(maps[0].maps, (7, 3), (5, 0))  # under the update: overwritten
    assert rule_reads(maps[0].maps, (4, 3), (5, 0)) == {(4, 3)}
    update = maps[1].maps[0]
    assert [v.interval for v in update.runtime_vars] == [(0, 15), (0, 20)]
    assert rule_reads([update], (7, 3), (5, 0)) == {(2, 3)}
    assert rule_reads([update], (4, 3), (5, 0)) == set()  # in-range constraint of the update


# ---- gather -------------------------------------------------------------------------------


@st.composite
def gather_case(draw):
    """A random general gather: batching dims, collapsed dims, permuted start_index_map."""
    operand_rank = draw(st.integers(1, 3))
    operand = [draw(st.integers(1, 4)) for _ in range(operand_rank)]
    n_batching = draw(st.integers(0, min(1, operand_rank - 1)))
    operand_batching = tuple(sorted(draw(st.permutations(list(range(operand_rank))))[:n_batching]))
    rest = [d for d in range(operand_rank) if d not in operand_batching]
    start_map = tuple(draw(st.permutations(rest))[: draw(st.integers(0, len(rest)))])
    collapsed = tuple(sorted(d for d in start_map if draw(st.booleans())))
    slice_sizes = [
        1 if d in operand_batching or d in collapsed else draw(st.integers(1, operand[d])) for d in range(operand_rank)
    ]
    # Indices: batch dims (the batching ones sized like the operand's), the index vector somewhere.
    extra_batch = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))]
    batch_sizes = [operand[d] for d in operand_batching] + extra_batch
    batch_order = draw(st.permutations(list(range(len(batch_sizes)))))
    batch_sizes = [batch_sizes[k] for k in batch_order]
    index_vector_dim = draw(st.integers(0, len(batch_sizes)))
    implicit = len(start_map) == 1 and draw(st.booleans())
    indices = list(batch_sizes)
    if not implicit:
        indices.insert(index_vector_dim, len(start_map))
    else:
        index_vector_dim = len(indices)
    position_of = {k: batch_order.index(k) for k in range(len(batch_order))}
    indices_batching = tuple(
        p if (p := position_of[k]) < index_vector_dim else p + 1 for k in range(len(operand_batching))
    )
    window = [d for d in range(operand_rank) if d not in collapsed and d not in operand_batching]
    out_rank = len(batch_sizes) + len(window)
    offset_dims = tuple(sorted(draw(st.permutations(list(range(out_rank))))[: len(window)]))
    out, batch_iter = [0] * out_rank, iter(batch_sizes)
    for d in range(out_rank):
        out[d] = slice_sizes[window[offset_dims.index(d)]] if d in offset_dims else next(batch_iter)
    values = draw(
        st.lists(st.integers(-2, max(operand) + 1), min_size=int(np.prod(indices)), max_size=int(np.prod(indices)))
    )
    instr = instruction(
        "gather",
        f32(*out),
        [f32(*operand), s32(*indices)],
        offset_dims=offset_dims,
        collapsed_slice_dims=collapsed,
        start_index_map=start_map,
        index_vector_dim=index_vector_dim,
        slice_sizes=tuple(slice_sizes),
        operand_batching_dims=operand_batching,
        start_indices_batching_dims=indices_batching,
    )
    return instr, np.asarray(values, dtype=np.int64).reshape(indices)


def gather_starts(instr, indices, batch) -> tuple:
    ivd = instr.attr("index_vector_dim")
    vectors = indices[..., None] if ivd == indices.ndim else np.moveaxis(indices, ivd, -1)
    dims, sizes = instr.operands[0].shape.dims, instr.attr("slice_sizes")
    return tuple(
        min(max(int(vectors[batch][k]), 0), dims[d] - sizes[d]) for k, d in enumerate(instr.attr("start_index_map"))
    )


@settings(deadline=None, derandomize=True, max_examples=60)
@given(gather_case())
def test_gather_matches_reference(case):
    instr, indices = case
    offset_dims = instr.attr("offset_dims")
    batch_of = lambda y: tuple(c for d, c in enumerate(y) if d not in offset_dims)  # noqa: E731
    out_dims = instr.shape.dims
    operand_map, indices_map = output_to_input(instr)
    dims, sizes = instr.operands[0].shape.dims, instr.attr("slice_sizes")
    assert [v.interval for v in operand_map.maps[0].runtime_vars] == [
        (0, dims[d] - sizes[d]) for d in instr.attr("start_index_map")
    ]
    readers = {0: {}, 1: {}}
    for y in every(out_dims):
        rt = gather_starts(instr, indices, batch_of(y))
        for i, om in ((0, operand_map), (1, indices_map)):
            want = reference(instr, 0, y, i, {1: indices})
            assert rule_reads(om.maps, y, rt if i == 0 else ()) == want, (y, i, [str(m) for m in om.maps])
            for x in want:
                readers[i].setdefault(x, set()).add(y)
    batches = list(
        every(indices.shape[: instr.attr("index_vector_dim")] + indices.shape[instr.attr("index_vector_dim") + 1 :])
    )
    for i in (0, 1):
        (maps,) = input_to_output(instr, i)
        for x in every(instr.operands[i].shape.dims):
            got = set()
            if i == 1:
                got = rule_reads(maps, x)
            else:  # evaluate per batch position with that position's starts
                for g in batches:
                    got |= {y for y in rule_reads(maps, x, gather_starts(instr, indices, g)) if batch_of(y) == g}
            assert got == readers[i].get(x, set()), (x, i, [str(m) for m in maps])


def test_gather_spec_example():
    instr = instruction(
        "gather",
        f32(1806, 7, 8, 4),
        [f32(33, 76, 70), s32(1806, 2)],
        offset_dims=(1, 2, 3),
        collapsed_slice_dims=(),
        start_index_map=(0, 1),
        index_vector_dim=1,
        slice_sizes=(7, 8, 4),
    )
    operand_map, indices_map = output_to_input(instr)
    assert_map_text(
        operand_map.maps[0],
        "(d0, d1, d2, d3){rt0, rt1} -> (d1 + rt0, d2 + rt1, d3), domain: "
        "d0 in [0, 1805], d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], "
        "rt0 in [0, 26], rt1 in [0, 68]",
        exact_text=False,
    )
    assert_map_text(
        indices_map.maps[0],
        "(d0, d1, d2, d3)[s0] -> (d0, s0), domain: d0 in [0, 1805], "
        "d1 in [0, 6], d2 in [0, 7], d3 in [0, 3], s0 in [0, 1]",
    )


GATHER_IOTA = """HloModule m
ENTRY e {
  table = f32[6,4]{1,0} parameter(0)
  idx = s32[5,1]{1,0} iota(), iota_dimension=0
  ROOT g = f32[5,4]{1,0} gather(table, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line


def test_gather_iota_and_constant_indices_fold():
    instr = parse_module_text(GATHER_IOTA).entry.root
    operand_map = output_to_input(instr)[0].maps[0]
    assert operand_map.runtime_vars == ()
    check_out2in(instr)
    check_in2out(instr, 0)
    # A uniform constant index vector folds too (clamped: 9 -> 5).
    const_text = GATHER_IOTA.replace(
        "s32[5,1]{1,0} iota(), iota_dimension=0", "s32[5,1]{1,0} constant({ {9}, {9}, {9}, {9}, {9} })"
    )
    instr = parse_module_text(const_text).entry.root
    assert output_to_input(instr)[0].maps[0].runtime_vars == ()
    check_out2in(instr)
    check_in2out(instr, 0)
    # An iota longer than the table is clamped: exact pieces with disjoint domains, no runtime variable.
    long_text = GATHER_IOTA.replace("s32[5,1]", "s32[8,1]").replace("f32[5,4]", "f32[8,4]")
    instr = parse_module_text(long_text).entry.root
    maps = output_to_input(instr)[0].maps
    assert len(maps) == 2 and all(m.runtime_vars == () for m in maps)
    check_out2in(instr)
    check_in2out(instr, 0)


# ---- scatter ------------------------------------------------------------------------------

# Combiners over ``count`` operands: parameters 0..count-1 are the current values, then the updates.
COMBINERS = {
    1: {"add": "ROOT r = f32[] add(p0, p1)", "overwrite": "ROOT r = f32[] negate(p1)"},
    2: {
        "add": "a = f32[] add(p0, p2)\n  b = f32[] add(p1, p3)\n  ROOT r = (f32[], f32[]) tuple(a, b)",
        "overwrite": "ROOT r = (f32[], f32[]) tuple(p2, p3)",
        # variadic argmax: the value keeps its own old value, the index reads both old values
        "argmax": "c = pred[] compare(p0, p2), direction=GT\n  v = f32[] maximum(p0, p2)\n"
        "  i = f32[] select(c, p1, p3)\n  ROOT r = (f32[], f32[]) tuple(v, i)",
        # output 1 takes old 0, output 0 nothing old: what is read depends on how many updates land
        "shift": "ROOT r = (f32[], f32[]) tuple(p2, p0)",
    },
}


def combiner(count: int, kind: str):
    params = "\n  ".join(f"p{k} = f32[] parameter({k})" for k in range(2 * count))
    text = f"HloModule m\nENTRY c {{\n  {params}\n  {COMBINERS[count][kind]}\n}}\n"
    return parse_module_text(text).entry


@st.composite
def scatter_case(draw):
    """Built from a gather case: scatter's dimension numbers mirror gather's."""
    gather, indices = draw(gather_case())
    count = draw(st.integers(1, 2))
    operand = gather.operands[0].shape.dims
    updates = gather.shape.dims
    shape = f32(*operand) if count == 1 else tuple_shape(*[f32(*operand)] * count)
    instr = instruction(
        "scatter",
        shape,
        [f32(*operand)] * count + [s32(*indices.shape)] + [f32(*updates)] * count,
        update_window_dims=gather.attr("offset_dims"),
        inserted_window_dims=gather.attr("collapsed_slice_dims"),
        scatter_dims_to_operand_dims=gather.attr("start_index_map"),
        index_vector_dim=gather.attr("index_vector_dim"),
        input_batching_dims=gather.attr("operand_batching_dims"),
        scatter_indices_batching_dims=gather.attr("start_indices_batching_dims"),
    )
    kind = draw(st.sampled_from(["none"] + sorted(COMBINERS[count])))
    if kind != "none":
        instr.called["to_apply"] = combiner(count, kind)
    flat = indices.reshape(-1)
    vector_dim = instr.attr("index_vector_dim")
    moved = np.moveaxis(indices, vector_dim, -1) if vector_dim < indices.ndim else indices[..., None]
    vectors = {tuple(v) for v in moved.reshape(-1, moved.shape[-1]).tolist()} if flat.size else set()
    if draw(st.booleans()) and len(vectors) > 1:
        # the indices as a constant of differing index vectors: nothing folds (one vector, or equal
        # ones, fold to constant starts), the overwritten set is known
        literal = constant(s32(*indices.shape), "{" + ", ".join(str(int(v)) for v in flat) + "}", name="idx")
        instr = instruction(
            "scatter",
            instr.shape,
            list(instr.operands[:count]) + [literal] + list(instr.operands[count + 1 :]),
            **instr.attrs,
        )
        if kind != "none":
            instr.called["to_apply"] = combiner(count, kind)
    return instr, indices, gather


def scatter_starts(instr, gather, indices, batch):
    """Raw (unclamped) starts; None when the window is out of bounds (the update is skipped)."""
    ivd = instr.attr("index_vector_dim")
    vectors = indices[..., None] if ivd == indices.ndim else np.moveaxis(indices, ivd, -1)
    dims, sizes = instr.operands[0].shape.dims, gather.attr("slice_sizes")
    starts = tuple(int(vectors[batch][k]) for k in range(len(instr.attr("scatter_dims_to_operand_dims"))))
    ok = all(0 <= s <= dims[d] - sizes[d] for s, d in zip(starts, instr.attr("scatter_dims_to_operand_dims")))
    return starts if ok else None


def one_window_sentinels(instr, gather, indices):
    """The single window's runtime values as the overwrite pieces define them: the start where it
    is in range, the dim's size where it is not (the window is skipped)."""
    dims, sizes = instr.operands[0].shape.dims, gather.attr("slice_sizes")
    ivd = instr.attr("index_vector_dim")
    vector = (indices[..., None] if ivd == indices.ndim else np.moveaxis(indices, ivd, -1)).reshape(-1)
    return tuple(
        int(v) if 0 <= v <= dims[d] - sizes[d] else dims[d]
        for v, d in zip(vector, instr.attr("scatter_dims_to_operand_dims"))
    )


def operand_reads_by_maps(instr, gather, indices, maps, x, batches):
    """What the maps of output -> operand i < count give at x: runtime variables stand for the
    start at the batch position mapped, so evaluated per (valid) batch position whose tied
    coordinates are x's."""
    if not any(m.runtime_vars for m in maps):
        return rule_reads(maps, x)
    ivd = instr.attr("index_vector_dim")
    tied = [
        (d, j if j < ivd else j - 1)
        for d, j in zip(instr.attr("input_batching_dims"), instr.attr("scatter_indices_batching_dims"))
    ]
    got = set()
    for g in batches:
        starts = scatter_starts(instr, gather, indices, g)
        if starts is not None and all(g[pos] == x[d] for d, pos in tied):
            got |= rule_reads(maps, x, starts)
    return got


@settings(deadline=None, derandomize=True, max_examples=60)
@given(scatter_case())
def test_scatter_matches_reference(case):
    instr, indices, gather = case
    count = (len(instr.operands) - 1) // 2
    window_dims = instr.attr("update_window_dims")
    update_dims = instr.operands[count + 1].shape.dims
    batch_of = lambda u: tuple(c for d, c in enumerate(u) if d not in window_dims)  # noqa: E731
    batches = {batch_of(u) for u in every(update_dims)}
    runtime = {count: indices}
    dims, sizes = instr.operands[0].shape.dims, gather.attr("slice_sizes")
    assert [v.interval for v in output_to_input(instr)[count + 1].maps[0].runtime_vars] == [
        (0, dims[d] - sizes[d]) for d in instr.attr("scatter_dims_to_operand_dims")
    ]
    for j in range(instr.shape.num_outputs):
        per_operand = output_to_input(instr, j)
        for x in every(instr.operands[0].shape.dims):
            for i, om in enumerate(per_operand):
                want = reference(instr, j, x, i, runtime)
                if i < count:
                    if any(m.is_undefined for m in om.maps):
                        # only where the overwritten set depends on several runtime windows at once, or
                        # on how many updates land
                        reason = om.maps[0].undefined_reason
                        assert "depends on every runtime index vector" in reason or "how many updates land" in reason, (
                            reason
                        )
                        event(f"operand maps UNDEFINED: {reason.split(': ')[-1][:40]}")
                        continue
                    event(
                        "operand: "
                        + (
                            "identity"
                            if om.maps == (IndexingMap.identity(dims),)
                            else "not read"
                            if not om.maps
                            else "pieces at runtime starts"
                            if any(m.runtime_vars for m in om.maps)
                            else "static pieces"
                        )
                        + (" (own)" if i == j else " (other)")
                    )
                    if i == j and any(m.runtime_vars for m in om.maps):
                        # an overwriting combiner and one runtime window: pieces around it
                        assert len(batches) == 1
                        got = rule_reads(om.maps, x, one_window_sentinels(instr, gather, indices))
                    else:
                        got = operand_reads_by_maps(instr, gather, indices, om.maps, x, batches)
                    assert got == want, (j, x, i, [str(m) for m in om.maps])
                    continue
                if i == count:
                    assert rule_reads(om.maps, x) == want
                    continue
                got = set()
                for g in batches:
                    starts = scatter_starts(instr, gather, indices, g)
                    if starts is not None:
                        got |= {u for u in rule_reads(om.maps, x, starts) if batch_of(u) == g}
                assert got == want, (j, x, i, [str(m) for m in om.maps])
        # operand i -> output j: the same identity-shaped maps
        for i in range(count):
            assert input_to_output(instr, i)[j] == per_operand[i].maps
    # Input -> output: updates land where the reference says; skipped windows land nowhere.
    for i in range(count + 1, 2 * count + 1):
        for j, maps in enumerate(input_to_output(instr, i)):
            readers = {}
            for x in every(instr.operands[0].shape.dims):
                for u in reference(instr, j, x, i, runtime):
                    readers.setdefault(u, set()).add(x)
            for u in every(update_dims):
                starts = scatter_starts(instr, gather, indices, batch_of(u))
                got = set() if starts is None else rule_reads(maps, u, starts)
                assert got == readers.get(u, set()), (u, [str(m) for m in maps])
    check_in2out(instr, count, runtime=Runtime((), runtime), sample=200)


EMBEDDING_GRAD = """HloModule m
region {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  table = f32[10,4]{1,0} parameter(0)
  ids = s32[2,3,1]{2,1,0} parameter(1)
  grads = f32[2,3,4]{2,1,0} parameter(2)
  ROOT sc = f32[10,4]{1,0} scatter(table, ids, grads), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=region
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line


def test_scatter_from_parsed_text():
    instr = parse_module_text(EMBEDDING_GRAD).entry.root
    updates = output_to_input(instr)[2].maps[0]
    assert [v.interval for v in updates.runtime_vars] == [(0, 9)]
    ids = np.array([[[3], [0], [3]], [[9], [12], [-1]]])
    got = set()
    for g in every((2, 3)):
        v = int(ids[g][0])
        if 0 <= v <= 9:
            got |= {u for u in rule_reads([updates], (3, 1), (v,)) if u[:2] == g}
    assert got == reference(instr, 0, (3, 1), 2, {1: ids}) == {(0, 0, 1), (0, 2, 1)}


DS_TEXT = """HloModule m
ENTRY e {
  x = f32[8,6]{1,0} parameter(0)
  i = s32[] parameter(1)
  big = s32[] constant(11)
  ROOT d = f32[3,4]{1,0} dynamic-slice(x, i, big), dynamic_slice_sizes={3,4}
}
"""


def test_dynamic_slice_from_parsed_text_folds_the_constant_with_clamping():
    instr = parse_module_text(DS_TEXT).entry.root
    operand_map = output_to_input(instr)[0].maps[0]
    assert [v.interval for v in operand_map.runtime_vars] == [(0, 5)]
    assert rule_reads([operand_map], (1, 2), (4,)) == {(5, 4)}  # 11 clamps to 6 - 4 = 2
    runtime = Runtime((4,), {1: np.array(4)})
    check_out2in(instr, runtime=runtime)
    check_in2out(instr, 0, runtime=runtime)


def test_scatter_with_a_constant_out_of_range_index_never_updates():
    # Variadic scatter whose (uniform, constant) start 7 leaves no room for a window of 4 in 8.
    operands = [f32(8), f32(8), constant(s32(1), "{7}"), f32(4), f32(4)]
    instr = instruction(
        "scatter",
        tuple_shape(f32(8), f32(8)),
        operands,
        update_window_dims=(0,),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=0,
    )
    for j in range(2):
        check_out2in(instr, j)
        per_operand = output_to_input(instr, j)
        assert per_operand[1 - j].maps == () and per_operand[3].maps == ()
    for i in range(5):
        check_in2out(instr, i)
    # In range (start 3): folded, every update lands, and both operands feed both outputs.
    operands[2] = constant(s32(1), "{3}")
    instr = instruction(
        "scatter",
        tuple_shape(f32(8), f32(8)),
        operands,
        update_window_dims=(0,),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(0,),
        index_vector_dim=0,
    )
    assert output_to_input(instr, 0)[3].maps[0].runtime_vars == ()
    for i in (2, 3, 4):
        check_in2out(instr, i)


SET_ROW = """HloModule m
overwrite {
  old = f32[] parameter(0)
  ROOT new = f32[] parameter(1)
}
ENTRY e {
  x = f32[6,4]{1,0} parameter(0)
  i = s32[1]{0} parameter(1)
  row = f32[4]{0} parameter(2)
  ROOT s = f32[6,4]{1,0} scatter(x, i, row), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=overwrite
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line


def test_scatter_that_overwrites_one_row_reads_the_operand_elsewhere_only():
    """jax's ``x.at[i].set(row)``: x is read except on row i; an out-of-range i skips the update
    (the runtime variable is then 6, and every row is read)."""
    instr = parse_module_text(SET_ROW).entry.root
    maps = output_to_input(instr)[0].maps
    assert [v.interval for v in maps[0].runtime_vars] == [(0, 6)]
    for i in range(-2, 9):
        rt = (i if 0 <= i <= 5 else 6,)
        for y in every((6, 4)):
            want = reference(instr, 0, y, 0, {1: np.array([i])})
            assert rule_reads(maps, y, rt) == want == (set() if y[0] == i else {y})
    assert input_to_output(instr, 0)[0] == maps
    # The same scatter adding instead of overwriting reads x everywhere.
    added = parse_module_text(
        SET_ROW.replace("ROOT new = f32[] parameter(1)", "new = f32[] parameter(1)\n  ROOT sum = f32[] add(old, new)")
    ).entry.root
    assert output_to_input(added)[0].maps == (IndexingMap.identity((6, 4)),)


def test_scatter_that_overwrites_at_static_starts_reads_the_complement_as_boxes():
    # iota indices 1, 2, 3 along dim 0 of a 6x4 operand: rows 1..3 overwritten.
    text = (
        SET_ROW.replace("i = s32[1]{0} parameter(1)", "i = s32[3,1]{1,0} iota(), iota_dimension=0")
        .replace("row = f32[4]{0} parameter(2)", "row = f32[3,4]{1,0} parameter(1)")
        .replace("index_vector_dim=0", "index_vector_dim=1")
        .replace("update_window_dims={0}", "update_window_dims={1}")
    )
    instr = parse_module_text(text).entry.root
    maps = output_to_input(instr)[0].maps
    assert all(not m.runtime_vars for m in maps)
    check_out2in(instr)
    check_in2out(instr, 0)
    assert {y[0] for y in every((6, 4)) if rule_reads(maps, y)} == {3, 4, 5}


def _landings_one_update_element_at_a_time(instr, indices) -> dict[tuple, list[tuple]]:
    """Where each update element of a scatter lands, placed one by one from the definition: its
    window's start from the index vector (and the batching dims), skipped whole when out of bounds."""
    count = (len(instr.operands) - 1) // 2
    operand_dims = instr.operands[0].shape.dims
    update_dims = instr.operands[count + 1].shape.dims
    window_dims = instr.attr("update_window_dims")
    inserted = instr.attr("inserted_window_dims")
    operand_batching = instr.attr("input_batching_dims", ())
    indices_batching = instr.attr("scatter_indices_batching_dims", ())
    vector_dim = instr.attr("index_vector_dim")
    window_operand = [d for d in range(len(operand_dims)) if d not in inserted and d not in operand_batching]
    size = [1] * len(operand_dims)
    for d, u in zip(window_operand, window_dims):
        size[d] = update_dims[u]
    found: dict[tuple, list[tuple]] = {}
    for u in every(update_dims):
        batch = [c for d, c in enumerate(u) if d not in window_dims]
        start = [0] * len(operand_dims)
        for k, d in enumerate(instr.attr("scatter_dims_to_operand_dims")):
            at = list(batch)
            if vector_dim < indices.ndim:
                at.insert(vector_dim, k)
            start[d] = int(indices[tuple(at)])
        for d, j in zip(operand_batching, indices_batching):
            start[d] = batch[j if j < vector_dim else j - 1]
        if any(not 0 <= s <= n - w for s, n, w in zip(start, operand_dims, size)):
            continue
        target = list(start)
        for d, w in zip(window_operand, window_dims):
            target[d] += u[w]
        found.setdefault(tuple(target), []).append(tuple(u))
    return found


@settings(deadline=None, derandomize=True, max_examples=60)
@given(scatter_case())
def test_the_reference_places_windows_where_each_update_element_lands(case):
    """The reference places a scatter's windows, not its update elements: the same landings as
    placing every update element one by one."""
    from hlo_index.reference.ref_dynamic import scatter_landings_at

    instr, indices, _ = case
    count = (len(instr.operands) - 1) // 2
    expected = _landings_one_update_element_at_a_time(instr, indices)
    for x in every(instr.operands[0].shape.dims):
        assert scatter_landings_at(instr, {count: indices}, x) == expected.get(x, []), x
