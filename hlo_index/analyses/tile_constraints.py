"""The conditions an output tile's sizes must meet for an operand's reads to stay a tile, printed
in XLA's form (``d_i`` is the tile size along output dim ``i``; a condition is
``expr in [lo, hi]``, joined with ``&&`` and ``||`` like XLA's symbolic tile constraints).

Two shapes of map need one (the others tile for any size):

* a division ``e floordiv c`` / ``e mod c`` of one output dim: the tile must divide ``c`` or be a
  multiple of it (``c mod d0 in [0, 0] || d0 mod c in [0, 0]``); nested divisions count the tile
  in units of the inner divisor (``((d0 + 6) floordiv 7) mod 5 in [0, 0] || ...``);
* a merge ``a * d_outer + d_inner`` with ``a`` the inner dim's size (a collapsing reshape): either
  dim's tile is 1 or the inner tile is the whole dim (``d0 in [1, 1] || d1 in [1, 1] ||
  d1 in [11, 11]``).
"""

from __future__ import annotations

import itertools

from ..affine import IndexingMap
from ..affine.expr import CEILDIV, DIM, FLOORDIV, MOD, RANGE, Expr


def size_constraints(m: IndexingMap) -> list[str]:
    """One XLA-form condition per place a tile size matters (all must hold)."""
    if m.is_undefined or m.is_known_empty:
        return []
    found: list[str] = []
    for e in m.results:
        _divisions(e, m, found)
        _merge(e, m, found)
    return list(dict.fromkeys(found))


def _tile_size_text(e: Expr, m: IndexingMap) -> str | None:
    """How many values ``e`` takes over one tile, as text in the tile sizes (one dim only)."""
    _constant, terms = e.linear_terms()
    dims = [(atom, k) for atom, k in terms if atom.kind == DIM]
    others = [(atom, k) for atom, k in terms if atom.kind != DIM]
    if len(dims) == 1 and not others:
        ((atom, k),) = dims
        return f"d{atom.value}" if abs(k) == 1 else f"d{atom.value} * {abs(k)}"
    if len(terms) == 1 and others and others[0][0].kind == FLOORDIV and abs(others[0][1]) == 1:
        atom = others[0][0]
        inner = _tile_size_text(atom.operand, m)
        if inner is not None:
            return f"({inner} + {atom.value - 1}) floordiv {atom.value}"
    return None


def _divisions(e: Expr, m: IndexingMap, found: list[str]) -> None:
    _, terms = e.linear_terms()
    for atom, _ in terms:
        if atom.kind in (FLOORDIV, MOD, CEILDIV):
            _divisions(atom.operand, m, found)
            if any(v.kind == RANGE for v in atom.operand.variables()):
                continue
            size = _tile_size_text(atom.operand, m)
            if size is None:
                continue
            c = atom.value
            found.append(f"{c} mod {_paren(size)} in [0, 0] || {_paren(size)} mod {c} in [0, 0]")


def _paren(text: str) -> str:
    return text if text.isidentifier() or (text.startswith("(") and text.endswith(")")) else f"({text})"


def _merge(e: Expr, m: IndexingMap, found: list[str]) -> None:
    _, terms = e.linear_terms()
    dims = sorted(((abs(k), atom.value) for atom, k in terms if atom.kind == DIM))
    for (k_inner, inner), (k_outer, outer) in itertools.pairwise(dims):
        size = m.dims[inner].size
        if k_outer == k_inner * size and size > 1:
            found.append(f"d{outer} in [1, 1] || d{inner} in [1, 1] || d{inner} in [{size}, {size}]")


def satisfied(constraint: str, sizes) -> bool:
    """Evaluate one XLA-form condition at concrete tile sizes (``||`` of ``&&`` of bounds)."""
    env = {f"d{i}": s for i, s in enumerate(sizes)}
    for disjunct in constraint.split("||"):
        ok = True
        for conjunct in disjunct.split("&&"):
            expr, _, bounds = conjunct.strip().rpartition(" in ")
            lo, hi = (int(v) for v in bounds.strip("[] ").split(","))
            try:
                value = _evaluate(expr, env)
            except ZeroDivisionError:
                value = None
            ok &= value is not None and lo <= value <= hi
        if ok:
            return True
    return False


def _evaluate(text: str, env: dict) -> int:
    from ..affine import parse_expr
    from ..affine.evaluate import evaluate_expr
    from ..affine.expr import DIM as D

    names = sorted(env, key=len, reverse=True)
    if " mod d" in text or " mod (" in text:
        # ``c mod d0``: a division by a tile size, which affine text cannot hold
        left, _, right = text.partition(" mod ")
        divisor = _evaluate(right, env)
        if divisor == 0:
            raise ZeroDivisionError
        return _evaluate(left, env) % divisor
    expr = parse_expr(text)
    values = {(D, int(n[1:])): env[n] for n in names}
    return int(evaluate_expr(expr, values, {}))
