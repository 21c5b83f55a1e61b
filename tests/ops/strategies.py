"""Hypothesis strategies for random small shapes used by the op-rule tests."""

from __future__ import annotations

from hypothesis import strategies as st


def dims_strategy(min_rank: int = 0, max_rank: int = 4, max_size: int = 5, min_size: int = 1):
    return st.lists(st.integers(min_size, max_size), min_size=min_rank, max_size=max_rank).map(tuple)


@st.composite
def factorization(draw, total: int, max_rank: int = 4):
    """A random shape with ``total`` elements (unit dims sprinkled in)."""
    dims, left = [], total
    while left > 1 and len(dims) < max_rank:
        divisors = [d for d in range(2, left + 1) if left % d == 0]
        d = left if len(dims) == max_rank - 1 else draw(st.sampled_from(divisors))
        dims.append(d)
        left //= d
    if left > 1:
        dims[-1] *= left
    if draw(st.booleans()) and len(dims) < max_rank:
        dims.insert(draw(st.integers(0, len(dims))), 1)
    return tuple(dims)


def permutation(n: int):
    return st.permutations(list(range(n))).map(tuple)
