"""The time of a GPU kernel from the bytes of hlo-index's maps instead of XLA's utilization
estimates (``exact["time_us"]`` of a target's cost; ``time_uses="exact"`` makes it the time).

XLA's ``GpuPerformanceModel`` is run unchanged (launch, FLOPs, the DRAM heuristic, the combination);
what it is given differs: each operand's bytes from DRAM and from cache as the maps count them, a
scatter done in place, and an uncoalesced operand that fits in L2 read at full bandwidth. Checked
against kernels measured on an H200 (``benchmarks/cost_vs_kernels.py``, docs/ANALYSES.md "Cost").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...hlo.model import Instruction
from .shapes import shape_bytes

if TYPE_CHECKING:
    from .gpu_model import GpuPerformanceModel, RunTime
    from .target_cost import FusionCost


def exact_run_time(
    cost: FusionCost,
    target: Instruction,
    model: GpuPerformanceModel,
    l2_cache_size: float,
    base: RunTime,
) -> RunTime | None:
    """``exact["time_us"]``: the same model with the bytes of hlo-index's maps in place of XLA's
    utilization estimates: per operand, the distinct bytes come from DRAM and the reads beyond them
    from cache, counting the fewer of the maps' reads and XLA's (a map counts what each output
    element depends on, which a kernel may read once for many, as a scatter its indices); a scatter
    done in place as XLA's scatter emitter does it (its operand is the output's buffer: only the
    updated elements are read and written), ``exact["bytes_written"]`` then saying so; and an
    uncoalesced operand that fits in L2 read at full bandwidth. With ``time_uses="exact"`` this
    estimate is the target's time. ``base``: the model's estimate with XLA's figures (its launch
    grid and its operands' coalescing verdicts are this one's)."""
    exact = cost.exact
    distinct = exact.get("operand_distinct_elements") or []
    per_element = exact.get("operand_reads_per_element") or []
    figures: list[tuple[float, float] | None] = []
    xla_bytes = cost.operand_bytes_accessed
    as_xla = True  # whether each operand's figure is the one the model makes of XLA's bytes (``base``'s)
    for k, (operand_size, _, size) in enumerate(model.operand_sizes(target)):
        n = distinct[k] if k < len(distinct) else None
        if n is None or size is None:  # not known, or a tuple
            figures.append(None)
            continue
        reads = per_element[k] if k < len(per_element) and per_element[k] is not None else 1.0
        xla = xla_bytes[k] if k < len(xla_bytes) else None
        # fewer reads than distinct elements: a runtime index picks which ones, the union of all
        # of them is the distinct count; one run reads at most as many as it makes reads
        net = n * size * min(reads, 1.0)
        total = n * size * reads
        if xla is not None and xla >= 0:
            total = min(total, max(xla, net))
        figure = (net, max(total, net))
        figures.append(figure)
        if as_xla:
            xla_total = max(xla, 0.0) if xla is not None else operand_size
            as_xla = figure == (min(operand_size, xla_total), xla_total)
    written = None
    in_place = in_place_scatter(target)
    if in_place is not None:
        k, updated = in_place
        figures[k] = (updated, updated)
        written = updated
        exact["bytes_written"] = updated
    if all(f is None for f in figures) and written is None:
        return None
    # an uncoalesced read costs XLA's DRAM penalty (a 32-byte sector per element) only when the
    # lines a warp fetches are gone before its neighbours use them: an operand whose distinct bytes
    # fit in L2 is fetched from DRAM once, whatever order the warps read it in
    coalesced = base.operand_coalesced
    verdicts: list[bool | None] = [
        True if f is not None and f[0] < l2_cache_size else (coalesced[k] if k < len(coalesced) else None)
        for k, f in enumerate(figures)
    ]
    if as_xla and written is None and verdicts == coalesced:
        # the same reads on the same grid: the estimate is ``base`` itself (most kernels)
        exact["time_us"] = base.exec_time_us
        return base
    rt = model.run_time_reading(base, target, verdicts, figures, written)
    exact["time_us"] = rt.exec_time_us
    return rt


def in_place_scatter(fusion: Instruction) -> tuple[int, float] | None:
    """(the fusion operand a root scatter updates in place, the bytes of its updates), or None."""
    if fusion.opcode != "fusion" or fusion.shape.is_tuple:
        return None
    comp = fusion.fused_computation
    root = comp.root if comp is not None else None
    if root is None or root.opcode != "scatter" or len(root.operands) != 3 or root.operands[0].opcode != "parameter":
        return None
    k = root.operands[0].parameter_number
    return (k, float(shape_bytes(root.operands[2].shape))) if k is not None else None
