"""Range variables shifted by the dims they are always read beside.

A window read written the way XLA composes a convolution or a reduce-window, ::

    (d0)[s0] -> (d0 + s0 - 127), domain: d0 in [0, 127], s0 in [0, 254], d0 + s0 in [127, 254]

reads, at every ``d0``, the whole operand row: it is ::

    (d0)[s0] -> (s0), domain: d0 in [0, 127], s0 in [0, 127]

where the range variable is renamed ``s0 := s0 + d0 - 127``. For each fixed point of the dims
the renaming is a bijection of the range variable's values, and the old range is kept as a
constraint (``s0 - d0 in [-127, 127]``), so the two maps read the same pairs; the simplifier
then narrows the new variable to its constraint and drops what the bounds already hold.
``shift_range_vars`` does this for every range variable that each result and constraint using
it reads as ``s + r + c``, the same dim-only sum ``r`` everywhere (the constants ``c`` may
differ), its coefficient 1, and outside any division. Printed maps keep XLA's form: this is for
analyses that compare the pairs of maps (does one contain another?)."""

from __future__ import annotations

from .bounds import Domain
from .expr import DIM, Expr, linear, range_var, replace_variables
from .indexing_map import IndexingMap
from .interval import Interval


def shift_range_vars(m: IndexingMap) -> IndexingMap:
    """``m`` with each range variable read only as ``s + r + c`` (``r`` a sum of dims, the same
    in every use) renamed to the expression of its first use, simplified; ``m`` itself when no
    variable is of that form (or ``m`` has runtime variables)."""
    if m.is_undefined or m.is_known_empty or m.runtime_vars or not m.range_vars:
        return m
    exprs = list(m.results) + [e for e, _ in m.constraints]
    shifts: dict[int, tuple[Expr, int]] = {}  # range var -> (its dims' sum r, the constant c)
    for k in range(len(m.range_vars)):
        found = _shift_of(range_var(k), exprs)
        if found is not None and not (found[0].is_constant and found[1] == 0):  # a rename that changes something
            shifts[k] = found
    if not shifts:
        return m
    domain = Domain(m.dims, m.range_vars)
    replacement: dict[Expr, Expr] = {}
    ranges = list(m.range_vars)
    kept: list[tuple[Expr, Interval]] = []
    for k, (rest, c) in shifts.items():
        s = range_var(k)
        # s = t - r - c: each use s + r + c' becomes t + (c' - c)
        replacement[s] = linear(-c, [(s, 1), *((v, -n) for v, n in _terms(rest))])
        spread = domain.bounds(rest)
        old = m.range_vars[k]
        ranges[k] = Interval(old.lo + spread.lo + c, old.hi + spread.hi + c)
        kept.append((replacement[s], old))  # the old range, on the new variable
    memo: dict[Expr, Expr] = {}
    results = [replace_variables(e, replacement.get, memo) for e in m.results]
    constraints = [(replace_variables(e, replacement.get, memo), b) for e, b in m.constraints] + kept
    return IndexingMap(m.dims, ranges, (), results, constraints).simplified()


def _shift_of(s: Expr, exprs: list[Expr]) -> tuple[Expr, int] | None:
    """(r, c) of the first use of ``s``, where every use is ``s + r + c'`` with the same ``r``
    (a sum of dims, ``s``'s coefficient 1, outside any division); None otherwise or unused."""
    found: tuple[Expr, int] | None = None
    for e in exprs:
        if s not in e.variables():
            continue
        constant, terms = e.linear_terms()
        rest = []
        ones = 0
        for atom, n in terms:
            if atom == s:
                if n != 1:
                    return None
                ones += 1
            elif atom.kind != DIM:  # a division, a product, another variable: not a plain shift
                return None
            else:
                rest.append((atom, n))
        if ones != 1:
            return None  # s inside a division or a product
        r = linear(0, rest)
        if found is None:
            found = (r, constant)
        elif found[0] != r:
            return None
    return found


def _terms(e: Expr) -> tuple[tuple[Expr, int], ...]:
    return e.linear_terms()[1]
