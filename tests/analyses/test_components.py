"""Components of a map against brute force: every point of the domain evaluated one at a time.

The maps are the delinearizations a reshape or transpose fusion reads through (digits of one
linear index), where ``decompose`` lists the box without enumerating it, and near misses where
it must enumerate (a digit that wraps, an operand dim that differs, an offset index).
"""

import itertools

import pytest

from hlo_index.affine import parse_map
from hlo_index.affine.evaluate import evaluate_point
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
]


@pytest.mark.parametrize("text, dims", CASES)
def test_rows_are_the_brute_force_read_set(text, dims):
    m = parse_map(text)
    rows, points = brute_rows(m, dims)
    dec = decompose(m, dims, budget=1 << 20)
    assert dec.points == points and dec.points_exact and dec.distinct_exact
    assert dec.distinct == len(rows)
    (component,) = [c for c in dec.components if c.results]
    assert component.results == tuple(range(len(dims)))
    assert [tuple(r) for r in component.values.tolist()] == rows


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
