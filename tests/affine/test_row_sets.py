"""``same_row_sets``: set equality of int64 row arrays, checked against Python sets of tuples."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine.evaluate import same_row_sets


def _as_set(rows: np.ndarray) -> set[tuple[int, ...]]:
    return set(map(tuple, rows.tolist()))


def _rows(width: int, values: st.SearchStrategy[int]) -> st.SearchStrategy[np.ndarray]:
    return st.lists(st.lists(values, min_size=width, max_size=width), max_size=12).map(
        lambda rows: np.asarray(rows, dtype=np.int64).reshape(len(rows), width)
    )


@st.composite
def _pairs(draw, values: st.SearchStrategy[int]) -> tuple[np.ndarray, np.ndarray]:
    width = draw(st.integers(0, 4))
    a = draw(_rows(width, values))
    # often the same rows again, permuted and repeated: equal sets must be told equal
    if draw(st.booleans()) and len(a):
        order = draw(st.permutations(list(range(len(a))) * 2))
        return a, a[np.asarray(order, dtype=np.int64)]
    return a, draw(_rows(width, values))


@settings(max_examples=300, deadline=None)
@given(_pairs(st.integers(-5, 5)))
def test_small_values_agree_with_python_sets(pair):
    a, b = pair
    assert same_row_sets(a, b) == (_as_set(a) == _as_set(b))


@settings(max_examples=200, deadline=None)
@given(_pairs(st.integers(-(1 << 40), 1 << 40)))
def test_ranges_past_one_int64_key_agree_with_python_sets(pair):
    a, b = pair
    assert same_row_sets(a, b) == (_as_set(a) == _as_set(b))


def test_empty_and_zero_width_rows():
    empty = np.zeros((0, 2), np.int64)
    assert same_row_sets(empty, empty)
    assert not same_row_sets(empty, np.zeros((1, 2), np.int64))
    assert same_row_sets(np.zeros((3, 0), np.int64), np.zeros((1, 0), np.int64))
    assert not same_row_sets(np.zeros((3, 0), np.int64), np.zeros((0, 0), np.int64))
