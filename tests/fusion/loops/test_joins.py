"""Joining maps in arithmetic progression: the joined map reads exactly the union of the pieces."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, const, dim
from hlo_index.fusion.loops.joins import join_constant_progressions


def _row_map(row: int, col_shift: int = 0) -> IndexingMap:
    return IndexingMap([Interval(0, 3)], [], [], [const(row), dim(0) + col_shift], [])


def _union(maps, dims=(4,)):
    return {y: set().union(*(m.read_set(y) for m in maps)) for y in itertools.product(*(range(n) for n in dims))}


@settings(deadline=None, derandomize=True, max_examples=40)
@given(st.lists(st.tuples(st.integers(-3, 9), st.integers(0, 2)), min_size=1, max_size=6, unique=True))
def test_join_keeps_the_union(pieces):
    maps = [_row_map(r, c) for r, c in pieces]
    joined = join_constant_progressions(maps)
    assert _union(joined) == _union(maps)
    assert len(joined) <= len(maps)


def test_progression_becomes_one_map_over_the_iteration():
    (m,) = join_constant_progressions([_row_map(5), _row_map(1), _row_map(3)])
    assert len(m.range_vars) == 1 and m.range_vars[0] == Interval(0, 2)
    assert m.read_set((2,)) == {(1, 2), (3, 2), (5, 2)}


def test_gap_in_the_progression_is_left_alone():
    maps = [_row_map(0), _row_map(1), _row_map(3)]
    assert join_constant_progressions(maps) == tuple(maps)


# ---- pieces pinned to successive points of a dimension (a scan's stacked rows) ---------------------


def _pinned_piece(p: int, shift: int, grow: int, lo: int) -> IndexingMap:
    """Row ``p`` of a 6 x 2 stack reads rows ``[lo, lo + grow * p]`` shifted by ``shift * p``."""
    from hlo_index.affine import range_var

    return IndexingMap(
        [Interval(p, p), Interval(0, 1)],
        [Interval(lo, lo + grow * p)],
        [],
        [range_var(0) + shift * p, dim(1)],
        [],
    ).simplified()


@settings(deadline=None, derandomize=True, max_examples=60)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=6, unique=True),
    st.integers(-2, 2),
    st.integers(0, 2),
    st.integers(0, 3),
)
def test_pinned_join_keeps_the_union(points, shift, grow, lo):
    from hlo_index.fusion.loops.joins import join_progressions

    maps = [_pinned_piece(p, shift, grow, lo) for p in points]
    joined = join_progressions(maps)
    assert _union(joined, (6, 2)) == _union(maps, (6, 2))
    assert len(joined) <= len(maps)
    if sorted(points) == list(range(min(points), max(points) + 1)) and len(points) > 2:
        # successive rows: one map over the stack (two rows alike give its form, the first may
        # be degenerate: a one-point range simplified away)
        assert len(joined) == 1


def test_grid_of_constants_joins_one_axis_at_a_time():
    from hlo_index.fusion.loops.joins import join_progressions

    maps = [IndexingMap([Interval(0, 3)], [], [], [const(r), dim(0) + c], []) for r in (2, 3, 4) for c in (0, 64)]
    (m,) = join_progressions(maps)
    assert _union([m]) == _union(maps)
