"""Joining maps whose union is provably one map.

A concatenate of two single-column pieces of one operand reads it through
``(d0, d1) -> (d0, 0), d1 in [0, 0]`` and ``(d0, d1) -> (d0, 1), d1 in [1, 1]``: two maps, each
valid on one value of ``d1``, whose union is the single access pattern ``(d0, d1) -> (d0, d1)``.
A candidate join is proposed for two maps that agree everywhere except on one dimension's interval
(adjacent or overlapping) and, for single-value intervals, on results that differ by a constant
(interpolated linearly along that dimension). A candidate is kept only when brute force over the
whole (bounded) domain shows its relation equals the union of the two; otherwise both maps stay.
"""
from __future__ import annotations

from ..affine import IndexingMap, Interval, const, dim
from ..context import budgets
from .mapset import dedupe_semantically, domain_size

Maps = tuple[IndexingMap, ...]


def _relation(m: IndexingMap) -> set[tuple[int, ...]] | None:
    """Every (dims..., results...) row of ``m``, or None when the domain is too large to list."""
    limit = budgets().semantic_check_points
    if domain_size(m) > limit:
        return None
    points, results = m.enumerate(limit=limit)
    n = m.num_dims
    return {tuple(p[:n]) + tuple(r) for p, r in zip(points.tolist(), results.tolist())}


def _mergeable(a: IndexingMap, b: IndexingMap) -> bool:
    return (not a.is_undefined and not b.is_undefined and not a.is_known_empty and not b.is_known_empty
            and not a.runtime_vars and not b.runtime_vars
            and a.num_dims == b.num_dims and a.num_results == b.num_results
            and a.range_vars == b.range_vars and a.constraints == b.constraints)


def _candidates(a: IndexingMap, b: IndexingMap):
    """Maps that may equal ``a ∪ b`` (unproved): either map's results over the joined interval
    (one piece extends the other), or, for two single values, the line through their results."""
    if not _mergeable(a, b):
        return
    differing = [k for k, (x, y) in enumerate(zip(a.dims, b.dims)) if x != y]
    if len(differing) != 1:   # none: same domain, only the results differ, which is no join
        return
    k = differing[0]
    ia, ib = a.dims[k], b.dims[k]
    if ia.lo > ib.lo:
        a, b, ia, ib = b, a, ib, ia
    if ib.lo > ia.hi + 1:   # a gap between the two intervals
        return
    dims = list(a.dims)
    dims[k] = Interval(ia.lo, max(ia.hi, ib.hi))
    for results in _result_choices(a, b, k, ia, ib):
        yield IndexingMap(dims, a.range_vars, (), results, a.constraints).simplified()


def _result_choices(a, b, k, ia, ib):
    if a.results == b.results:
        yield a.results
        return
    yield a.results
    yield b.results
    if ia.size != 1 or ib.size != 1:
        return
    step = ib.lo - ia.lo
    results = []
    for ra, rb in zip(a.results, b.results):
        diff = rb - ra
        if not diff.is_constant or diff.constant_value % step:
            return
        slope = diff.constant_value // step
        results.append(ra if slope == 0 else ra + (dim(k) - const(ia.lo)) * slope)
    yield tuple(results)


def join(a: IndexingMap, b: IndexingMap) -> IndexingMap | None:
    """One map whose relation is proved equal to the union of ``a``'s and ``b``'s, or None."""
    union = None
    for merged in _candidates(a, b):
        if merged.is_known_empty or merged.is_undefined:
            continue
        if union is None:
            first, second = _relation(a), _relation(b)
            if first is None or second is None:
                return None
            union = first | second
        whole = _relation(merged)
        if whole is not None and whole == union:
            return merged
    return None


def _candidate_for_join(m: IndexingMap) -> bool:
    return (not m.is_undefined and not m.is_known_empty and not m.runtime_vars
            and domain_size(m) <= budgets().semantic_check_points)


def merge_maps(maps: Maps) -> Maps:
    """``maps`` with every provable pairwise join applied until none is left (first map's slot
    kept, so the order stays deterministic)."""
    if len(maps) < 2 or sum(map(_candidate_for_join, maps)) < 2:
        return maps
    current = list(maps)
    joined = False
    progress = True
    while progress and len(current) > 1:
        progress = False
        for i in range(len(current)):
            if not _candidate_for_join(current[i]):
                continue
            for j in range(i + 1, len(current)):
                merged = join(current[i], current[j]) if _candidate_for_join(current[j]) else None
                if merged is not None:
                    current[i] = merged
                    del current[j]
                    progress = joined = True
                    break
            if progress:
                break
    if not joined:
        return maps
    return dedupe_semantically(tuple(current))
