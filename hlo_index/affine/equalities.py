"""Variables an equality constraint fixes: ``c * v + rest in [k, k]`` with ``c`` = ±1 gives
``v = c * (k - rest)``.

Enumerating or sampling a box that such a constraint cuts to a diagonal wastes all but a sliver of
the points (``s1 - rt0 in [0, 0]`` over 32000 x 32000 keeps one point in 32000); computing ``v`` from
the other variables walks only the diagonal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .expr import Expr
from .indexing_map import IndexingMap

# (v, c, rest, constraint index): v = c * (k - rest), k the constraint's one value
Solved = tuple[Expr, int, Expr, int]


def solved_variables(
    m: IndexingMap,
    constraints: Iterable[int],
    may_solve: Callable[[Expr], bool],
    *,
    rest_may_name: Callable[[frozenset[Expr]], bool] = lambda _: True,
    rank: Callable[[Expr], int] = lambda _: 0,
    limit: int | None = None,
) -> tuple[Solved, ...]:
    """Variables of ``m`` fixed by its equality constraints among ``constraints`` (indices), in
    solving order: a rest names only variables not solved, or solved before it. Per constraint,
    the lowest-``rank`` variable that ``may_solve`` accepts and that occurs in one term only, with
    coefficient ±1, whose rest ``rest_may_name`` accepts; at most ``limit`` variables."""
    solved: list[Solved] = []
    fixed: set[Expr] = set()
    in_rests: set[Expr] = set()
    for k in constraints:
        if limit is not None and len(solved) >= limit:
            break
        e, iv = m.constraints[k]
        if iv.lo != iv.hi:
            continue
        _, terms = e.linear_terms()
        # a variable in an earlier rest is read there before it would be set
        candidates = [
            (atom, c)
            for atom, c in terms
            if c in (1, -1) and atom.is_variable and atom not in fixed and atom not in in_rests and may_solve(atom)
        ]
        for atom, c in sorted(candidates, key=lambda t: rank(t[0])):
            rest = e - atom * c
            rest_vars = rest.variables()
            if atom in rest_vars or not rest_may_name(rest_vars):
                continue
            solved.append((atom, c, rest, k))
            fixed.add(atom)
            in_rests |= rest_vars
            break
    return tuple(solved)
