"""Dropping maps whose relation lies inside another map of the same set.

A set of maps stands for the union of their relations, so a map contained in another one adds
nothing. Containment is proved here for one common kind of container, a *box reader*: each result
a distinct range variable, no constraint on a range variable, so every element of its domain reads
a whole box of the operand (a weight that reaches a training step's gradient through a dot reads
all of it, whatever other paths also read). Map ``B`` lies inside box reader ``A`` when ``B``'s
dims box lies inside ``A``'s, ``A``'s dim-only constraints hold wherever ``B``'s hold (enumerated
over the dimensions concerned), and the range of every result of ``B`` (an over-approximation of
what it reads) lies inside ``A``'s box. Nothing is approximated: the kept maps are the same union.

Any other container is compared by enumeration (``contained``), on the part where the two maps
differ. A loop read the other way gives, for one pair of loop state elements, maps that overlap:
an input row reaches the rows written one, two, ... iterations later (``d0 - s - 1`` with
``d0 - s in [1, 7]``, ``d0 - s - 2`` with ``d0 - s in [2, 7]``), the same map with and without a
side condition. ``B`` lies inside ``A`` when ``B``'s dims box lies inside ``A``'s and, at every
point, what ``B`` gives ``A`` gives too. Result positions where ``A`` has a range variable of
its own (in no other result, no constraint) whose interval holds every value ``B`` gives there
are left out of the comparison (``A`` gives every value there, whatever the rest); so are the dims
neither map's remaining part uses. What is left is compared exhaustively when it is small
(``_POINTS`` rows); otherwise the maps are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ..affine import IndexingMap, Interval, dim
from ..affine.bounds import Domain
from ..affine.expr import DIM, RANGE, RUNTIME, Expr, replace_variables, variable
from ..context import budgets
from .domain_union import dims_used, domain_mask, split_constraints


def read_box(m: IndexingMap) -> tuple[Interval, ...] | None:
    """The box every domain element of ``m`` reads whole, when ``m`` is a box reader; else None."""
    if m.is_undefined or m.is_known_empty or m.runtime_vars:
        return None
    seen = set()
    for r in m.results:
        if r.kind != RANGE or r.value in seen:
            return None
        seen.add(r.value)
    if len(seen) != len(m.range_vars):
        return None
    _, others = split_constraints(m)
    if others or any(iv.size <= 0 for iv in (*m.dims, *m.range_vars)):
        return None
    return tuple(m.range_vars[r.value] for r in m.results)


def _domain_inside(inner: IndexingMap, outer: IndexingMap) -> bool:
    """Every domain point of ``inner`` (its dims box and dim-only constraints) satisfies
    ``outer``'s dims box and dim-only constraints."""
    import numpy as np

    if len(inner.dims) != len(outer.dims):
        return False
    if any(not o.contains_interval(i) for i, o in zip(inner.dims, outer.dims)):
        return False
    outer_constraints, _ = split_constraints(outer)
    if not outer_constraints:
        return True
    inner_constraints, _ = split_constraints(inner)
    axes = sorted(dims_used(outer_constraints) | dims_used(inner_constraints))
    box = [inner.dims[k] for k in axes]
    size = 1
    for iv in box:
        size *= iv.size
    if size > budgets().semantic_check_points:
        return False
    inside = domain_mask(inner.dims, inner_constraints, axes, box)
    return bool(np.all(domain_mask(outer.dims, outer_constraints, axes, box)[inside]))


def contained_in_box_reader(inner: IndexingMap, outer: IndexingMap, box: tuple[Interval, ...]) -> bool:
    """``inner``'s relation lies inside that of ``outer``, the box reader of ``box``."""
    if inner is outer or inner.is_undefined or inner.is_known_empty:
        return False
    if inner.num_results != len(box) or not _domain_inside(inner, outer):
        return False
    domain = Domain(inner.dims, inner.range_vars, tuple(v.interval for v in inner.runtime_vars))
    return all(b.contains_interval(domain.bounds(r)) for r, b in zip(inner.results, box))


def drop_subsumed(maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
    """``maps`` without every map contained in a box reader of the set, order kept. Box readers
    act in order, each only while still kept: a map is dropped only by a map that stays or is
    itself dropped by one inside which it lies, so the union never changes."""
    readers = [(m, box) for m in maps for box in [read_box(m)] if box is not None]
    if not readers:
        return maps
    kept = _without_inside(
        maps,
        [(outer, partial(contained_in_box_reader, outer=outer, box=box)) for outer, box in readers],
    )
    return tuple(kept) if len(kept) < len(maps) else maps


def _without_inside(
    maps: Sequence[IndexingMap], containers: list[tuple[IndexingMap, Callable[[IndexingMap], bool]]]
) -> list[IndexingMap]:
    """``maps`` without every map a container proves inside it; containers act in order, each only
    while still kept, so a map is dropped only by one that stays (or is itself dropped by one
    inside which it lies): the union never changes."""
    kept = list(maps)
    for outer, holds in containers:
        if not any(k is outer for k in kept):
            continue
        kept = [m for m in kept if m is outer or not holds(m)]
    return kept


def drop_equal_box_readers(maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
    """``maps`` without every box reader equal to an earlier one: the same domain reading the same
    box, its range variables numbered in another order (``-> (s1, s0)`` against ``-> (s0, s1)``
    with the intervals swapped), which canonical forms do not tell apart. Order kept."""
    seen = set()
    kept = []
    for m in maps:
        box = read_box(m)
        if box is not None:
            key = (m.dims, split_constraints(m)[0], box)
            if key in seen:
                continue
            seen.add(key)
        kept.append(m)
    return tuple(kept) if len(kept) < len(maps) else maps


def contained_beside_free_positions(
    inner: IndexingMap, outer: IndexingMap, free: dict[int, Interval] | None = None
) -> bool:
    """``inner``'s relation lies inside ``outer``'s, proved without enumerating: ``outer`` has no
    constraint but on dims (holding wherever ``inner``'s domain does), each of its results is
    either a range variable of its own whose interval holds every value ``inner`` gives there, or
    the very expression ``inner`` has there, whose range and runtime variables take in ``outer``
    every value they take in ``inner``. At any point of ``inner``, ``outer`` reaches the same
    element: the shared variables take ``inner``'s values, the own ones the element's coordinates.
    (Shifted copies of one read, ``(d0, s0 + 1)`` over ``s0 in [0, 126]`` beside ``(d0, s0)`` over
    ``s0 in [0, 127]``, as a rotary embedding's halves give, are the case this is for.)
    ``free``: ``outer``'s own positions (``_own_positions``), where the caller has them."""
    if inner is outer or inner.is_undefined or outer.is_undefined or inner.is_known_empty or outer.is_known_empty:
        return False
    if inner.num_dims != outer.num_dims or inner.num_results != outer.num_results:
        return False
    if split_constraints(outer)[1] or any(iv.size <= 0 for iv in outer.range_vars):
        return False
    if any(v.interval.size <= 0 for v in outer.runtime_vars):
        return False
    if free is None:
        free = _own_positions(outer)
    if len(free) == outer.num_results or len(free) == 0:
        return False  # a box reader (``drop_subsumed``'s), or nothing to leave out
    bounds = Domain(inner.dims, inner.range_vars, tuple(v.interval for v in inner.runtime_vars))
    for i in _compared_positions(inner, free, bounds):
        shared = outer.results[i]
        if inner.results[i] != shared:
            return False
        for v in shared.variables():
            if v.kind == RANGE and not outer.range_vars[v.value].contains_interval(inner.range_vars[v.value]):
                return False
            if v.kind == RUNTIME and not outer.runtime_vars[v.value].interval.contains_interval(
                inner.runtime_vars[v.value].interval
            ):
                return False
    return _domain_inside(inner, outer)


def drop_inside_free_positions(maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
    """``maps`` without every map ``contained_beside_free_positions`` proves inside a kept one,
    order kept (the union never changes)."""
    if len(maps) < 2:
        return maps
    containers: list[tuple[IndexingMap, Callable[[IndexingMap], bool]]] = [
        (outer, partial(contained_beside_free_positions, outer=outer, free=_own_positions(outer)))
        for outer in maps
        if not outer.is_undefined and not outer.is_known_empty
    ]
    kept = _without_inside(maps, containers)
    return tuple(kept) if len(kept) < len(maps) else maps


# Rows enumerated per comparison, at most: the overlaps that matter are a few iterations of a
# loop by a few others; anything larger is kept as it is.
_POINTS = 1 << 12


def drop_contained(maps: Sequence[IndexingMap]) -> tuple[IndexingMap, ...]:
    """``maps`` without every map proved inside another kept one (by ``contained``), order kept."""
    if len(maps) < 2:
        return tuple(maps)
    return tuple(_without_inside(maps, [(outer, partial(contained, outer=outer)) for outer in maps]))


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
    compared = _compared_positions(inner, _own_positions(outer), Domain(inner.dims, inner.range_vars, ()))
    a, b = _part(outer, compared), _part(inner, compared)
    used = sorted({v.value for m in (a, b) for e in _expressions(m) for v in e.variables() if v.kind == DIM})
    a, b = _on_dims(a, used, inner.dims), _on_dims(b, used, inner.dims)
    points = 1
    for iv in (*b.dims, *a.range_vars, *b.range_vars):
        points *= max(iv.size, 0)
    if points == 0 or points > _POINTS:
        return False
    return _inside(b, a, points)


def _compared_positions(inner: IndexingMap, free: dict[int, Interval], bounds: Domain) -> list[int]:
    """The result positions left to compare: all but those where the container has a range
    variable of its own (``free``) whose interval holds every value ``inner`` gives there."""
    return [
        i
        for i in range(inner.num_results)
        if not (i in free and free[i].contains_interval(bounds.bounds(inner.results[i])))
    ]


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
