"""Dropping maps whose relation lies inside another map of the same set, decided on the part
where the two differ.

A loop read the other way gives, for one pair of loop state elements, maps that overlap: an
input row reaches the rows written one, two, ... iterations later (``d0 - s - 1`` with
``d0 - s in [1, 7]``, ``d0 - s - 2`` with ``d0 - s in [2, 7]``), the same map with and without a
side condition. ``B`` lies inside ``A`` when ``B``'s dims box lies inside ``A``'s and, at every
point, what ``B`` gives ``A`` gives too. Result positions where ``A`` has a range variable of
its own (in no other result, no constraint) whose interval holds every value ``B`` gives there
are left out of the comparison (``A`` gives every value there, whatever the rest); so are the dims
neither map's remaining part uses. What is left is compared by enumeration, exhaustively, when
it is small (``_POINTS`` rows); otherwise the maps are kept. Exact either way: a map is
dropped only when proved inside one that stays.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...affine import IndexingMap, Interval, dim
from ...affine.bounds import Domain
from ...affine.expr import DIM, RANGE, Expr, replace_variables, variable

# Rows enumerated per comparison, at most: the overlaps that matter are a few iterations of a
# loop by a few others; anything larger is kept as it is.
_POINTS = 1 << 12


def drop_contained(maps: Sequence[IndexingMap]) -> tuple[IndexingMap, ...]:
    """``maps`` without every map proved inside another kept one, order kept."""
    kept = list(maps)
    if len(kept) < 2:
        return tuple(kept)
    for outer in list(kept):
        if not any(k is outer for k in kept):
            continue
        kept = [m for m in kept if m is outer or not contained(m, outer)]
    return tuple(kept)


def _own_positions(m: IndexingMap) -> dict[int, Interval]:
    """Result position -> interval, where the result is a range variable of its own."""
    uses: dict[Expr, int] = {}
    for e in m.results:
        for v in e.variables():
            uses[v] = uses.get(v, 0) + 1
    for e, _ in m.constraints:
        for v in e.variables():
            uses[v] = uses.get(v, 0) + 2
    return {i: m.range_vars[r.value] for i, r in enumerate(m.results) if r.kind == RANGE and uses[r] == 1}


def contained(inner: IndexingMap, outer: IndexingMap) -> bool:
    """``inner``'s relation lies inside ``outer``'s (False when that is not proved)."""
    if inner is outer or inner.is_undefined or outer.is_undefined or inner.runtime_vars or outer.runtime_vars:
        return False
    if inner.is_known_empty:
        return True
    if outer.is_known_empty or inner.num_dims != outer.num_dims or inner.num_results != outer.num_results:
        return False
    if any(not o.contains_interval(i) for i, o in zip(inner.dims, outer.dims)):
        return False
    bounds, free = Domain(inner.dims, inner.range_vars, ()), _own_positions(outer)
    compared = [
        i
        for i in range(inner.num_results)
        if not (i in free and free[i].contains_interval(bounds.bounds(inner.results[i])))
    ]
    a, b = _part(outer, compared), _part(inner, compared)
    used = sorted({v.value for m in (a, b) for e in _expressions(m) for v in e.variables() if v.kind == DIM})
    a, b = _on_dims(a, used, inner.dims), _on_dims(b, used, inner.dims)
    points = 1
    for iv in (*b.dims, *a.range_vars, *b.range_vars):
        points *= max(iv.size, 0)
    if points == 0 or points > _POINTS:
        return False
    return _inside(b, a, points)


def _expressions(m: IndexingMap) -> list[Expr]:
    return list(m.results) + [e for e, _ in m.constraints]


def _part(m: IndexingMap, positions: Sequence[int]) -> IndexingMap:
    return IndexingMap(m.dims, m.range_vars, (), [m.results[i] for i in positions], m.constraints)


def _on_dims(m: IndexingMap, used: Sequence[int], box: Sequence[Interval]) -> IndexingMap:
    """``m`` over the dims ``used`` only (renumbered), on ``box``'s intervals for them."""
    rename = {variable(DIM, old): dim(new) for new, old in enumerate(used)}
    memo: dict[Expr, Expr] = {}
    return IndexingMap(
        [box[i] for i in used],
        m.range_vars,
        (),
        [replace_variables(e, rename.get, memo) for e in m.results],
        [(replace_variables(e, rename.get, memo), b) for e, b in m.constraints],
    ).remove_unused_variables()


def _inside(inner: IndexingMap, outer: IndexingMap, limit: int) -> bool:
    """Every (point, result) row of ``inner`` is a row of ``outer`` (both enumerated exhaustively)."""
    return _rows(inner, limit) <= _rows(outer, limit)


def _rows(m: IndexingMap, limit: int) -> set[tuple[int, ...]]:
    points, results = m.enumerate(limit=limit)
    n = m.num_dims
    return {tuple(p[:n]) + tuple(r) for p, r in zip(points.tolist(), results.tolist())}
