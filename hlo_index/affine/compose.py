"""Composition of indexing maps and symbol rewrites (rescaling)."""

from __future__ import annotations

from .bounds import Domain
from .expr import DIM, MOD, RANGE, RUNTIME, Expr, replace_variables, variable
from .indexing_map import IndexingMap
from .interval import Interval


def compose(outer: IndexingMap, inner: IndexingMap) -> IndexingMap:
    """``outer ∘ inner``: ``x -> outer(inner(x))``; ``inner``'s results feed ``outer``'s dims.

    The result has ``inner``'s dimensions; range variables ``outer``'s then ``inner``'s; runtime
    variables ``outer``'s then ``inner``'s. Its constraints are ``outer``'s with ``inner``'s
    results substituted, ``inner``'s own, and each ``inner`` result constrained to the bounds
    of the ``outer`` dimension it feeds (dropped by simplification when trivially true).
    The result is returned simplified. UNDEFINED wins over KNOWN EMPTY.
    """
    if outer.is_undefined or inner.is_undefined:
        reasons = [m.undefined_reason for m in (outer, inner) if m.is_undefined]
        return IndexingMap.undefined("; ".join(reasons))
    if outer.is_known_empty or inner.is_known_empty:
        return IndexingMap.known_empty(inner.num_dims, outer.num_results)
    if outer.num_dims != inner.num_results:
        raise ValueError(
            f"cannot compose: outer map has {outer.num_dims} dims but inner map has {inner.num_results} results"
        )
    n_outer_range = len(outer.range_vars)
    n_outer_runtime = len(outer.runtime_vars)

    def shift_inner(v: Expr) -> Expr | None:
        if v.kind == RANGE:
            return variable(RANGE, v.value + n_outer_range)
        if v.kind == RUNTIME:
            return variable(RUNTIME, v.value + n_outer_runtime)
        return None

    inner_memo: dict[Expr, Expr] = {}
    if n_outer_range or n_outer_runtime:
        inner_results = [replace_variables(e, shift_inner, inner_memo) for e in inner.results]
        inner_constraints = [(replace_variables(e, shift_inner, inner_memo), b) for e, b in inner.constraints]
    else:  # nothing to renumber: inner's symbols keep their indices
        inner_results = list(inner.results)
        inner_constraints = list(inner.constraints)

    def substitute(v: Expr) -> Expr | None:
        return inner_results[v.value] if v.kind == DIM else None

    outer_memo: dict[Expr, Expr] = {}
    results = [replace_variables(e, substitute, outer_memo) for e in outer.results]
    constraints = [(replace_variables(e, substitute, outer_memo), b) for e, b in outer.constraints]
    constraints += inner_constraints
    # Results that provably stay inside the outer dimension need no constraint; checking with
    # inner's cached bounds here saves normalising constraints that simplify would drop.
    inner_domain = Domain(inner.dims, inner.range_vars, [v.interval for v in inner.runtime_vars])
    constraints += [
        (e, b)
        for e, original, b in zip(inner_results, inner.results, outer.dims)
        if not b.contains_interval(inner_domain.bounds(original))
    ]
    composed = IndexingMap._from_parts(
        inner.dims, outer.range_vars + inner.range_vars, outer.runtime_vars + inner.runtime_vars, results, constraints
    )
    return composed.simplified()


def rescale_range_vars(m: IndexingMap) -> IndexingMap:
    """For each constraint ``s mod k in [r, r]`` on a bare range variable ``s`` in ``[lo, hi]``,
    substitute ``s = k*s' + r`` with ``s'`` in ``[ceil((lo-r)/k), floor((hi-r)/k)]``."""
    m = m.simplified()
    if m.is_known_empty or m.is_undefined:
        return m
    replacements: dict[Expr, Expr] = {}
    range_vars = list(m.range_vars)
    kept = []
    for e, b in m.constraints:
        if e.kind == MOD and e.operand.kind == RANGE and b.lo == b.hi and e.operand not in replacements:
            s, k, r = e.operand, e.value, b.lo
            bound = range_vars[s.value]
            range_vars[s.value] = Interval(-((r - bound.lo) // k), (bound.hi - r) // k)
            replacements[s] = s * k + r
        else:
            kept.append((e, b))
    if not replacements:
        return m
    memo: dict[Expr, Expr] = {}
    results = [replace_variables(e, replacements.get, memo) for e in m.results]
    constraints = [(replace_variables(e, replacements.get, memo), b) for e, b in kept]
    return IndexingMap(m.dims, range_vars, m.runtime_vars, results, constraints).simplified()
