"""Property tests over random maps, checked against plain-Python brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, parse_map

from .affine_helpers import brute_relation, maps

SETTINGS = settings(deadline=None, derandomize=True, max_examples=300)


@SETTINGS
@given(maps())
def test_simplify_preserves_the_relation(m: IndexingMap):
    s = m.simplified()
    assert brute_relation(s) == brute_relation(m), f"{m}\n  simplified to\n{s}"


@SETTINGS
@given(maps(max_dims=1, max_range=1, runtime=1))
def test_simplify_preserves_the_relation_with_runtime_vars(m: IndexingMap):
    s = m.simplified()
    lo, hi = m.runtime_vars[0].interval
    for value in range(lo, hi + 1):
        expected = brute_relation(m, (value,))
        if s.is_known_empty or not s.runtime_vars[0].interval.contains(value):
            assert not expected
        else:
            assert brute_relation(s, (value,)) == expected


@SETTINGS
@given(maps())
def test_simplification_is_idempotent(m: IndexingMap):
    s = m.simplified()
    again = parse_map(str(s)).simplified()
    assert str(again) == str(s)


@SETTINGS
@given(maps(runtime=1))
def test_print_parse_round_trip(m: IndexingMap):
    back = parse_map(str(m))
    assert str(back) == str(m)
    assert back.results == m.results and back.constraints == m.constraints
    assert back.dims == m.dims and back.range_vars == m.range_vars


@st.composite
def composable(draw):
    inner = draw(maps(max_dims=2, max_range=1, max_results=2, max_constraints=1))
    outer = draw(maps(max_dims=2, max_range=1, max_results=2, max_constraints=1, n_dims=inner.num_results))
    return outer, inner


@settings(deadline=None, derandomize=True, max_examples=250)
@given(composable())
def test_compose_equals_sequential_evaluation(pair):
    outer, inner = pair
    composed = outer.compose(inner)
    expected = set()
    for row in brute_relation(inner):
        x, y = row[: inner.num_dims], row[inner.num_dims :]
        for out_row in brute_relation(outer):
            if out_row[: outer.num_dims] == y:
                expected.add(x + out_row[outer.num_dims :])
    assert brute_relation(composed) == expected, f"{outer}\n∘ {inner}\n= {composed}"


@SETTINGS
@given(maps())
def test_numpy_enumeration_matches_brute_force(m: IndexingMap):
    points, results = m.enumerate()
    rows = {tuple(p[: m.num_dims]) + tuple(r) for p, r in zip(points.tolist(), results.tolist())}
    assert rows == brute_relation(m)


@SETTINGS
@given(maps(), maps())
def test_equality_agrees_with_hash(a: IndexingMap, b: IndexingMap):
    if a == b:
        assert hash(a) == hash(b)
        assert brute_relation(a) == brute_relation(b)
