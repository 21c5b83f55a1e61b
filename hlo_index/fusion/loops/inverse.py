"""A map's relation read the other way: from the elements it reads to the elements that read them.

A map ``m`` relates ``x`` (its dims) to ``y = f(x, s)`` for every range-variable value ``s`` with
the constraints holding. The inverse relation, as a map over ``y``'s box, keeps ``x`` and ``s`` as
range variables, gives ``x`` as its results and adds one equality per result, ``f_i(x, s) - y_i in
[0, 0]``: exactly the same pairs, read the other way. Runtime variables stay what they were (the
relation is the union over their values either way).

The equalities are then solved where that is exact, so that the map reads as a function of ``y``:
a range variable ``v`` occurring linearly as ``a + c * v`` in a constraint ``in [lo, hi]`` with
``hi - lo < |c|`` takes at most one value, ``v = (a - lo) floordiv |c|`` for ``c < 0`` and
``v = -((a - lo) floordiv c)`` for ``c > 0`` (``c = ±1`` with an equality: ``v = ∓(a - lo)``). It is
replaced by that expression everywhere, its interval becomes a constraint on the expression, and
the constraint that fixed it stays (substituted: for ``|c| > 1`` it says which residues exist).
Every step keeps the same set of pairs, so the result is exact whatever remains unsolved.
"""

from __future__ import annotations

from ...affine import IndexingMap, Interval, dim, range_var
from ...affine.expr import RANGE, Expr, replace_variables
from ...context import current, register_table
from ..existential import drop_dim_witness_range_vars, drop_witness_range_vars

Constraint = tuple[Expr, Interval]


# (canonical key of the map, source dims) -> its inverse, per analysis context: a loop's pairs
# share maps (the condition's reads, a stacked element's rows)
_INVERSES = register_table("fusion.loops.inverses")


def inverse(m: IndexingMap, source_dims: tuple[int, ...]) -> IndexingMap:
    """The map from ``source_dims`` (the box ``m``'s results index) back to ``m``'s dims: for each
    element ``y``, every ``x`` that ``m`` relates to ``y``."""
    if m.is_undefined or m.runtime_vars:  # (a runtime variable's description is not in the key)
        return _inverse(m, source_dims)
    memo: dict[tuple[object, ...], IndexingMap] = current().tables[_INVERSES]
    key = (m.canonical_key(), source_dims)
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _inverse(m.simplified(), source_dims)
    return hit


def _inverse(m: IndexingMap, source_dims: tuple[int, ...]) -> IndexingMap:
    if m.is_undefined:
        return m
    if m.is_known_empty:
        return IndexingMap.known_empty(len(source_dims), m.num_dims)
    if m.num_results != len(source_dims):
        raise ValueError(f"inverse: a map with {m.num_results} results over a box of {len(source_dims)} dims")
    n = m.num_dims
    renumber: dict[Expr, Expr] = {dim(i): range_var(i) for i in range(n)}
    renumber.update({range_var(j): range_var(n + j) for j in range(len(m.range_vars))})
    memo: dict[Expr, Expr] = {}

    def moved(e: Expr) -> Expr:
        return replace_variables(e, renumber.get, memo)

    ranges = list(m.dims) + list(m.range_vars)
    results = [range_var(i) for i in range(n)]
    constraints: list[Constraint] = [(moved(e), b) for e, b in m.constraints]
    constraints += [(moved(f) - dim(i), Interval(0, 0)) for i, f in enumerate(m.results)]
    results, constraints = _solved(results, constraints, ranges)
    out = IndexingMap(
        [Interval(0, size - 1) for size in source_dims], ranges, m.runtime_vars, results, constraints
    ).simplified()
    if out.is_known_empty:
        return IndexingMap.known_empty(len(source_dims), n)
    return drop_dim_witness_range_vars(drop_witness_range_vars(out.remove_unused_variables()))


def _solved(
    results: list[Expr], constraints: list[Constraint], ranges: list[Interval]
) -> tuple[list[Expr], list[Constraint]]:
    """Range variables fixed by a constraint replaced by their value, one at a time (unit
    coefficients first: they leave no division behind), until none is left to solve."""
    solved: set[int] = set()
    for _ in range(len(ranges)):
        found = _next_solvable(constraints, ranges, solved)
        if found is None:
            break
        v, value = found
        solved.add(v)
        substitution = {range_var(v): value}
        memo: dict[Expr, Expr] = {}
        results = [replace_variables(e, substitution.get, memo) for e in results]
        constraints = [(replace_variables(e, substitution.get, memo), b) for e, b in constraints]
        constraints.append((value, ranges[v]))
    return results, constraints


def _next_solvable(constraints: list[Constraint], ranges: list[Interval], solved: set[int]) -> tuple[int, Expr] | None:
    """(range variable, its value) for the best variable a constraint fixes, or None."""
    best: tuple[tuple[int, int, int], Expr, Interval, Expr, int] | None = None
    for e, b in constraints:
        if b.hi - b.lo < 0:
            continue
        _, terms = e.linear_terms()
        for atom, c in terms:
            if atom.kind != RANGE or atom.value in solved or abs(c) <= b.hi - b.lo:
                continue
            if any(atom in other.variables() for other, _ in terms if other is not atom):
                continue  # also inside a division: not linear in it
            rank = (0 if abs(c) == 1 else 1, ranges[atom.value].lo - ranges[atom.value].hi, atom.value)
            if best is None or rank < best[0]:
                best = (rank, e, b, atom, c)
    if best is None:
        return None
    _, e, b, atom, c = best
    shifted = e - atom * c - b.lo
    if abs(c) == 1:
        return atom.value, (-shifted if c > 0 else shifted)
    return atom.value, (-shifted.floordiv(c) if c > 0 else shifted.floordiv(-c))
