"""Variables read only through their digits, split into one range variable per digit.

A reshape of a flat index reads it through a chain of divisors: ``d0 in [0, 182399]`` appears as
``d0 floordiv 912``, ``(d0 floordiv 3) mod 304`` and ``d0 mod 3``. Those three are the digits of
``d0`` in the mixed radix (200, 304, 3), and each varies independently of the others. Writing
``d0 = 912 * s_a + 3 * s_b + s_c`` with ``s_a in [0, 199]``, ``s_b in [0, 303]``,
``s_c in [0, 2]`` turns one variable of 182,400 values shared by three results into three
variables of their own, so what depends on one digit is counted apart from what depends on
another (``analyses/components.py``) instead of over their product.

The split renames points one to one (the digits of a value in ``[0, N)`` are unique), so every
count over the map's points and every set of result rows is unchanged. The variable itself is
kept with the one-point interval ``[0, 0]`` and no use.
"""

from __future__ import annotations

from itertools import pairwise

from .expr import FLOORDIV, MOD, SUM, VARIABLE_KINDS, Expr, dim, linear, range_var, replace_variables
from .indexing_map import IndexingMap
from .interval import Interval


def split_digit_variables(m: IndexingMap) -> IndexingMap:
    """``m`` with each variable that is read only as digits (``v floordiv a``, ``v mod b``,
    ``(v floordiv a) mod b``, over a chain of divisors that divides its size, from 0) replaced by
    new range variables, one per digit; ``m`` itself when there is none (or it is not regular)."""
    if m.is_known_empty or m.is_undefined or m.runtime_vars:
        return m
    uses: dict[Expr, set[int] | None] = {}
    memo: set[Expr] = set()
    for e in (*m.results, *(c for c, _ in m.constraints)):
        _collect(e, uses, memo)
    splits: dict[Expr, list[int]] = {}
    for v, bounds in uses.items():
        if bounds is None:
            continue
        interval = m.variable_interval(v)
        size = interval.size
        if interval.lo != 0 or size < 2:
            continue
        chain = sorted(b for b in bounds if 1 < b < size)
        if chain and all(b % a == 0 for a, b in pairwise(chain)) and size % chain[-1] == 0:
            splits[v] = chain
    if not splits:
        return m
    range_vars = list(m.range_vars)
    replacement: dict[Expr, Expr] = {}
    for v, chain in splits.items():
        places = [1, *chain]
        limits = [*chain, m.variable_interval(v).size]
        terms = []
        for place, limit in zip(places, limits):
            terms.append((range_var(len(range_vars)), place))
            range_vars.append(Interval(0, limit // place - 1))
        replacement[v] = linear(0, terms)
    renamed: dict[Expr, Expr] = {}

    def rename(e: Expr) -> Expr:
        return replace_variables(e, replacement.get, renamed)

    dims = [Interval(0, 0) if dim(i) in replacement else iv for i, iv in enumerate(m.dims)]
    ranges = [Interval(0, 0) if range_var(i) in replacement else iv for i, iv in enumerate(range_vars)]
    split = IndexingMap(
        dims,
        ranges,
        (),
        [rename(e) for e in m.results],
        [(rename(e), iv) for e, iv in m.constraints],
    ).simplified()
    return m if split.is_known_empty or split.is_undefined else split


def _collect(e: Expr, uses: dict[Expr, set[int] | None], memo: set[Expr]) -> None:
    """Record, per variable, the digit boundaries it is read at; None once it is read otherwise."""
    if e in memo:
        return
    memo.add(e)
    kind = e.kind
    if kind in VARIABLE_KINDS:  # read whole: not splittable
        uses[e] = None
        return
    if kind == SUM:
        for atom, _ in e.terms:
            _collect(atom, uses, memo)
        return
    if kind not in (FLOORDIV, MOD):
        if e.operand is not None:
            _collect(e.operand, uses, memo)
        return
    inner = e.operand
    if inner.kind in VARIABLE_KINDS:  # v floordiv a, v mod a: one boundary, a
        _add(uses, inner, (e.value,))
        return
    if kind == MOD and inner.kind == FLOORDIV and inner.operand.kind in VARIABLE_KINDS:
        # (v floordiv a) mod b: the digits between a and a * b
        memo.add(inner)
        _add(uses, inner.operand, (inner.value, inner.value * e.value))
        return
    _collect(inner, uses, memo)


def _add(uses: dict[Expr, set[int] | None], v: Expr, bounds: tuple[int, ...]) -> None:
    if v not in uses:
        uses[v] = set()
    known = uses[v]
    if known is not None:  # None: read whole somewhere, not splittable whatever else reads it
        known.update(bounds)
