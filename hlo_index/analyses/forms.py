"""Small read-only views of indexing maps shared by the analyses.

They only look at the structure the map engine already built (linear terms, variables); they
never re-derive a map.
"""

from __future__ import annotations

from ..affine import IndexingMap, Interval, range_var
from ..affine.expr import DIM, DIVISION_KINDS, RANGE, RUNTIME, Expr, replace_variables


def split_linear(expr: Expr, variables: frozenset) -> tuple[Expr, dict] | None:
    """``expr == rest + sum(c_v * v)`` with ``rest`` free of ``variables``, or None.

    None means one of ``variables`` occurs inside a floordiv / ceildiv / mod atom.
    """
    constant, terms = expr.linear_terms()
    coefficients: dict = {}
    rest = []
    for atom, k in terms:
        if atom in variables:
            coefficients[atom] = coefficients.get(atom, 0) + k
        elif atom.variables() & variables:
            return None
        else:
            rest.append((atom, k))
    rest_expr = _sum(constant, rest)
    return rest_expr, coefficients


def _sum(constant: int, terms) -> Expr:
    from ..affine import const

    total = const(constant)
    for atom, k in terms:
        total = total + atom * k
    return total


def offending_division(expr: Expr, variables: frozenset) -> Expr | None:
    """The outermost floordiv / ceildiv / mod atom of ``expr`` whose operand uses ``variables``."""
    _, terms = expr.linear_terms()
    for atom, _ in terms:
        if atom.kind in DIVISION_KINDS and atom.operand.variables() & variables:
            return atom
    return None


def variable_bounds(m: IndexingMap, var: Expr) -> Interval:
    if var.kind == DIM:
        return m.dims[var.value]
    if var.kind == RANGE:
        return m.range_vars[var.value]
    return m.runtime_vars[var.value].interval


def runtime_as_range(m: IndexingMap) -> IndexingMap:
    """The same map with every runtime variable turned into a range variable over its range.

    Its read set is the union, over all runtime values, of the original map's read sets.
    """
    if not m.runtime_vars or m.is_undefined or m.is_known_empty:
        return m
    base = len(m.range_vars)

    def replace(v: Expr):
        return range_var(base + v.value) if v.kind == RUNTIME else None

    memo: dict = {}
    results = [replace_variables(e, replace, memo) for e in m.results]
    constraints = [(replace_variables(e, replace, memo), iv) for e, iv in m.constraints]
    ranges = list(m.range_vars) + [rv.interval for rv in m.runtime_vars]
    return IndexingMap(m.dims, ranges, (), results, constraints)
