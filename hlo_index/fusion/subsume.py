"""Dropping maps whose relation lies inside another map of the same set.

A set of maps stands for the union of their relations, so a map contained in another one adds
nothing. Containment is proved here for one common kind of container, a *box reader*: each result
a distinct range variable, no constraint on a range variable, so every element of its domain reads
a whole box of the operand (a weight that reaches a training step's gradient through a dot reads
all of it, whatever other paths also read). Map ``B`` lies inside box reader ``A`` when ``B``'s
dims box lies inside ``A``'s, ``A``'s dim-only constraints hold wherever ``B``'s hold (enumerated
over the dimensions concerned), and the range of every result of ``B`` (an over-approximation of
what it reads) lies inside ``A``'s box. Nothing is approximated: the kept maps are the same union.
"""

from __future__ import annotations

from ..affine import IndexingMap, Interval
from ..affine.bounds import Domain
from ..affine.expr import RANGE
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
    kept = list(maps)
    for outer, box in readers:
        if not any(k is outer for k in kept):
            continue
        kept = [m for m in kept if m is outer or not contained_in_box_reader(m, outer, box)]
    return tuple(kept) if len(kept) < len(maps) else maps


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
