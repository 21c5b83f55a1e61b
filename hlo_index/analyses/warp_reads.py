"""One thread map's first reading warp and XLA's coalescing verdict on it
(``coalescing_analysis.cc``, ``IsIndexingCoalesced``): the physical element offsets the warp
reads, merged into contiguous intervals, each costing ``ceil(bytes / 128)`` transactions against
the ideal ``ceil(all bytes / 128)``; coalesced when ``ideal > 0.9 * transactions``. Where the map
is affine, warp 0 reads and the layout is untiled, by arithmetic; else by evaluating the warps.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

import numpy as np

from ..affine import IndexingMap, Interval
from ..affine.evaluate import distinct_sorted, evaluate_expr
from ..affine.expr import DIM, RANGE, RUNTIME, VARIABLE_KINDS
from ..context import current, register_table
from .emitters import BX, TX, ThreadPlan
from .gpu_devices import GpuDevice
from .utilization import storage_bits

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
    when the caller has it already): by arithmetic where the map is affine, warp 0 reads and the
    layout is untiled (``_affine_warp_read``), else by evaluating the warps (``scanned_warp_read``)."""
    if text is None:
        text = str(m)
    if m.is_undefined or m.is_known_empty or m.num_results != shape.rank:
        return scanned_warp_read(m, shape, plan, device, text)
    return _affine_warp_read(m, shape, plan, device, text) or scanned_warp_read(m, shape, plan, device, text)


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


_AFFINE_POINTS = 1024  # (lane, iteration) points of warp 0 at most for the arithmetic path


def _affine_warp_read(m: IndexingMap, shape, plan: ThreadPlan, device: GpuDevice, text: str) -> WarpRead | None:
    """``scanned_warp_read``'s answer by arithmetic, or None where it does not apply.

    Every result and constraint of an affine map is ``c + a * lane + b * k`` in warp 0 (thread_x
    = lane, block_x = 0, the other variables where the scan puts them, ``k`` the innermost
    loop's iteration), and an untiled layout's offset is a sum of strides times the indices: the
    offsets of warp 0 are ``C + A * lane + B * k`` and its reads along the loop are one vector
    access exactly when B = 1. None when a result or constraint has a division, the layout is
    tiled, warp 0 reads nothing through ``m`` (the scan looks further) or it would make more
    than ``_AFFINE_POINTS`` points."""
    from ..layout.plan import LayoutError, layout_plan

    warp = device.warp_size
    per_block = max(plan.threads_per_block // warp, 1)
    if min(max(plan.blocks, 1) * per_block, current().budgets.coalescing_scan_warps) <= 0:
        return None
    inner_kind, inner_index, inner_iv, vector_name = _innermost(m, plan)
    k_values = range(inner_iv.lo, inner_iv.hi + 1) if inner_iv is not None else range(1)
    if warp * len(k_values) > _AFFINE_POINTS:
        return None
    try:
        layout = layout_plan(shape)
    except LayoutError:
        return None
    if layout.steps:
        return None
    # (constant, per lane, per iteration) of each variable in warp 0
    forms: dict[tuple[int, int], tuple[int, int, int]] = {(DIM, TX): (0, 1, 0), (DIM, BX): (0, 0, 0)}
    for i in range(2, m.num_dims):
        forms[(DIM, i)] = (m.dims[i].lo, 0, 0)
    for i, iv in enumerate(m.range_vars):
        forms[(RANGE, i)] = (iv.lo, 0, 0)
    for i, rv in enumerate(m.runtime_vars):
        forms[(RUNTIME, i)] = ((rv.interval.lo + rv.interval.hi) // 2, 0, 0)
    if inner_kind is not None:
        forms[(inner_kind, inner_index)] = (0, 0, 1)
    results: list[tuple[int, int, int]] = []
    for e in m.results:
        form = _affine_form(e, forms)
        if form is None:
            return None
        results.append(form)
    constraints: list[tuple[tuple[int, int, int], Interval]] = []
    for e, iv in m.constraints:
        form = _affine_form(e, forms)
        if form is None:
            return None
        constraints.append((form, iv))
    lanes = range(min(warp, m.dims[TX].hi + 1)) if m.dims[BX].hi >= 0 else range(0)
    selected = [[True] * len(k_values) if lane in lanes else [False] * len(k_values) for lane in range(warp)]
    for (c, a, b), iv in constraints:
        for lane in lanes:
            row = selected[lane]
            base = c + a * lane
            for j, k in enumerate(k_values):
                if row[j] and not iv.lo <= base + b * k <= iv.hi:
                    row[j] = False
    if not any(any(row) for row in selected):
        return None
    strides = [0] * shape.rank
    stride = 1
    for position in range(shape.rank - 1, -1, -1):
        d = layout.major_to_minor[position]
        strides[d] = stride
        stride *= shape.dims[d]
    c0 = sum(s * f[0] for s, f in zip(strides, results))
    per_lane = sum(s * f[1] for s, f in zip(strides, results))
    per_k = sum(s * f[2] for s, f in zip(strides, results))
    vector = len(k_values) >= 2 and per_k == 1 and any(all(row) for row in selected)
    if vector:
        picked = [
            c0 + per_lane * lane + per_k * k
            for lane in range(warp)
            for j, k in enumerate(k_values)
            if selected[lane][j]
        ]
    else:
        j = (
            0
            if any(row[0] for row in selected)
            else next(j for j in range(len(k_values)) if any(row[j] for row in selected))
        )
        k = k_values[j]
        picked = [c0 + per_lane * lane + per_k * k for lane in range(warp) if selected[lane][j]]
    return _verdict(text, 0, picked, storage_bits(shape), device, vector_name if vector else None)


def _affine_form(e, forms: dict) -> tuple[int, int, int] | None:
    """``e`` as (constant, per lane, per iteration) given each variable's ``forms``; None if an
    atom of ``e`` is a division."""
    constant, terms = e.linear_terms()
    c, a, b = constant, 0, 0
    for atom, k in terms:
        form = forms.get((atom.kind, atom.value)) if atom.kind in VARIABLE_KINDS else None
        if form is None:
            return None
        c += k * form[0]
        a += k * form[1]
        b += k * form[2]
    return c, a, b


def scanned_warp_read(m: IndexingMap, shape, plan: ThreadPlan, device: GpuDevice, text: str | None = None) -> WarpRead:
    """``warp_read`` by evaluating the map on the warps in order, up to the first that reads."""
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
    text = str(m)
    key = (text, shape, plan.threads_per_block, plan.blocks, plan.innermost, plan.loops, device, budget)
    memo = current().tables[_WARP_READS]
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = warp_read(m, shape, plan, device, text)
    return hit


def _innermost_range_var(m: IndexingMap) -> int | None:
    used = set()
    for e in m.results:
        used |= {v.value for v in e.variables() if v.kind == RANGE}
    candidates = [i for i in used if m.range_vars[i].size > 1]
    return max(candidates) if candidates else None


def _is_vector_read(offsets: np.ndarray, sel: np.ndarray, k_values: np.ndarray) -> bool:
    """Every thread reads consecutive elements along the innermost loop (one vector access)."""
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
        array = distinct_sorted(np.asarray(offsets).reshape(-1))
        breaks = np.nonzero(np.diff(array) != 1)[0]
        starts = np.concatenate([[0], breaks + 1])
        ends = np.concatenate([breaks, [len(array) - 1]])
        intervals = tuple((int(array[s]), int(array[e])) for s, e in zip(starts, ends))
        first = array * bits // 8 // tb
        last = ((array + 1) * bits - 1) // 8 // tb
        segments = len(set(first.tolist()) | set(last.tolist()))
        distinct = len(array)
    transactions = sum(ceil((hi - lo + 1) * bits / 8 / tb) for lo, hi in intervals)
    ideal = ceil(distinct * bits / 8 / tb)
    ok = transactions == 0 or ideal > transactions * device.coalesced_threshold
    return WarpRead(text, warp_index, intervals, transactions, ideal, segments, vector, ok)


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
