"""``--verify`` on both directions: correct maps pass, and a wrong input-to-output map is caught
from each side (an element it misses, an element it invents)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index import verify
from hlo_index.affine import parse_map
from hlo_index.api import SelectedTarget
from hlo_index.fusion import OperandIndexing
from hlo_index.hlo import parse_module_text
from hlo_index.verify import pairs, points, sampling, walk
from tests.affine.affine_helpers import maps as _random_maps
from tests.fusion import hlo_samples as s

SMALL_TRANSPOSE_ADD = s.fusion_module(
    """
  p0 = f32[6, 6] parameter(0)
  t = f32[6, 6] transpose(p0), dimensions={1, 0}
  ROOT a0 = f32[6, 6] add(p0, t)""",
    ["f32[6,6]"],
    "f32[6,6]",
)


def _selected() -> SelectedTarget:
    module = parse_module_text(SMALL_TRANSPOSE_ADD)
    [fusion] = module.fusions
    return SelectedTarget("fusion", fusion)


def test_correct_maps_verify_in_both_directions():
    outcome = verify.verify_target(_selected(), samples=6, seed=3)
    assert not outcome.errors and not outcome.notes
    assert outcome.checked_points >= 6 and outcome.checked_input_points >= 3


def _with_input_to_output(monkeypatch, maps):
    monkeypatch.setattr(pairs, "input_to_output", lambda target: [OperandIndexing(0, 0, maps)])
    return verify.verify_target(_selected(), samples=6, seed=3)


def test_an_input_to_output_map_that_misses_the_transpose_is_caught(monkeypatch):
    only_identity = (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 5]"),)
    outcome = _with_input_to_output(monkeypatch, only_identity)
    assert any("which no input-to-output map gives" in e for e in outcome.errors)


def test_an_input_to_output_map_that_invents_readers_is_caught(monkeypatch):
    everything = (
        parse_map("(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], d1 in [0, 5], s0 in [0, 5], s1 in [0, 5]"),
    )
    outcome = _with_input_to_output(monkeypatch, everything)
    assert any("which does not read it" in e for e in outcome.errors)
    assert not any("which no input-to-output map gives" in e for e in outcome.errors)


OPT_BARRIER_COMPUTATION = """HloModule m

ENTRY %main (p: f32[3,4], q: f32[4,3]) -> (f32[3,4], f32[4,3]) {
  %p = f32[3,4]{1,0} parameter(0)
  %q = f32[4,3]{1,0} parameter(1)
  %t = (f32[3,4]{1,0}, f32[4,3]{1,0}) tuple(%p, %q)
  %b = (f32[3,4]{1,0}, f32[4,3]{1,0}) opt-barrier(%t)
  %g0 = f32[3,4]{1,0} get-tuple-element(%b), index=0
  %g1 = f32[4,3]{1,0} get-tuple-element(%b), index=1
  ROOT %r = (f32[3,4]{1,0}, f32[4,3]{1,0}) tuple(%g0, %g1)
}
"""


def test_opt_barrier_passes_each_tuple_element_through():
    """The reference walk follows element i of opt-barrier's tuple operand to output i (a walk that
    always followed element 0 reported false mismatches on remat dumps)."""
    module = parse_module_text(OPT_BARRIER_COMPUTATION)
    outcome = verify.verify_target(SelectedTarget("computation", module.entry), samples=8, seed=1)
    assert not outcome.errors and outcome.checked_points >= 8


TWO_IDENTICAL_FUSIONS = """HloModule m

fused_a {
  a0 = f32[4,6] parameter(0)
  a1 = f32[6] parameter(1)
  b = f32[4,6] broadcast(a1), dimensions={1}
  t = f32[6,4] transpose(a0), dimensions={1,0}
  tb = f32[6,4] transpose(b), dimensions={1,0}
  ROOT s = f32[6,4] add(t, tb)
}

fused_b {
  x0 = f32[4,6] parameter(0)
  x1 = f32[6] parameter(1)
  y = f32[4,6] broadcast(x1), dimensions={1}
  u = f32[6,4] transpose(x0), dimensions={1,0}
  ub = f32[6,4] transpose(y), dimensions={1,0}
  ROOT v = f32[6,4] add(u, ub)
}

ENTRY main {
  p0 = f32[4,6] parameter(0)
  p1 = f32[6] parameter(1)
  f1 = f32[6,4] fusion(p0, p1), kind=kLoop, calls=fused_a
  ROOT f2 = f32[6,4] fusion(p0, p1), kind=kLoop, calls=fused_b
}
"""


def _fusions(text=TWO_IDENTICAL_FUSIONS):
    module = parse_module_text(text)
    return module, [SelectedTarget("fusion", f) for f in module.fusions]


def test_sampling_is_seeded_from_what_is_sampled_never_from_names_or_time():
    first = sampling.sample_points((6, 4), 8, sampling.seeded_rng(0, "elements", (6, 4)))
    again = sampling.sample_points((6, 4), 8, sampling.seeded_rng(0, "elements", (6, 4)))
    assert first == again and len(first) == 8 and (0, 0) in first and (5, 3) in first
    # an operand of the output's shape is sampled at some of the output's elements: shared walks
    operand = sampling.sample_points((6, 4), 4, sampling.seeded_rng(0, "elements", (6, 4)))
    assert set(operand) <= set(first)
    assert sampling.sample_points((6, 4), 8, sampling.seeded_rng(1, "elements", (6, 4))) != first


def _outcome_tuple(o):
    return (o.checked_points, o.checked_input_points, o.errors, o.notes)


def test_a_renamed_copy_verifies_alike():
    module, (first, second) = _fusions()
    assert _outcome_tuple(verify.verify_target(first, module)) == _outcome_tuple(verify.verify_target(second, module))


def test_identical_fusions_are_verified_once_with_the_same_outcome():
    module, (first, second) = _fusions()
    alone = verify.verify_target(second, module)
    verified: dict = {}
    verify.verify_target(first, module, verified=verified)
    assert len([k for k in verified if not isinstance(k, str)]) == 1
    shared = verify.verify_target(second, module, verified=verified)
    assert (shared.checked_points, shared.checked_input_points, shared.errors, shared.notes) == (
        alone.checked_points,
        alone.checked_input_points,
        alone.errors,
        alone.notes,
    )
    assert not alone.errors and alone.checked_points == 8 and alone.checked_input_points == 8


def test_a_walk_for_one_operand_gives_the_full_walk_read_set_of_that_operand():
    _, (first, _) = _fusions()
    comp = first.target.called["calls"]
    full_walker = walk.Walker(comp, {}, {})

    def as_points(found):
        return {k: walk.elements_as_points(*v) for k, v in found.items()}

    for point in [(0, 0), (5, 3), (2, 1)]:
        full = as_points(full_walker.walk(0, point))
        for operand in (0, 1):
            pruned = as_points(walk.Walker(comp, {}, {}).walk(0, point, frozenset((operand,))))
            assert pruned == {k: v for k, v in full.items() if k[0] == operand}
            assert pruned  # both operands are read by every output element here
    # and the walk is the reference's, independent of the maps: a broadcast operand element read
    assert as_points(full_walker.walk(0, (5, 3)))[(1, 0)] == {(5,)}


def test_a_wrong_map_is_still_caught_with_identical_fusions_deduplicated(monkeypatch):
    module, (first, second) = _fusions()
    wrong = (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]"),)
    monkeypatch.setattr(pairs, "input_to_output", lambda target: [OperandIndexing(0, 0, wrong)])
    verified: dict = {}
    a = verify.verify_target(first, module, verified=verified)
    b = verify.verify_target(second, module, verified=verified)
    assert a.errors and b.errors and "'f2'" in b.errors[0]


def test_images_of_several_points_at_once_equal_one_at_a_time():
    maps = (
        parse_map("(d0, d1)[s0] -> (d1, s0), domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 2], d0 + s0 in [1, 6]"),
        parse_map("(d0, d1) -> (d1 floordiv 2, d0 mod 3), domain: d0 in [0, 5], d1 in [0, 3]"),
    )
    points = [(0, 0), (5, 3), (2, 1), (9, 9), (4, 2)]
    for distinct in (True, False):
        many = verify.predicted_rows_many(maps, points, distinct)
        for p in points:
            one = verify.predicted_rows(maps, p, distinct)
            assert sorted(map(tuple, many[p].tolist())) == sorted(map(tuple, one.tolist()))
    assert set(map(tuple, verify.predicted_rows(maps, (2, 1)).tolist())) == verify.predicted_read_set(maps, (2, 1))


# ---- the one-point image without numpy -------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(_random_maps(max_range=0), st.lists(st.integers(-3, 12), min_size=2, max_size=2))
def test_image_at_a_point_equals_relation_at(m, coordinates):
    """``predicted_read_set``'s plain-integer path gives what the numpy relation gives, inside
    and outside the domain, with and without constraints."""
    import numpy as np

    from hlo_index.affine.evaluate import relation_at

    point = tuple(coordinates[: m.num_dims])
    _, rows = relation_at(m, np.array([point], dtype=np.int64).reshape(1, m.num_dims), ())
    expected = {tuple(r) for r in rows.tolist()}
    got = points.image_at(m, point)
    assert ({got} if got is not None else set()) == expected
    assert verify.predicted_read_set((m,), point) == expected


@settings(max_examples=200, deadline=None)
@given(
    _random_maps(max_range=0, n_dims=2),
    st.lists(st.tuples(st.integers(-3, 12), st.integers(-3, 12)), min_size=2, max_size=6, unique=True),
)
def test_images_of_several_points_equal_those_of_each_point(m, points):
    """``predicted_rows_many``'s plain-integer path: per point, the rows numpy gives for that
    point alone, in the same order (sorted distinct rows, or every map's row in map order)."""
    for maps in ((m,), (m, m)):
        for distinct in (True, False):
            many = verify.predicted_rows_many(maps, points, distinct=distinct)
            for p in points:
                one = verify.predicted_rows(maps, p, distinct=distinct)
                assert many[p].shape == one.shape and (many[p] == one).all(), (str(m), p, distinct)


# ---- membership without enumerating the image (a result that is a range variable fixes it) ----


@settings(max_examples=300, deadline=None)
@given(
    _random_maps(max_range=2, n_dims=2),
    st.tuples(st.integers(-2, 8), st.integers(-2, 8)),
    st.lists(st.integers(-2, 8), min_size=2, max_size=2),
    st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.integers(-3, 3)),
)
def test_gives_agrees_with_the_enumerated_image_whenever_it_decides(m, x, y, coefficients):
    """``_gives`` answers True / False exactly as membership in the enumerated image, or None."""
    from hlo_index.affine import dim, range_var
    from hlo_index.affine.indexing_map import IndexingMap

    # results that are range variables (a broadcast's, a reduction's)
    pinned = IndexingMap(
        m.dims, m.range_vars, (), [range_var(k) for k in range(len(m.range_vars))] + list(m.results), m.constraints
    )
    candidates = [m, pinned]
    if len(m.range_vars) == 2:  # a sum of range variables (and a dim): a mixed radix or not
        a, b, c = coefficients
        total = range_var(0) * a + range_var(1) * b + dim(0) * c + 1
        candidates.append(IndexingMap(m.dims, m.range_vars, (), [total, dim(1)], m.constraints))
    for candidate in candidates:
        target = (
            tuple(y[:1]) * len(candidate.range_vars) + tuple(y)
            if candidate is pinned
            else tuple(y[: candidate.num_results])
        )
        target = target[: candidate.num_results]
        if len(target) != candidate.num_results:
            continue
        checkable = points.checkable_maps((candidate,))
        verdict = points.gives_pair(checkable, x, target)
        truth = target in verify.predicted_read_set((candidate,), x)
        assert verdict is None or verdict == truth, (str(candidate), x, target)


def test_gives_decides_broadcast_maps_without_enumeration():
    broadcast = parse_map("(d0)[s0] -> (s0, d0), domain: d0 in [0, 5], s0 in [0, 7]")
    checkable = points.checkable_maps((broadcast,))
    assert points.gives_pair(checkable, (3,), (7, 3)) is True
    assert points.gives_pair(checkable, (3,), (8, 3)) is False  # s0 out of its range
    assert points.gives_pair(checkable, (3,), (2, 4)) is False  # the wrong column


BROADCAST_ADD = s.fusion_module(
    """
  p0 = f32[6] parameter(0)
  b = f32[4, 6] broadcast(p0), dimensions={1}
  ROOT a0 = f32[4, 6] add(b, b)""",
    ["f32[6]"],
    "f32[4,6]",
)


def test_a_broadcast_input_to_output_map_missing_rows_is_caught(monkeypatch):
    """The pinned-range-variable path still catches a map that gives too few readers."""
    module = parse_module_text(BROADCAST_ADD)
    [fusion] = module.fusions
    rows_0_to_1 = (parse_map("(d0)[s0] -> (s0, d0), domain: d0 in [0, 5], s0 in [0, 1]"),)
    monkeypatch.setattr(pairs, "input_to_output", lambda target: [OperandIndexing(0, 0, rows_0_to_1)])
    outcome = verify.verify_target(SelectedTarget("fusion", fusion), samples=8, seed=1)
    assert any("which no input-to-output map gives" in e for e in outcome.errors)


def test_a_broadcast_fusion_verifies_clean():
    module = parse_module_text(BROADCAST_ADD)
    [fusion] = module.fusions
    outcome = verify.verify_target(SelectedTarget("fusion", fusion), samples=8, seed=1)
    assert not outcome.errors and not outcome.notes and outcome.checked_input_points >= 2


def test_elementwise_set_read_sets_are_the_union_of_the_point_read_sets():
    from hlo_index.reference import SET_READ_SETS, read_set

    module = parse_module_text(
        s.fusion_module(
            """
  p0 = f32[3, 4] parameter(0)
  p1 = f32[] parameter(1)
  b = f32[3, 4] broadcast(p1), dimensions={}
  a = f32[3, 4] add(p0, b)
  ROOT c = f32[3, 4] clamp(p1, a, p1)""",
            ["f32[3,4]", "f32[]"],
            "f32[3,4]",
        )
    )
    [fusion] = module.fusions
    clamp = fusion.called["calls"].root
    add = clamp.operands[1]
    points = {(0, 0), (2, 3), (1, 2)}
    for instr in (add, clamp):  # same-shape operands, and clamp's scalar bounds
        for operand in range(len(instr.operands)):
            union = set().union(*(read_set(instr, 0, p, operand) for p in points))
            assert _set_read(SET_READ_SETS, instr, points, operand) == union


def _set_read(table, instr, points, operand):
    """A ``SET_READ_SETS`` function of ``points`` (tuples) as a set of tuples."""
    from hlo_index.reference import linear_of, points_of

    got = table[instr.opcode](instr, 0, np.unique(linear_of(points, instr.shape.dims)), operand)
    return set(points_of(got, instr.operands[operand].shape.dims))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=0, max_size=4), st.randoms(use_true_random=False))
def test_tags_in_order_equal_the_materialised_tagged_array(dims, rnd):
    """The reference's lazily computed tags are those of the transposed, flattened tagged array."""
    import numpy as np

    from hlo_index.reference.ref_shape import tagged, tags_in_order

    order = list(range(len(dims)))
    rnd.shuffle(order)
    memory = np.transpose(tagged(dims), order).reshape(-1)
    positions = list(range(len(memory)))
    assert tags_in_order(tuple(dims), tuple(order), positions).tolist() == memory.tolist()


def test_gives_solves_mixed_radix_sums_of_range_variables_exactly():
    """``s0 * 128 + s1`` (a reduction's in-to-out map over a reshaped dimension): at most one
    (s0, s1) gives a value, found without enumerating; agrees with the enumerated image."""
    m = parse_map("(d0)[s0, s1] -> (s0 * 4 + s1 + 1, d0), domain: d0 in [0, 2], s0 in [0, 3], s1 in [0, 3]")
    checkable = points.checkable_maps((m,))
    for x in range(-1, 4):
        image = verify.predicted_read_set((m,), (x,))
        for y0 in range(-1, 19):
            for y1 in range(-1, 4):
                got = points.gives_pair(checkable, (x,), (y0, y1))
                assert got is not None and got == ((y0, y1) in image)
    # coefficients that are not a mixed radix: left to enumeration, never guessed
    overlapping = parse_map("(d0)[s0, s1] -> (s0 * 2 + s1, d0), domain: d0 in [0, 2], s0 in [0, 3], s1 in [0, 3]")
    assert points.gives_pair(points.checkable_maps((overlapping,)), (1,), (3, 1)) is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_moving_ops_read_what_they_read_on_the_materialised_tagged_array(dims, rnd):
    """Transpose, reverse, slice, broadcast, pad and concatenate run on per-axis addends (or per
    axis, or on a slab) read at every output element what the same numpy op run on the whole
    tagged array holds there."""
    import itertools

    import numpy as np

    from hlo_index.reference import SET_READ_SETS, read_set
    from hlo_index.reference.ref_shape import tag_parts, tagged

    full = tagged(dims)
    assert sum(tag_parts(dims)).tolist() == full.tolist()
    rank = len(dims)
    order = list(range(rank))
    rnd.shuffle(order)
    flips = sorted(rnd.sample(range(rank), rnd.randint(0, rank)))
    cuts = []
    for n in dims:
        start = rnd.randrange(n)
        cuts.append((start, rnd.randint(start + 1, n), rnd.randint(1, 2)))
    pads = [(rnd.randint(-1, 2), rnd.randint(-1, 2), rnd.randint(0, 2)) for _ in dims]
    other = list(dims)
    axis = rnd.randrange(rank)
    other[axis] = rnd.randint(1, 3)
    new_dim = rnd.randint(1, 3)
    bcast_dims = list(range(rank + 1))
    at = rnd.randrange(rank + 1)
    del bcast_dims[at]

    def text(d):
        return "f32[" + ",".join(map(str, d)) + "]"

    def padded_dims():
        out = []
        for n, (lo, hi, interior) in zip(dims, pads):
            out.append(max(lo + hi + n + (n - 1) * interior, 0))
        return out

    def shape_of(array):
        return list(array.shape)

    expected = {
        "transpose": np.transpose(full, order),
        "reverse": np.flip(full, axis=tuple(flips)),
        "slice": full[tuple(slice(a, b, c) for a, b, c in cuts)],
    }
    out_dims = list(dims)
    out_dims.insert(at, new_dim)
    bcast = np.broadcast_to(np.expand_dims(full, at), out_dims)
    pad_shape = padded_dims()
    if any(n <= 0 for n in pad_shape):
        pads = [(0, 0, 0) for _ in dims]
        pad_shape = list(dims)
    from hlo_index.reference.ref_shape import _padded

    class P:
        def __init__(self, lo, hi, interior):
            self.low, self.high, self.interior = lo, hi, interior

    padded = _padded(tuple(dims), [P(*p) for p in pads])
    concatenated = np.concatenate([full, tagged(other) + full.size], axis=axis)
    lines = [
        f"  p0 = {text(dims)} parameter(0)",
        f"  p1 = {text(other)} parameter(1)",
        "  z = f32[] constant(0)",
        f"  t = {text(shape_of(expected['transpose']))} transpose(p0), dimensions={{{','.join(map(str, order))}}}",
        f"  r = {text(dims)} reverse(p0), dimensions={{{','.join(map(str, flips))}}}",
        f"  s = {text(shape_of(expected['slice']))} slice(p0), slice={{"
        + ",".join(f"[{a}:{b}:{c}]" for a, b, c in cuts)
        + "}",
        f"  b = {text(out_dims)} broadcast(p0), dimensions={{{','.join(map(str, bcast_dims))}}}",
        f"  pd = {text(pad_shape)} pad(p0, z), padding=" + "x".join(f"{lo}_{hi}_{i}" for lo, hi, i in pads),
        f"  c = {text(shape_of(concatenated))} concatenate(p0, p1), dimensions={{{axis}}}",
        f"  rs = f32[{full.size}] reshape(p0)",
        f"  bc = f16[{full.size},2] bitcast(p0)",
        f"  bw = f32[{full.size}]{{0}} bitcast(bc)",
        f"  ROOT o = {text(dims)} add(p0, p0)",
    ]
    module = parse_module_text("HloModule m\n\nENTRY e {\n" + "\n".join(lines) + "\n}\n")
    by_name = {i.name: i for i in module.entry.instructions}
    cases = [("t", expected["transpose"]), ("r", expected["reverse"]), ("s", expected["slice"]), ("b", bcast)]
    cases += [("pd", padded), ("c", concatenated)]
    for name, array in cases:
        instr = by_name[name]
        for point in itertools.product(*map(range, array.shape)):
            tag = int(array[point])
            if name == "c":
                first = int(tag >= full.size)
                own = tag - first * full.size
                shape = dims if first == 0 else other
                want = {0: set(), 1: set()}
                want[first] = {tuple(int(i) for i in np.unravel_index(own, shape))}
                for operand in (0, 1):
                    assert read_set(instr, 0, point, operand) == want[operand], (name, point)
                continue
            want = set() if tag < 0 else {tuple(int(i) for i in np.unravel_index(tag, dims))}
            assert read_set(instr, 0, point, 0) == want, (name, point)
            if name == "pd":
                assert read_set(instr, 0, point, 1) == (set() if want else {()}), (name, point)
    # the set-at-once reads are the union of the per-element ones, on any set of elements
    for name in ("t", "r", "s", "b", "pd", "c", "rs", "bc", "bw"):
        instr = by_name[name]
        every = list(itertools.product(*map(range, instr.shape.dims)))
        chosen = set(rnd.sample(every, rnd.randint(0, len(every))))
        for operand in range(len(instr.operands)):
            union = set().union(*(read_set(instr, 0, p, operand) for p in chosen))
            assert _set_read(SET_READ_SETS, instr, chosen, operand) == union, (name, operand)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_broadcast_set_reads_are_those_of_the_materialised_broadcast(out_dims, rnd):
    """Any operand axes (kept in order or not, next to each other or not): the set-at-once read of
    a broadcast is what ``np.broadcast_to`` of the tagged operand holds at the elements read."""
    import itertools

    from hlo_index.reference import SET_READ_SETS, linear_of
    from hlo_index.reference.ref_shape import tagged

    kept = rnd.sample(range(len(out_dims)), rnd.randint(0, len(out_dims)))
    if rnd.random() < 0.5:
        kept.sort()
    dims = [out_dims[a] for a in kept]

    def text(d):
        return "f32[" + ",".join(map(str, d)) + "]"

    module = parse_module_text(
        "HloModule m\n\nENTRY e {\n"
        f"  p0 = {text(dims)} parameter(0)\n"
        f"  ROOT b = {text(out_dims)} broadcast(p0), dimensions={{{','.join(map(str, kept))}}}\n}}\n"
    )
    instr = module.entry.root
    # the tagged operand, its axes put in output order, size-1 axes for the new ones
    order = sorted(range(len(kept)), key=lambda i: kept[i])
    expanded = [1] * len(out_dims)
    for a in kept:
        expanded[a] = out_dims[a]
    materialised = np.broadcast_to(np.transpose(tagged(dims), order).reshape(expanded), out_dims)
    every = list(itertools.product(*map(range, out_dims)))
    chosen = sorted(rnd.sample(every, rnd.randint(0, len(every))))
    got = SET_READ_SETS["broadcast"](instr, 0, linear_of(chosen, out_dims), 0)
    assert np.asarray(got).tolist() == [int(materialised[p]) for p in chosen]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 9), st.integers(0, 300)), min_size=1, max_size=900),
)
def test_linear_sets_keep_the_order_of_index_tuples(rows):
    """A walk's sorted linear set lists its elements in ``sorted()``'s order of the tuples (the
    positions pairs are picked at)."""
    from hlo_index.reference import linear_of, points_of

    dims = (41, 10, 301)
    assert points_of(np.unique(linear_of(rows, dims)), dims) == sorted(set(rows))


def test_reduce_and_dot_set_read_sets_are_the_union_of_the_point_read_sets():
    import itertools
    import random

    from hlo_index.reference import SET_READ_SETS, read_set

    module = parse_module_text(
        """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[3,4,5] parameter(0)
  p1 = f32[3,5,2] parameter(1)
  z = f32[] constant(0)
  r = f32[4] reduce(p0, z), dimensions={0,2}, to_apply=add
  q = f32[3,5] reduce(p0, z), dimensions={1}, to_apply=add
  ROOT d = f32[3,4,2] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0},
    lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
"""
    )
    by_name = {i.name: i for i in module.entry.instructions}
    rnd = random.Random(3)
    for name in ("r", "q", "d"):
        instr = by_name[name]
        every = list(itertools.product(*map(range, instr.shape.dims)))
        for count in (0, 1, min(5, len(every)), len(every)):
            chosen = set(rnd.sample(every, count))
            for operand in range(len(instr.operands)):
                union = set().union(*(read_set(instr, 0, p, operand) for p in chosen))
                assert _set_read(SET_READ_SETS, instr, chosen, operand) == union, (name, operand)


def test_reduce_window_set_read_sets_are_the_union_of_the_point_read_sets():
    import itertools
    import random

    from hlo_index.reference import SET_READ_SETS, read_set

    # strides, padding on both sides, window and base dilation (holes), and a window past the input
    windows = (  # with the result's dims: (padded - dilated window) / stride + 1 per axis
        ("size=2x3 stride=1x2 pad=0_1x1_1", "5,4"),
        ("size=3x2 stride=2x1 pad=2_2x0_3 lhs_dilate=2x1 rhs_dilate=1x2", "6,8"),
        ("size=1x4 stride=3x3 pad=0_0x4_0", "2,3"),
    )
    rnd = random.Random(5)
    for window, dims in windows:
        module = parse_module_text(
            f"""HloModule m

max {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}}

ENTRY e {{
  p0 = f32[5,7] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[{dims}] reduce-window(p0, z), window={{{window}}}, to_apply=max
}}
"""
        )
        instr = module.entry.root
        every = list(itertools.product(*map(range, instr.shape.dims)))
        # scattered points, and grids (every combination of some coordinates per axis: a
        # shortcut reads those axis by axis)
        grids = [
            set(itertools.product(*(rnd.sample(range(n), rnd.randint(1, n)) for n in instr.shape.dims)))
            for _ in range(4)
        ]
        for chosen in [set(rnd.sample(every, count)) for count in (0, 1, min(5, len(every)), len(every))] + grids:
            for operand in range(2):
                union = set().union(*(read_set(instr, 0, p, operand) for p in chosen))
                assert _set_read(SET_READ_SETS, instr, chosen, operand) == union, (window, operand)


@pytest.mark.parametrize(
    "lhs, rhs, out, attrs",
    [
        # strides, padding, lhs (base) and rhs (window) dilation
        (
            "f32[2,5,6,3]",
            "f32[3,2,3,4]",
            "f32[2,2,11,4]",
            "window={size=3x2 stride=2x1 pad=1_1x0_1 lhs_dilate=1x2 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f",
        ),
        # two feature groups: each output feature reads its group's three input features
        (
            "f32[1,4,4,6]",
            "f32[2,2,3,4]",
            "f32[1,3,3,4]",
            "window={size=2x2}, dim_labels=b01f_01io->b01f, feature_group_count=2",
        ),
        # two batch groups: each output feature reads its group's half of the batch
        (
            "f32[4,3,3,2]",
            "f32[2,2,2,6]",
            "f32[2,2,2,6]",
            "window={size=2x2}, dim_labels=b01f_01io->b01f, batch_group_count=2",
        ),
    ],
)
def test_convolution_set_read_sets_are_the_union_of_the_point_read_sets(lhs, rhs, out, attrs):
    import itertools
    import random

    from hlo_index.reference import SET_READ_SETS, read_set

    module = parse_module_text(
        f"HloModule m\nENTRY e {{\n  a = {lhs} parameter(0)\n  k = {rhs} parameter(1)\n"
        f"  ROOT c = {out} convolution(a, k), {attrs}\n}}\n"
    )
    instr = module.entry.root
    every = list(itertools.product(*map(range, instr.shape.dims)))
    rnd = random.Random(7)
    for count in (1, 5, len(every)):
        chosen = set(rnd.sample(every, count))
        for operand in range(2):
            union = set().union(*(read_set(instr, 0, p, operand) for p in chosen))
            assert union and _set_read(SET_READ_SETS, instr, chosen, operand) == union, (attrs, operand)


def test_a_walk_through_a_nested_tuple_keeps_the_elements_of_the_array_inside():
    """A get-tuple-element of a nested tuple parameter: the elements read are those of the
    array inside it (its dims, not the tuple's), as the reference passes them through."""
    module = parse_module_text(
        """HloModule m

ENTRY e {
  p = ((f32[4,5], f32[3]), s32[]) parameter(0)
  inner = (f32[4,5], f32[3]) get-tuple-element(p), index=0
  a = f32[4,5] get-tuple-element(inner), index=0
  ROOT r = f32[4,5] add(a, a)
}
"""
    )
    found = walk.backward_read_sets(module.entry, 0, (2, 3))
    assert found == {(0, 0): {(2, 3)}}


@pytest.mark.parametrize(
    "text, merged_vars",
    [
        # a 255-wide window's taps and offsets, as a TPU attention dump's reduce-window gives them
        ("(d0)[s0, s1] -> (s0 + s1 - 3, d0), domain: d0 in [0, 2], s0 in [0, 6], s1 in [0, 3], s0 + s1 in [3, 6]", 1),
        # twice the sum, and a division of something else
        (
            "(d0)[s0, s1, s2] -> (s0 * 2 + s1 * 2 + d0, s2 floordiv 2), "
            "domain: d0 in [0, 1], s0 in [0, 2], s1 in [1, 2], s2 in [0, 3]",
            2,
        ),
        # s0 alone in one result: nothing merges
        ("(d0)[s0, s1] -> (s0 + s1, s0), domain: d0 in [0, 1], s0 in [0, 2], s1 in [0, 2]", 2),
        # s1 inside a division: nothing merges
        ("(d0)[s0, s1] -> (s0 + s1, (s0 + s1) floordiv 2), domain: d0 in [0, 1], s0 in [0, 2], s1 in [0, 2]", 2),
    ],
)
def test_range_variables_held_only_as_their_sum_merge_into_one_reading_the_same(text, merged_vars):
    """What a map reads at each point is the same after the merge (enumerated both ways)."""
    from hlo_index.affine.evaluate import relation_at

    m = parse_map(text)
    merged = points.merge_summed_range_vars(m)
    assert len(merged.range_vars) == merged_vars
    for d0 in range(m.dims[0].lo, m.dims[0].hi + 1):
        at = np.array([[d0]], dtype=np.int64)
        before = {tuple(r) for r in relation_at(m, at, ())[1].tolist()}
        after = {tuple(r) for r in relation_at(merged, at, ())[1].tolist()}
        assert before == after and before, d0


@pytest.mark.parametrize(
    "text, kept_vars",
    [
        # a scatter's update read where its runtime index equals the output row (UnsortedSegmentSum)
        (
            "(d0, d1)[s0]{rt0} -> (s0 floordiv 4, s0 mod 4, d1), "
            "domain: d0 in [0, 6], d1 in [0, 1], s0 in [0, 11], rt0 in [0, 5], d0 - rt0 in [0, 0]",
            1,
        ),
        # one fixed by the other two, and a constraint naming it kept (substituted)
        (
            "(d0)[s0, s1, s2] -> (s0 + s2, s1), "
            "domain: d0 in [0, 4], s0 in [0, 3], s1 in [0, 2], s2 in [1, 5], s2 - s0 - d0 in [1, 1], s2 + s1 in [2, 6]",
            2,
        ),
        # a chain: s1 fixed by s0, s2 by s1
        (
            "(d0)[s0, s1, s2] -> (s2, s0), "
            "domain: d0 in [0, 3], s0 in [0, 4], s1 in [0, 6], s2 in [0, 9], s1 - s0 in [2, 2], s2 - s1 - d0 in [0, 0]",
            1,
        ),
        # no equality: nothing solved
        ("(d0)[s0, s1] -> (s0 + s1, d0), domain: d0 in [0, 2], s0 in [0, 2], s1 in [0, 2], s0 - s1 in [0, 1]", 2),
    ],
)
def test_range_variables_an_equality_fixes_are_computed_and_read_the_same(text, kept_vars):
    """What a map reads at each point is the same once each fixed variable is computed from the
    others (enumerated both ways), however many combinations that saves."""
    from hlo_index.affine.evaluate import relation_at

    m = points.runtime_as_range(parse_map(text))
    solved = points.solve_fixed_range_vars(m)
    assert len(solved.range_vars) == kept_vars
    for point in np.ndindex(*(iv.size for iv in m.dims)):
        at = np.array([[iv.lo + x for iv, x in zip(m.dims, point)]], dtype=np.int64)
        before = {tuple(r) for r in relation_at(m, at, ())[1].tolist()}
        after = {tuple(r) for r in relation_at(solved, at, ())[1].tolist()}
        assert before == after, point


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_solving_fixed_range_variables_never_changes_what_a_random_map_reads(data):
    """Random maps with an equality on range variables added: the same reads at every point."""
    from hlo_index.affine import Interval, dim, range_var
    from hlo_index.affine.evaluate import relation_at
    from hlo_index.affine.indexing_map import IndexingMap

    dims = [Interval(0, data.draw(st.integers(0, 3))) for _ in range(data.draw(st.integers(1, 2)))]
    ranges = [Interval(data.draw(st.integers(-2, 1)), data.draw(st.integers(2, 5))) for _ in range(3)]
    variables = [dim(i) for i in range(len(dims))] + [range_var(i) for i in range(3)]

    def affine():
        e = dim(0) * 0 + data.draw(st.integers(-3, 3))
        for v in variables:
            e = e + v * data.draw(st.sampled_from([0, 0, 1, -1, 2]))
        return e

    fixed = data.draw(st.integers(0, 2))
    equality = range_var(fixed) * data.draw(st.sampled_from([1, -1])) + affine() - range_var(fixed) * 0
    constraints = [(equality, Interval(v := data.draw(st.integers(-2, 4)), v))]
    if data.draw(st.booleans()):
        constraints.append((affine(), Interval(-3, data.draw(st.integers(0, 6)))))
    results = [affine(), affine() // data.draw(st.sampled_from([1, 2, 3]))]
    m = IndexingMap(dims, ranges, [], results, constraints)
    solved = points.solve_fixed_range_vars(m)
    for point in np.ndindex(*(iv.size for iv in dims)):
        at = np.array([list(point)], dtype=np.int64)
        before = {tuple(r) for r in relation_at(m, at, ())[1].tolist()}
        after = {tuple(r) for r in relation_at(solved, at, ())[1].tolist()}
        assert before == after, (str(m), str(solved), point)


def _with_target_budget(points: int):
    """A child analysis context whose walks may pull back ``points`` elements per target."""
    import dataclasses

    from hlo_index.context import current

    context = current().child()
    context.budgets = dataclasses.replace(context.budgets, verify_points_per_target=points)
    return context


def test_a_target_past_its_budget_checks_fewer_elements_not_none():
    # each output element of the fusion reads 2 elements through 3 instructions: 6 a walk at most
    with _with_target_budget(10):
        outcome = verify.verify_target(_selected(), samples=6, seed=3)
    assert not outcome.errors and not outcome.notes
    assert outcome.sampled_points == 6 and 1 <= outcome.checked_points < 6
    assert outcome.unchecked_pairs > 0  # and the input-to-output pairs are not walked back
    with _with_target_budget(10**6):
        full = verify.verify_target(_selected(), samples=6, seed=3)
    assert full.checked_points == full.sampled_points == 6 and full.unchecked_pairs == 0


def test_a_wrong_map_is_caught_on_the_element_a_spent_budget_still_checks(monkeypatch):
    from hlo_index.verify import target as verify_target_module

    # off by one row: wrong at the first element sampled, {0, 0}, the one a spent budget still checks
    wrong = (parse_map("(d0, d1) -> (d0 + 1, d1), domain: d0 in [0, 4], d1 in [0, 5]"),)
    monkeypatch.setattr(verify_target_module, "output_to_input", lambda target: [OperandIndexing(0, 0, wrong)])
    with _with_target_budget(1):
        outcome = verify.verify_target(_selected(), samples=6, seed=3)
    assert outcome.checked_points == 1
    assert any("which no map gives" in e for e in outcome.errors)


@pytest.mark.parametrize(
    "text, sizes",
    [
        # a full reduction read through a reshape's digits: only s0 floordiv 6 matters
        ("()[s0] -> (s0 floordiv 24, (s0 floordiv 6) mod 4), domain: s0 in [0, 95]", [16]),
        # divisors 4 and 6 (gcd 2), a dim beside, a range that starts and ends mid-quotient
        ("(d0)[s0] -> (s0 floordiv 4 + d0, s0 floordiv 6), domain: d0 in [0, 3], s0 in [3, 29]", [14]),
        # in a constraint too
        ("(d0)[s0] -> (s0 floordiv 9), domain: d0 in [0, 2], s0 in [0, 40], s0 floordiv 3 - d0 in [0, 5]", [14]),
        # s0 bare in a result: kept
        ("(d0)[s0] -> (s0 floordiv 4, s0), domain: d0 in [0, 1], s0 in [3, 29]", [27]),
    ],
)
def test_range_variables_held_only_divided_become_their_quotient_reading_the_same(text, sizes):
    from hlo_index.affine.evaluate import relation_at

    m = parse_map(text)
    merged = points.merge_quotient_range_vars(m)
    assert [iv.size for iv in merged.range_vars] == sizes
    for point in np.ndindex(*(iv.size for iv in m.dims)):
        at = np.array([[iv.lo + x for iv, x in zip(m.dims, point)]], dtype=np.int64).reshape(1, m.num_dims)
        before = {tuple(r) for r in relation_at(m, at, ())[1].tolist()}
        after = {tuple(r) for r in relation_at(merged, at, ())[1].tolist()}
        assert before == after and before, point


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_merging_quotients_never_changes_what_a_random_map_reads(data):
    from hlo_index.affine import Interval, dim, floordiv, mod, range_var
    from hlo_index.affine.evaluate import relation_at
    from hlo_index.affine.indexing_map import IndexingMap

    dims = [Interval(0, data.draw(st.integers(0, 3)))]
    ranges = [Interval(lo := data.draw(st.integers(0, 7)), lo + data.draw(st.integers(0, 60)))]
    s0, d0 = range_var(0), dim(0)

    def piece():
        q = data.draw(st.sampled_from([2, 4, 6, 8, 12]))
        e = floordiv(s0, q)
        if data.draw(st.booleans()):
            e = mod(e, data.draw(st.sampled_from([2, 3, 5])))
        return e * data.draw(st.sampled_from([1, 2, -1])) + d0 * data.draw(st.integers(0, 1))

    results = [piece(), piece()]
    constraints = [(piece(), Interval(-4, data.draw(st.integers(0, 9))))] if data.draw(st.booleans()) else []
    m = IndexingMap(dims, ranges, [], results, constraints)
    merged = points.merge_quotient_range_vars(m)
    for point in range(dims[0].size):
        at = np.array([[point]], dtype=np.int64)
        before = {tuple(r) for r in relation_at(m, at, ())[1].tolist()}
        after = {tuple(r) for r in relation_at(merged, at, ())[1].tolist()}
        assert before == after, (str(m), str(merged), point)


def _with_combination_budget(combinations: int):
    import dataclasses

    from hlo_index.context import current

    context = current().child()
    context.budgets = dataclasses.replace(
        context.budgets, verify_range_combinations=combinations, verify_image_points=combinations
    )
    return context


def test_input_to_output_maps_too_large_to_list_are_still_checked_from_both_sides(monkeypatch):
    """With images past the budget, a pair is decided by arithmetic and image elements are drawn,
    not listed: the map that invents readers is caught, the right maps pass."""
    everything = (
        parse_map("(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], d1 in [0, 5], s0 in [0, 5], s1 in [0, 5]"),
    )
    with _with_combination_budget(4):
        outcome = _with_input_to_output(monkeypatch, everything)
    assert not outcome.notes
    assert any("which does not read it" in e for e in outcome.errors)


def test_an_image_too_large_to_list_is_drawn_and_each_drawn_element_walked_back(monkeypatch):
    """A broadcast's operand element read by a whole column, past the budget: elements drawn from
    the column, each walked back and found reading it."""
    broadcast = parse_module_text(
        s.fusion_module(
            """
  p0 = f32[6] parameter(0)
  ROOT b = f32[6, 6] broadcast(p0), dimensions={1}""",
            ["f32[6]"],
            "f32[6,6]",
        )
    )
    [fusion] = broadcast.fusions
    drawn: list = []
    original = pairs.sampled_image

    def recorded(*args):
        found = original(*args)
        drawn.extend(found)
        return found

    monkeypatch.setattr(pairs, "sampled_image", recorded)
    with _with_combination_budget(4):
        outcome = verify.verify_target(SelectedTarget("fusion", fusion), samples=6, seed=3)
    assert not outcome.notes and not outcome.errors and outcome.checked_input_points >= 3
    assert len(drawn) >= 3 * 4  # four elements of each sampled operand element's column


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_drawn_image_element_is_one_the_enumeration_lists(data):
    import random

    from hlo_index.affine.evaluate import relation_at

    m = data.draw(_random_maps(max_dims=2, max_range=2))
    if m.is_undefined or m.is_known_empty or m.runtime_vars:
        return
    x = tuple(data.draw(st.integers(b.lo, b.hi)) for b in m.dims)
    listed = {tuple(r) for r in relation_at(m, np.array([x], dtype=np.int64).reshape(1, m.num_dims), ())[1].tolist()}
    drawn = points.sampled_image([m], x, random.Random(data.draw(st.integers(0, 9))), 4)
    # never an invented element (a sparse image may go undrawn)
    assert set(drawn) <= listed and len(drawn) == len(set(drawn)) <= 4


def test_a_pair_through_a_quotient_of_a_dense_sum_is_decided_as_the_enumeration_says():
    """``(s0 * n1 + s1) floordiv q`` beside other results and constraints: the pair is decided by
    trying the q sums of the quotient, and agrees with the listed image (300 seeded maps; the
    simplifier rewrites some of them out of that form, which the listing then answers)."""
    import random

    from hlo_index.affine import Interval, dim, floordiv, range_var
    from hlo_index.affine.evaluate import relation_at
    from hlo_index.affine.indexing_map import IndexingMap

    rng = random.Random(20261130)
    decided = asked = 0
    for _ in range(300):
        n0, n1, lo0 = rng.randint(2, 6), rng.randint(2, 40), rng.randint(0, 2)
        dims = [Interval(0, rng.randint(0, 3))]
        ranges = [Interval(lo0, lo0 + n0 - 1), Interval(0, n1 - 1)]
        s0, s1, d0 = range_var(0), range_var(1), dim(0)
        total = s0 * (n1 + rng.choice([0, 0, 1])) + s1 + d0 * rng.randint(0, 2)
        results = [floordiv(total, rng.choice([3, 5, 7, 9, 48]))]
        if rng.random() < 0.5:
            results.append(d0 + rng.randint(-1, 1))
        constraints = []
        if rng.random() < 0.5:
            constraints.append((s1 - s0, Interval(rng.randint(-4, 0), rng.randint(0, 4))))
        m = IndexingMap(dims, ranges, [], results, constraints)
        for x in range(dims[0].size):
            listed = {tuple(r) for r in relation_at(m, np.array([[x]], dtype=np.int64), ())[1].tolist()}
            for y in sorted(listed) + [tuple(rng.randint(-2, 12) for _ in results) for _ in range(3)]:
                verdict = points.gives_pair([m], (x,), y)
                asked += 1
                if verdict is not None:
                    decided += 1
                    assert verdict == (y in listed), (str(m), x, y, verdict)
    # most are decided without listing the image (8,032 of 10,475; none without trying the sums)
    assert decided > 0.7 * asked, (decided, asked)


def test_the_points_a_map_enumerates_count_against_the_target_budget(monkeypatch):
    """Right maps, one with a range variable of 1,000 points that changes nothing it reads: the
    walks alone stay far under a budget of 500, the enumeration spends it on the first element."""
    from hlo_index.verify import target as verify_target_module

    right = (
        parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 5]"),
        parse_map("(d0, d1)[s0] -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 5], s0 in [0, 999]"),
    )
    monkeypatch.setattr(verify_target_module, "output_to_input", lambda target: [OperandIndexing(0, 0, right)])
    with _with_target_budget(500):
        outcome = verify.verify_target(_selected(), samples=6, seed=3)
    assert not outcome.errors and not outcome.notes
    assert (outcome.checked_points, outcome.sampled_points) == (1, 6)
    with _with_target_budget(10**6):
        full = verify.verify_target(_selected(), samples=6, seed=3)
    assert full.checked_points == 6


def test_the_report_says_how_many_sampled_elements_a_spent_budget_left_checked():
    from hlo_index.report.build import module_report

    module = parse_module_text(SMALL_TRANSPOSE_ADD)
    with _with_target_budget(10):
        report = module_report(module, verify=True, verify_samples=6, seed=3, own_context=False)
    [target] = report.targets
    verify_figures = target.extra["verify"]
    assert verify_figures["verdict"] == "ok" and verify_figures["elements_sampled"] == 6
    checked = verify_figures["elements_checked"]
    assert 1 <= checked < 6 and verify_figures["input_pairs_not_walked"] > 0
    element = "element" if checked == 1 else "elements"
    [note] = [n for n in target.notes if n.startswith("verified ")]
    assert note.startswith(f"verified {checked} sampled output {element} (of 6 sampled, ")
    assert "budget verify_points_per_target=10): ok" in note


ALL_REDUCE_OF_TWO = """HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT add = f32[] add(x, y)
}

ENTRY entry {
  p0 = f32[2] parameter(0)
  p1 = f32[3] parameter(1)
  start = (f32[2], f32[3]) all-reduce-start(p0, p1), to_apply=add
  ROOT done = (f32[2], f32[3]) all-reduce-done(start)
}
"""


def test_the_done_of_an_all_reduce_of_two_operands_passes_each_sum_through():
    # the start is the tuple of the operands' sums: output 1 of the done is the sum of p1
    module = parse_module_text(ALL_REDUCE_OF_TWO)
    walker = walk.Walker(module.entry, {}, {})
    assert {k: walk.elements_as_points(*v) for k, v in walker.walk(1, (2,)).items()} == {(1, 0): {(2,)}}
    outcome = verify.verify_target(SelectedTarget("computation", module.entry), module)
    assert outcome.checked_points and not outcome.errors and not outcome.notes


def test_calls_that_return_empty_tuples_have_nothing_to_verify():
    module = parse_module_text(
        """HloModule m

a {
  ROOT t = () tuple()
}

ENTRY e {
  x = () call(), to_apply=a
  y = () call(), to_apply=a
  ROOT t = ((), ()) tuple(x, y)
}
"""
    )
    outcome = verify.verify_target(SelectedTarget("computation", module.entry), module)
    assert not outcome.errors and not outcome.notes and outcome.sampled_points == 0


def test_references_materialise_no_more_than_the_budget_allows():
    from hlo_index.context import AnalysisContext

    # an integer data operand larger than the budget (an s8 dynamic-slice's) gets no drawn
    # values, and the slice is still verified through its small offsets
    sliced = parse_module_text(
        """HloModule m

ENTRY e {
  data = s8[30,40] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT d = s8[2,40] dynamic-slice(data, i, z), dynamic_slice_sizes={2,40}
}
"""
    )
    # a collective whose simulation (every replica's operand) is past the budget is skipped
    exchanged = parse_module_text(
        """HloModule m

ENTRY e {
  a = u8[2,30,40] parameter(0)
  ROOT t = u8[2,30,40] all-to-all(a), replica_groups={{0,1}}, dimensions={0}
}
"""
    )
    with AnalysisContext(verify_reference_elements=1000):
        from hlo_index.verify.references import runtime_values_for

        assert set(runtime_values_for(sliced.entry.root)) == {1}  # the offset, not the data
        outcome = verify.verify_target(SelectedTarget("computation", sliced.entry), sliced)
        assert outcome.checked_points and not outcome.errors and not outcome.notes
        outcome = verify.verify_target(SelectedTarget("computation", exchanged.entry), exchanged)
        assert any("verify_reference_elements=1000" in note for note in outcome.notes)
    with AnalysisContext():  # within the default budget, both are verified
        outcome = verify.verify_target(SelectedTarget("computation", exchanged.entry), exchanged)
        assert outcome.checked_points and not outcome.errors and not outcome.notes
