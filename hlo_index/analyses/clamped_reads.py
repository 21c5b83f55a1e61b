"""Whole reads written as clamped windows.

A whole program composes a convolution's window over its input into the map of a value that
reads all of that input: ::

    (d0)[s0, s1, s2, s3] -> (s2, s0 + s3 * 2), domain: ..., s0 in [0, 2], s2 in [0, 7],
        s3 in [0, 15], s0 + s3 * 2 in [0, 31]

Each result is a sum of range variables of its own, and each constraint on range variables
clamps one result to the operand's extent (written on the result or on its sum before the
offset: ``s0 + s3 * 2 in [1, 32]`` for the result ``s0 + s3 * 2 - 1``), or places a window
that no result reads beside the dims where some position fits at every point (``d2 + s6 in
[1, 7]``, ``s6 in [0, 6]``, ``d2 in [0, 2]``). Then the elements read at a point are the product
of the results' images, each clamped; the map reads the whole operand at every point of its
domain when each clamped image is its dimension's ``0 .. n - 1``. An image is an interval when
no coefficient, taken smallest first, jumps over what the smaller ones reach (``s0 + s3 * 2``
over ``s0 in [0, 2]`` reaches ``0 .. 32``); that is proved by arithmetic, never enumerated.
"""

from __future__ import annotations

from ..affine import IndexingMap, Interval
from ..affine.bounds import Domain
from ..affine.expr import CONST, DIM, RANGE, RUNTIME, Expr, linear


def reads_whole_operand(m: IndexingMap, operand_dims: tuple[int, ...]) -> bool:
    """Whether every point of ``m``'s domain (its dims' constraints included) reads every
    element of ``operand_dims``: results of range variables alone, none shared between two
    results, each clamped only by constraints that are that very result, each clamped image
    exactly its operand dimension. No runtime variables. A sufficient test."""
    if m.is_undefined or m.is_known_empty or m.runtime_vars or len(m.results) != len(operand_dims):
        return False
    if any(iv.size <= 0 for iv in m.range_vars):
        return False
    in_results = set().union(*(r.variables() for r in m.results))
    linear_parts = [r.linear_terms() for r in m.results]
    clamps: dict[int, Interval] = {}
    witnessed: set[Expr] = set()
    for e, allowed in m.constraints:
        variables = e.variables()
        kinds = {v.kind for v in variables}
        if kinds <= {DIM}:
            continue  # a piece of the domain: it says where, not what
        if RANGE not in kinds or RUNTIME in kinds:
            return False
        constant, terms = e.linear_terms()
        k = next((i for i, (_, t) in enumerate(linear_parts) if t == terms), None) if DIM not in kinds else None
        if k is not None:
            # the result itself, give or take a constant: it clamps the result
            shift = linear_parts[k][0] - constant
            clamp = clamps.get(k, Interval(allowed.lo + shift, allowed.hi + shift))
            clamps[k] = Interval(max(clamp.lo, allowed.lo + shift), min(clamp.hi, allowed.hi + shift))
            continue
        if not _always_witnessed(e, allowed, m, in_results, witnessed):
            return False
    used: set[Expr] = set()
    for k, (r, n) in enumerate(zip(m.results, operand_dims)):
        variables = r.variables()
        if any(v.kind != RANGE for v in variables) or used.intersection(variables):
            return False
        used.update(variables)
        image = _image(r, m.range_vars)
        if image is None:
            return False
        lo, hi = image
        bounds = clamps.get(k)
        if bounds is not None:
            lo, hi = max(lo, bounds.lo), min(hi, bounds.hi)
        if (lo, hi) != (0, n - 1):
            return False
    return True


def _always_witnessed(e: Expr, allowed: Interval, m: IndexingMap, in_results: set[Expr], witnessed: set[Expr]) -> bool:
    """Whether ``e in allowed`` is a constraint of dims and one range variable ``w`` read by
    no result and by no other constraint (``d2 + s6 in [1, 14]``: a window position that exists
    or not), with ``w``'s coefficient 1 or -1, that some ``w`` in its range meets at every point
    of the dims' box: then it takes no point out of the domain and decides nothing read."""
    constant, terms = e.linear_terms()
    witnesses = [(atom, c) for atom, c in terms if atom.kind == RANGE]
    if len(witnesses) != 1 or any(atom.kind != DIM for atom, _ in terms if atom.kind != RANGE):
        return False
    w, c = witnesses[0]
    if c not in (1, -1) or w in in_results or w in witnessed:
        return False
    witnessed.add(w)
    for other, _ in m.constraints:
        if other is not e and w in other.variables():
            return False
    rest = Domain(m.dims).bounds(linear(constant, [(atom, n) for atom, n in terms if atom != w]))
    reach = m.range_vars[w.value]
    low, high = (reach.lo, reach.hi) if c == 1 else (-reach.hi, -reach.lo)
    # at every point, [rest + low, rest + high] meets [allowed.lo, allowed.hi]
    return rest.hi + low <= allowed.hi and rest.lo + high >= allowed.lo


def _image(r: Expr, range_vars: tuple[Interval, ...]) -> tuple[int, int] | None:
    """The values of the linear sum ``r`` of range variables over their box, as ``(lo, hi)``
    where they are every integer between; None where they may skip one (or ``r`` divides)."""
    if r.kind == CONST:
        return r.value, r.value
    constant, terms = r.linear_terms()
    lo = hi = constant
    steps: list[tuple[int, int]] = []  # (|coefficient|, how many steps of it)
    for atom, c in terms:
        if atom.kind != RANGE:
            return None
        iv = range_vars[atom.value]
        lo += min(c * iv.lo, c * iv.hi)
        hi += max(c * iv.lo, c * iv.hi)
        if c and iv.size > 1:
            steps.append((abs(c), iv.size - 1))
    reach = 0
    for c, count in sorted(steps):
        if c > reach + 1:
            return None
        reach += c * count
    return lo, hi
