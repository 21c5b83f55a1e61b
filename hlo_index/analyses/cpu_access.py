"""CPU target: does the innermost loop read an operand contiguously (so it can vectorise)?

XLA:CPU's loops run over the output in its physical order, a reduction's (or dot's) loop over
the reduced elements innermost. So the innermost loop of an operand's read is the map's last
range variable when it has one (a reduced / contracted / window dimension), else the output's
most minor physical dimension. Along that loop we step a few seeded starting points and look at
the operand's physical element offsets (its layout, tiles included): ``contiguous`` (step 1:
vectorisable), ``invariant`` (step 0: the loop reads one element, hoistable), ``strided (k)``
or ``irregular``. No GPU notion (warps, transactions) is involved.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import IndexingMap
from ..affine.equalities import solved_variables
from ..affine.evaluate import as_column, evaluate_columns
from ..affine.expr import DIM, RANGE, RUNTIME, Expr, variable
from ..hlo.model import Shape
from ..layout.plan import apply_steps, layout_plan, linearize
from .physical_order import minor_nontrivial

STEPS = 16  # consecutive iterations of the innermost loop looked at
SAMPLES = 8  # seeded starting points


def innermost_access(maps: Sequence[IndexingMap], operand_shape: Shape, output_shape: Shape, seed: int = 0) -> dict:
    """JSON-ready figure with a one-line ``summary``."""
    minor = minor_nontrivial(output_shape) if not output_shape.is_tuple else None
    if any(m.is_undefined for m in maps):
        reason = next(m.undefined_reason for m in maps if m.is_undefined)
        return _figure("unknown", f"unknown map: {reason}", minor, [])
    live = [m for m in maps if not m.is_known_empty]
    if not live:
        return _figure("unread", "the output reads nothing of this operand", minor, [])
    if operand_shape.rank == 0 or operand_shape.is_tuple:
        return _figure("vectorisable", "a scalar: every iteration reads the same element", minor, [])
    per_map = [_map_access(m, operand_shape, minor, seed) for m in live]
    worst = max(per_map, key=lambda p: ["contiguous", "invariant", "strided", "irregular", "none"].index(p["pattern"]))
    verdict = {"contiguous": "vectorisable", "invariant": "vectorisable"}.get(worst["pattern"], "not contiguous")
    if worst["pattern"] == "none":
        verdict = "unknown"
    return _figure(verdict, _clause(worst), minor, per_map)


def _figure(verdict: str, reason: str, minor: int | None, per_map: list) -> dict:
    summary = reason if verdict in ("unknown", "unread") else f"{reason} — {verdict}"
    return {
        "target": "cpu",
        "verdict": verdict,
        "reason": reason,
        "minor_output_dim": minor,
        "maps": per_map,
        "summary": summary,
    }


def _clause(p: dict) -> str:
    loop = p["innermost_loop"]
    pattern = p["pattern"]
    if pattern == "contiguous":
        return f"innermost loop ({loop}) reads consecutive elements"
    if pattern == "invariant":
        return f"innermost loop ({loop}) reads one element (loop-invariant)"
    if pattern == "strided":
        stride = p["stride"]
        if stride == -1:
            return f"innermost loop ({loop}) steps back one element at a time (stride -1)"
        backwards = " in reverse" if stride < 0 else ""
        return f"innermost loop ({loop}) reads every {_ordinal(abs(stride))} element{backwards}"
    if pattern == "irregular":
        return f"innermost loop ({loop}) reads irregularly spaced elements"
    return f"innermost loop ({loop}) reads nothing at the points sampled"


def _ordinal(n: int) -> str:
    """2nd, 3rd, 4th, 11th, 21st, 512th."""
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _linear_stride(m: IndexingMap, shape: Shape, kind: int, index: int, iv) -> int | None:
    """The step between the physical offsets of consecutive iterations when it is one constant:
    the map has no constraints (every sampled iteration reads), the layout has no tiles, and the
    loop variable enters the offset only linearly. Then every step the samples below would see
    is that constant, so the answer is theirs without drawing them; None otherwise."""
    if m.constraints or min(STEPS, iv.size) < 2 or m.num_results != shape.rank:
        return None
    if any(v.lo > v.hi for v in (*m.dims, *m.range_vars)):
        return None  # an empty domain: the sampler's own error is the answer
    plan = layout_plan(shape)
    if plan.steps:
        return None
    offset = linearize(apply_steps(plan, list(m.results)), plan.physical_dims)
    if not isinstance(offset, Expr):
        return 0
    loop = variable(kind, index)
    stride = _loop_coefficient(offset, loop)
    if stride is None:
        # a row-major offset of digits, (d0 floordiv 128) * 128 + d0 mod 128, is d0 over its
        # domain: the simplifier knows the variables' ranges (the map has no constraints)
        whole = IndexingMap(m.dims, m.range_vars, m.runtime_vars, [offset]).simplified()
        if whole.is_known_empty:
            return None
        stride = _loop_coefficient(whole.results[0], loop)
    return stride


def _loop_coefficient(offset: Expr, loop: Expr) -> int | None:
    """The coefficient of ``loop`` in ``offset`` when it enters only linearly (0 when absent)."""
    _, terms = offset.linear_terms()
    stride = 0
    for atom, coefficient in terms:
        if atom == loop:
            stride = coefficient
        elif loop in atom.variables():
            return None
    return stride


# which variable an equality is solved for: the free choice of a runtime value before the others
_SOLVE_FIRST = {RUNTIME: 0, RANGE: 1, DIM: 2}


def _draws(seed: int):
    """Integers in ``[lo, hi]`` from a splitmix64 stream of ``seed``: the same draws on every
    platform and Python, without numpy (a modulo's bias is immaterial to where samples start)."""
    state = seed & _MASK64

    def draw(lo: int, hi: int) -> int:
        nonlocal state
        if hi < lo:
            raise ValueError(f"no integer in [{lo}, {hi}]")
        state = (state + 0x9E3779B97F4A7C15) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return lo + (z ^ (z >> 31)) % (hi - lo + 1)

    return draw


_MASK64 = (1 << 64) - 1


def _map_access(m: IndexingMap, shape: Shape, minor: int | None, seed: int) -> dict:
    used = set()
    for e in m.results:
        used |= {v.value for v in e.variables() if v.kind == RANGE}
    ranges = [i for i in sorted(used) if m.range_vars[i].size > 1]
    if ranges:
        kind, index, iv, name = RANGE, ranges[-1], m.range_vars[ranges[-1]], f"over s{ranges[-1]}"
    elif minor is not None and minor < m.num_dims:
        kind, index, iv, name = DIM, minor, m.dims[minor], f"over output dim {minor}"
    else:
        return {"pattern": "invariant", "stride": 0, "innermost_loop": "none"}
    stride = _linear_stride(m, shape, kind, index, iv)
    if stride is not None:
        if stride == 1:
            return {"pattern": "contiguous", "stride": 1, "innermost_loop": name}
        if stride == 0:
            return {"pattern": "invariant", "stride": 0, "innermost_loop": name}
        return {"pattern": "strided", "stride": stride, "innermost_loop": name}
    if iv.size < 2 and not any(v.lo > v.hi for v in (*m.dims, *m.range_vars)):
        # a loop of one iteration has no consecutive pair to look at, whatever the samples
        return {"pattern": "none", "stride": None, "innermost_loop": name}
    draw = _draws(seed)
    steps = min(STEPS, iv.size)
    env: dict = {}
    for i, d in enumerate(m.dims):
        env[(DIM, i)] = [v for _ in range(SAMPLES) for v in [draw(d.lo, d.hi)] * steps]
    for i, r in enumerate(m.range_vars):
        env[(RANGE, i)] = [v for _ in range(SAMPLES) for v in [draw(r.lo, r.hi)] * steps]
    for i, rv in enumerate(m.runtime_vars):
        env[(RUNTIME, i)] = (rv.interval.lo + rv.interval.hi) // 2
    starts = [draw(iv.lo, max(iv.hi - steps + 1, iv.lo)) for _ in range(SAMPLES)]
    env[(kind, index)] = [start + k for start in starts for k in range(steps)]
    n = SAMPLES * steps
    memo: dict = {}
    keep = [True] * n
    # an equality that fixes a variable other than the loop's is solved for it (a runtime value
    # first, an output index last), so the samples lie on the diagonal instead of missing it
    loop = variable(kind, index)
    for v, c, rest, which in solved_variables(
        m,
        range(len(m.constraints)),
        loop.__ne__,
        rest_may_name=lambda names: loop not in names,
        rank=lambda v: _SOLVE_FIRST[v.kind],
    ):
        lo = m.constraints[which][1].lo
        fixed = [c * (lo - x) for x in as_column(evaluate_columns(rest, env, memo), n)]
        env[(v.kind, v.value)] = fixed
        bounds = m.variable_interval(v)
        keep = [ok and bounds.lo <= x <= bounds.hi for ok, x in zip(keep, fixed)]
    for e, b in m.constraints:
        keep = [ok and b.lo <= x <= b.hi for ok, x in zip(keep, as_column(evaluate_columns(e, env, memo), n))]
    rows = list(zip(*(as_column(evaluate_columns(e, env, memo), n) for e in m.results)))
    plan = layout_plan(shape)
    offsets = [linearize(apply_steps(plan, list(row)), plan.physical_dims) if ok else -1 for ok, row in zip(keep, rows)]
    diffs = [
        offsets[p + 1] - offsets[p]
        for s in range(SAMPLES)
        for p in range(s * steps, (s + 1) * steps - 1)
        if keep[p] and keep[p + 1]  # consecutive iterations that both read
    ]
    if not diffs:
        return {"pattern": "none", "stride": None, "innermost_loop": name}
    if all(d == 1 for d in diffs):
        return {"pattern": "contiguous", "stride": 1, "innermost_loop": name}
    if all(d == 0 for d in diffs):
        return {"pattern": "invariant", "stride": 0, "innermost_loop": name}
    if all(d == diffs[0] for d in diffs):
        return {"pattern": "strided", "stride": diffs[0], "innermost_loop": name}
    return {"pattern": "irregular", "stride": None, "innermost_loop": name}
