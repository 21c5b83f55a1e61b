"""Conditions and expressions found over a finite set of checked values.

When a group's dims are static, its runtime offsets and sizes range over finitely many valid
values, each decided by the engine. ``synthesise`` returns the simplest condition of a fixed
grammar (``E == c``, ``E mod m <= t`` ... and two of them joined) that agrees with the engine on
every one of those values, so it is exact on the valid domain; ``fit_expression`` does the same for
a swapped-pair parameter. The grammar is searched in a fixed order, so output is deterministic.
"""

from __future__ import annotations

from .symbolic import Cond, Const, Expr, all_of, any_of, compare, floordiv, mod, mul, select

MAX_MODULUS = 256


def _bases(exprs: list[Expr]) -> list[Expr]:
    seen: list[Expr] = []
    for e in exprs:
        if e.constant is None and e not in seen:
            seen.append(e)
    return seen


def _atoms(bases: list[Expr], envs: list[dict]) -> list[tuple[Cond, tuple[bool, ...]]]:
    atoms, seen = [], set()

    def add(cond: Cond, truth: tuple[bool, ...]) -> None:
        if truth not in seen:
            seen.add(truth)
            atoms.append((cond, truth))

    for e in bases:
        values = [e.value(env) for env in envs]
        for c in sorted(set(values)):
            add(compare("==", e, c), tuple(v == c for v in values))
            add(compare("!=", e, c), tuple(v != c for v in values))
            add(compare("<=", e, c), tuple(v <= c for v in values))
        top = min(max(values) + 1, MAX_MODULUS)
        for m in range(2, top + 1):
            residues = [v % m for v in values]
            for t in sorted(set(residues)):
                add(compare("==", mod(e, m), t), tuple(r == t for r in residues))
                add(compare("!=", mod(e, m), t), tuple(r != t for r in residues))
                add(compare("<=", mod(e, m), t), tuple(r <= t for r in residues))
    return atoms


def synthesise(exprs: list[Expr], checked: list[tuple[dict, bool]]) -> Cond:
    """The first condition of the grammar true exactly on the legal values; a list of the legal
    values when none is (still exact)."""
    envs = [env for env, _ in checked]
    want = tuple(ok for _, ok in checked)
    atoms = _atoms(_bases(exprs), envs)
    for cond, truth in atoms:
        if truth == want:
            return cond
    for i, (a, ta) in enumerate(atoms):
        for b, tb in atoms[i + 1 :]:
            if tuple(x or y for x, y in zip(ta, tb)) == want:
                return any_of(a, b)
            if tuple(x and y for x, y in zip(ta, tb)) == want:
                return all_of(a, b)
    names = sorted(envs[0])
    return any_of(*(all_of(*(compare("==", _sym(n), env[n]) for n in names)) for env, ok in checked if ok))


def _sym(name: str) -> Expr:
    from .symbolic import Sym

    return Sym(name)


def fit_expression(values: list[int], envs: list[dict], exprs: list[Expr]) -> Expr | None:
    """An expression equal to ``values`` at every env: a constant, E, c * E, E floordiv c,
    E mod c or (E floordiv c) mod d for a runtime expression E; else one of those where E != c
    and a constant where E == c (``arith.select``)."""
    found = _fit(values, envs, exprs)
    if found is not None:
        return found
    for e in _bases(exprs):
        xs = [e.value(env) for env in envs]
        for c in sorted(set(xs)):
            rest = [(v, env) for v, env, x in zip(values, envs, xs) if x != c]
            special = {v for v, x in zip(values, xs) if x == c}
            if len(special) != 1 or not rest:
                continue
            f = _fit([v for v, _ in rest], [env for _, env in rest], exprs)
            if f is not None:
                return select(compare("!=", e, c), f, Const(special.pop()))
    return None


def _fit(values: list[int], envs: list[dict], exprs: list[Expr]) -> Expr | None:
    if len(set(values)) == 1:
        return Const(values[0])
    for e in _bases(exprs):
        xs = [e.value(env) for env in envs]
        pairs = list(zip(xs, values))
        if all(x == v for x, v in pairs):
            return e
        nonzero = [(x, v) for x, v in pairs if x]
        if nonzero and nonzero[0][1] % nonzero[0][0] == 0:
            c = nonzero[0][1] // nonzero[0][0]
            if all(c * x == v for x, v in pairs):
                return mul(Const(c), e)
        for c in range(2, min(max(xs) + 1, 4096) + 1):
            if all(x // c == v for x, v in pairs):
                return floordiv(e, c)
            if all(x % c == v for x, v in pairs):
                return mod(e, c)
            quotients = [(x // c, v) for x, v in pairs]
            top = max(q for q, _ in quotients)
            for d in range(2, top + 2):
                if all(q % d == v for q, v in quotients):
                    return mod(floordiv(e, c), d)
    return None
