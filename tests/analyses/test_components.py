"""Components of a map against brute force: every point of the domain evaluated one at a time.

The maps are the delinearizations a reshape or transpose fusion reads through (digits of one
linear index), where ``decompose`` lists the box without enumerating it, and near misses where
it must enumerate (a digit that wraps, an operand dim that differs, an offset index).
"""

import itertools
from math import prod

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, const, dim, parse_map, range_var
from hlo_index.affine.evaluate import evaluate_expr, evaluate_point
from hlo_index.affine.expr import DIM, RANGE
from hlo_index.analyses.components import decompose, linear_indices


def brute_rows(m, dims):
    """Distinct in-bounds result rows (sorted) and the number of domain points."""
    rows, points = set(), 0
    for d in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
        for s in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.range_vars]):
            points += 1
            row = evaluate_point(m, d, s)
            if all(0 <= v < n for v, n in zip(row, dims)):
                rows.add(row)
    return sorted(rows), points


CASES = [
    # digits of one linear index, in operand order and permuted (a transpose after a reshape)
    (
        "(d0)[s0] -> ((d0 * 5 + s0) floordiv 6, ((d0 * 5 + s0) floordiv 3) mod 2, (d0 * 5 + s0) mod 3)"
        ", domain: d0 in [0, 5], s0 in [0, 4]",
        (5, 2, 3),
    ),
    (
        "(d0)[s0] -> (((d0 * 5 + s0) floordiv 3) mod 2, (d0 * 5 + s0) mod 3, (d0 * 5 + s0) floordiv 6)"
        ", domain: d0 in [0, 5], s0 in [0, 4]",
        (2, 3, 5),
    ),
    ("()[s0] -> (s0 floordiv 24, (s0 floordiv 8) mod 3, s0 mod 8), domain: s0 in [0, 95]", (4, 3, 8)),
    ("(d0, d1) -> (d1 * 8 + d0), domain: d0 in [0, 7], d1 in [0, 3]", (32,)),
    ("(d0, d1) -> (d0 * 4 + d1 - 1), domain: d0 in [0, 7], d1 in [1, 4]", (32,)),
    # near misses: an operand dim larger or smaller than the digit, an offset index, a wrapping mod
    ("()[s0] -> (s0 floordiv 24, (s0 floordiv 8) mod 3, s0 mod 8), domain: s0 in [0, 95]", (5, 3, 8)),
    ("()[s0] -> (s0 floordiv 24, (s0 floordiv 8) mod 3, s0 mod 8), domain: s0 in [0, 95]", (4, 2, 8)),
    ("()[s0] -> (s0 floordiv 24, (s0 floordiv 8) mod 3, s0 mod 8), domain: s0 in [1, 95]", (4, 3, 8)),
    ("()[s0] -> (s0 floordiv 24, (s0 floordiv 8) mod 3, s0 mod 8), domain: s0 in [0, 90]", (4, 3, 8)),
    ("()[s0] -> ((s0 floordiv 8) mod 3, s0 mod 8), domain: s0 in [0, 95]", (3, 8)),
    ("(d0)[s0] -> ((d0 * 5 + s0) floordiv 2, (d0 * 5 + s0) mod 2), domain: d0 in [0, 3], s0 in [0, 5]", (15, 2)),
    ("(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 7], d1 in [0, 4]", (36,)),
    ("(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 7], d1 in [0, 3]", (31,)),
    # results whose row-major index is one dense sum (the simplifier's split of a reshape's
    # digits, as a reduction fusion reads them), and near misses: a result beyond its dim, a gap
    ("(d0)[s0] -> (d0 * 3 + s0 floordiv 4, s0 mod 4), domain: d0 in [0, 4], s0 in [0, 11]", (15, 4)),
    (
        "(d0)[s0] -> (d0 floordiv 2, s0 floordiv 3 + (d0 mod 2) * 2, s0 mod 3), domain: d0 in [0, 5], s0 in [0, 5]",
        (3, 4, 3),
    ),
    ("(d0)[s0] -> (d0 * 3 + s0 floordiv 4, s0 mod 4), domain: d0 in [0, 4], s0 in [0, 11]", (14, 4)),
    ("(d0)[s0] -> (d0 * 3 + s0 floordiv 4, s0 mod 4), domain: d0 in [0, 4], s0 in [0, 11]", (15, 5)),
    ("(d0)[s0] -> (d0 * 4 + s0 floordiv 4, s0 mod 4), domain: d0 in [0, 4], s0 in [0, 11]", (20, 4)),
    # the high digits alone (a broadcast's read of its source: every element 8 times), and near
    # misses: a low digit that does not divide the sum's range, a gap between digits
    ("()[s0] -> (s0 floordiv 24, (s0 floordiv 8) mod 3), domain: s0 in [0, 95]", (4, 3)),
    (
        "(d0)[s0] -> ((d0 * 6 + s0) floordiv 12, ((d0 * 6 + s0) floordiv 4) mod 3), domain: d0 in [0, 7], s0 in [0, 5]",
        (4, 3),
    ),
    ("()[s0] -> (s0 floordiv 21, (s0 floordiv 7) mod 3), domain: s0 in [0, 95]", (5, 3)),
    ("()[s0] -> (s0 floordiv 48, (s0 floordiv 8) mod 3), domain: s0 in [0, 95]", (2, 3)),
    # a variable's digits around another's (a transpose that splits d0 around s0), once and, with
    # the low digits of s0 unread, 4 times each; near misses: a digit that does not divide its
    # variable's range, digits of two divisors
    (
        "(d0)[s0] -> ((d0 floordiv 4) * 3 + s0 floordiv 2, s0 mod 2, d0 mod 4), domain: d0 in [0, 7], s0 in [0, 5]",
        (6, 2, 4),
    ),
    ("(d0)[s0] -> (d0 floordiv 2, s0 floordiv 4 + (d0 mod 2) * 3), domain: d0 in [0, 5], s0 in [0, 11]", (3, 6)),
    (
        "(d0)[s0] -> ((d0 floordiv 3) * 3 + s0 floordiv 2, s0 mod 2, d0 mod 3), domain: d0 in [0, 7], s0 in [0, 5]",
        (9, 2, 3),
    ),
    (
        "(d0)[s0] -> ((d0 floordiv 4) * 3 + s0 floordiv 2, s0 mod 2, d0 mod 2), domain: d0 in [0, 7], s0 in [0, 5]",
        (6, 2, 2),
    ),
    # digits whose radices lie inside the operand dims: a corner of the operand's box, and near
    # misses: a top digit past its dim, a mod digit past its dim
    ("()[s0] -> (s0 floordiv 2, s0 mod 2), domain: s0 in [0, 31]", (16, 8)),
    ("()[s0] -> (s0 floordiv 4, s0 mod 4), domain: s0 in [0, 11]", (5, 7)),
    ("()[s0] -> (s0 floordiv 2, s0 mod 2), domain: s0 in [0, 31]", (15, 8)),
    ("()[s0] -> (s0 floordiv 8, s0 mod 8), domain: s0 in [0, 31]", (4, 6)),
]


@pytest.mark.parametrize("text, dims", CASES)
def test_rows_are_the_brute_force_read_set(text, dims):
    m = parse_map(text)
    rows, points = brute_rows(m, dims)
    dec = decompose(m, dims, budget=1 << 20)
    assert dec.points == points and dec.points_exact and dec.distinct_exact
    assert dec.distinct == len(rows)
    assert sorted(product_rows(dec, len(dims))) == rows


def product_rows(dec, arity):
    """Every row of a decomposition: the Cartesian product of its components' rows, each
    component filling its own result positions."""
    pieces = [(c.results, [tuple(r) for r in c.values.tolist()]) for c in dec.components if c.results]
    assert sorted(k for results, _ in pieces for k in results) == list(range(arity))
    out = []
    for combination in itertools.product(*[values for _, values in pieces]):
        row = [0] * arity
        for (results, _), values in zip(pieces, combination):
            for k, v in zip(results, values):
                row[k] = v
        out.append(tuple(row))
    return out


@pytest.mark.parametrize("text, dims", CASES)
def test_a_box_above_the_budget_is_exact_not_sampled(text, dims):
    # a budget below the domain's size: what is not a box is sampled (its count a lower bound)
    m = parse_map(text)
    rows, points = brute_rows(m, dims)
    dec = decompose(m, dims, budget=8, sample=4)
    assert dec.points == points
    if dec.distinct_exact:
        assert dec.distinct == len(rows)
    else:
        assert dec.distinct <= len(rows) <= dec.distinct_upper


# the cases above that read every point of their operand dims' box, each as often
BOX_CASES = CASES[:5] + CASES[13:15] + CASES[18:20] + CASES[22:24]


@pytest.mark.parametrize("text, dims", BOX_CASES)
def test_every_point_of_a_box_is_known_without_enumerating(text, dims):
    m = parse_map(text)
    rows, points = brute_rows(m, dims)
    assert len(rows) == prod(dims) and points % len(rows) == 0  # the premise
    dec = decompose(m, dims, budget=8, sample=4)
    assert dec.distinct_exact and dec.distinct == len(rows) and dec.points == points


@pytest.mark.parametrize("text, dims", CASES)
def test_linear_indices_are_the_brute_force_read_set(text, dims):
    m = parse_map(text)
    rows, _ = brute_rows(m, dims)
    expected = sorted(sum(v * prod_ for v, prod_ in zip(row, _strides(dims))) for row in rows)
    dec = decompose(m, dims, budget=1 << 20)
    assert sorted(linear_indices(dec, dims, 1 << 20).tolist()) == expected


def _strides(dims):
    """Row-major strides of ``dims``."""
    strides, size = [], 1
    for n in reversed(dims):
        strides.append(size)
        size *= n
    return strides[::-1]


# Equalities fix a variable: the box they leave is walked (exactly when it fits the budget), where
# the whole box, above the budget, would have been sampled and a thin diagonal missed.
EQUALITY_CASES = [
    ("(d0)[s0, s1] -> (s0), domain: d0 in [0, 3], s0 in [0, 39], s1 in [0, 39], s0 - s1 in [0, 0]", (40,)),
    ("()[s0, s1] -> (s1, s0), domain: s0 in [0, 29], s1 in [0, 49], s0 + s1 in [20, 20]", (50, 30)),
    # the solved variable leaves its own range: only part of the diagonal is feasible
    ("()[s0, s1] -> (s0 + s1 * 3), domain: s0 in [0, 9], s1 in [0, 59], -s0 + s1 in [4, 4]", (200,)),
    # two equalities, the second naming the variable the first solved
    (
        "()[s0, s1, s2] -> (s0, s2), domain: s0 in [0, 19], s1 in [0, 19], s2 in [0, 19],"
        " s0 - s1 in [0, 0], s1 + s2 in [19, 19]",
        (20, 20),
    ),
    # an equality and a range constraint on the same variables
    ("()[s0, s1] -> (s0), domain: s0 in [0, 39], s1 in [0, 39], s0 - s1 in [0, 0], s0 + s1 in [10, 50]", (40,)),
]


def brute_rows_constrained(m, dims):
    """``brute_rows`` over the points that satisfy every constraint."""
    rows, points = set(), 0
    for s in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.range_vars]):
        for d in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in m.dims]):
            env = {(DIM, i): v for i, v in enumerate(d)} | {(RANGE, i): v for i, v in enumerate(s)}
            if all(iv.lo <= evaluate_expr(e, env, {}) <= iv.hi for e, iv in m.constraints):
                points += 1
                row = evaluate_point(m, d, s)
                if all(0 <= v < n for v, n in zip(row, dims)):
                    rows.add(row)
    return sorted(rows), points


@pytest.mark.parametrize("text, dims", EQUALITY_CASES)
def test_equalities_are_solved_not_sampled(text, dims):
    m = parse_map(text)
    rows, points = brute_rows_constrained(m, dims)
    # a budget below the whole box, above what the equalities leave
    dec = decompose(m, dims, budget=100, sample=64)
    assert dec.points == points and dec.points_exact and dec.distinct_exact
    assert dec.distinct == len(rows)
    values = sorted(tuple(r) for c in dec.components if c.results for r in c.values.tolist())
    assert values == rows


# One result, a sum of variables (or of a variable's quotient) whose coefficients leave no gap:
# every value of an interval, the part inside the operand dim read; not enumerated. Near misses:
# a coefficient past what the smaller terms span (a gap), a variable in two atoms, a mod.
SUM_CASES = [
    ("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 12]", (16,), True),
    ("(d0, d1, d2) -> (d1 * 64 + d2 + 768), domain: d0 in [0, 0], d1 in [0, 11], d2 in [0, 63]", (2304,), True),
    ("()[s0, s1] -> (s1 + s0 floordiv 2048), domain: s0 in [0, 8191], s1 in [0, 12]", (16,), True),
    ("(d0, d1) -> (d0 * 3 - d1 + 5), domain: d0 in [0, 9], d1 in [0, 4]", (40,), True),
    ("(d0, d1) -> (d0 * 3 - d1 + 5), domain: d0 in [0, 9], d1 in [0, 4]", (12,), True),  # past the dim
    ("(d0, d1) -> (d0 + d1 - 20), domain: d0 in [0, 9], d1 in [0, 4]", (12,), True),  # wholly before it
    ("(d0, d1) -> (d0 * 6 + d1), domain: d0 in [0, 9], d1 in [0, 4]", (64,), False),  # a gap of one
    ("(d0, d1) -> (d0 + d0 floordiv 2 + d1), domain: d0 in [0, 9], d1 in [0, 1]", (40,), False),
    ("(d0, d1) -> (d0 mod 3 + d1 * 3), domain: d0 in [0, 9], d1 in [0, 4]", (40,), False),
]


@pytest.mark.parametrize("text, dims, contiguous", SUM_CASES)
def test_a_sum_without_gaps_reads_an_interval(text, dims, contiguous):
    from hlo_index.analyses.components import _contiguous_values

    m = parse_map(text)
    rows, points = brute_rows(m, dims)
    members = sorted(m.results[0].variables(), key=lambda v: (v.kind, v.value))
    span = _contiguous_values(m.results[0], members, [m.variable_interval(v) for v in members])
    assert (span is not None) == contiguous
    # a budget below the domain: an interval is known however large, the rest is sampled
    dec = decompose(m, dims, budget=1 << 20 if not contiguous else 8, sample=4)
    assert dec.points == points and dec.distinct_exact and dec.distinct == len(rows)
    assert sorted(tuple(r) for c in dec.components if c.results for r in c.values.tolist()) == rows
    expected = sorted(sum(v * s for v, s in zip(row, _strides(dims))) for row in rows)
    assert sorted(linear_indices(dec, dims, 1 << 20).tolist()) == expected


def test_random_sums_are_intervals_only_where_brute_force_says_so():
    import random

    from hlo_index.affine import Interval, dim, floordiv
    from hlo_index.affine.expr import const
    from hlo_index.analyses.components import _contiguous_values

    rng = random.Random(20261129)
    decided = 0
    for _ in range(400):
        n = rng.randint(1, 3)
        intervals = [Interval(lo, lo + rng.choice([0, 1, 2, 4, 7])) for lo in (rng.randint(-3, 5) for _ in range(n))]
        e = const(rng.randint(-5, 5))
        for i in range(n):
            atom = dim(i) if rng.random() < 0.7 else floordiv(dim(i), rng.choice([2, 3]))
            e = e + atom * rng.choice([-4, -2, -1, 1, 1, 2, 3, 5, 8])
        members = [dim(i) for i in range(n)]
        values = {
            evaluate_expr(e, {(DIM, i): v for i, v in enumerate(p)}, {})
            for p in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in intervals])
        }
        span = _contiguous_values(e, members, intervals)
        if span is not None:
            decided += 1
            assert values == set(range(span[0], span[1] + 1)), (str(e), intervals)
    assert decided > 100
    # an empty box takes no value: no interval
    assert _contiguous_values(dim(0) + dim(1), [dim(0), dim(1)], [Interval(0, 3), Interval(5, 2)]) is None


# Point counts (no operand dims) without constraints (every point), and under one constraint
# linear in the variables: the widest one solved at each point of the others, not the box enumerated.
POINT_COUNT_CASES = [
    "(d0, d1)[s0] -> (s0, d1 floordiv 3), domain: d0 in [0, 3], d1 in [0, 10], s0 in [2, 6]",
    "(d0, d1, d2, d3) -> (), domain: d0 in [0, 3], d1 in [0, 2], d2 in [0, 99], d3 in [0, 99], d2 - d3 in [0, 0]",
    "(d0, d1) -> (d0), domain: d0 in [0, 40], d1 in [0, 30], d0 + d1 * 2 in [10, 50]",
    "(d0, d1) -> (d1), domain: d0 in [0, 40], d1 in [-5, 30], -d0 * 3 + d1 in [-60, -7]",
    "(d0)[s0, s1] -> (s0), domain: d0 in [0, 3], s0 in [0, 9], s1 in [0, 9], s0 + s1 * 4 - d0 in [5, 5]",
]


@pytest.mark.parametrize("text", POINT_COUNT_CASES)
def test_point_counts_are_exact_without_enumerating(text):
    m = parse_map(text)
    _, points = brute_rows_constrained(m, ())
    dec = decompose(m, None, budget=8, sample=4)
    assert dec.points_exact and dec.points == points


@pytest.mark.parametrize("text, dims", CASES[-4:])
def test_digits_inside_or_beyond_the_operand_dims_are_boxes_without_enumerating(text, dims):
    # each digit is its own variable once split, so each is a box clipped to its dim, whether
    # the digits fit the operand (a corner) or overrun one of its dims (a near miss)
    m = parse_map(text)
    rows, points = brute_rows(m, dims)
    dec = decompose(m, dims, budget=8, sample=4)
    assert all(c.box is not None for c in dec.components)
    assert dec.distinct_exact and dec.distinct == len(rows) and dec.points == points
    assert sorted(product_rows(dec, len(dims))) == rows


@pytest.mark.parametrize(
    "text, dims", [(t, d) for t, d in CASES] + [(t, d) for t, d in EQUALITY_CASES] + [(t, d) for t, d, _ in SUM_CASES]
)
def test_small_grids_walked_on_lists_give_what_numpy_gives(text, dims, monkeypatch):
    """A grid of a few thousand points is walked on Python lists (numpy's import costs more); the
    numpy walk, forced by a zero threshold, lists the same rows in the same order, and the same
    points."""
    from hlo_index.analyses import components

    m = parse_map(text)
    on_lists = decompose(m, dims, budget=1 << 20)
    monkeypatch.setattr(components, "_ENUMERATED_IN_PYTHON", 0)
    on_arrays = decompose(m, dims, budget=1 << 20)
    assert len(on_lists.components) == len(on_arrays.components)
    for a, b in zip(on_lists.components, on_arrays.components):
        assert (a.results, a.points, a.distinct, a.box) == (b.results, b.points, b.distinct, b.box)
        if a.listed_count is not None:
            assert a.values.tolist() == b.values.tolist()
    assert on_lists.points == brute_rows_constrained(m, dims)[1]


@st.composite
def _maps_with_constraints(draw):
    """Maps of up to three dims and two range variables: sums with floordiv / mod, an equality or
    a range constraint, results that may leave the operand."""
    n_dims, n_range = draw(st.integers(1, 3)), draw(st.integers(0, 2))
    variables = [dim(i) for i in range(n_dims)] + [range_var(i) for i in range(n_range)]
    sizes = [draw(st.integers(1, 7)) for _ in variables]

    def expr():
        terms = draw(st.lists(st.sampled_from(variables), min_size=1, max_size=3))
        e = const(draw(st.integers(-2, 2)))
        for v in terms:
            e = e + v * draw(st.integers(-3, 4))
        op = draw(st.sampled_from(["", "floordiv", "mod"]))
        if op:
            e = e.floordiv(draw(st.integers(2, 5))) if op == "floordiv" else e % draw(st.integers(2, 5))
        return e

    constraints = []
    for _ in range(draw(st.integers(0, 2))):
        lo = draw(st.integers(-2, 4))
        constraints.append((expr(), Interval(lo, lo + draw(st.integers(0, 5)))))
    m = IndexingMap(
        [Interval(0, s - 1) for s in sizes[:n_dims]],
        [Interval(0, s - 1) for s in sizes[n_dims:]],
        (),
        [expr() for _ in range(draw(st.integers(1, 3)))],
        constraints,
    )
    dims = tuple(draw(st.integers(1, 12)) for _ in m.results)
    return m, dims


@settings(deadline=None, derandomize=True, max_examples=300)
@given(_maps_with_constraints())
def test_random_grids_walked_on_lists_give_what_numpy_gives(case):
    from hlo_index.analyses import components

    m, dims = case
    on_lists = decompose(m, dims, budget=1 << 20)
    saved = components._ENUMERATED_IN_PYTHON
    components._ENUMERATED_IN_PYTHON = 0
    try:
        on_arrays = decompose(m, dims, budget=1 << 20)
    finally:
        components._ENUMERATED_IN_PYTHON = saved
    assert [(c.results, c.points, c.distinct) for c in on_lists.components] == [
        (c.results, c.points, c.distinct) for c in on_arrays.components
    ]
    for a, b in zip(on_lists.components, on_arrays.components):
        if a.listed_count is not None:
            assert a.values.tolist() == b.values.tolist()
    rows, points = brute_rows_constrained(m, dims)
    assert on_lists.points == points
    if all(c.listed_count is not None for c in on_lists.components):
        assert sorted(linear_indices(on_lists, dims, 1 << 20).tolist()) == sorted(
            sum(v * s for v, s in zip(row, _strides(dims))) for row in rows
        )


@settings(deadline=None, derandomize=True, max_examples=500)
@given(
    st.integers(-6, 6),
    st.integers(-1, 10),
    st.integers(-5, 5),
    st.integers(-25, 25),
    st.integers(-2, 12),
    st.integers(-6, 6),
    st.integers(-1, 10),
)
def test_a_band_of_a_plane_is_counted_in_closed_form(a, width, k, low, height, ylo, ywidth):
    from hlo_index.analyses.components import _band_points

    b, high, yhi = a + width, low + height, ylo + ywidth
    brute = sum(1 for x in range(a, b + 1) for y in range(ylo, yhi + 1) if low <= y + k * x <= high)
    assert _band_points(a, b, k, low, high, ylo, yhi) == brute


@pytest.mark.parametrize("size", [40, 30522])
def test_a_diagonal_that_only_gates_the_reads_is_counted_not_walked(size):
    """``d0 - s1 in [0, 0]`` shares no variable with the results (a gather's row check): a
    component of constraints alone, size x size points of which size hold. Counted in closed form
    at a budget far below the box (BERT's embedding gradient has size 30522); brute force at 40."""
    text = (
        f"(d0, d1)[s0, s1] -> (s0 floordiv 4, s0 mod 4, d1), domain: d0 in [0, {size - 1}], d1 in [0, 2],"
        f" s0 in [0, 7], s1 in [0, {size - 1}], d0 - s1 in [0, 0]"
    )
    m, dims = parse_map(text), (2, 4, 3)
    dec = decompose(m, dims, budget=8)
    assert dec.points_exact and dec.distinct_exact
    assert (dec.points, dec.distinct) == (size * 3 * 8, 2 * 4 * 3)
    if size <= 40:
        rows, points = brute_rows_constrained(m, dims)
        assert (dec.points, dec.distinct) == (points, len(rows))
