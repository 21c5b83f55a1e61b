"""One thread map's first reading warp and XLA's coalescing verdict on it
(``coalescing_analysis.cc``, ``IsIndexingCoalesced``): the physical element offsets the warp
reads, merged into contiguous intervals, each costing ``ceil(bytes / 128)`` transactions against
the ideal ``ceil(all bytes / 128)``; coalesced when ``ideal > 0.9 * transactions``. Where the layout
is untiled and the first reading warp is found among the few the constraints leave possible, by
arithmetic on the map's expressions; else by evaluating the warps with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil
from typing import TYPE_CHECKING

from ..affine import IndexingMap
from ..affine.evaluate import distinct_sorted, evaluate_expr
from ..affine.expr import CEILDIV, CONST, DIM, FLOORDIV, MOD, RANGE, RUNTIME, SUM, VARIABLE_KINDS
from ..context import current, register_table
from ..layout.plan import LayoutError, layout_plan
from .emitters import BX, TX, ThreadPlan
from .gpu_devices import GpuDevice
from .utilization import storage_bits

if TYPE_CHECKING:
    import numpy as np

_BATCH = 128
# Per analysis context: one thread map's warp read (``memoised_warp_read``).
_WARP_READS = register_table("analyses.warp_reads")


@dataclass(frozen=True)
class WarpRead:
    """One thread map's first reading warp: what it touches and what XLA's rule says."""

    thread_map: str
    warp: int | None  # warp number (None: no warp within the budget reads)
    intervals: tuple[tuple[int, int], ...] = ()  # contiguous physical element ranges
    transactions: int = 0  # sum of ceil(interval bytes / 128)
    ideal_transactions: int = 0  # ceil(all bytes / 128)
    segments: int = 0  # aligned 128-byte segments actually touched
    vector_loop: str | None = None  # the innermost loop read as one vector access
    coalesced: bool = True
    note: str = ""

    def to_json(self) -> dict:
        return {
            "thread_map": self.thread_map,
            "warp": self.warp,
            "intervals": [list(iv) for iv in self.intervals[:8]],
            "interval_count": len(self.intervals),
            "transactions": self.transactions,
            "ideal_transactions": self.ideal_transactions,
            "segments_128B": self.segments,
            "vector_loop": self.vector_loop,
            "coalesced": self.coalesced,
            "note": self.note,
        }


def warp_read(m: IndexingMap, shape, plan: ThreadPlan, device: GpuDevice, text: str | None = None) -> WarpRead:
    """The first warp that reads through ``m`` and XLA's verdict on it (``text``: ``str(m)``,
    when the caller has it already): by arithmetic where it applies (``_arithmetic_warp_read``),
    else by evaluating the warps (``scanned_warp_read``)."""
    if text is None:
        text = str(m)
    if m.is_undefined or m.is_known_empty or m.num_results != shape.rank:
        return scanned_warp_read(m, shape, plan, device, text)
    return _arithmetic_warp_read(m, shape, plan, device, text) or scanned_warp_read(m, shape, plan, device, text)


def _innermost(m: IndexingMap, plan: ThreadPlan):
    """The loop each thread reads along at once: (kind, index, interval, its name for the vector
    read), or four Nones: the op's last range variable the results use (a loop of more than one
    iteration), else the emitter's vector / unroll loop."""
    n_loops = m.num_dims - 2
    inner_range = _innermost_range_var(m)
    if inner_range is not None:
        return RANGE, inner_range, m.range_vars[inner_range], f"s{inner_range} (the op's innermost loop)"
    if plan.innermost is not None and n_loops > 0:
        name = plan.loops[plan.innermost] if plan.innermost < len(plan.loops) else None
        return DIM, 2 + plan.innermost, m.dims[2 + plan.innermost], name
    return None, None, None, None


_AFFINE_POINTS = 1024  # (lane, iteration) points of one warp at most for the arithmetic path
# ... unless the warp's reads are runs: no constraint and no division (each lane's offsets are
# then one progression along the loop), up to this many iterations
_RUN_ITERATIONS = 1 << 16
_WARPS_TRIED = 32  # warps the arithmetic path evaluates from the first that may read; past them, the scan

# A value in one warp: ``(c, a, b)`` for ``c + a * lane + b * k`` (``k`` the innermost loop's
# iteration), or one int per point, lane-major: point ``lane * len(k_values) + j``.
_Form = tuple[int, int, int]


def _arithmetic_warp_read(m: IndexingMap, shape, plan: ThreadPlan, device: GpuDevice, text: str) -> WarpRead | None:
    """``scanned_warp_read``'s answer by arithmetic, or None where it does not apply.

    In one warp every variable is ``c + a * lane + b * k`` (thread_x = the warp's first thread +
    lane, block_x and the other variables where the scan puts them, ``k`` the innermost loop's
    iteration), and so is every sum of them; a division is one too when the operand's values in
    the warp share one quotient, else it is evaluated point by point. An untiled layout's offset
    is a sum of strides times the indices, and the warp's reads along the loop are one vector
    access exactly when every fully reading lane's offsets step by 1. Warps before the first
    that can meet every constraint linear in the warp number read nothing, so the search starts
    there and evaluates ``_WARPS_TRIED`` warps. None when the layout is tiled, a warp has more
    than ``_AFFINE_POINTS`` points (a map without constraints and divisions: ``_RUN_ITERATIONS``
    iterations, its reads taken as runs) or none of the warps tried reads (the scan looks further)."""
    warp = device.warp_size
    per_block = max(plan.threads_per_block // warp, 1)
    count = min(max(plan.blocks, 1) * per_block, current().budgets.coalescing_scan_warps)
    if count <= 0:
        return None
    inner_kind, inner_index, inner_iv, vector_name = _innermost(m, plan)
    k_values = range(inner_iv.lo, inner_iv.hi + 1) if inner_iv is not None else range(1)
    # every lane's offsets a progression along the loop: its reads are counted as runs, not listed
    as_runs = not m.constraints and all(e.count_divisions() == 0 for e in m.results)
    if warp * len(k_values) > _AFFINE_POINTS and not (as_runs and len(k_values) <= _RUN_ITERATIONS):
        return None
    try:
        layout = layout_plan(shape)
    except LayoutError:
        return None
    if layout.steps:
        return None
    fixed: dict[tuple[int, int], int] = {}  # the variables that stay put in every warp
    for i in range(2, m.num_dims):
        fixed[(DIM, i)] = m.dims[i].lo
    for i, iv in enumerate(m.range_vars):
        fixed[(RANGE, i)] = iv.lo
    for i, rv in enumerate(m.runtime_vars):
        fixed[(RUNTIME, i)] = (rv.interval.lo + rv.interval.hi) // 2
    inner = (inner_kind, inner_index) if inner_kind is not None and inner_index is not None else None
    if inner is not None:
        fixed.pop(inner, None)
    strides = [0] * shape.rank
    stride = 1
    for position in range(shape.rank - 1, -1, -1):
        d = layout.major_to_minor[position]
        strides[d] = stride
        stride *= shape.dims[d]
    first = _first_possible_warp(m, fixed, inner, warp, per_block, k_values)
    bits = storage_bits(shape)
    for w in range(first, min(first + _WARPS_TRIED, count)):
        tx0, bx = warp * (w % per_block), w // per_block
        env: dict[tuple[int, int], _Form] = {(DIM, TX): (tx0, 1, 0), (DIM, BX): (bx, 0, 0)}
        for variable, value in fixed.items():
            env[variable] = (value, 0, 0)
        if inner is not None:
            env[inner] = (0, 0, 1)
        if as_runs and bits <= 8 * device.transaction_bytes:
            runs = _runs_of_warp(m, env, tx0, bx, strides, k_values, warp)
            if runs is not None:
                vector, intervals = runs
                return _verdict_of_runs(text, w, intervals, bits, device, vector_name if vector else None)
            continue
        if warp * len(k_values) > _AFFINE_POINTS:
            return None
        read = _read_of_warp(m, env, w, tx0, bx, strides, k_values, warp)
        if read is not None:
            vector, picked = read
            return _verdict(text, w, picked, bits, device, vector_name if vector else None)
    return None


def _runs_of_warp(
    m: IndexingMap, env: dict, tx0: int, bx: int, strides: list[int], k_values: range, warp: int
) -> tuple[bool, tuple[tuple[int, int], ...]] | None:
    """``_read_of_warp``'s answer for a map without constraints or divisions, its offsets as runs
    (the maximal intervals of consecutive offsets): every lane up to the last thread reads at
    every iteration, and its offset is ``c + a * lane + b * k``. None if the warp reads nothing."""
    lanes = max(0, min(warp, m.dims[TX].hi - tx0 + 1)) if bx <= m.dims[BX].hi else 0
    if lanes == 0:
        return None
    memo: dict = {}
    c = a = b = 0
    for stride, e in zip(strides, m.results):
        value = _warp_values(e, env, memo, k_values, warp)
        assert type(value) is tuple  # no division: every value is a form
        c, a, b = c + stride * value[0], a + stride * value[1], b + stride * value[2]
    # one vector read when each lane's offsets step by 1 along a loop of 2 or more iterations
    vector = len(k_values) >= 2 and b == 1
    k0 = k_values[0]
    if not vector:  # the first iteration's offsets, one per lane
        return False, _runs(sorted({c + a * lane + b * k0 for lane in range(lanes)}))
    # each lane reads [first, first + iterations - 1]
    spans = sorted((c + a * lane + k0, c + a * lane + k_values[-1]) for lane in range(lanes))
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return vector, tuple((lo, hi) for lo, hi in merged)


def _first_possible_warp(m: IndexingMap, fixed: dict, inner, warp: int, per_block: int, k_values: range) -> int:
    """A warp number no reading warp comes before: for each constraint linear in the warp number
    (through thread_x and block_x together, as ``thread_x + block_x * threads``, or through block_x
    alone), the first warp whose range of values (every lane, every iteration) meets its interval;
    for a constraint on divisions of such an expression, the first warp that reaches the least value
    of it that can meet the constraint (``_divided_lower_bound``)."""
    forms: dict[tuple[int, int], tuple[int, ...]] = {(DIM, TX): (0, 1, 0, 0), (DIM, BX): (0, 0, 1, 0)}
    for variable, value in fixed.items():
        forms[variable] = (value, 0, 0, 0)
    if inner is not None:
        forms[inner] = (0, 0, 0, 1)
    first = 0
    for e, iv in m.constraints:
        lo: int = iv.lo
        hi: int | None = iv.hi
        form = _affine_form(e, forms)
        if form is None:  # through divisions, a lower bound on what they divide
            divided = _divided_lower_bound(e, lo, forms, k_values)
            if divided is None:
                continue
            form, lo = divided
            hi = None
        c, per_tx, per_bx, per_k = form
        # in warp w: c + per_tx * (warp * (w % per_block) + lane) + per_bx * (w // per_block) + per_k * k
        if per_block == 1:
            slope, scale = per_bx, 1
        elif per_bx == per_tx * warp * per_block:
            slope, scale = per_tx * warp, 1
        elif per_tx == 0:
            slope, scale = per_bx, per_block  # a function of the block, w // per_block
        else:
            continue
        if slope == 0 or (slope < 0 and hi is None):
            continue
        rest_lo = min(0, per_tx * (warp - 1)) + min(per_k * k_values[0], per_k * k_values[-1])
        rest_hi = max(0, per_tx * (warp - 1)) + max(per_k * k_values[0], per_k * k_values[-1])
        # the least v with c + slope * v + rest_hi >= lo (slope > 0) or c + slope * v + rest_lo <= hi
        bound = lo - c - rest_hi if slope > 0 or hi is None else hi - c - rest_lo
        first = max(first, -(-bound // slope) * scale)
    return first


def _divided_lower_bound(e, lo: int, forms: dict, k_values: range) -> tuple[tuple[int, ...], int] | None:
    """For a constraint ``e >= lo`` whose ``e`` is a chain of ``floordiv`` and ``mod`` (each with a
    constant added or not) over an expression ``x`` affine in the warp and never negative: ``x``'s
    form and a bound no value of ``x`` that meets the constraint is below. None otherwise.

    From the outside in, each bound is one every ``x`` in ``[0, bound)`` fails: ``y floordiv q >= v``
    needs ``y >= v * q``; ``y mod n`` is ``y`` below ``n`` and never reaches ``n``, so
    ``y mod n >= v`` fails for every ``y < min(v, n)``."""
    need = lo
    divided = False
    while True:
        if e.kind == FLOORDIV:
            need, e, divided = max(need, 0) * e.value, e.operand, True
        elif e.kind == MOD:
            need, e, divided = min(max(need, 0), e.value), e.operand, True
        else:
            constant, terms = e.linear_terms()
            if len(terms) != 1 or terms[0][1] != 1 or terms[0][0].kind not in (FLOORDIV, MOD):
                break
            need, e = need - constant, terms[0][0]
    form = _affine_form(e, forms) if divided else None
    if form is None:
        return None
    c, per_tx, per_bx, per_k = form
    # x is never negative (warp numbers, lanes and iterations are not), as each step above assumes
    if c < 0 or per_tx < 0 or per_bx < 0 or min(per_k * k_values[0], per_k * k_values[-1]) < 0:
        return None
    return form, need


def _read_of_warp(
    m: IndexingMap, env: dict, w: int, tx0: int, bx: int, strides: list[int], k_values: range, warp: int
) -> tuple[bool, list[int]] | None:
    """(whether it is one vector read, the offsets the XLA rule counts) of warp ``w``, or None
    if it reads nothing through ``m``."""
    nk = len(k_values)
    n = warp * nk
    lanes = max(0, min(warp, m.dims[TX].hi - tx0 + 1)) if bx <= m.dims[BX].hi else 0
    if lanes == 0:
        return None
    memo: dict = {}
    selected = [True] * (lanes * nk) + [False] * (n - lanes * nk)
    for e, iv in m.constraints:
        values = _points(_warp_values(e, env, memo, k_values, warp), k_values, warp)
        lo, hi = iv.lo, iv.hi
        selected = [s and lo <= v <= hi for s, v in zip(selected, values)]
    if not any(selected):
        return None
    c0 = per_lane = per_k = 0
    lists: list[tuple[list[int], int]] = []
    for s, e in zip(strides, m.results):
        value = _warp_values(e, env, memo, k_values, warp)
        if isinstance(value, tuple):
            c0 += s * value[0]
            per_lane += s * value[1]
            per_k += s * value[2]
        else:
            lists.append((value, s))
    offsets: _Form | list[int] = (c0, per_lane, per_k)
    if lists:
        offsets = _points((c0, per_lane, per_k), k_values, warp)
        for value, s in lists:
            offsets = [o + s * v for o, v in zip(offsets, value)]
    vector = False
    if nk >= 2:
        full = [lane for lane in range(warp) if all(selected[lane * nk : lane * nk + nk])]
        if full and isinstance(offsets, tuple):
            vector = offsets[2] == 1
        elif full:
            vector = all(
                offsets[i + 1] - offsets[i] == 1 for lane in full for i in range(lane * nk, lane * nk + nk - 1)
            )
    if vector:
        points = [i for i in range(n) if selected[i]]
    else:
        j = next(j for j in range(nk) if any(selected[j::nk]))
        points = [i for i in range(j, n, nk) if selected[i]]
    if isinstance(offsets, tuple):
        c, a, b = offsets
        return vector, [c + a * (i // nk) + b * k_values[i % nk] for i in points]
    return vector, [offsets[i] for i in points]


def _warp_values(e, env: dict, memo: dict, k_values: range, warp: int) -> _Form | list[int]:
    """``e``'s values in one warp (``_Form``), given each variable's."""
    hit = memo.get(e)
    if hit is not None:
        return hit
    kind = e.kind
    value: _Form | list[int]
    if kind == CONST:
        value = (e.value, 0, 0)
    elif kind in VARIABLE_KINDS:
        value = env[(kind, e.value)]
    elif kind == SUM:
        c, a, b = e.value, 0, 0
        lists = []
        for atom, k in e.terms:
            x = _warp_values(atom, env, memo, k_values, warp)
            if type(x) is tuple:
                c += k * x[0]
                a += k * x[1]
                b += k * x[2]
            else:
                lists.append((x, k))
        value = (c, a, b)
        if lists:
            value = _points(value, k_values, warp)
            for x, k in lists:
                value = [v + k * p for v, p in zip(value, x)]
    else:
        value = _divided(kind, e.value, _warp_values(e.operand, env, memo, k_values, warp), k_values, warp)
    memo[e] = value
    return value


def _divided(kind: int, q: int, x: _Form | list[int], k_values: range, warp: int) -> _Form | list[int]:
    """``x floordiv q``, ``x ceildiv q`` or ``x mod q``: a form when every value of ``x`` in the
    warp has one quotient, else point by point."""
    if type(x) is tuple:
        c, a, b = x
        lo = c + min(0, a * (warp - 1)) + min(b * k_values[0], b * k_values[-1])
        hi = c + max(0, a * (warp - 1)) + max(b * k_values[0], b * k_values[-1])
        if kind == CEILDIV:
            if -(-lo // q) == -(-hi // q):
                return (-(-lo // q), 0, 0)
        elif lo // q == hi // q:
            return (lo // q, 0, 0) if kind == FLOORDIV else (c - q * (lo // q), a, b)
        x = _points(x, k_values, warp)
    if kind == FLOORDIV:
        return [v // q for v in x]
    if kind == CEILDIV:
        return [-(-v // q) for v in x]
    return [v % q for v in x]


def _points(value: _Form | list[int], k_values: range, warp: int) -> list[int]:
    if type(value) is not tuple:
        return value  # type: ignore[return-value]
    c, a, b = value
    return [c + a * lane + b * k for lane in range(warp) for k in k_values]


def _affine_form(e, forms: dict) -> tuple[int, ...] | None:
    """``e`` as a vector of (constant, coefficients...) given each variable's ``forms`` (vectors
    of one length); None if an atom of ``e`` is a division."""
    constant, terms = e.linear_terms()
    total = [constant] + [0] * (len(next(iter(forms.values()))) - 1)
    for atom, k in terms:
        form = forms.get((atom.kind, atom.value)) if atom.kind in VARIABLE_KINDS else None
        if form is None:
            return None
        for i, x in enumerate(form):
            total[i] += k * x
    return tuple(total)


def scanned_warp_read(m: IndexingMap, shape, plan: ThreadPlan, device: GpuDevice, text: str | None = None) -> WarpRead:
    """``warp_read`` by evaluating the map on the warps in order, up to the first that reads."""
    import numpy as np

    from ..layout import layout_cells

    if text is None:
        text = str(m)
    if m.is_undefined:
        return WarpRead(text, None, coalesced=False, note=f"unknown map: {m.undefined_reason}")
    if m.is_known_empty:
        return WarpRead(text, None, note="no thread reads this operand through this map")
    if m.num_results != shape.rank:
        return WarpRead(
            text,
            None,
            coalesced=False,
            note=f"unknown map: it has {m.num_results} results for a rank-{shape.rank} operand",
        )
    warp = device.warp_size
    per_block = max(plan.threads_per_block // warp, 1)
    total = max(plan.blocks, 1) * per_block
    inner_kind, inner_index, inner_iv, vector_name = _innermost(m, plan)
    k_values = np.arange(inner_iv.lo, inner_iv.hi + 1) if inner_iv is not None else np.zeros(1, np.int64)
    runtime = {(RUNTIME, i): (rv.interval.lo + rv.interval.hi) // 2 for i, rv in enumerate(m.runtime_vars)}
    bits = storage_bits(shape)
    scan_warps = current().budgets.coalescing_scan_warps
    lanes = np.arange(warp)[None, :, None]
    for start, stop in _warp_batches(min(total, scan_warps)):
        ws = np.arange(start, stop)
        # (warp, lane, innermost iteration) as broadcast axes: each variable only as large as
        # what it varies with; the points are the same as the full grid's
        shape3 = (len(ws), warp, len(k_values))
        tx = ((ws % per_block) * warp)[:, None, None] + lanes
        bx = (ws // per_block)[:, None, None]
        env: dict[tuple[int, int], np.ndarray | int] = {(DIM, TX): tx, (DIM, BX): bx}
        for i in range(2, m.num_dims):
            env[(DIM, i)] = m.dims[i].lo
        for i, iv in enumerate(m.range_vars):
            env[(RANGE, i)] = iv.lo
        if inner_kind is not None and inner_index is not None:
            env[(inner_kind, inner_index)] = k_values[None, None, :]
        env.update(runtime)
        memo: dict = {}
        keep = (tx <= m.dims[TX].hi) & (bx <= m.dims[BX].hi)
        for e, iv in m.constraints:
            value = evaluate_expr(e, env, memo)
            keep = keep & (value >= iv.lo) & (value <= iv.hi)
        keep3 = np.broadcast_to(keep, shape3)
        if not keep3.any():
            continue
        first = int(np.argmax(keep3.reshape(len(ws), -1).any(axis=1)))
        sel = keep3[first]
        idx = (
            np.stack([np.broadcast_to(evaluate_expr(e, env, memo), shape3)[first] for e in m.results], axis=-1)
            if m.results
            else np.zeros(sel.shape + (0,), np.int64)
        )
        offsets = np.full(sel.shape, -1, dtype=np.int64)
        if shape.rank:
            offsets[sel] = layout_cells(shape, idx[sel])[0]
        else:
            offsets[sel] = 0
        vector = _is_vector_read(offsets, sel, k_values)
        if not vector:
            column = sel[:, 0] if sel.shape[1] else sel
            if not column.any():  # no thread reads at the first iteration: take the first that does
                j = int(np.argmax(sel.any(axis=0)))
                column = sel[:, j]
                picked = offsets[:, j][column]
            else:
                picked = offsets[:, 0][column]
        else:
            picked = offsets[sel]
        return _verdict(text, int(ws[first]), picked, bits, device, vector_name if vector else None)
    return WarpRead(
        text,
        None,
        note=f"none of the first {min(total, scan_warps)} warps reads this operand "
        f"through this map (budget coalescing_scan_warps={scan_warps})",
    )


def _warp_batches(count: int) -> list[tuple[int, int]]:
    """[start, stop) of the warps evaluated together, in order: warp 0 alone first (it reads in
    nearly every map, and the first reading warp decides), then batches of ``_BATCH``."""
    if count <= 0:
        return []
    return [(0, 1)] + [(start, min(start + _BATCH, count)) for start in range(1, count, _BATCH)]


def memoised_warp_read(m: IndexingMap, shape, plan: ThreadPlan, device: GpuDevice) -> WarpRead:
    """``warp_read``, once per context for what it reads: the map as written (its text is in the
    figure), the operand's shape with its layout, the plan's grid and loops, the device."""
    budget = current().budgets.coalescing_scan_warps
    # the map by its parts, not its text: equal parts print equally, and a hit needs no printing
    key = (as_written(m), shape, plan.threads_per_block, plan.blocks, plan.innermost, plan.loops, device, budget)
    memo = current().tables[_WARP_READS]
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = warp_read(m, shape, plan, device)
    return hit


def as_written(m: IndexingMap) -> tuple:
    """``m``'s parts as they are, not simplified: equal for maps that print and read alike
    (expressions are interned, so hashing it costs no walk of them)."""
    return (m.dims, m.range_vars, m.runtime_vars, m.results, m.constraints, m.is_known_empty, m.undefined_reason)


def _innermost_range_var(m: IndexingMap) -> int | None:
    used = set()
    for e in m.results:
        used |= {v.value for v in e.variables() if v.kind == RANGE}
    candidates = [i for i in used if m.range_vars[i].size > 1]
    return max(candidates) if candidates else None


def _is_vector_read(offsets: np.ndarray, sel: np.ndarray, k_values: np.ndarray) -> bool:
    """Every thread reads consecutive elements along the innermost loop (one vector access)."""
    import numpy as np

    if len(k_values) < 2:
        return False
    rows = sel.all(axis=1)
    if not rows.any():
        return False
    o = offsets[rows]
    return bool(np.all(np.diff(o, axis=1) == 1))


_SMALL_READ = 1024  # offsets of a warp read up to this many are merged as Python ints (no numpy calls)


def _verdict(text, warp_index, offsets, bits, device: GpuDevice, vector) -> WarpRead:
    tb = device.transaction_bytes
    if len(offsets) <= _SMALL_READ:
        small = sorted(set(offsets if isinstance(offsets, list) else offsets.tolist()))
        intervals = _runs(small)
        segments = len({v * bits // 8 // tb for v in small} | {((v + 1) * bits - 1) // 8 // tb for v in small})
        distinct = len(small)
    else:
        import numpy as np

        array = distinct_sorted(np.asarray(offsets).reshape(-1))
        breaks = np.nonzero(np.diff(array) != 1)[0]
        starts = np.concatenate([[0], breaks + 1])
        ends = np.concatenate([breaks, [len(array) - 1]])
        intervals = tuple((int(array[s]), int(array[e])) for s, e in zip(starts, ends))
        first = array * bits // 8 // tb
        last = ((array + 1) * bits - 1) // 8 // tb
        segments = len(set(first.tolist()) | set(last.tolist()))
        distinct = len(array)
    return _read(text, warp_index, intervals, distinct, segments, bits, device, vector)


def _read(text, warp_index, intervals, distinct: int, segments: int, bits: int, device: GpuDevice, vector) -> WarpRead:
    """XLA's rule on a warp's read: ``ceil(bytes / 128)`` transactions per run against the ideal
    ``ceil(all bytes / 128)``, coalesced when the ideal is above the threshold's share."""
    tb = device.transaction_bytes
    transactions = sum(ceil((hi - lo + 1) * bits / 8 / tb) for lo, hi in intervals)
    ideal = ceil(distinct * bits / 8 / tb)
    ok = transactions == 0 or ideal > transactions * device.coalesced_threshold
    return WarpRead(text, warp_index, intervals, transactions, ideal, segments, vector, ok)


def _verdict_of_runs(text, warp_index, intervals, bits, device: GpuDevice, vector) -> WarpRead:
    """``_verdict`` of the offsets of ``intervals`` (sorted, apart, not adjacent), not listed: an
    element is no wider than a transaction, so the segments a run touches are those from its
    first byte's to its last byte's."""
    tb = device.transaction_bytes
    segments = distinct = 0
    counted: int | None = None  # the last segment counted: the runs are sorted, so their segments are too
    for lo, hi in intervals:
        distinct += hi - lo + 1
        first, last = lo * bits // 8 // tb, ((hi + 1) * bits - 1) // 8 // tb
        if counted is None or last > counted:
            segments += last - (first if counted is None else max(first, counted + 1)) + 1
            counted = last
    return _read(text, warp_index, intervals, distinct, segments, bits, device, vector)


def _runs(values: list[int]) -> tuple[tuple[int, int], ...]:
    """The maximal runs of consecutive integers in sorted distinct ``values``, as (first, last)."""
    runs = []
    lo = prev = values[0]
    for v in values[1:]:
        if v != prev + 1:
            runs.append((lo, prev))
            lo = v
        prev = v
    runs.append((lo, prev))
    return tuple(runs)
