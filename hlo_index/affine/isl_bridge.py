"""Build isl maps from IndexingMaps through islpy's Aff/PwAff API (no strings).

Optional: importing this module needs ``islpy`` (a test/benchmark extra). Used to prove
simplifications exact and to measure simplification quality against isl."""

from __future__ import annotations

import islpy as isl

from .expr import CEILDIV, CONST, DIM, FLOORDIV, MOD, RANGE, SUM, Expr
from .indexing_map import IndexingMap

_CTX = isl.Context()


def _val(v: int) -> isl.Val:
    return isl.Val.int_from_si(_CTX, v)


def to_isl(m: IndexingMap, n_dims: int, n_range: int, n_runtime: int) -> isl.Map:
    """{[dims, runtime] -> [results] : exists range vars satisfying bounds and constraints}."""
    n_in = n_dims + n_range + n_runtime
    space = isl.Space.set_alloc(_CTX, 0, n_in)
    local = isl.LocalSpace.from_space(space)
    offset = {DIM: 0, RANGE: n_dims}

    def var(kind: int, index: int) -> isl.PwAff:
        position = offset.get(kind, n_dims + n_range) + index
        return isl.PwAff.from_aff(isl.Aff.var_on_domain(local, isl.dim_type.set, position))

    def constant(v: int) -> isl.PwAff:
        return isl.PwAff.from_aff(isl.Aff.val_on_domain(local, _val(v)))

    memo: dict[Expr, isl.PwAff] = {}

    def convert(e: Expr) -> isl.PwAff:
        if e in memo:
            return memo[e]
        if e.kind == CONST:
            out = constant(e.value)
        elif e.kind == SUM:
            out = constant(e.value)
            for atom, k in e.terms:
                out = out.add(convert(atom).scale_val(_val(k)))
        elif e.kind == FLOORDIV:
            out = convert(e.operand).scale_down_val(_val(e.value)).floor()
        elif e.kind == CEILDIV:
            out = convert(e.operand).scale_down_val(_val(e.value)).ceil()
        elif e.kind == MOD:
            out = convert(e.operand).mod_val(_val(e.value))
        else:
            out = var(e.kind, e.value)
        memo[e] = out
        return out

    domain = isl.Set.universe(space)
    boxes = [(DIM, m.dims), (RANGE, m.range_vars), (None, [v.interval for v in m.runtime_vars])]
    for kind, intervals in boxes:
        for i, b in enumerate(intervals):
            v = var(kind, i) if kind is not None else var(-1, i)
            domain = domain & v.ge_set(constant(b.lo)) & v.le_set(constant(b.hi))
    for e, b in m.constraints:
        value = convert(e)
        domain = domain & value.ge_set(constant(b.lo)) & value.le_set(constant(b.hi))
    relation = isl.Map.from_domain(domain)
    for e in m.results:
        relation = relation.flat_range_product(isl.Map.from_pw_aff(convert(e)))
    return relation.intersect_domain(domain).project_out(isl.dim_type.in_, n_dims, n_range)


def isl_equal(a: IndexingMap, b: IndexingMap) -> bool:
    """Exact equality of the relations {(dims, runtime) -> results} (range vars projected)."""
    n_dims, n_runtime = a.num_dims, len(a.runtime_vars)
    empty = [m for m in (a, b) if m.is_known_empty]
    if empty:
        other = b if empty[0] is a else a
        if other.is_known_empty:
            return True
        return to_isl(other, n_dims, len(other.range_vars), n_runtime).is_empty()
    return to_isl(a, n_dims, len(a.range_vars), n_runtime).is_equal(to_isl(b, n_dims, len(b.range_vars), n_runtime))


def isl_division_count(m: IndexingMap) -> int:
    """Existential divisions isl keeps after coalescing: a lower bound proxy for the floordiv /
    mod count of the simplest form it finds."""
    relation = to_isl(m, m.num_dims, len(m.range_vars), len(m.runtime_vars))
    relation = relation.coalesce().remove_redundancies()
    counts = []
    relation.foreach_basic_map(lambda b: counts.append(b.dim(isl.dim_type.div)))
    return max(counts, default=0)
