"""Semantic equality of indexing maps on small domains: proved by enumeration, refuted by probes.

Two maps with different canonical forms may still be one relation (a range variable that takes one
value, a constraint that always holds). On a domain of at most ``Budgets.semantic_check_points``
candidate points they are compared exactly, point by point; a few probe points refute most unequal
pairs without enumerating anything. Map sets (``mapset``) drop the duplicates this proves; the
merge rules (``merge``) use the probes and domain sizes to decide what is worth enumerating.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import IndexingMap, Interval
from ..context import budgets, current, register_table

Maps = tuple[IndexingMap, ...]


def domain_size(m: IndexingMap) -> int:
    n = 1
    for lo, hi in (*m.dims, *m.range_vars):  # asked of every map of every set: bounds unpacked
        if hi < lo:
            return 0
        n *= hi - lo + 1
    for rv in m.runtime_vars:
        n *= rv.interval.size
    return n


def _probes(dims: Sequence[Interval]) -> list[tuple[int, ...]]:
    """A few points of a box: both corners, the middle, and each dimension's far end alone."""
    lo = tuple(iv.lo for iv in dims)
    hi = tuple(iv.hi for iv in dims)
    points = [lo, hi, tuple((a + b) // 2 for a, b in zip(lo, hi))]
    points += [lo[:k] + (hi[k],) + lo[k + 1 :] for k in range(len(dims))]
    return points


def differ_at_probes(a: IndexingMap, b: IndexingMap, dims: Sequence[Interval] | None = None) -> bool:
    """True when ``a`` and ``b`` are functions on the box ``dims`` (no range variables, runtime
    variables or constraints) that give different results at one of a few probe points: a
    proof that their relations differ there, found without enumerating the box."""
    if a.range_vars or b.range_vars or a.runtime_vars or b.runtime_vars or a.constraints or b.constraints:
        return False
    dims = a.dims if dims is None else dims
    if any(iv.size <= 0 for iv in dims):
        return False
    return any(a.evaluate(p) != b.evaluate(p) for p in _probes(dims))


def _comparable(a: IndexingMap, b: IndexingMap) -> bool:
    return (
        not a.is_undefined
        and not b.is_undefined
        and not a.is_known_empty
        and not b.is_known_empty
        and a.num_dims == b.num_dims
        and a.num_results == b.num_results
        and tuple(a.dims) == tuple(b.dims)
        and domain_size(a) <= budgets().semantic_check_points
        and domain_size(b) <= budgets().semantic_check_points
    )


_SAME_RELATION = register_table("fusion.mapset.same_relation")  # (canonical key, canonical key) -> bool


def same_relation(a: IndexingMap, b: IndexingMap) -> bool:
    """True when ``a`` and ``b`` are proved (on their whole, small, domain) to be one relation."""
    if a is b:
        return True
    if not _comparable(a, b):
        return False
    if a.dims == b.dims and differ_at_probes(a, b):
        return False
    key = (a.canonical_key(), b.canonical_key())
    memo: dict[tuple[tuple[object, ...], tuple[object, ...]], bool] = current().tables[_SAME_RELATION]
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = a.semantically_equal(b, limit=budgets().semantic_check_points)
    return hit


def _small(m: IndexingMap) -> bool:
    return not m.is_undefined and not m.is_known_empty and domain_size(m) <= budgets().semantic_check_points


def dedupe_semantically(maps: Maps) -> Maps:
    """Drop every map that is, on its whole (small) domain, the same relation as an earlier one."""
    if len(maps) < 2:
        return maps
    small = [_small(m) for m in maps]
    if sum(small) < 2:
        return maps
    kept: list[IndexingMap] = []
    kept_small: list[IndexingMap] = []
    for m, is_small in zip(maps, small):
        if is_small and any(k.dims == m.dims and same_relation(k, m) for k in kept_small):
            continue
        kept.append(m)
        if is_small:
            kept_small.append(m)
    return tuple(kept) if len(kept) < len(maps) else maps
