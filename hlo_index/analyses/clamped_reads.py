"""Whole reads written as clamped windows.

A whole program composes a convolution's window over its input into the map of a value that
reads all of that input: ::

    (d0)[s0, s1, s2, s3] -> (s2, s0 + s3 * 2), domain: ..., s0 in [0, 2], s2 in [0, 7],
        s3 in [0, 15], s0 + s3 * 2 in [0, 31]

Each result is a sum of range variables of its own, and each constraint on range variables
clamps one result to the operand's extent. Then the elements read at a point are the product
of the results' images, each clamped; the map reads the whole operand at every point of its
domain when each clamped image is its dimension's ``0 .. n - 1``. An image is an interval when
no coefficient, taken smallest first, jumps over what the smaller ones reach (``s0 + s3 * 2``
over ``s0 in [0, 2]`` reaches ``0 .. 32``); that is proved by arithmetic, never enumerated.
"""

from __future__ import annotations

from ..affine import IndexingMap, Interval
from ..affine.expr import CONST, DIM, RANGE, Expr


def reads_whole_operand(m: IndexingMap, operand_dims: tuple[int, ...]) -> bool:
    """Whether every point of ``m``'s domain (its dims' constraints included) reads every
    element of ``operand_dims``: results of range variables alone, none shared between two
    results, each clamped only by constraints that are that very result, each clamped image
    exactly its operand dimension. No runtime variables. A sufficient test."""
    if m.is_undefined or m.is_known_empty or m.runtime_vars or len(m.results) != len(operand_dims):
        return False
    if any(iv.size <= 0 for iv in m.range_vars):
        return False
    clamps: dict[int, Interval] = {}
    for e, allowed in m.constraints:
        kinds = {v.kind for v in e.variables()}
        if kinds <= {DIM}:
            continue  # a piece of the domain: it says where, not what
        if RANGE not in kinds or DIM in kinds or e not in m.results:
            return False
        k = m.results.index(e)
        clamp = clamps.get(k, allowed)
        clamps[k] = Interval(max(clamp.lo, allowed.lo), min(clamp.hi, allowed.hi))
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
