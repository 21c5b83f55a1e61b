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

from ..affine import IndexingMap, Interval
from ..affine.evaluate import Value, distinct_sorted, evaluate_expr
from ..affine.expr import CONST, DIM, MOD, RANGE, RUNTIME, Expr, range_var
from ..context import budgets, current, register_table
from .bound_witnesses import eliminate_bound_witnesses
from .existential import drop_witness_range_vars
from .rule_cache import full_box

_FULL_READS = register_table("fusion.full_read.maps")  # (value dims, endpoint dims) -> map
# id(map) -> (map, {(endpoint dims, over dims): proved}): an identity memo, the map kept and checked
_PROVED = register_table("fusion.full_read.proved")


def full_read(value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]) -> IndexingMap:
    """The full-read map from ``value_dims`` to ``endpoint_dims``, in the simplifier's normal form
    (an endpoint dimension of one element is the constant 0, as the simplifier writes it)."""
    table: dict[tuple[tuple[int, ...], tuple[int, ...]], IndexingMap] = current().tables[_FULL_READS]
    key = (value_dims, endpoint_dims)
    m = table.get(key)
    if m is None:
        wide = [n for n in endpoint_dims if n != 1]
        results: list[Expr | int] = []
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
    """True when ``m`` is proved to be the full read from ``value_dims`` to ``endpoint_dims``: no
    constraint, the value's whole box as domain, results that use only range variables, no two
    results the same variable (so the image is the product of the results' images), and each
    result's image over its variables' box exactly its endpoint dimension's extent (``s0`` over
    ``[0, n - 1]``; ``s0 mod 512`` over ``[0, 4095]`` for 512; else enumerated, within
    ``semantic_check_points``). Runtime variables no result uses change nothing."""
    return _proved(m, value_dims, endpoint_dims, False)


def reads_all(m: IndexingMap, value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]) -> bool:
    """True when the elements of ``value_dims`` together read every element of ``endpoint_dims``
    through ``m`` (its image is the whole box), proved as for ``is_full_read`` with the dimensions
    counted among the variables: ``(d0, d1)[s0] -> (d0, s0)`` reads all of its operand, row by row."""
    return _proved(m, value_dims, endpoint_dims, True)


def _proved(m: IndexingMap, value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...], over_dims: bool) -> bool:
    if m.is_undefined or m.is_known_empty or m.constraints:
        return False
    if len(m.results) != len(endpoint_dims) or m.dims != full_box(value_dims):
        return False
    if any(n <= 0 for n in value_dims) or any(iv.size <= 0 for iv in m.range_vars):
        return False
    if any(v.interval.size <= 0 for v in m.runtime_vars):
        return False
    memo: dict[int, tuple[IndexingMap, dict[tuple[tuple[int, ...], bool], bool]]] = current().tables[_PROVED]
    hit = memo.get(id(m))
    if hit is None or hit[0] is not m:
        hit = memo[id(m)] = (m, {})
    key = (endpoint_dims, over_dims)
    answer = hit[1].get(key)
    if answer is None:
        answer = hit[1][key] = _results_cover(m, endpoint_dims, over_dims)
    return answer


def _results_cover(m: IndexingMap, endpoint_dims: tuple[int, ...], over_dims: bool) -> bool:
    allowed = (RANGE, DIM) if over_dims else (RANGE,)
    used: set[Expr] = set()
    for r, n in zip(m.results, endpoint_dims):
        variables = sorted(r.variables(), key=lambda v: (v.kind, v.value))
        if any(v.kind not in allowed for v in variables) or used.intersection(variables):
            return False
        used.update(variables)
        boxes = [m.dims[v.value] if v.kind == DIM else m.range_vars[v.value] for v in variables]
        if not _image_is_extent(r, variables, boxes, n):
            return False
    return True


def _image_is_extent(r: Expr, variables: list[Expr], boxes: list[Interval], n: int) -> bool:
    """The values of ``r`` over the box of its (range) variables are exactly ``0 .. n - 1``."""
    if r.kind == CONST:
        return n == 1 and r.value == 0
    if r.kind in (RANGE, DIM):
        iv = boxes[0]
        return iv.lo == 0 and iv.hi == n - 1
    if r.kind == MOD and r.operand.kind in (RANGE, DIM) and r.value == n:
        iv = boxes[0]
        return iv.lo >= 0 and iv.size >= n
    points = 1
    for iv in boxes:
        points *= iv.size
    if points > budgets().semantic_check_points:
        return False
    import numpy as np

    grids = np.meshgrid(*(np.arange(iv.lo, iv.hi + 1, dtype=np.int64) for iv in boxes), indexing="ij")
    env: dict[tuple[int, int], Value] = {(v.kind, v.value): g.ravel() for v, g in zip(variables, grids)}
    values = distinct_sorted(np.asarray(evaluate_expr(r, env, {})).reshape(-1))
    return len(values) == n and int(values[0]) == 0 and int(values[-1]) == n - 1


def reads_whole(maps: tuple[IndexingMap, ...], value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]) -> bool:
    """True when the union of ``maps`` is the full read (one of them is)."""
    return any(is_full_read(m, value_dims, endpoint_dims) for m in maps)


def absorbed(
    maps: tuple[IndexingMap, ...], value_dims: tuple[int, ...], endpoint_dims: tuple[int, ...]
) -> tuple[IndexingMap, ...]:
    """``maps`` with an UNDEFINED map among them: the full read among them where one is (whatever
    the unknown part reads lies inside the endpoint, which the full read already reads whole, so
    the union is that full read, exactly), else the known maps and the first UNDEFINED one (one
    unknown part is as unknown as several)."""
    undefined = None
    for m in maps:
        if m.is_undefined:
            undefined = undefined or m
        elif is_full_read(m, value_dims, endpoint_dims):
            return (m,)
    return tuple(m for m in maps if not m.is_undefined or m is undefined)


# id(map) -> (map, answer): an identity memo of ``covers``' elimination, the map kept and checked
_COVERS = register_table("fusion.full_read.covers")


def covers(op_map: IndexingMap, own_dims: tuple[int, ...]) -> bool:
    """True when every element of ``own_dims`` reads at least one element through ``op_map``:
    its domain is the whole box, every range and runtime variable has a value to take, and no
    constraint can fail, or the constraints hold for some values of the variables at every point
    (a causal read ``s0 <= d0`` takes ``s0 = 0``), proved by eliminating the variables
    (``bound_witnesses``, exact at unit coefficients)."""
    if (
        op_map.is_undefined
        or op_map.is_known_empty
        or op_map.dims != full_box(own_dims)
        or any(iv.size <= 0 for iv in op_map.range_vars)
        or any(v.interval.size <= 0 for v in op_map.runtime_vars)
    ):
        return False
    if not op_map.constraints:
        return True
    memo: dict[int, tuple[IndexingMap, bool]] = current().tables[_COVERS]
    hit = memo.get(id(op_map))
    if hit is None or hit[0] is not op_map:
        hit = memo[id(op_map)] = (op_map, _always_reads(op_map))
    return hit[1]


def _always_reads(m: IndexingMap) -> bool:
    """Whether the constraints of ``m`` hold at every point of its dims box for some values of
    its range variables (no runtime variable among them: those are conditions on the run)."""
    if any(v.kind == RUNTIME for e, _ in m.constraints for v in e.variables()):
        return False
    bare = IndexingMap(m.dims, m.range_vars, m.runtime_vars, (), m.constraints)
    left = eliminate_bound_witnesses(bare, every=True)
    # what is left must hold everywhere: no constraint, and no dimension narrowed by one
    return not left.is_known_empty and not left.constraints and left.dims == m.dims


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
        results: list[Expr | int] = []
        wide: list[tuple[int, int]] = []
        for n in endpoint_dims:
            if n == 1:
                results.append(0)
            else:
                results.append(range_var(first + len(wide)))
                wide.append((0, n - 1))
        built = IndexingMap(region.dims, (*region.range_vars, *wide), region.runtime_vars, results, region.constraints)
        m = hit[1][endpoint_dims] = drop_witness_range_vars(built.simplified().remove_unused_variables())
    return m
