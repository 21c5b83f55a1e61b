"""Shared helpers for the affine tests: random maps (hypothesis) and independent oracles."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from hlo_index.affine import IndexingMap, Interval, RuntimeVar, const, dim, range_var, runtime_var


def brute_relation(m: IndexingMap, runtime=()) -> set:
    """{(dims..., results...)} by plain Python loops over the whole domain (no numpy, no
    simplifier): the oracle for every map property test."""
    if m.is_known_empty:
        return set()
    out = set()
    for dims in itertools.product(*[range(b.lo, b.hi + 1) for b in m.dims]):
        for ranges in itertools.product(*[range(b.lo, b.hi + 1) for b in m.range_vars]):
            if all(b.contains(_value(e, dims, ranges, runtime)) for e, b in m.constraints):
                out.add(dims + tuple(_value(e, dims, ranges, runtime) for e in m.results))
    return out


def _value(e, dims, ranges, runtime) -> int:
    """Evaluate through the printed text with Python semantics, independent of evaluate.py."""
    text = str(e)
    text = text.replace(" floordiv ", " // ").replace(" mod ", " % ")
    env = {f"d{i}": v for i, v in enumerate(dims)}
    env.update({f"s{i}": v for i, v in enumerate(ranges)})
    env.update({f"rt{i}": v for i, v in enumerate(runtime)})
    if " ceildiv " in text:
        return _ceildiv_eval(e, env)
    return eval(text, {}, env)  # noqa: S307 - text is our own printed expression


def _ceildiv_eval(e, env) -> int:
    from hlo_index.affine.expr import CEILDIV, CONST, FLOORDIV, MOD, SUM

    kind = e.kind
    if kind == CONST:
        return e.value
    if kind == SUM:
        return e.value + sum(k * _ceildiv_eval(a, env) for a, k in e.terms)
    if kind in (FLOORDIV, MOD, CEILDIV):
        x = _ceildiv_eval(e.operand, env)
        return x // e.value if kind == FLOORDIV else (x % e.value if kind == MOD else -((-x) // e.value))
    return env[str(e)]


@st.composite
def expressions(draw, n_dims: int, n_range: int, n_runtime: int = 0, depth: int = 3):
    leaves = [dim(i) for i in range(n_dims)] + [range_var(i) for i in range(n_range)]
    leaves += [runtime_var(i) for i in range(n_runtime)]
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()) or not leaves:
            return const(draw(st.integers(-5, 12)))
        return draw(st.sampled_from(leaves))
    op = draw(st.sampled_from(["add", "add", "mul", "floordiv", "mod", "ceildiv", "sub"]))
    a = draw(expressions(n_dims, n_range, n_runtime, depth - 1))
    if op in ("add", "sub"):
        b = draw(expressions(n_dims, n_range, n_runtime, depth - 1))
        return a + b if op == "add" else a - b
    if op == "mul":
        return a * draw(st.integers(-4, 16))
    divisor = draw(st.sampled_from([1, 2, 3, 4, 5, 6, 8, 10, 16]))
    if op == "floordiv":
        return a.floordiv(divisor)
    if op == "ceildiv":
        return a.ceildiv(divisor)
    return a % divisor


@st.composite
def intervals(draw, max_size: int = 8, low: int = -2):
    lo = draw(st.integers(low, 3))
    return Interval(lo, lo + draw(st.integers(0, max_size - 1)))


@st.composite
def maps(
    draw,
    max_dims: int = 2,
    max_range: int = 1,
    max_results: int = 2,
    max_constraints: int = 2,
    runtime: int = 0,
    n_dims=None,
):
    n = draw(st.integers(1, max_dims)) if n_dims is None else n_dims
    r = draw(st.integers(0, max_range))
    dims = [draw(intervals()) for _ in range(n)]
    ranges = [draw(intervals(max_size=5)) for _ in range(r)]
    runtimes = [RuntimeVar(draw(intervals(max_size=3)), f"rt{i}") for i in range(runtime)]
    results = [draw(expressions(n, r, runtime)) for _ in range(draw(st.integers(0, max_results)))]
    constraints = []
    for _ in range(draw(st.integers(0, max_constraints))):
        e = draw(expressions(n, r, runtime))
        lo = draw(st.integers(-10, 20))
        constraints.append((e, Interval(lo, lo + draw(st.integers(0, 30)))))
    return IndexingMap(dims, ranges, runtimes, results, constraints)
