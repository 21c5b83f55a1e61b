"""Map-level simplification: results and constraints simplified over the domain, constraints
normalised, redundant ones dropped, infeasible ones turned into KNOWN EMPTY, variable bounds
tightened, all to a fixpoint.

Constraint rules (each exact):

* ``e + c in [lo, hi]``      -> ``e in [lo - c, hi - c]``
* ``k * e in [lo, hi]``      -> ``e in [ceil(lo/k), floor(hi/k)]`` (k the gcd of the
  coefficients, sign of the leading one, so ``-d0 in ...`` becomes ``d0 in ...``)
* ``e floordiv k in [lo, hi]`` -> ``e in [lo*k, hi*k + k - 1]``; ceildiv alike
* ``g*y + z in [g*a, g*b + g - 1]`` with ``z`` (range variables only) inside one block of
  ``g`` -> ``y in [a, b]``
* the interval is cut to the bounds of ``e``; one containing those bounds is always true and
  dropped; an empty one makes the map KNOWN EMPTY; a constant is checked and dropped
* a constraint on a bare variable narrows that variable's bounds
* ``v mod a in I`` and ``v mod b in J`` on one variable merge into ``v mod lcm(a, b) in K`` when the
  feasible residues form one run; the variable's bounds snap to feasible values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from math import gcd, lcm
from typing import TypeAlias

from ..context import budgets
from .bounds import Domain
from .expr import CEILDIV, CONST, DIM, FLOORDIV, MOD, RANGE, RUNTIME, SUM, Expr, floordiv, make_sum
from .interval import Interval
from .simplify import Simplifier, simplify_all

_MAX_ROUNDS = 16


class _Infeasible(Exception):
    pass


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def normalize_constraint(e: Expr, interval: Interval, simplify: Callable[[Expr], Expr]) -> tuple[Expr, Interval]:
    """Move constants, common factors and an outer floordiv/ceildiv into the interval."""
    while True:
        e = simplify(e)
        if e.kind == CONST:
            return e, interval
        constant, terms = e.linear_terms()
        if constant:
            e = make_sum(0, dict(terms))
            interval = interval.shift(-constant)
            continue
        if e.kind == SUM:
            g = gcd(*(k for _, k in terms))
            if terms[0][1] < 0:
                g = -g
            if g != 1:
                e = make_sum(0, {atom: k // g for atom, k in terms})
                lo, hi = interval
                if g < 0:
                    lo, hi = hi, lo
                interval = Interval(_ceil_div(lo, g), hi // g)
                continue
            blocks = _whole_blocks(e, interval, simplify)
            if blocks is not None:
                e, interval = blocks
                continue
            return e, interval
        if e.kind == FLOORDIV:
            c = e.value
            e, interval = e.operand, Interval(interval.lo * c, interval.hi * c + c - 1)
            continue
        if e.kind == CEILDIV:
            c = e.value
            e, interval = e.operand, Interval((interval.lo - 1) * c + 1, interval.hi * c)
            continue
        return e, interval


def _whole_blocks(e: Expr, interval: Interval, simplify: Callable[[Expr], Expr]) -> tuple[Expr, Interval] | None:
    """``e in [g*a, g*b + g - 1]`` is ``e floordiv g in [a, b]`` for any ``g``; when that
    floordiv simplifies to a division-free expression (``e == g*y + z`` with ``z`` inside one
    block of ``g``), the constraint moves onto it: ``6*d0 + 3*s0 + s1 in [0, 599]`` with
    ``3*s0 + s1 in [0, 5]`` becomes ``d0 in [0, 99]``. Only when ``z`` is made of range
    variables (XLA's rule): a constraint on dimensions stays visible to analyses that clip
    tiles by constraints."""
    lo, hi = interval
    span = gcd(lo, hi + 1)
    for g in sorted({abs(k) for _, k in e.terms if abs(k) > 1}, reverse=True):
        if span % g:
            continue
        quotient = simplify(floordiv(e, g))
        if quotient.count_divisions() or any(v.kind != RANGE for v in (e - quotient * g).variables()):
            continue
        return quotient, Interval(lo // g, (hi + 1) // g - 1)
    return None


# A map as parts: dims, range variables, runtime-variable bounds, results, constraints.
MapParts: TypeAlias = tuple[list[Interval], list[Interval], list[Interval], Sequence[Expr], list[tuple[Expr, Interval]]]


def simplify_parts(
    dims: Iterable[Interval],
    range_vars: Iterable[Interval],
    runtime_vars: Iterable[Interval],
    results: Sequence[Expr],
    constraints: Iterable[tuple[Expr, Interval]],
) -> MapParts | None:
    """Simplify a map given as parts. Returns ``(dims, range_vars, runtime_vars, results,
    constraints)`` with intervals as lists, or ``None`` when the map is known to be empty."""
    dims, range_vars, runtime_vars = list(dims), list(range_vars), list(runtime_vars)
    bounds = {DIM: dims, RANGE: range_vars, RUNTIME: runtime_vars}
    try:
        for _ in range(_MAX_ROUNDS):
            for intervals in (dims, range_vars, runtime_vars):
                for b in intervals:
                    if b.lo > b.hi:
                        raise _Infeasible
            domain = Domain(dims, range_vars, runtime_vars)
            results = simplify_all(results, domain)
            if not constraints:
                break
            simplify = Simplifier(domain)
            merged: dict[Expr, Interval] = {}
            tightened = False
            for e, interval in constraints:
                e, interval = normalize_constraint(e, interval, simplify)
                if e.kind == CONST:
                    if not interval.contains(e.value):
                        raise _Infeasible
                    continue
                b = domain.bounds(e)
                interval = interval.intersect(b)
                if interval.lo > interval.hi:
                    raise _Infeasible
                if interval == b:
                    continue
                if e.is_variable:
                    interval = interval.intersect(bounds[e.kind][e.value])
                    if interval.lo > interval.hi:
                        raise _Infeasible
                    bounds[e.kind][e.value] = interval
                    tightened = True
                    continue
                if e in merged:
                    interval = interval.intersect(merged[e])
                    if interval.lo > interval.hi:
                        raise _Infeasible
                merged[e] = interval
            if merged:
                tightened |= _merge_mod_constraints(merged, bounds)
            constraints = list(merged.items())
            if not tightened:
                break
    except _Infeasible:
        return None
    constraints = list(constraints)
    if len(constraints) > 1:
        constraints.sort(key=lambda item: item[0].key)
    return dims, range_vars, runtime_vars, results, constraints


def _merge_mod_constraints(merged: dict[Expr, Interval], bounds: dict[int, list[Interval]]) -> bool:
    """Merge ``v mod m in I`` constraints per variable and snap ``v``'s bounds to feasible values.
    Returns True when a variable's bounds changed."""
    per_var: dict[Expr, list[Expr]] = {}
    for e in merged:
        if e.kind == MOD and e.operand.is_variable:
            per_var.setdefault(e.operand, []).append(e)
    changed = False
    for var, mods in per_var.items():
        while len(mods) > 1:
            a, b = mods[0], mods[1]
            modulus = lcm(a.value, b.value)
            if modulus > budgets().merged_modulus:
                break
            ia, ib = merged[a], merged[b]
            residues = [r for r in range(modulus) if ia.contains(r % a.value) and ib.contains(r % b.value)]
            if not residues:
                raise _Infeasible
            if residues[-1] - residues[0] + 1 != len(residues):
                break
            del merged[a], merged[b]
            combined = var.mod(modulus)
            merged[combined] = Interval(residues[0], residues[-1])
            mods = [combined] + mods[2:]
        for e in mods:
            box = bounds[var.kind][var.value]
            snapped = _snap(box, e.value, merged[e])
            if snapped.lo > snapped.hi:
                raise _Infeasible
            if snapped != box:
                bounds[var.kind][var.value] = snapped
                changed = True
    return changed


def _snap(b: Interval, m: int, residues: Interval) -> Interval:
    """Narrow ``b`` to its smallest and largest values whose residue mod ``m`` is in
    ``residues`` (a sub-interval of ``[0, m-1]``)."""
    lo, hi = b
    r = lo % m
    if r < residues.lo:
        lo += residues.lo - r
    elif r > residues.hi:
        lo += m - r + residues.lo
    r = hi % m
    if r > residues.hi:
        hi -= r - residues.hi
    elif r < residues.lo:
        hi -= r + m - residues.hi
    return Interval(lo, hi)
