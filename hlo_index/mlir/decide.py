"""The verdict for one reassociation group, and its swapped form as expressions.

In order of preference:
* a group where at most one sliced dim is not statically 1 long: the slice is one progression
  whatever the values (only unit dims shift it): legal, written symbolically;
* every quantity static: the HLO engine on the maps (``engine.run``);
* static dims, runtime offsets / sizes / strides: the engine on every valid value of the symbols
  (bounded by the dims, within a budget), and the condition found over those values
  (``conditions.synthesise``), exact on that finite domain;
* runtime dims: the symbolic form of the engine's candidate (slice then expand: the rows of the
  expansion, ``N mod (s * inner) == 0 and o mod (s * inner) < s`` per dim; a box of a progression:
  consecutive non-unit dims must nest), each instance checkable against the engine.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from . import engine
from .conditions import fit_expression, synthesise
from .pairs import SLICE_FIRST, Group
from .symbolic import FALSE, TRUE, Cond, Const, Expr, all_of, any_of, compare, floordiv, lift, mod, mul, product, select

ENUMERATION_BUDGET = 4096  # distinct valuations of a group's symbols run through the engine

Spec = list[tuple[Expr, Expr, Expr]]  # (offset, size, stride) per sliced dim


@dataclass
class GroupResult:
    verdict: str  # legal | illegal | conditional | unprovable
    reason: str
    condition: Cond = TRUE
    new_dims: list[Expr] | None = None  # slice-first: the reshaped source dims; reshape-first: unused
    new_slice: Spec | None = None
    counterexample: dict | None = None
    rewrite_note: str = ""
    checked: list = field(default_factory=list)  # (valuation, legal) pairs of an enumeration


def _static(e: Expr) -> bool:
    return e.constant is not None


def _row_sizes(dims: list[Expr]) -> list[Expr]:
    return [product(dims[i + 1 :]) for i in range(len(dims))]


def decide(order: str, g: Group) -> GroupResult:
    if g.only_dropped:
        return GroupResult(
            "legal",
            "a dim the slice drops, untouched by the reshape",
            new_dims=list(g.x),
            new_slice=list(zip(g.offsets, g.sizes, g.strides)),
        )
    trivial = _single_progression(order, g)
    if trivial is not None:
        return trivial
    quantities = g.x + g.y + g.offsets + g.sizes + g.strides + g.z
    if all(_static(q) for q in quantities):
        return _static_group(order, g)
    if all(_static(q) for q in g.x + g.y + (g.z if order == SLICE_FIRST else [])):
        return _enumerate(order, g)
    if order == SLICE_FIRST and len(g.x) == 1:
        return _expand_rows(g)
    if order == SLICE_FIRST or len(g.x) == 1:
        return _nested_progression(order, g)
    return GroupResult(
        "unprovable",
        "a runtime dim in a collapsed group sliced by a runtime range: "
        "which box it is depends on values the IR does not bound",
    )


# ---- legal for every value ----------------------------------------------------------------


def _single_progression(order: str, g: Group) -> GroupResult | None:
    if order == SLICE_FIRST:
        if len(g.x) == 1:  # expand: one source dim into z, all but one of them 1 long
            nonunit = [j for j, a in enumerate(g.z) if a.constant != 1]
            if len(nonunit) > 1:
                return None
            k = nonunit[0] if nonunit else 0
            if nonunit and g.z[k] != g.sizes[0] and g.sizes[0].constant is None:
                return None
            dims: list[Expr] = [Const(1)] * len(g.z)
            dims[k] = g.x[0]
            spec: Spec = [(Const(0), Const(1), Const(1))] * len(g.z)
            spec[k] = (g.offsets[0], g.z[k], g.strides[0])
            return GroupResult(
                "legal",
                "the reshape only adds or removes unit dims here: the slice carries over",
                new_dims=dims,
                new_slice=spec,
            )
        return _progression_if_one(g, g.x, collapse_first=True)
    if len(g.x) == 1:  # expand then slice: a box of y, one dim at most longer than 1
        return _progression_if_one(g, g.y, collapse_first=False)
    # collapse then slice: a range of the collapsed dims
    nonunit = [i for i, n in enumerate(g.x) if n.constant != 1]
    (size,) = g.sizes
    if size.constant == 1:
        rows = _row_sizes(g.x)
        spec = [
            (mod(floordiv(g.offsets[0], rows[i]), g.x[i]) if i else floordiv(g.offsets[0], rows[i]), Const(1), Const(1))
            for i in range(len(g.x))
        ]
        return GroupResult("legal", "a single element is always a box", new_slice=spec)
    if len(nonunit) <= 1:
        k = nonunit[0] if nonunit else len(g.x) - 1
        spec = [(Const(0), Const(1), Const(1))] * len(g.x)
        spec[k] = (g.offsets[0], size, g.strides[0])
        return GroupResult("legal", "the collapsed dims are all 1 long but one: the slice carries over", new_slice=spec)
    return None


def _progression_if_one(g: Group, dims: list[Expr], collapse_first: bool) -> GroupResult | None:
    """Positions sum_i (o_i + s_i c_i) R_i with at most one c_i ranging: one progression."""
    ranging = [i for i, n in enumerate(g.sizes) if n.constant != 1]
    if len(ranging) > 1:
        return None
    rows = _row_sizes(dims)
    offset: Expr = Const(0)
    for o, r in zip(g.offsets, rows):
        offset = offset + mul(o, r)
    k = ranging[0] if ranging else len(dims) - 1
    spec = [(offset, g.sizes[k], mul(g.strides[k], rows[k]))]
    return GroupResult(
        "legal",
        "one sliced dim at most is longer than 1: the elements taken are one progression of the flattened dims",
        new_dims=[product(dims)],
        new_slice=spec,
    )


# ---- static --------------------------------------------------------------------------------


def _concrete(order: str, g: Group, env=None) -> engine.Concrete:
    val = lambda es: tuple(e.value(env or {}) for e in es)  # noqa: E731
    z = val(g.z) if order == SLICE_FIRST else val(g.sizes)
    return engine.Concrete(order, val(g.x), val(g.y), val(g.offsets), val(g.sizes), val(g.strides), z)


def _static_group(order: str, g: Group) -> GroupResult:
    c = _concrete(order, g)
    out = engine.run(c)
    if out.verdict != "legal":
        return GroupResult(
            out.verdict,
            out.reason,
            FALSE if out.verdict == "illegal" else TRUE,
            counterexample=_counterexample(c, out.reason) if out.verdict == "illegal" else None,
        )
    assert out.new_dims is not None and out.new_slice is not None  # the engine's legal outcome has both
    spec: Spec = [(Const(o), Const(n), Const(s)) for o, n, s in out.new_slice]
    return GroupResult("legal", out.reason, new_dims=[Const(d) for d in out.new_dims], new_slice=spec)


def _counterexample(c: engine.Concrete, reason: str) -> dict:
    """The element that differs for the candidate the IREE note's rule would build (outer result
    dim dividing the source), or why no candidate of the right rows exists."""
    out = {
        "source": list(c.x),
        "slice": {"offsets": list(c.offsets), "sizes": list(c.sizes), "strides": list(c.strides)},
        "result": list(c.z),
    }
    if c.order == SLICE_FIRST and len(c.x) == 1 and len(c.z) >= 2 and c.x[0] % c.z[0] == 0:
        dims = (c.z[0], c.x[0] // c.z[0])
        rest = c.sizes[0] // c.z[0]
        if rest <= dims[1]:
            spec = ((0, c.z[0], 1), (c.offsets[0], rest, c.strides[0]))
            if c.offsets[0] + (rest - 1) * c.strides[0] < dims[1] and len(c.z) == 2:
                why = engine.compare(c, dims, spec)
                if why:
                    out["candidate"] = (
                        f"expand to {list(dims)} (the outer dim {c.z[0]} divides "
                        f"{c.x[0]}), then slice [0:{c.z[0]}, {c.offsets[0]}:{c.offsets[0] + rest}]"
                    )
                    out["differs"] = why
                    return out
    out["differs"] = reason
    return out


# ---- runtime offsets / sizes over static dims ---------------------------------------------


def _enumerate(order: str, g: Group) -> GroupResult:
    exprs = g.offsets + g.sizes + g.strides + (g.z if order == SLICE_FIRST else [])
    symbols = sorted(set().union(*(e.free() for e in exprs)))
    bound = max(product(g.x).value({}), product(g.y).value({}), 1)
    for e in exprs:  # a value past the dims can still give a valid offset through a division
        stretch = _division_stretch(e)
        if stretch is None:
            return GroupResult(
                "unprovable",
                f"{e} is not increasing in its runtime values, so the dims do not bound the values to check",
            )
        bound *= stretch
    if (bound + 1) ** len(symbols) > 64 * ENUMERATION_BUDGET:
        return GroupResult(
            "unprovable",
            f"{len(symbols)} runtime values over {bound + 1} positions each: "
            f"more than the enumeration budget of {ENUMERATION_BUDGET}",
        )
    rows, outcomes, seen = [], {}, 0
    for values in itertools.product(range(bound + 1), repeat=len(symbols)):
        env = dict(zip(symbols, values))
        try:
            c = _concrete(order, g, env)
        except ZeroDivisionError:
            continue
        if not _valid(order, c):
            continue
        if c not in outcomes:
            seen += 1
            if seen > ENUMERATION_BUDGET:
                return GroupResult("unprovable", f"more than {ENUMERATION_BUDGET} distinct slices to check")
            outcomes[c] = engine.run(c)
        rows.append((env, c, outcomes[c]))
    if not rows:
        return GroupResult("unprovable", "no value of " + ", ".join(symbols) + " makes the pair valid")
    legal = [r for r in rows if r[2].verdict == "legal"]
    if any(r[2].verdict == "unprovable" for r in rows):
        bad = next(r for r in rows if r[2].verdict == "unprovable")
        return GroupResult("unprovable", f"at {_env_text(bad[0])}: {bad[2].reason}")
    checked = [(env, o.verdict == "legal") for env, _, o in rows]
    if not legal:
        env, c, o = rows[0]
        return GroupResult(
            "illegal",
            f"for every valid value of {', '.join(symbols)}; e.g. at {_env_text(env)}: {o.reason}",
            FALSE,
            counterexample={"values": env, **_counterexample(c, o.reason)},
            checked=checked,
        )
    result = _fit_rewrite(order, g, legal, symbols)
    if len(legal) == len(rows):
        result.verdict, result.reason = (
            "legal",
            (f"for every valid value of {', '.join(symbols)} ({len(rows)} checked on the maps)"),
        )
        result.checked = checked
        return result
    cond = synthesise(exprs, checked)
    illegal = next(r for r in rows if r[2].verdict != "legal")
    result.verdict = "conditional"
    result.condition = cond
    result.checked = checked
    result.reason = (
        f"legal for {len(legal)} of the {len(rows)} valid values of {', '.join(symbols)}; "
        f"e.g. at {_env_text(illegal[0])}: {illegal[2].reason}"
    )
    result.counterexample = {"values": illegal[0], **_counterexample(illegal[1], illegal[2].reason)}
    return result


def _division_stretch(e: Expr) -> int | None:
    """How far past the dims a runtime value can go and still give an in-range ``e``: the product
    of the constant divisors in ``e`` (1 for sums and products with positive constants); None
    when ``e`` is not non-decreasing in its values (a subtraction, a runtime divisor)."""
    from .symbolic import Bin, Select

    if isinstance(e, Select):
        return None
    if not isinstance(e, Bin):
        return 1 if e.constant is None or e.constant >= 0 else None
    if e.op in ("+", "*"):
        a, b = _division_stretch(e.a), _division_stretch(e.b)
        if (
            a is None
            or b is None
            or (e.op == "*" and any(x.constant is not None and x.constant < 0 for x in (e.a, e.b)))
        ):
            return None
        return a * b
    if e.op in ("floordiv", "mod") and e.b.constant is not None and e.b.constant > 0:
        a = _division_stretch(e.a)
        return None if a is None else a * e.b.constant
    return None


def _env_text(env: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())


def _valid(order: str, c: engine.Concrete) -> bool:
    sliced = c.x if order == SLICE_FIRST else c.y
    if any(n < 1 for n in c.sizes) or any(s < 1 for s in c.strides) or any(o < 0 for o in c.offsets):
        return False
    if any(o + (n - 1) * s >= d for o, n, s, d in zip(c.offsets, c.sizes, c.strides, sliced)):
        return False
    if order == SLICE_FIRST:
        from math import prod

        return prod(c.sizes) == prod(c.z) and all(d >= 1 for d in c.z)
    return True


def _fit_rewrite(order: str, g: Group, legal, symbols) -> GroupResult:
    """The swapped pair as expressions of the symbols, fitted to the engine's candidates at every
    legal value (and so exact there)."""
    exprs = [e for e in g.offsets + g.sizes + g.strides + g.z if not _static(e)]
    envs = [env for env, _, _ in legal]
    outs = [o for _, _, o in legal]
    dims: list[Expr] = []
    if order == SLICE_FIRST:
        for k in range(len(outs[0].new_dims)):
            f = fit_expression([o.new_dims[k] for o in outs], envs, exprs)
            if f is None:
                return GroupResult(
                    "legal", "", rewrite_note="the swapped reshape's dims are not one expression of the runtime values"
                )
            dims.append(f)
    spec: Spec = []
    for k in range(len(outs[0].new_slice)):
        parts: list[Expr] = []
        for part in range(3):
            f = fit_expression([o.new_slice[k][part] for o in outs], envs, exprs)
            if f is None:
                return GroupResult(
                    "legal", "", rewrite_note="the swapped slice is not one expression of the runtime values"
                )
            parts.append(f)
        offset, size, stride = parts
        spec.append((offset, size, stride))
    return GroupResult("legal", "", new_dims=dims or None, new_slice=spec)


# ---- runtime dims ----------------------------------------------------------------------------


def _expand_rows(g: Group) -> GroupResult:
    """Slice (o, S, s) of a dim N, then expand into (a_1..a_m): legal iff for every j,
    a_j == 1, or P_j == 1, or N mod (s P_j) == 0 and o mod (s P_j) < s, where P_j is the product
    of the dims after j (the rows the swapped expand must have)."""
    n, o, s = g.x[0], g.offsets[0], g.strides[0]
    a = g.z
    rows = _row_sizes(a)
    parts = []
    for j in range(len(a)):
        step = mul(s, rows[j])
        fits = all_of(
            compare("==", mod(n, step), 0),
            compare("==", mod(o, step), 0) if s.constant == 1 else compare("<", mod(o, step), s),
        )
        unit_row = FALSE if s.constant == 1 else compare("==", rows[j], 1)
        unit_dim = FALSE if (s.constant == 1 and a[j] == rows[j]) else compare("==", a[j], 1)
        parts.append(any_of(unit_dim, unit_row, fits))
    cond = all_of(*parts)
    dims, spec = _expand_rows_candidate(n, o, s, a, 0)
    step = mul(s, rows[next((j for j, d in enumerate(a) if d.constant != 1), 0)])
    why = (
        f"expanding first needs rows of {step} elements of the {n}-long source, with the start inside a row's first {s}"
        if s.constant != 1
        else f"expanding first needs rows of {step} elements of the {n}-long source, starting at a row"
    )
    return _from_condition(SLICE_FIRST, g, cond, why, dims, spec)


def _expand_rows_candidate(n: Expr, o: Expr, s: Expr, a: list[Expr], start: int) -> tuple[list[Expr], Spec]:
    """The swapped pair when the first expanded dim longer than 1 is the first one at or after
    ``start`` not statically 1; a runtime dim that may be 1 splits into both cases, joined by
    ``arith.select`` per quantity (the rank is the same either way)."""
    m = len(a)
    k = next((j for j in range(start, m) if a[j].constant != 1), None)
    if k is None or k == m - 1:  # one dim longer than 1 at most: it takes the source
        p = m - 1
        dims = list(a)
        dims[p] = n
        spec: Spec = [(Const(0), a[j], Const(1)) for j in range(m)]
        spec[p] = (o, a[p], s)
        return dims, spec
    rows = _row_sizes(a)
    step = mul(s, rows[k])
    dims = list(a[:k]) + [floordiv(n, step)] + list(a[k + 1 : -1]) + [mul(a[-1], s)]
    spec = [(Const(0), a[j], Const(1)) for j in range(k)]
    spec.append((floordiv(o, step), a[k], Const(1)))
    spec += [(Const(0), a[j], Const(1)) for j in range(k + 1, m - 1)]
    spec.append((mod(o, step), a[-1], s))
    if a[k].constant is not None:
        return dims, spec
    other_dims, other_spec = _expand_rows_candidate(n, o, s, a, k + 1)
    long = compare("!=", a[k], 1)
    dims = [select(long, x, y) for x, y in zip(dims, other_dims)]
    spec = [
        (select(long, t0, u0), select(long, t1, u1), select(long, t2, u2))
        for (t0, t1, t2), (u0, u1, u2) in zip(spec, other_spec)
    ]
    return dims, spec


def _nested_progression(order: str, g: Group) -> GroupResult:
    """A box (o_i, S_i, s_i) of dims d_i, flattened: one progression iff for consecutive dims p < q
    longer than 1, s_p R_p == S_q s_q R_q (R the row sizes)."""
    dims = g.x if order == SLICE_FIRST else g.y
    rows = _row_sizes(dims)
    n = len(dims)
    parts = []
    for p in range(n):
        for q in range(p + 1, n):
            between = [compare("!=", g.sizes[m], 1) for m in range(p + 1, q)]
            parts.append(
                any_of(
                    compare("==", g.sizes[p], 1),
                    compare("==", g.sizes[q], 1),
                    *between,
                    compare("==", mul(g.strides[p], rows[p]), mul(g.sizes[q], mul(g.strides[q], rows[q]))),
                )
            )
    cond = all_of(*parts)
    offset: Expr = Const(0)
    for o, r in zip(g.offsets, rows):
        offset = offset + mul(o, r)
    # the step of the innermost dim longer than 1 at run time
    stride: Expr = mul(g.strides[n - 1], rows[n - 1])
    for i in range(n):
        if g.sizes[i].constant != 1:
            stride = select(compare("!=", g.sizes[i], 1), mul(g.strides[i], rows[i]), stride)
    spec = [(offset, product(g.sizes), stride)]
    return _from_condition(
        order, g, cond, "the elements taken must be one progression of the flattened dims", [product(dims)], spec
    )


def _from_condition(order: str, g: Group, cond: Cond, why: str, dims, spec) -> GroupResult:
    if cond == TRUE:
        return GroupResult("legal", why + ": always the case here", new_dims=dims, new_slice=spec)
    found = _failing_values(order, g, cond)
    if cond == FALSE:
        return GroupResult("illegal", why + ": never the case here", FALSE, counterexample=found)
    return GroupResult("conditional", why + f": {cond}", cond, new_dims=dims, new_slice=spec, counterexample=found)


def _failing_values(order: str, g: Group, cond: Cond, limit: int = 128, budget: int = 20000) -> dict | None:
    """Small values of the runtime quantities that make the pair valid and ``cond`` false, with
    what the engine finds there (why no swapped pair exists)."""
    quantities = g.x + g.y + g.offsets + g.sizes + g.strides + g.z
    symbols = sorted(set().union(*(q.free() for q in quantities)) | cond.free())
    while symbols and limit > 2 and (limit + 1) ** len(symbols) > budget:
        limit //= 2
    if not symbols or (limit + 1) ** len(symbols) > budget:
        return None
    for values in itertools.product(range(limit + 1), repeat=len(symbols)):
        env = dict(zip(symbols, values))
        try:
            if cond.holds(env):
                continue
            c = _concrete(order, g, env)
        except ZeroDivisionError:
            continue
        if _valid(order, c) and all(d >= 1 for d in c.x + c.y):
            out = engine.run(c)
            if out.verdict == "illegal":
                return {"values": env, **_counterexample(c, out.reason)}
    return None


__all__ = ["GroupResult", "decide", "lift"]
