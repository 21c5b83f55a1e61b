"""Utilization numbers checked against brute force (every output point's read set via read_set)."""

import itertools
from math import ceil, prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, dim, parse_map, range_var
from hlo_index.analyses.utilization import operand_utilization
from hlo_index.fusion import output_to_input
from hlo_index.hlo import load
from hlo_index.hlo.build import array_shape
from tests.affine.affine_helpers import brute_relation
from tests.affine.affine_helpers import maps as helper_maps

CORPUS = "/work/shared/corpus"


def brute(maps, dims):
    """Distinct elements and total reads by walking every output point (runtime vars: all values)."""
    seen, reads = set(), 0
    for m in maps:
        rt_ranges = [range(rv.interval.lo, rv.interval.hi + 1) for rv in m.runtime_vars]
        for point in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
            for k, rt in enumerate(itertools.product(*rt_ranges)):
                got = m.read_set(point, runtime_vals=rt)
                seen |= got
                if k == 0:
                    # reads counted with range multiplicity: enumerate range points
                    reads += _range_reads(m, point, rt)
    return len(seen), reads


def _range_reads(m, point, rt):
    count = 0
    for s in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.range_vars]):
        ok = all(iv.lo <= _eval_c(e, m, point, s, rt) <= iv.hi for e, iv in m.constraints)
        count += ok
    return count


def _eval_c(expr, m, point, s, rt):
    probe = type(m)(m.dims, m.range_vars, m.runtime_vars, [expr], ())
    return probe.evaluate(point, s, rt)[0]


MAPS = [
    ("(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]", (4, 6)),
    ("(d0, d1) -> (d1), domain: d0 in [0, 5], d1 in [0, 3]", (8,)),
    ("(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 4]", (6, 5)),
    ("(d0) -> (d0 * 2 + 1), domain: d0 in [0, 4]", (11,)),
    ("(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3]", (7,)),
    ("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 2], d0 + s0 in [1, 6]", (8,)),
    ("(d0) -> (d0 floordiv 3, d0 mod 3), domain: d0 in [0, 8]", (3, 3)),
    ("(d0) -> (d0 mod 4), domain: d0 in [0, 9]", (5,)),
    ("(d0){rt0} -> (d0 + rt0), domain: d0 in [0, 3], rt0 in [0, 2]", (7,)),
]


@pytest.mark.parametrize("text,dims", MAPS)
def test_matches_brute_force(text, dims):
    m = parse_map(text)
    u = operand_utilization([m], array_shape("f32", dims))
    distinct, reads = brute([m], dims)
    assert u.distinct_elements == distinct
    assert u.element_reads == reads
    assert u.bytes_read == distinct * 4
    assert u.exact
    assert u.runtime_union == bool(m.runtime_vars)


def test_union_of_two_maps():
    maps = [
        parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]"),
        parse_map("(d0, d1) -> (d1 + 2, d0), domain: d0 in [0, 3], d1 in [0, 3]"),
    ]
    u = operand_utilization(maps, array_shape("f32", (6, 4)))
    assert (u.distinct_elements, u.element_reads) == brute(maps, (6, 4))


def test_sampling_gives_bounds():
    # 40,000 distinct elements, a 1,000-point budget: the sample cannot see them all
    m = parse_map("(d0, d1) -> (d0 * 200 + d1), domain: d0 in [0, 199], d1 in [0, 199], d0 + d1 in [0, 398]")
    u = operand_utilization([m], array_shape("f32", (40000,)), budget=1000)
    assert not u.exact and u.method == "sampled"
    assert u.distinct_elements <= 39999 <= u.distinct_upper_bound


def test_saturated_sample_is_exact():
    # a sample that hits every value the intervals allow is exact (lower bound == upper bound)
    m = parse_map("(d0, d1) -> ((d0 * 7 + d1) mod 97), domain: d0 in [0, 199], d1 in [0, 199]")
    u = operand_utilization([m], array_shape("f32", (97,)), budget=1000)
    assert u.distinct_elements == u.distinct_upper_bound == 97


def test_independent_components_are_exact_without_sampling():
    # 512 x 1024 points, but d0 and d1 never meet: two small enumerations, exact
    m = parse_map("(d0, d1) -> (d0 floordiv 128, d0 mod 128, d1), domain: d0 in [0, 511], d1 in [0, 1023]")
    u = operand_utilization([m], array_shape("f32", (4, 128, 1024)), budget=2048)
    assert u.exact and u.distinct_elements == 4 * 128 * 1024 and u.element_reads == 512 * 1024


def test_runtime_scatter_map_is_fast_and_exact():
    # wrapped_scatter from the gpt12 dump: the runtime offset cancels against d0
    m = parse_map(
        "(d0, d1)[s0]{rt0} -> (s0, d0 - rt0, d1), domain: d0 in [0, 4095], d1 in [0, 255], "
        "s0 in [0, 511], rt0 in [0, 4095], d0 - rt0 in [0, 0]"
    )
    u = operand_utilization([m], array_shape("f32", (512, 1, 256)))
    assert u.distinct_elements == 512 * 256 == u.distinct_upper_bound
    assert u.element_reads == 512 * 256  # rt0 = 0: only d0 = 0 is feasible


@pytest.mark.parametrize("etype,bits", [("s4", 4), ("u2", 2), ("f6e2m3fn", 6)])
def test_sub_byte_bytes(etype, bits):
    # every other element of a 1-D array: touched bytes counted from bit positions
    m = parse_map("(d0) -> (d0 * 2), domain: d0 in [0, 7]")
    u = operand_utilization([m], array_shape(etype, (16,)))
    touched = {b for i in range(0, 16, 2) for b in range(i * bits // 8, ((i + 1) * bits - 1) // 8 + 1)}
    assert u.distinct_elements == 8 and u.bytes_read == len(touched)


def _corpus_fusions():
    found = []
    for path in [
        "mlp/mlp_layernorm_gelu_bf16.after_optimizations.hlo.txt",
        "misc_ops/concat_pad_reverse_iota.after_optimizations.hlo.txt",
        "reshape_bitcast/reshape_split_merge_bitcast.after_optimizations.hlo.txt",
    ]:
        module = load(f"{CORPUS}/{path}")[0].module
        for fusion in module.fusions:
            for row in output_to_input(fusion):
                shape = fusion.operands[row.operand].shape
                if shape.is_tuple or not row.maps or any(m.is_undefined for m in row.maps):
                    continue
                out = fusion.shape.leaf(row.output)
                if out.num_elements * max(1, *(prod(iv.size for iv in m.range_vars) for m in row.maps)) > 20000:
                    continue
                found.append((f"{path}:{fusion.name}:{row.operand}", row.maps, shape))
    return found


def test_real_fusions_match_enumeration():
    cases = _corpus_fusions()
    assert len(cases) >= 10
    for name, maps, shape in cases:
        u = operand_utilization(maps, shape)
        seen = set()
        reads = 0
        pairs = set()
        for m in maps:
            pts, res = m.enumerate(limit=1 << 22)
            reads += len(pts)
            seen |= {tuple(r) for r in res.tolist()}
            pairs |= {(tuple(p[: m.num_dims]), tuple(r)) for p, r in zip(pts.tolist(), res.tolist())}
        assert u.distinct_elements == len(seen), name
        # one map: every feasible point is a read; several: the union of (output, element) pairs
        assert u.element_reads == (reads if len(maps) == 1 else len(pairs)), name
        assert u.bytes_read == ceil(len(seen) * shape.element_bits / 8), name


def test_constraint_only_component():
    # d1 only appears in a constraint (a pad's stride check): it decides feasibility, reads nothing
    m = parse_map("(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 5], d1 mod 2 in [0, 0]")
    u = operand_utilization([m], array_shape("f32", (4,)))
    assert (u.distinct_elements, u.element_reads) == brute([m], (4,))
    empty = parse_map("(d0, d1) -> (d0), domain: d0 in [0, 3], d1 in [0, 5], d1 * 2 in [1, 1]")
    u = operand_utilization([empty], array_shape("f32", (4,)))
    assert (u.distinct_elements, u.element_reads) == (0, 0)


# ---- property: random maps, exact and sampled, against brute force ---------------------------


@st.composite
def random_maps(draw):
    n_dims = draw(st.integers(1, 3))
    n_range = draw(st.integers(0, 1))
    variables = [dim(i) for i in range(n_dims)] + [range_var(i) for i in range(n_range)]
    sizes = [draw(st.integers(1, 6)) for _ in variables]

    def expr():
        e = None
        for v in draw(st.lists(st.sampled_from(variables), min_size=0, max_size=2)):
            term = v * draw(st.integers(1, 3))
            e = term if e is None else e + term
        e = (e if e is not None else variables[0] * 0) + draw(st.integers(0, 2))
        op = draw(st.sampled_from(["", "floordiv", "mod"]))
        if op:
            e = e.floordiv(draw(st.integers(2, 4))) if op == "floordiv" else e % draw(st.integers(2, 4))
        return e

    results = [expr() for _ in range(draw(st.integers(1, 3)))]
    constraints = []
    if draw(st.booleans()):
        c = expr()
        lo = draw(st.integers(0, 3))
        constraints.append((c, Interval(lo, lo + draw(st.integers(0, 4)))))
    m = IndexingMap(
        [Interval(0, s - 1) for s in sizes[:n_dims]],
        [Interval(0, s - 1) for s in sizes[n_dims:]],
        (),
        results,
        constraints,
    )
    return m


@settings(deadline=None, derandomize=True, max_examples=120)
@given(random_maps(), st.sampled_from([1 << 20, 4]))
def test_random_maps_match_brute_force(m, budget):
    points, res = m.enumerate(limit=1 << 16)
    if len(points) == 0:
        return
    dims = tuple(int(v) + 1 for v in res.max(axis=0))
    seen = {tuple(int(x) for x in r) for r in res.tolist()}
    u = operand_utilization([m], array_shape("f32", dims), budget=budget)
    if u.exact:
        assert (u.distinct_elements, u.element_reads) == (len(seen), len(points))
    else:
        assert u.distinct_elements <= len(seen) <= u.distinct_upper_bound
    if budget == 1 << 20:
        assert u.exact and u.distinct_elements == len(seen) and u.element_reads == len(points)


def test_collapsing_reshape_above_the_budget_is_exact():
    # d0 * 4096 + d1 over 4096 x 4096 (a collapsing reshape of 16M elements): a mixed radix,
    # so every point reads a different element, counted without enumeration
    m = parse_map("(d0, d1) -> (d0 * 4096 + d1), domain: d0 in [0, 4095], d1 in [0, 4095]")
    u = operand_utilization([m], array_shape("f32", (4096 * 4096,)))
    assert u.exact and u.distinct_elements == 4096 * 4096 == u.element_reads
    # the same check by brute force on a small instance, and on a non-radix (overlapping) one
    small = parse_map("(d0, d1) -> (d0 * -8 + d1 + 40), domain: d0 in [0, 4], d1 in [0, 7]")
    u = operand_utilization([small], array_shape("f32", (48,)), budget=4)
    assert u.exact and (u.distinct_elements, u.element_reads) == brute([small], (48,))
    overlap = parse_map("(d0, d1) -> (d0 * 7 + d1), domain: d0 in [0, 4], d1 in [0, 7]")
    u = operand_utilization([overlap], array_shape("f32", (36,)), budget=4)
    true = brute([overlap], (36,))[0]
    assert u.distinct_elements <= true <= u.distinct_upper_bound


def test_overlapping_maps_count_their_union_not_their_sum():
    """Two maps that overlap on half the output: a pair read by both counts once (brute force)."""
    a = parse_map("(d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]")
    b = parse_map("(d0, d1) -> (), domain: d0 in [0, 5], d1 in [0, 15]")
    c = parse_map("(d0, d1) -> (d1), domain: d0 in [3, 11], d1 in [0, 15]")
    d = parse_map("(d0, d1) -> (d1 floordiv 2), domain: d0 in [0, 11], d1 in [0, 15]")
    e = parse_map("(d0, d1) -> (d1), domain: d0 in [0, 11], d1 in [0, 14]")
    f = parse_map("(d0, d1) -> (d1 + 1), domain: d0 in [0, 11], d1 in [0, 14]")  # never e's element
    g = parse_map("(d0, d1) -> (d1 mod 8), domain: d0 in [0, 11], d1 in [0, 15], d1 mod 16 in [0, 7]")
    h = parse_map("(d0, d1) -> (d1 mod 8), domain: d0 in [0, 11], d1 in [0, 15], d1 mod 16 in [8, 15]")
    scalar, vector = array_shape("f32", ()), array_shape("f32", (16,))
    for maps, shape in (
        ((a, b), scalar),
        ((c, d), vector),
        ((a,), scalar),
        ((e, f), vector),
        ((g, h), vector),
        ((c, d, e, f), vector),
    ):
        u = operand_utilization(list(maps), shape)
        pairs = set()
        for m in maps:
            for d0 in range(12):
                for d1 in range(16):
                    if m.dims[0].contains(d0) and m.dims[1].contains(d1):
                        pairs |= {((d0, d1), r) for r in m.read_set((d0, d1))}
        assert u.element_reads == len(pairs)
        assert u.exact
    # the padding value of a 12x16 output is read at most once per output element
    assert operand_utilization([a, b], scalar).element_reads == 192


def _pairs_inside(maps, dims) -> set:
    """Every (output element, operand element) pair the maps read, by brute force: an index outside
    the operand is no element."""
    pairs = set()
    for m in maps:
        for point in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
            pairs |= {(point, r) for r in m.read_set(point) if all(0 <= i < n for i, n in zip(r, dims))}
    return pairs


def _assert_reads(u, pairs: set, exact: bool) -> None:
    """Exact reads are the pairs; an estimate is the sum of the maps' reads, an upper bound."""
    assert u.exact == exact
    if exact:
        assert u.element_reads == len(pairs)
    else:
        assert u.element_reads > len(pairs)


# (maps, operand dims, whether the reads are known exactly)
CONTAINED = [
    # a row's own element beside the whole row (softmax's max and its input), both orders
    (
        [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]",
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 5]",
        ],
        (4, 6),
        True,
    ),
    (
        [
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 5]",
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 5]",
        ],
        (4, 6),
        True,
    ),
    # a block beside one of its columns (attention's scores and a slice of them)
    (
        [
            "(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 4], s1 in [0, 3]",
            "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 4]",
        ],
        (5, 4),
        True,
    ),
    # the whole operand beside permuted parts of it (a rotary embedding's halves, in a whole
    # program): whatever a part reads inside the operand, the whole read has it
    (
        [
            "(d0)[s0, s1] -> (s0, s1), domain: d0 in [0, 2], s0 in [0, 3], s1 in [0, 7]",
            "(d0)[s0, s1] -> (s0, s1 - (s1 floordiv 4) * 8 + 4), domain: d0 in [0, 2], s0 in [0, 3], s1 in [0, 7]",
            "(d0)[s0] -> (d0, s0 + 1), domain: d0 in [0, 2], s0 in [0, 7]",
        ],
        (4, 8),
        True,
    ),
    # a row's own element beside a window that covers the whole row wherever it is centred (a
    # TPU attention's reduce-window over its scores), both orders: the window is the row
    (
        [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 7]",
            "(d0, d1)[s0] -> (d0, d1 + s0 - 7), domain: d0 in [0, 1], d1 in [0, 7], s0 in [0, 14], d1 + s0 in [7, 14]",
        ],
        (2, 8),
        True,
    ),
    (
        [
            "(d0, d1)[s0] -> (d0, d1 + s0 - 7), domain: d0 in [0, 1], d1 in [0, 7], s0 in [0, 14], d1 + s0 in [7, 14]",
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 7]",
        ],
        (2, 8),
        True,
    ),
    # a loop's first iteration reads one element of a row its later iterations read whole: inside
    # on the later iterations, alone on the first, both orders
    (
        [
            "(d0, d1)[s0] -> (d1, s0), domain: d0 in [1, 4], d1 in [0, 2], s0 in [0, 5]",
            "(d0, d1) -> (d1, d0), domain: d0 in [0, 4], d1 in [0, 2]",
        ],
        (3, 6),
        True,
    ),
    (
        [
            "(d0, d1) -> (d1, d0 + 1), domain: d0 in [0, 4], d1 in [0, 2]",
            "(d0, d1)[s0] -> (d1, s0), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 5]",
        ],
        (3, 6),
        True,
    ),
    # maps inside others value by value of a short dim (a sharded computation's pieces: ``1 - d0``
    # reads row 1 at d0 = 0, inside one map, and row 0 at d0 = 1, inside another), and a map
    # whose piece at d0 = 0 no other map holds
    (
        [
            "(d0, d1)[s0] -> (0, s0), domain: d0 in [1, 2], d1 in [0, 3], s0 in [0, 3]",
            "(d0, d1)[s0] -> (1, s0), domain: d0 in [0, 2], d1 in [0, 3], s0 in [0, 3]",
            "(d0, d1)[s0] -> (2, s0), domain: d0 in [0, 1], d1 in [0, 3], s0 in [0, 3]",
            "(d0, d1) -> (-d0 + 1, d1), domain: d0 in [0, 1], d1 in [0, 3]",
            "(d0, d1) -> (d0 * 2, d1), domain: d0 in [0, 1], d1 in [0, 3]",
        ],
        (3, 4),
        True,
    ),
    # near misses, counted as a sum: a shifted element leaves the row, a range variable used twice,
    # a window that covers only part of the row
    (
        [
            "(d0, d1) -> (d0, d1 + 1), domain: d0 in [0, 3], d1 in [0, 5]",
            "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 5]",
        ],
        (4, 7),
        False,
    ),
    (
        [
            "(d0, d1) -> (d1, d1), domain: d0 in [0, 3], d1 in [0, 5]",
            "(d0, d1)[s0] -> (s0, s0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 5]",
        ],
        (6, 6),
        False,
    ),
    (
        [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 7]",
            "(d0, d1)[s0] -> (d0, d1 + s0 - 1), domain: d0 in [0, 1], d1 in [0, 7], s0 in [0, 2], d1 + s0 in [1, 8]",
        ],
        (2, 8),
        False,
    ),
]


@pytest.mark.parametrize("texts, dims, exact", CONTAINED)
def test_a_map_inside_another_adds_no_read_beyond_the_union_budget(texts, dims, exact):
    maps = [parse_map(t) for t in texts]
    pairs = _pairs_inside(maps, dims)
    u = operand_utilization(maps, array_shape("f32", dims), budget=4)  # too small to union pair by pair
    _assert_reads(u, pairs, exact)


@pytest.mark.parametrize("budget", [24, 1 << 20])
def test_whole_reads_on_boxes_of_the_output_leave_the_other_maps_the_rest(budget):
    # a loop's later iterations read the whole operand, its first a row of it (and one map
    # beside both): with the budget too small to list every map (24), the others are listed
    # only on the boxes the whole reads leave
    maps = [
        parse_map("(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [1, 4], d1 in [0, 2], s0 in [0, 2], s1 in [0, 5]"),
        parse_map("(d0, d1)[s0] -> (d1, s0), domain: d0 in [0, 4], d1 in [0, 2], s0 in [0, 5]"),
        parse_map("(d0, d1) -> (d1, 5 - d0), domain: d0 in [0, 4], d1 in [0, 2]"),
    ]
    dims = (3, 6)
    u = operand_utilization(maps, array_shape("f32", dims), budget=budget)
    _assert_reads(u, _pairs_inside(maps, dims), True)
    assert u.distinct_elements == 18


def test_maps_apart_where_their_boxes_meet_or_by_parity():
    # rows 0 and 1 of the operand's columns, read whole, beside an element of column 0 or 2: the
    # element's column ``d0 * 2`` is never 1 (parity) and is 0 only at d0 = 0, where the read of
    # column 0 is not (the boxes meet at d0 = 1)
    maps = [
        parse_map("(d0)[s0] -> (s0, 0), domain: d0 in [1, 2], s0 in [0, 3]"),
        parse_map("(d0)[s0] -> (s0, 1), domain: d0 in [0, 2], s0 in [0, 3]"),
        parse_map("(d0) -> (d0, d0 * 2), domain: d0 in [0, 1]"),
    ]
    dims = (4, 3)
    u = operand_utilization(maps, array_shape("f32", dims), budget=4)  # too small to union pair by pair
    _assert_reads(u, _pairs_inside(maps, dims), True)
    # a near miss: at d0 = 1 the element's column 2 * 1 - 2 = 0 is read whole too
    near = [maps[0], parse_map("(d0) -> (d0, d0 * 2 - 2), domain: d0 in [1, 2]")]
    u = operand_utilization(near, array_shape("f32", dims), budget=4)
    assert u.element_reads >= len(_pairs_inside(near, dims))


def test_maps_apart_only_by_what_their_outputs_share():
    """Pairs of two maps are apart when a coordinate of the dims differs by a constant, or a
    constraint on the dims splits them; a range variable of one map is not the other's."""
    shape = array_shape("f32", (3, 4, 2))
    apart = [parse_map(f"()[s0, s1] -> ({c}, s0, s1), domain: s0 in [0, 3], s1 in [0, 1]") for c in range(3)]
    a = parse_map("(d0)[s0] -> (0, s0 mod 4, 0), domain: d0 in [0, 1], s0 in [0, 7], s0 floordiv 4 in [0, 0]")
    b = parse_map("(d0)[s0] -> (0, s0 mod 4, 0), domain: d0 in [0, 1], s0 in [0, 7], s0 floordiv 4 in [1, 1]")
    c = parse_map("(d0)[s0] -> (0, s0, 0), domain: d0 in [0, 1], s0 in [0, 2]")
    d = parse_map("(d0)[s0] -> (0, s0 + 1, 0), domain: d0 in [0, 1], s0 in [0, 2]")
    for maps, budget in ((apart, 4), ((a, b), 1 << 20), ((c, d), 1 << 20)):
        pairs = set()
        for m in maps:
            for point in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
                pairs |= {(point, r) for r in m.read_set(point)}
        u = operand_utilization(list(maps), shape, budget=budget)
        assert u.exact and u.element_reads == len(pairs)


# (maps, operand dims, whether the reads are known exactly): maps reading one element per point,
# overlapping, counted past the union budget by inclusion-exclusion over where they agree
MEETING = [
    # one row's element per output beside another's, meeting on the diagonal (a layer norm's
    # operand read against two of the output's dims)
    (
        [
            "(d0, d1, d2) -> (d0, d2), domain: d0 in [0, 3], d1 in [0, 4], d2 in [0, 5]",
            "(d0, d1, d2) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 4], d2 in [0, 5]",
        ],
        (4, 6),
        True,
    ),
    # three maps, each pair meeting on a plane, all three on a line; one under a constraint
    (
        [
            "(d0, d1, d2) -> (d0), domain: d0 in [0, 3], d1 in [0, 3], d2 in [0, 3]",
            "(d0, d1, d2) -> (d1), domain: d0 in [0, 3], d1 in [0, 3], d2 in [0, 3]",
            "(d0, d1, d2) -> (d2), domain: d0 in [0, 3], d1 in [0, 3], d2 in [0, 3], d0 + d1 in [2, 5]",
        ],
        (4,),
        True,
    ),
    # digits against the plain index, on part of the domain
    (
        [
            "(d0, d1) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [0, 11], d1 in [0, 3]",
            "(d0, d1) -> (d1 mod 3, d1), domain: d0 in [2, 11], d1 in [0, 3]",
        ],
        (3, 4),
        True,
    ),
    # near misses: a result past the operand's end (its points are not all pairs), a range variable
    (
        [
            "(d0, d1) -> (d0 + d1), domain: d0 in [0, 5], d1 in [0, 5]",
            "(d0, d1) -> (d1), domain: d0 in [0, 5], d1 in [0, 5]",
        ],
        (8,),
        False,
    ),
    (
        [
            "(d0, d1) -> (d0), domain: d0 in [0, 5], d1 in [0, 5]",
            "(d0, d1)[s0] -> (s0), domain: d0 in [0, 5], d1 in [0, 5], s0 in [0, 1]",
        ],
        (6,),
        False,
    ),
]


@pytest.mark.parametrize("texts, dims, exact", MEETING)
def test_maps_that_meet_count_their_union_beyond_the_union_budget(texts, dims, exact):
    maps = [parse_map(t) for t in texts]
    pairs = _pairs_inside(maps, dims)
    # a budget just too small to union pair by pair (outputs x maps past four budgets), which the
    # points of each meet (an equality solved leaves fewer) still fit
    outputs = prod(iv.size for iv in maps[0].dims)
    u = operand_utilization(maps, array_shape("f32", dims), budget=(outputs * len(maps) - 1) // 4)
    _assert_reads(u, pairs, exact)


@st.composite
def maps_of_one_output(draw):
    """2 to 3 maps over one output box, no range variable, each result a small affine expression
    (a floordiv or mod of one at times), some under a constraint or on part of a dim."""
    n_dims = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 5)) for _ in range(n_dims)]
    variables = [dim(i) for i in range(n_dims)]
    n_results = draw(st.integers(1, 2))

    def expr():
        e = variables[0] * 0
        for v in draw(st.lists(st.sampled_from(variables), min_size=1, max_size=2)):
            e = e + v * draw(st.integers(1, 2))
        e = e + draw(st.integers(0, 1))
        op = draw(st.sampled_from(["", "", "floordiv", "mod"]))
        if op:
            e = e.floordiv(draw(st.integers(2, 3))) if op == "floordiv" else e % draw(st.integers(2, 3))
        return e

    maps = []
    for _ in range(draw(st.integers(2, 3))):
        lows = [draw(st.integers(0, max(0, s - 1))) if draw(st.booleans()) else 0 for s in sizes]
        constraints = []
        if draw(st.booleans()):
            lo = draw(st.integers(0, 2))
            constraints.append((expr(), Interval(lo, lo + draw(st.integers(0, 3)))))
        maps.append(
            IndexingMap(
                [Interval(lo, s - 1) for lo, s in zip(lows, sizes)],
                (),
                (),
                [expr() for _ in range(n_results)],
                constraints,
            )
        )
    return maps


@settings(deadline=None, derandomize=True, max_examples=150)
@given(maps_of_one_output())
def test_random_meeting_maps_match_brute_force(maps):
    """Past the union budget, maps that read one element each per point are counted exactly by
    inclusion-exclusion, or marked an estimate: brute force over every point decides."""
    dims = None
    pairs = set()
    for m in maps:
        points, rows = m.enumerate(limit=1 << 16)
        for p, r in zip(points.tolist(), rows.tolist()):
            pairs.add((tuple(p[: m.num_dims]), tuple(r)))
        if len(rows):
            top = tuple(int(v) + 1 for v in rows.max(axis=0))
            dims = top if dims is None else tuple(max(a, b) for a, b in zip(dims, top))
    if dims is None:
        return
    inside = {(p, r) for p, r in pairs if all(0 <= i < n for i, n in zip(r, dims))}
    outputs = prod(iv.size for iv in maps[0].dims)
    u = operand_utilization(maps, array_shape("f32", dims), budget=max(1, (outputs * len(maps) - 1) // 4))
    if u.exact:
        assert u.element_reads == len(inside)
    else:
        assert u.element_reads >= len(inside)


_PROGRESSIONS = st.tuples(st.integers(-3, 12), st.sampled_from([1, 2, 3, 4, 5, 6]), st.integers(0, 8)).map(
    lambda p: (p[0], p[1] if p[2] > 1 else 0, p[2])  # one value or none: no step (as ``_box`` gives it)
)


@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, 2).flatmap(
        lambda rank: st.lists(st.lists(_PROGRESSIONS, min_size=rank, max_size=rank), min_size=1, max_size=5)
    )
)
def test_a_union_of_boxes_counted_by_inclusion_exclusion_equals_brute_force(boxes):
    # each box a product of progressions (first, step, count), steps alike or not: counted exactly
    from hlo_index.analyses.utilization import _Box, _boxes_union

    union = _boxes_union([_Box(tuple(map(tuple, b))) for b in boxes])
    elements = set()
    for b in boxes:
        elements |= set(itertools.product(*[[first + step * i for i in range(count)] for first, step, count in b]))
    if len(boxes) > 4:
        assert union is None
    else:
        assert union == len(elements)


def test_several_boxes_over_an_operand_too_large_to_mark_are_counted_exactly():
    # overlapping and strided boxes (each result an affine function of its own variable) over an
    # operand above the marking budget: their union is counted, not bounded
    from hlo_index.context import Budgets, current

    maps = [
        parse_map("(d0, d1) -> (d0, d1 * 2), domain: d0 in [0, 9], d1 in [0, 5]"),
        parse_map("(d0, d1) -> (d0 + 4, d1 * 2 + 4), domain: d0 in [0, 9], d1 in [0, 5]"),
        parse_map("(d0, d1) -> (3, d1 * 2 + 2), domain: d0 in [0, 0], d1 in [0, 6]"),
    ]
    dims = (16, 16)
    distinct, _ = brute(maps, dims)
    with current().child():
        current().budgets = Budgets(utilization_bitmap_elements=100)  # below the operand's 256
        u = operand_utilization(maps, array_shape("f32", list(dims)))
    assert u.exact and u.distinct_elements == u.distinct_upper_bound == distinct
    assert u.bytes_read == 4 * distinct


APART_CASES = [
    # a rotary embedding's reads of one table: every row, columns of three pieces that overlap
    # (the last one partly past the operand)
    (
        [
            "(d0, d1, d2) -> (d0, d1 * 2 + d2), domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 1]",
            "(d0, d1, d2) -> (d0, d1 * 4 + d2 + 2), domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 1]",
            "(d0, d1, d2) -> (d0, d1 * 4 + d2 + 16), domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 1]",
        ],
        (8, 24),
    ),
    # columns of a constraint-cut piece
    (
        [
            "(d0, d1) -> (d0, d1 * 3 + 1), domain: d0 in [0, 5], d1 in [0, 9], d1 mod 4 in [0, 2]",
            "(d0, d1) -> (d0, d1 * 2), domain: d0 in [0, 5], d1 in [0, 9]",
        ],
        (6, 20),
    ),
    # alike in every component: the union is one map's reads
    (["(d0) -> (d0 floordiv 3, d0 mod 3), domain: d0 in [0, 8]"] * 2, (3, 3)),
    # apart in two components (rows and columns): not this rule (a union of boxes)
    (
        [
            "(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 3]",
            "(d0, d1) -> (d0 + 2, d1 + 2), domain: d0 in [0, 3], d1 in [0, 3]",
        ],
        (6, 6),
    ),
]


@pytest.mark.parametrize("texts, dims", APART_CASES)
def test_maps_one_component_apart_union_over_that_component(texts, dims):
    maps = [parse_map(t) for t in texts]
    u = operand_utilization(maps, array_shape("f32", dims))
    inside = set()
    for m in maps:
        for point in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
            inside |= {e for e in m.read_set(point) if all(0 <= i < n for i, n in zip(e, dims))}
    assert u.exact and u.distinct_elements == len(inside) and u.bytes_read == 4 * len(inside)


@settings(deadline=None, derandomize=True, max_examples=150)
@given(st.lists(st.tuples(st.integers(-2, 11), st.integers(0, 3), st.integers(-1, 6)), min_size=5, max_size=8))
def test_more_boxes_than_inclusion_exclusion_takes_are_listed_exactly(pieces):
    """Five to eight maps of one output, each a box of a [12, 6] operand (``(first + step * d0,
    column)``, a point where the step is 0, some reaching past the operand): past the four that
    inclusion-exclusion takes, their few elements are listed. Brute force decides."""
    dims = (12, 6)
    maps = [
        parse_map(f"(d0, d1) -> ({first} + d0 * {step}, {column}), domain: d0 in [0, 3], d1 in [0, 0]")
        for first, step, column in pieces
    ]
    u = operand_utilization(maps, array_shape("f32", dims))
    inside = set()
    for m in maps:
        for point in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
            inside |= {e for e in m.read_set(point) if all(0 <= i < n for i, n in zip(e, dims))}
    assert u.exact and u.distinct_elements == len(inside)


def union_reads_on(path: str, maps, operand_dims) -> int | None:
    """``_union_reads`` of ``maps`` with small boxes listed on Python lists (``"lists"``, the
    default) or every box on numpy (``"numpy"``)."""
    from hlo_index.analyses import utilization

    with pytest.MonkeyPatch.context() as patch:
        if path == "numpy":
            patch.setattr(utilization, "LISTED_IN_PYTHON", 0)
        return utilization._union_reads(maps, operand_dims, 1 << 20)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(helper_maps(n_dims=2, max_range=1, runtime=1), helper_maps(n_dims=2, max_range=1, runtime=1))
def test_union_reads_on_lists_are_the_numpy_count_and_the_brute_force_count(a, b):
    # several maps of one operand: distinct (output element, operand element) pairs, runtime
    # variables at their lower bounds; small boxes are listed on Python lists, larger on numpy

    if a.is_known_empty or b.is_known_empty or a.num_results != b.num_results:
        return
    b = IndexingMap(a.dims, b.range_vars, b.runtime_vars, b.results, b.constraints)
    operand_dims = (5,) * a.num_results
    pairs = set()
    for m in (a, b):
        for row in brute_relation(m, (m.runtime_vars[0].interval.lo,)):
            if min(row[:2]) >= 0 and all(0 <= x < n for x, n in zip(row[2:], operand_dims)):
                pairs.add(row)  # output elements have non-negative indices
    assert union_reads_on("lists", [a, b], operand_dims) == union_reads_on("numpy", [a, b], operand_dims) == len(pairs)


def test_a_full_read_among_several_maps_gives_every_pair_without_listing():
    # a softmax's input read directly and again through its row reduction broadcast back, here as
    # the whole operand: every (output element, operand element) pair, counted by brute force
    from hlo_index.analyses import utilization

    direct = parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 2]")
    whole = parse_map("(d0, d1)[s0, s1] -> (s1, s0), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 2], s1 in [0, 3]")
    pairs = {row for m in (direct, whole) for row in brute_relation(m)}
    assert utilization._union_reads([direct, whole], (4, 3), 0) == len(pairs) == 12 * 12
    # one result short of the whole operand (s1 stops at 2): not a full read, so listed
    short = parse_map("(d0, d1)[s0, s1] -> (s1, s0), domain: d0 in [0, 3], d1 in [0, 2], s0 in [0, 2], s1 in [0, 2]")
    pairs = {row for m in (direct, short) for row in brute_relation(m)}
    assert utilization._union_reads([direct, short], (4, 3), 1 << 20) == len(pairs) < 12 * 12


@pytest.mark.parametrize("path", ["lists", "numpy"])
def test_whole_reads_over_pieces_of_the_output_count_every_pair_of_their_union(path):
    # a reduction's result read back whole over pieces of the output (gpt12's whole step reads
    # its 256 elements so, under `d1 mod 32` constraints): each output element in one of the
    # pieces reads every operand element; counted by brute force
    from hlo_index.analyses import utilization

    maps = [
        parse_map(
            "(d0, d1)[s0, s1] -> (s1, s0), domain: d0 in [0, 5], d1 in [2, 9], s0 in [0, 2], s1 in [0, 3], "
            "d1 mod 4 in [2, 3]"
        ),
        parse_map(
            "(d0, d1)[s0, s1] -> (s1, s0), domain: d0 in [0, 5], d1 in [0, 6], s0 in [0, 2], s1 in [0, 3], "
            "d0 + d1 in [3, 7]"
        ),
        parse_map("(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [1, 2], d1 in [0, 9], s0 in [0, 3], s1 in [0, 2]"),
    ]
    assert all(utilization._whole_read_domain(m, (6, 10), (4, 3)) is not None for m in maps)
    pairs = {row for m in maps for row in brute_relation(m)}
    assert union_reads_on(path, maps, (4, 3)) == len(pairs)
    # maps that read part of the operand at their points, or the whole of it through two digits of
    # one variable: not counted this way, still exact
    for text in (
        "(d0, d1)[s0] -> (s0, 0), domain: d0 in [0, 5], d1 in [0, 9], s0 in [0, 2]",
        "(d0, d1)[s0] -> (s0 floordiv 3, s0 mod 3), domain: d0 in [1, 2], d1 in [0, 9], s0 in [0, 11]",
    ):
        other = parse_map(text)
        assert utilization._whole_read_domain(other, (6, 10), (4, 3)) is None
        pairs = {row for m in [*maps, other] for row in brute_relation(m)}
        assert utilization._union_reads([*maps, other], (4, 3), 1 << 20) == len(pairs)


@pytest.mark.parametrize("path", ["lists", "numpy"])
def test_whole_reads_beside_one_element_reads_count_each_pair_once(path):
    # gpt12's whole step reads a [256] vector whole over five pieces of a [256, 768] output and
    # element d0 everywhere: outside the pieces, the one element; inside, all of them (scaled down)

    maps = [
        parse_map("(d0, d1)[s0] -> (s0), domain: d0 in [0, 5], d1 in [2, 9], s0 in [0, 5], d1 mod 4 in [2, 3]"),
        parse_map("(d0, d1)[s0] -> (s0), domain: d0 in [0, 5], d1 in [12, 15], s0 in [0, 5]"),
        parse_map("(d0, d1) -> (d0), domain: d0 in [0, 5], d1 in [0, 15]"),
        parse_map("(d0, d1) -> (d1 - 10), domain: d0 in [0, 5], d1 in [0, 15]"),  # out of bounds where d1 < 10
    ]
    pairs = {row for m in maps for row in brute_relation(m) if 0 <= row[2] < 6}
    assert union_reads_on(path, maps, (6,)) == len(pairs)


@pytest.mark.parametrize("path", ["lists", "numpy"])
def test_whole_reads_beside_maps_of_several_elements_count_each_pair_once(path):
    # a scan's state read whole after its first iteration and four elements of it before (the
    # corpus' control-flow module does so): inside the whole reads all pairs, elsewhere the four
    from hlo_index.analyses import utilization

    maps = [
        parse_map("(d0, d1)[s0, s1] -> (s0 + s1 * 4), domain: d0 in [1, 5], d1 in [0, 3], s0 in [0, 3], s1 in [0, 2]"),
        parse_map("(d0, d1)[s0] -> (d1 + s0 * 4), domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 2]"),
        parse_map("(d0, d1)[s0] -> (d1 + s0 * 5), domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 2]"),
    ]
    assert utilization._whole_read_domain(maps[0], (6, 4), (12,)) is not None
    pairs = {row for m in maps for row in brute_relation(m) if 0 <= row[2] < 12}
    assert union_reads_on(path, maps, (12,)) == len(pairs)


@settings(deadline=None, derandomize=True, max_examples=200)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3).flatmap(
        lambda space: st.tuples(
            st.just(space),
            st.lists(
                st.tuples(*[st.tuples(st.integers(-1, n), st.integers(-1, n)) for n in space]), min_size=1, max_size=3
            ),
        )
    )
)
def test_the_boxes_outside_pieces_are_apart_and_hold_every_point_no_piece_holds(case):
    from hlo_index.analyses.utilization import _boxes_outside

    space, raw = case
    pieces = [[Interval(min(a, b), max(a, b)) for a, b in piece] for piece in raw]
    boxes = _boxes_outside([Interval(0, n - 1) for n in space], pieces)
    seen = []
    for box in boxes:
        seen += list(itertools.product(*(range(iv.lo, iv.hi + 1) for iv in box)))
    assert len(seen) == len(set(seen))  # apart
    expected = {
        p
        for p in itertools.product(*(range(n) for n in space))
        if not any(all(iv.lo <= x <= iv.hi for x, iv in zip(p, piece)) for piece in pieces)
    }
    assert set(seen) == expected


@settings(deadline=None, derandomize=True, max_examples=300)
@given(helper_maps(n_dims=2, max_range=1), helper_maps(n_dims=2, max_range=1))
def test_maps_said_apart_share_no_pair(a, b):
    from hlo_index.analyses.utilization import _pairs_apart

    if a.is_known_empty or b.is_known_empty or a.num_results != b.num_results or not _pairs_apart([a, b]):
        return
    pairs_a = {(p, r) for p in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in a.dims]) for r in a.read_set(p)}
    pairs_b = {(p, r) for p in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in b.dims]) for r in b.read_set(p)}
    assert not pairs_a & pairs_b


@st.composite
def rows_and_elements(draw):
    """2 to 4 maps over pieces of one 2-d output into a 2-d operand (some overrun it): rows
    read whole (``(d0, d1)[s0] -> (row, s0)``, the row a constant, a dim or ``c - d0``) and single
    elements (``(d0, d1) -> (a * d0 + b, d1 + c)``)."""
    out = [draw(st.integers(1, 3)), draw(st.integers(1, 4))]
    dims = (draw(st.integers(2, 4)), draw(st.integers(2, 5)))
    maps = []
    for _ in range(draw(st.integers(2, 4))):
        lo = draw(st.integers(0, out[0] - 1))
        domain = f"d0 in [{lo}, {out[0] - 1}], d1 in [0, {out[1] - 1}]"
        row = draw(st.sampled_from(["c", "d0", "c - d0"]))
        c = draw(st.integers(0, 3))
        first = {"c": f"{c}", "d0": "d0", "c - d0": f"{c} - d0"}[row]
        if draw(st.booleans()):
            text = f"(d0, d1)[s0] -> ({first}, s0), domain: {domain}, s0 in [0, {dims[1] - 1}]"
        else:
            a, b, k = draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 2))
            text = f"(d0, d1) -> (d0 * {a} + {b}, d1 + {k}), domain: {domain}"
        maps.append(parse_map(text))
    return maps, dims


@settings(deadline=None, derandomize=True, max_examples=300)
@given(rows_and_elements())
def test_maps_counted_as_exact_past_the_union_budget_are_the_pairs_inside(case):
    # rows beside elements: whatever path counts them (containment, pieces left by value, apart
    # maps), an exact count is the pairs
    maps, dims = case
    everything = set()
    for m in maps:
        for point in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
            everything |= {(point, r) for r in m.read_set(point)}
    pairs = _pairs_inside(maps, dims)
    if len(pairs) < len(everything):
        # a map that reads past the operand's end (no map of a valid module does): a single
        # map's figures count its points as written, so only the unions' counts are checked
        # here, that they never come out below the pairs inside
        u = operand_utilization(maps, array_shape("f32", dims), budget=4)
        assert u.element_reads >= len(pairs)
        return
    u = operand_utilization(maps, array_shape("f32", dims), budget=4)
    if u.exact:
        assert u.element_reads == len(pairs)
    else:
        assert u.element_reads >= len(pairs)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_sub_byte_bytes_touched_match_the_reference_layout(data):
    # the bytes a marked set of elements touches, counted through each element's offset in the
    # independent reference layout, for sub-byte types packed whole (4, 2 bits) or straddling (6)
    import numpy as np

    from hlo_index.analyses.utilization import _bytes_marked
    from hlo_index.hlo.model import Shape
    from hlo_index.reference.ref_layout import reference_offsets
    from tests.layout.helpers import tiled_shapes

    laid_out = data.draw(tiled_shapes(max_elements=300))
    etype, bits = data.draw(st.sampled_from([("s4", 4), ("u2", 2), ("f6e2m3fn", 6)]))
    shape = Shape(etype, laid_out.dims, layout=laid_out.layout)
    flags = data.draw(st.lists(st.booleans(), min_size=prod(shape.dims), max_size=prod(shape.dims)))
    marked = np.array(flags, dtype=bool).reshape(shape.dims)
    offsets = reference_offsets(shape)[marked].tolist()
    touched = {b for o in offsets for b in range(o * bits // 8, ((o + 1) * bits - 1) // 8 + 1)}
    assert _bytes_marked(marked, shape, bits) == len(touched)


def test_sub_byte_bytes_of_a_large_operand_stay_small():
    # a 63 M element s4 operand read whole: its bytes are counted without an offset per element
    # (offsets of every element took 3.5 GB and seconds)
    import tracemalloc

    m = IndexingMap.identity((8, 120, 256, 256))
    tracemalloc.start()
    try:
        u = operand_utilization([m], array_shape("s4", (8, 120, 256, 256)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert u.distinct_elements == 8 * 120 * 256 * 256 and u.bytes_read == 8 * 120 * 256 * 256 // 2
    assert peak < 300 << 20  # the marks (63 MB) and their storage order, not 8 bytes an element
