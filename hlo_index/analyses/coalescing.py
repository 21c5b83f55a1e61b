"""Target-less coalescing: how 32 consecutive output elements hit an operand's memory.

This is the library's machine-independent figure (``operand_report``). ``analyze`` shows the
target's own figure instead: XLA's GPU emitters and transaction rule (``gpu_coalescing``) or the
CPU's innermost loop (``cpu_access``); see docs/ANALYSES.md.

For each of the operand's maps we take a few seeded *warps*: 32 output points consecutive
along the output's most minor physical dimension (other dims and range variables at seeded
values, runtime variables at their lower bounds), evaluate the map on them (every warp in
one vectorised numpy pass, constraints dropping infeasible threads) and take the operand's
physical element offsets under its layout, tiles included (``layout.layout_cells``). From
the offsets:

* the pattern: ``broadcast`` (every thread reads one element), ``contiguous`` (offsets step
  by 1), ``strided`` (a constant step ``k``), or ``scattered``;
* transactions: the distinct 128-byte segments touched, against the ideal
  ``ceil(distinct bytes / 128)``.

The verdict is ``coalesced`` when a warp needs no more transactions than the ideal
(contiguous and broadcast reads always are, a misaligned start only costing one segment),
``uncoalesced`` otherwise, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil
from typing import TYPE_CHECKING

from ..affine import IndexingMap
from ..hlo.model import Shape
from .utilization import storage_bits

if TYPE_CHECKING:
    import numpy as np

WARP = 32
SEGMENT_BYTES = 128


@dataclass(frozen=True)
class MapCoalescing:
    """How the warps of one map's reads fall into 128-byte segments."""

    pattern: str  # contiguous | strided | broadcast | scattered | none
    stride: int | None  # elements between consecutive threads (strided/contiguous)
    transactions: float  # mean 128-byte segments per warp
    ideal_transactions: float  # mean minimum segments for the same bytes
    warps_sampled: int

    def to_json(self) -> dict:
        return {
            "pattern": self.pattern,
            "stride": self.stride,
            "transactions_per_32": self.transactions,
            "ideal_transactions_per_32": self.ideal_transactions,
            "warps_sampled": self.warps_sampled,
        }


@dataclass(frozen=True)
class Coalescing:
    """One operand's coalescing verdict, with the reason and the figures of each of its maps."""

    verdict: str  # coalesced | uncoalesced | unknown
    reason: str
    minor_output_dim: int | None
    per_map: tuple[MapCoalescing, ...]

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "reason": self.reason,
            "minor_output_dim": self.minor_output_dim,
            "maps": [m.to_json() for m in self.per_map],
        }


def minor_dim(shape: Shape) -> int | None:
    """The output's most minor physical dimension (skipping size-1 dims), or None for scalars."""
    if shape.rank == 0:
        return None
    order = (
        shape.layout.minor_to_major
        if shape.layout and shape.layout.minor_to_major
        else tuple(range(shape.rank - 1, -1, -1))
    )
    for d in order:
        if shape.dims[d] > 1:
            return d
    return order[0]


def operand_coalescing(
    maps: Sequence[IndexingMap], operand_shape: Shape, output_shape: Shape, *, warps: int = 4, seed: int = 0
) -> Coalescing:
    """Coalescing of one operand read through ``maps`` from ``output_shape``'s index space."""
    minor = minor_dim(output_shape)
    if any(m.is_undefined for m in maps):
        reason = next(m.undefined_reason for m in maps if m.is_undefined)
        return Coalescing("unknown", f"undefined map: {reason}", minor, ())
    live = [m for m in maps if not m.is_known_empty]
    if not live:
        return Coalescing("unknown", "the output reads nothing of this operand through these maps", minor, ())
    bits = storage_bits(operand_shape)
    per_map = tuple(_map_coalescing(m, operand_shape, minor, bits, warps, seed) for m in live)
    bad = [
        c
        for c in per_map
        if c.pattern != "none"
        and c.transactions > c.ideal_transactions
        and c.pattern not in ("contiguous", "broadcast")
    ]
    if bad:
        worst = max(bad, key=lambda c: c.transactions / max(c.ideal_transactions, 1))
        return Coalescing("uncoalesced", _describe(worst, bits), minor, per_map)
    summary = "; ".join(_describe(c, bits) for c in per_map)
    if all(c.pattern == "none" for c in per_map):
        return Coalescing("unknown", summary, minor, per_map)
    return Coalescing("coalesced", summary, minor, per_map)


def _describe(c: MapCoalescing, bits: int) -> str:
    if c.pattern == "none":
        return "the sampled output points read nothing of this operand"
    what = {"contiguous": "contiguous", "broadcast": "broadcast (stride 0)", "scattered": "scattered"}.get(
        c.pattern, f"strided (stride {c.stride} elements)"
    )
    return f"{what}: {c.transactions:g} transactions per {WARP} output elements vs ideal {c.ideal_transactions:g}"


def _warp_points(m: IndexingMap, minor: int | None, warps: int, seed: int) -> np.ndarray:
    """``[warps, 32, dims + range vars]`` seeded warps: other dims and range variables fixed per
    warp, the minor dim a run of 32 aligned positions (clipped at its end: repeats the last)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    columns = []
    for i, iv in enumerate(m.dims):
        if i == minor:
            starts = iv.lo + WARP * rng.integers(0, (iv.size + WARP - 1) // WARP, size=warps)
            run = np.minimum(starts[:, None] + np.arange(WARP)[None, :], iv.hi)
            columns.append(run)
        else:
            columns.append(np.repeat(rng.integers(iv.lo, iv.hi + 1, size=warps)[:, None], WARP, axis=1))
    columns.extend(np.repeat(rng.integers(iv.lo, iv.hi + 1, size=warps)[:, None], WARP, axis=1) for iv in m.range_vars)
    return np.stack(columns, axis=2).astype(np.int64) if columns else np.zeros((warps, WARP, 0), np.int64)


def _warp_reads(m: IndexingMap, minor: int | None, warps: int, seed: int):
    """Per warp, the operand indices its threads read, in thread order (infeasible threads and
    the repeats of a clipped run dropped)."""
    import numpy as np

    from ..affine.evaluate import evaluate_expr
    from ..affine.expr import DIM, RANGE, RUNTIME

    grid = _warp_points(m, minor, warps, seed)
    flat = grid.reshape(warps * WARP, grid.shape[2])
    n = len(flat)
    env: dict[tuple[int, int], np.ndarray | int] = {(DIM, i): flat[:, i] for i in range(m.num_dims)}
    env.update({(RANGE, i): flat[:, m.num_dims + i] for i in range(len(m.range_vars))})
    env.update({(RUNTIME, i): rv.interval.lo for i, rv in enumerate(m.runtime_vars)})
    memo: dict = {}
    keep = np.ones(n, dtype=bool)
    for e, iv in m.constraints:
        value = np.broadcast_to(evaluate_expr(e, env, memo), (n,))
        keep &= (value >= iv.lo) & (value <= iv.hi)
    if minor is not None:
        first = np.zeros((warps, WARP), dtype=bool)
        first[:, 0] = True
        minor_col = grid[:, :, minor]
        first[:, 1:] = minor_col[:, 1:] != minor_col[:, :-1]
        keep &= first.reshape(-1)
    results = [np.broadcast_to(evaluate_expr(e, env, memo), (n,)) for e in m.results]
    rows = np.stack(results, axis=1) if results else np.zeros((n, 0), np.int64)
    kept = keep.reshape(warps, WARP)
    rows = rows.reshape(warps, WARP, len(m.results))
    return [rows[w][kept[w]] for w in range(warps)]


def _map_coalescing(
    m: IndexingMap, operand_shape: Shape, minor: int | None, bits: int, warps: int, seed: int
) -> MapCoalescing:
    import numpy as np

    from ..layout import layout_cells

    patterns, strides, transactions, ideals = [], [], [], []
    reads = _warp_reads(m, minor, warps, seed)
    if operand_shape.rank == 0:
        all_offsets = np.zeros(sum(len(r) for r in reads), dtype=np.int64)
    else:
        stacked = np.concatenate(reads, axis=0) if reads else np.zeros((0, operand_shape.rank), np.int64)
        all_offsets = layout_cells(operand_shape, stacked)[0] if len(stacked) else np.zeros(0, np.int64)
    bounds = np.cumsum([0] + [len(r) for r in reads])
    for w in range(len(reads)):
        offsets = all_offsets[bounds[w] : bounds[w + 1]]
        if len(offsets) == 0:
            continue
        pattern, stride = _pattern(offsets)
        patterns.append(pattern)
        strides.append(stride)
        first = offsets * bits // 8
        last = ((offsets + 1) * bits - 1) // 8
        # 32 values: Python sets beat numpy's unique at this size
        segments = set((first // SEGMENT_BYTES).tolist()) | set((last // SEGMENT_BYTES).tolist())
        transactions.append(len(segments))
        distinct = len(set(offsets.tolist()))
        ideals.append(max(1, ceil(distinct * bits / 8 / SEGMENT_BYTES)))
    if not patterns:
        return MapCoalescing("none", None, 0.0, 0.0, 0)
    # The warp pattern that occurs most, ties going to the worst (scattered last in order).
    rank = ["broadcast", "contiguous", "strided", "scattered"]
    counts = {p: patterns.count(p) for p in patterns}
    pattern = max(counts, key=lambda p: (counts[p], rank.index(p)))
    stride = next(s for p, s in zip(patterns, strides) if p == pattern)
    return MapCoalescing(pattern, stride, float(np.mean(transactions)), float(np.mean(ideals)), len(patterns))


def _pattern(offsets: np.ndarray) -> tuple[str, int | None]:
    import numpy as np

    if len(offsets) < 2:
        return "broadcast", 0
    steps = np.diff(offsets)
    if np.all(steps == 0):
        return "broadcast", 0
    if np.all(steps == steps[0]):
        step = int(steps[0])
        return ("contiguous", 1) if step == 1 else ("strided", step)
    return "scattered", None
