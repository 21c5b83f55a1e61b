"""Full reads: every element of a value reads every element of an endpoint.

Past a big model's loss almost every value reads all of most weights (a full reduction, then a
broadcast back, a dot over the whole weight). The exact map is then one *full read*: the value's
whole box as domain, one range variable per endpoint dimension over its whole extent, results
those variables and no constraint: ``(d0, d1)[s0, s1] -> (s0, s1)``. It depends only on the two
shapes, so a whole-computation pass can carry "this endpoint is read whole" as a bare key.

Why it composes without enumerating paths (``summary_pass``): when every element of value V reads
all of P, and every element of X reads at least one element of V (a *covering* op map), then every
element of X reads all of P. A union in which one map is a full read is that full read, since every
map of a value lands inside the endpoint's box. Where an op map covers only part of the new value
(a concatenate, a slice seen from its operand) the endpoints are read whole on a *region*: the map
``full_read(V, ()) ∘ op map``, with no results, which depends on no endpoint's shape either, so
endpoints read whole on the same region stay one group; regions joined into the whole box (the
parts of a concatenate) make a full read again.
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..affine.expr import CONST, RANGE, range_var
from ..context import current, register_table
from .existential import drop_witness_range_vars
from .rule_cache import full_box

_FULL_READS = register_table("fusion.full_read.maps")  # (value dims, endpoint dims) -> map


def full_read(value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]) -> IndexingMap:
    """The full-read map from ``value_dims`` to ``endpoint_dims``, in the simplifier's normal form
    (an endpoint dimension of one element is the constant 0, as the simplifier writes it)."""
    table: dict[tuple[tuple[int, ...], tuple[int, ...]], IndexingMap] = current().tables[_FULL_READS]
    key = (value_dims, endpoint_dims)
    m = table.get(key)
    if m is None:
        wide = [n for n in endpoint_dims if n != 1]
        results = []
        k = 0
        for n in endpoint_dims:
            if n == 1:
                results.append(0)
            else:
                results.append(range_var(k))
                k += 1
        m = table[key] = IndexingMap(full_box(value_dims), [(0, n - 1) for n in wide], (), results)
    return m


def is_full_read(m: IndexingMap, value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]) -> bool:
    """True when ``m`` is, structurally, the full read from ``value_dims`` to ``endpoint_dims``:
    no constraint, the value's whole box as domain, every result a distinct range variable over
    the whole extent of its endpoint dimension (or 0 for a dimension of one element), and every
    range variable non-empty (an unused one is a witness that always exists)."""
    if m.is_undefined or m.is_known_empty or m.constraints or m.runtime_vars:
        return False
    if len(m.results) != len(endpoint_dims) or m.dims != full_box(value_dims):
        return False
    if any(n <= 0 for n in value_dims) or any(iv.size <= 0 for iv in m.range_vars):
        return False
    seen = set()
    for r, n in zip(m.results, endpoint_dims):
        if r.kind == RANGE and r.value not in seen:
            iv = m.range_vars[r.value]
            if iv.lo != 0 or iv.hi != n - 1:
                return False
            seen.add(r.value)
        elif not (r.kind == CONST and r.value == 0 and n == 1):
            return False
    return True


def reads_whole(maps: tuple[IndexingMap, ...], value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]) -> bool:
    """True when the union of ``maps`` is the full read (one of them is)."""
    return any(is_full_read(m, value_dims, endpoint_dims) for m in maps)


def covers(op_map: IndexingMap, own_dims: tuple[int, ...]) -> bool:
    """True when every element of ``own_dims`` reads at least one element through ``op_map``:
    its domain is the whole box, no constraint can fail, and every range and runtime variable
    has a value to take."""
    return (
        not op_map.is_undefined
        and not op_map.is_known_empty
        and not op_map.constraints
        and op_map.dims == full_box(own_dims)
        and all(iv.size > 0 for iv in op_map.range_vars)
        and all(v.interval.size > 0 for v in op_map.runtime_vars)
    )


# id(region) -> (region, {endpoint dims: map}): an identity memo, the region kept and checked
_REGION_READS = register_table("fusion.full_read.region_reads")


def region_read(region: IndexingMap, endpoint_dims: tuple[int, ...]) -> IndexingMap:
    """The map that reads the whole of ``endpoint_dims`` from every element of ``region`` (a map
    with no results: the elements of a value, with their constraints, that read it whole), in the
    form a composition leaves it."""
    if region.is_known_empty:
        return IndexingMap.known_empty(region.num_dims, len(endpoint_dims))
    memo: dict[int, tuple[IndexingMap, dict[tuple[int, ...], IndexingMap]]] = current().tables[_REGION_READS]
    hit = memo.get(id(region))
    if hit is None or hit[0] is not region:
        hit = memo[id(region)] = (region, {})
    m = hit[1].get(endpoint_dims)
    if m is None:
        first = len(region.range_vars)
        results = []
        wide = []
        for n in endpoint_dims:
            if n == 1:
                results.append(0)
            else:
                results.append(range_var(first + len(wide)))
                wide.append((0, n - 1))
        built = IndexingMap(region.dims, (*region.range_vars, *wide), region.runtime_vars, results, region.constraints)
        m = hit[1][endpoint_dims] = drop_witness_range_vars(built.simplified().remove_unused_variables())
    return m
