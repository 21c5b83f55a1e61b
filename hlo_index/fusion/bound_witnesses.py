"""Eliminating range variables that only bound runtime values and dimensions.

After a gather by a runtime index, a composed map can keep a range variable that no result uses,
tied to the index: ``(d0)[s0, s1, s2]{rt0} -> (s0, d0), s1 * 512 + s2 - rt0 in [0, 0]``, with
``s2 in [0, 511]`` (the index falls in block ``s1``). Such a variable (``s2``) appears in each of
its constraints with coefficient +1 or -1 and outside any division, so every constraint bounds
it by an affine expression of the others from one side or both, and some integer value of it
exists exactly when each lower bound is at most each upper bound (Fourier-Motzkin elimination,
exact over the integers at unit coefficients). The variable is replaced by those pairwise
conditions (here ``s1 * 512 - rt0 in [-511, 0]``); trivially true ones are dropped, and an
impossible one makes the map KNOWN EMPTY. Equal relations reached along different paths then
get one form, so a value's maps merge instead of piling up.

By default only variables with a runtime variable among their constraints are eliminated: the
others keep the form XLA prints, and enumeration decides them where it can (``existential``).
Whole-computation passes and loops ask for every variable (``every``): there a causal read composed
with a causal read (``s0 <= s1 <= d0``) would otherwise keep one witness per composition, and the
maps of a loop over attention layers would never stabilise. Bounded by
``Budgets.witness_bound_pairs`` pairs per variable.
"""

from __future__ import annotations

from ..affine import IndexingMap, Interval, const
from ..affine.bounds import Domain
from ..affine.expr import RANGE, RUNTIME, Expr, linear, variable
from ..context import budgets


def eliminate_bound_witnesses(m: IndexingMap, *, every: bool = False) -> IndexingMap:
    """``m`` with every eliminable witness range variable (see the module docstring) gone;
    ``every``: also those without a runtime variable among their constraints."""
    if m.is_undefined or m.is_known_empty or not m.range_vars or not m.constraints:
        return m
    if not every and not m.runtime_vars:
        return m
    while True:
        step = _eliminate_one(m, every)
        if step is None:
            return m
        m = step
        if m.is_known_empty or not m.range_vars:
            return m


def _eliminate_one(m: IndexingMap, every: bool = False) -> IndexingMap | None:
    in_results: set[Expr] = set()
    for e in m.results:
        in_results |= e.variables()
    for v in range(len(m.range_vars)):
        w = variable(RANGE, v)
        if w in in_results:
            continue
        mine = [k for k, (e, _) in enumerate(m.constraints) if w in e.variables()]
        if not mine or not (every or any(u.kind == RUNTIME for k in mine for u in m.constraints[k][0].variables())):
            continue
        bounds = _bounds_on(w, m.range_vars[v], [m.constraints[k] for k in mine])
        if bounds is None:
            continue
        lowers, uppers = bounds
        if len(lowers) * len(uppers) > budgets().witness_bound_pairs:
            continue
        domain = Domain(m.dims, m.range_vars, [r.interval for r in m.runtime_vars])
        derived: list[tuple[Expr, Interval]] = []
        for low in lowers:
            for high in uppers:
                gap = linear(0, [(high, 1), (low, -1)])  # high - low >= 0
                span = domain.bounds(gap)
                if span.lo >= 0:
                    continue
                if span.hi < 0:
                    return IndexingMap.known_empty(m.num_dims, m.num_results)
                derived.append((gap, Interval(0, span.hi)))
        replaced = set(mine)
        kept = [c for k, c in enumerate(m.constraints) if k not in replaced] + derived
        out = IndexingMap(m.dims, m.range_vars, m.runtime_vars, m.results, kept)
        return out.remove_unused_variables().simplified()
    return None


def _bounds_on(
    w: Expr, interval: Interval, constraints: list[tuple[Expr, Interval]]
) -> tuple[list[Expr], list[Expr]] | None:
    """(lower bounds, upper bounds) on ``w`` as expressions of the other variables, or None when
    some constraint holds ``w`` other than with coefficient +1 or -1 outside divisions."""
    lowers, uppers = [const(interval.lo)], [const(interval.hi)]
    for e, b in constraints:
        c, terms = e.linear_terms()
        coefficient = 0
        rest: list[tuple[Expr, int]] = []
        for atom, k in terms:
            if atom == w:
                coefficient = k
            elif w in atom.variables():
                return None
            else:
                rest.append((atom, k))
        if coefficient not in (1, -1):
            return None
        others = linear(c, rest)
        if coefficient == 1:  # w + others in [lo, hi]
            lowers.append(linear(b.lo, [(others, -1)]))
            uppers.append(linear(b.hi, [(others, -1)]))
        else:  # others - w in [lo, hi]
            lowers.append(linear(-b.hi, [(others, 1)]))
            uppers.append(linear(-b.lo, [(others, 1)]))
    return lowers, uppers
