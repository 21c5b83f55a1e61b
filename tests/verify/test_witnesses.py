"""The checks evaluate a map with its witness range variables (in no result, constrained with
dims only) tried per point: the same elements as enumerating them with the others."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_index.affine import parse_map
from hlo_index.affine.evaluate import relation_at
from hlo_index.verify.points import _rows_at, _witness_split

MAPS = [
    # a window tap that reaches no result (TPU attention's dot over a padded window)
    "(d0, d1)[s0, s1] -> (s1, d0), domain: d0 in [0, 3], d1 in [0, 5], s0 in [0, 9], s1 in [0, 2], d1 - s0 in [-4, 0]",
    # a witness no value of which holds at some points
    "(d0, d1)[s0, s1] -> (d1, s1), domain: d0 in [0, 5], d1 in [0, 3], s0 in [0, 2], s1 in [0, 3], "
    "d0 - s0 * 2 in [0, 0]",
    # two witnesses, one unconstrained, and a constraint tying a kept variable to a dim
    "(d0)[s0, s1, s2] -> (s1), domain: d0 in [0, 7], s0 in [0, 3], s1 in [0, 7], s2 in [0, 1], "
    "d0 - s0 in [2, 9], s1 - d0 in [-1, 1]",
]


@pytest.mark.parametrize("text", MAPS)
def test_witnesses_checked_per_point_give_the_same_elements(text):
    m = parse_map(text)
    smaller, witnesses = _witness_split(m)
    assert witnesses and smaller.num_range_vars < m.num_range_vars
    grid = (
        np.array(np.meshgrid(*(np.arange(iv.lo, iv.hi + 1) for iv in m.dims), indexing="ij")).reshape(m.num_dims, -1).T
    )
    grid = grid.astype(np.int64)
    want_dims, want = relation_at(m, grid, ())
    got_dims, got = _rows_at(m, grid)
    as_rows = lambda d, r: {tuple(a) + tuple(b) for a, b in zip(d[:, : m.num_dims].tolist(), r.tolist())}  # noqa: E731
    assert as_rows(got_dims, got) == as_rows(want_dims, want)
    assert len(want) > 0


def test_a_map_whose_unused_variables_meet_other_variables_is_left_whole():
    m = parse_map("(d0)[s0, s1] -> (s1), domain: d0 in [0, 3], s0 in [0, 3], s1 in [0, 3], s0 + s1 in [0, 3]")
    smaller, witnesses = _witness_split(m)
    assert smaller is m and witnesses == []
