"""Per-operand ``coalescing`` figures for the machine the dump runs on (``--target``).

GPU: the fusion's emitter and XLA's coalescing rule (``gpu_coalescing``); a target that is not a
fusion gets ``unknown`` (XLA:GPU emits every op inside a fusion, whose emitter decides the reads).
CPU: whether the innermost loop reads contiguously (``cpu_access``), in CPU terms only.
TPU: tiles, padding and the walk of the output's minor dimension over lanes and sublanes
(``tpu_tiles``), under the key ``tpu``: no coalescing, no CPU words.
Data in, data out: the report layer stores the figures; the memos live in the analysis context
(``hlo_index.context``), so the library path has them too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..context import current, register_table, remember
from .gpu_target import CPU, GPU, TPU, module_target

if TYPE_CHECKING:
    from .gpu_devices import GpuDevice

# Per analysis context, at most Budgets.operand_figures entries each: CPU figures by structure
# (maps, shapes with their layouts), and an identity memo over it (rows share map tuples).
_CPU_FIGURES = register_table("analyses.target_figures.cpu_access")
_CPU_BY_OBJECT = register_table("analyses.target_figures.cpu_access_by_object")
# Per analysis context, at most Budgets.operand_figures entries: TPU figures by structure.
_TPU_FIGURES = register_table("analyses.target_figures.tpu_tiles")


@dataclass(frozen=True, slots=True)
class TargetCoalescing:
    """One target's coalescing figures on the machine its dump runs on."""

    target: str  # "gpu (evidence)" / "cpu (evidence)"
    gpu_emitter: str | None  # the GPU emitter's plan, when the emitter was modelled
    operands: tuple[dict | None, ...]  # per row: its figure (None: not computed)
    key: str = "coalescing"  # the operand field the figures go in (``tpu`` on a TPU)


@functools.cache
def _gpu_figures() -> tuple:
    """(``fusion_coalescing``, ``operand_json``, ``minor_nontrivial``, ``ComputationAsFusion``, the
    default device), imported on the first GPU target (a CPU or TPU dump never loads the emitters
    or the GPU tables); a cached call, where import statements in the per-target path cost a tenth
    of a small fusion's figures."""
    from .emitters import ComputationAsFusion
    from .gpu_coalescing import fusion_coalescing, operand_json
    from .gpu_devices import RTX_A6000
    from .physical_order import minor_nontrivial

    return fusion_coalescing, operand_json, minor_nontrivial, ComputationAsFusion, RTX_A6000


def target_coalescing(
    target: Any, module: Any, rows: list, shapes: Callable, asked: str = "auto", device: GpuDevice | None = None
) -> TargetCoalescing:
    """The coalescing figure of each of ``rows`` (``target``'s output-to-input rows) for the
    machine ``--target asked`` picks; ``shapes(row)`` gives a row's (operand, output) shapes."""
    choice = module_target(module, asked)
    named = f"{choice.target} ({choice.evidence})"
    if choice.target == CPU:
        return TargetCoalescing(named, None, _per_row(rows, shapes, _cpu_row))
    if choice.target == TPU:
        return TargetCoalescing(named, None, _per_row(rows, shapes, _tpu_row), "tpu")
    fusion_coalescing, operand_json, minor_nontrivial, computation_as_fusion, default_device = _gpu_figures()
    if device is None:
        device = default_device
    fusion = target if getattr(target, "opcode", None) == "fusion" else None
    if fusion is None and is_fused_body(target):
        fusion = computation_as_fusion(target)
    result = None
    if fusion is not None:
        try:
            result = fusion_coalescing(fusion, device)
        except Exception as exc:  # noqa: BLE001
            return TargetCoalescing(named, None, tuple(_failed(GPU, exc) for _ in rows))
    figures: list[dict] = []
    # a target's rows repeat each (operand, output shape): ~15 rows a fusion, a few figures
    by_operand: dict[tuple[int, int], dict] = {}
    for row in rows:
        _operand_shape, output_shape = shapes(row)
        seen = (row.operand, id(output_shape))  # the shapes outlive this loop: ids stay theirs
        figure = by_operand.get(seen)
        if figure is not None:
            figures.append(figure)
            continue
        minor = minor_nontrivial(output_shape) if output_shape is not None and not output_shape.is_tuple else None
        if result is None:
            why = (
                "not a fusion: XLA:GPU emits every op inside a fusion, and the fusion's emitter "
                "decides how threads read"
            )
            figure = {
                "target": GPU,
                "verdict": "unknown",
                "reason": why,
                "minor_output_dim": minor,
                "maps": [],
                "summary": f"unknown ({why})",
            }
        else:
            figure = operand_json(result, row.operand, device, minor)
        by_operand[seen] = figure
        figures.append(figure)
    return TargetCoalescing(named, result.plan if result is not None else None, tuple(figures))


def _per_row(rows: list, shapes: Callable, figure_of: Callable[[Any, tuple], dict | None]) -> tuple[dict | None, ...]:
    """``figure_of(row, shapes(row))`` for each row, asked once per (maps, operand shape, output
    shape): the ~10^6 rows of a whole ENTRY repeat a few thousand of them."""
    memo: dict[tuple[int, int, int], tuple[Any, tuple, dict | None]] = {}  # holds what its key's ids name
    figures: list[dict | None] = []
    append = figures.append
    for row in rows:
        row_shapes = shapes(row)
        key = (id(row.maps), id(row_shapes[0]), id(row_shapes[1]))
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = (row.maps, row_shapes, figure_of(row, row_shapes))
        append(hit[2])
    return tuple(figures)


def _cpu_row(row: Any, shapes: tuple) -> dict | None:
    operand_shape, output_shape = shapes
    if operand_shape is None or output_shape is None or output_shape.is_tuple:
        return None
    try:
        return _cpu_figure(row.maps, operand_shape, output_shape)
    except Exception as exc:  # noqa: BLE001  (a failing figure must not cost the maps)
        return _failed("cpu", exc)


def _tpu_row(row: Any, shapes: tuple) -> dict | None:
    operand_shape, output_shape = shapes
    if operand_shape is None or output_shape is None or output_shape.is_tuple or operand_shape.is_tuple:
        return None
    ctx = current()
    key = (
        tuple(m.canonical_key() if not m.is_undefined else ("undefined", m.undefined_reason) for m in row.maps),
        operand_shape,
        output_shape,
    )
    figures = ctx.tables[_TPU_FIGURES]
    figure = figures.get(key)
    if figure is None:
        from .tpu_tiles import tpu_operand

        try:
            # on the canonical form, so that a figure depends on the key alone
            maps = [m if m.is_undefined else m.simplified() for m in row.maps]
            figure = tpu_operand(maps, operand_shape, output_shape)
        except Exception as exc:  # noqa: BLE001  (a failing figure must not cost the maps)
            return _failed(TPU, exc)
        remember(figures, key, figure, ctx.budgets.operand_figures)
    return figure


_NOT_FUSIBLE = {
    "while",
    "conditional",
    "call",
    "custom-call",
    "fusion",
    "send",
    "recv",
    "all-reduce",
    "all-gather",
    "all-to-all",
    "collective-permute",
    "async-start",
    "async-done",
    "infeed",
    "outfeed",
}


def is_fused_body(target: Any) -> bool:
    """A computation that is (or stands for) a fusion body: a fused computation, or one free of
    calls, control flow and collectives in a module without fusions (XLA's emitter tests write
    the fused computation alone)."""
    from ..hlo.model import Computation

    if not isinstance(target, Computation) or target.root is None:
        return False
    if target.is_fused:
        return True
    module = target.module
    if module is None or any(True for _ in module.fusions):
        return False
    return not any(i.opcode in _NOT_FUSIBLE for i in target.instructions)


def _cpu_figure(maps: tuple, operand_shape: Any, output_shape: Any) -> dict:
    """The CPU figure of one operand. It depends only on the maps (exact structure), shapes and
    layouts: fusions that repeat a fused computation (transformer layers) share it. Figures are
    shared, never mutated."""
    ctx = current()
    by_object = ctx.tables[_CPU_BY_OBJECT]
    ids = (id(maps), id(operand_shape), id(output_shape))
    hit = by_object.get(ids)
    if hit is not None and hit[0] is maps and hit[1] is operand_shape and hit[2] is output_shape:
        return hit[3]
    figures = ctx.tables[_CPU_FIGURES]
    key = (
        tuple(
            (m.dims, m.range_vars, m.runtime_vars, m.results, m.constraints, m.is_known_empty, m.undefined_reason)
            for m in maps
        ),
        operand_shape,
        output_shape,
    )
    figure = figures.get(key)
    limit = ctx.budgets.operand_figures
    if figure is None:
        from .cpu_access import innermost_access

        figure = remember(figures, key, innermost_access(maps, operand_shape, output_shape), limit)
    remember(by_object, ids, (maps, operand_shape, output_shape, figure), limit)
    return figure


def _failed(target: str, exc: Exception) -> dict:
    text = f"{type(exc).__name__}: {exc}"
    return {
        "target": target,
        "verdict": "unknown",
        "error": text,
        "reason": text,
        "maps": [],
        "summary": f"not computed ({text})",
    }
