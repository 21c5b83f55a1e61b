"""Per-operand ``coalescing`` figures for the machine the dump runs on (``--target``).

GPU: the fusion's emitter and XLA's coalescing rule (``gpu_coalescing``); a target that is not a
fusion gets ``unknown`` (XLA:GPU emits every op inside a fusion, whose emitter decides the reads).
CPU: whether the innermost loop reads contiguously (``cpu_access``), in CPU terms only.
The report objects are only touched through their ``extra`` dicts.
"""
from __future__ import annotations

from typing import Any, Callable

from .gpu_target import CPU, GPU, RTX_A6000, TargetChoice, detect_target


def module_target(module: Any, options: dict) -> TargetChoice:
    """The target of ``module``, decided once per module (memo kept in the run's options)."""
    memo = options.get("_target_memo")
    if memo is not None and memo[0] is module:
        return memo[1]
    choice = detect_target(module, options.get("target", "auto"))
    options["_target_memo"] = (module, choice)
    return choice


def apply_target(report: Any, target: Any, module: Any, rows: list, options: dict,
                 shapes: Callable) -> None:
    """Replace each operand's ``coalescing`` with the target's figure; name the target."""
    choice = module_target(module, options)
    report.extra["target"] = f"{choice.target} ({choice.evidence})"
    device = options.get("gpu_device") or RTX_A6000
    if choice.target == CPU:
        from .cpu_access import innermost_access
        # The figure depends only on the maps (exact structure), shapes and layouts: fusions that
        # repeat a fused computation (transformer layers) share it, per module (memo in options).
        memo = options.get("_cpu_access_memo")
        if memo is None or memo[0] is not module:
            memo = options["_cpu_access_memo"] = (module, {}, {})
        by_value, by_object = memo[1], memo[2]
        for row, entry in zip(rows, report.output_to_input):
            operand_shape, output_shape = shapes(row)
            if operand_shape is None or output_shape is None or output_shape.is_tuple:
                continue
            try:
                # rows share map tuples (a whole ENTRY: 780k rows, a few thousand tuples): identity
                # memo first, objects kept and checked; figures are shared, never mutated
                ids = (id(row.maps), id(operand_shape), id(output_shape))
                hit = by_object.get(ids)
                if hit is None or hit[0] is not row.maps or hit[1] is not operand_shape or hit[2] is not output_shape:
                    key = (tuple((m.dims, m.range_vars, m.runtime_vars, m.results, m.constraints,
                                  m.is_known_empty, m.undefined_reason) for m in row.maps),
                           operand_shape, output_shape)
                    if key not in by_value:
                        by_value[key] = innermost_access(row.maps, operand_shape, output_shape)
                    hit = by_object[ids] = (row.maps, operand_shape, output_shape, by_value[key])
                entry.extra["coalescing"] = hit[3]
            except Exception as exc:  # noqa: BLE001  (a failing figure must not cost the maps)
                entry.extra["coalescing"] = _failed("cpu", exc)
        return
    fusion = target if getattr(target, "opcode", None) == "fusion" else None
    if fusion is None and is_fused_body(target):
        from .emitters import ComputationAsFusion
        fusion = ComputationAsFusion(target)
    result = None
    if fusion is not None:
        from .gpu_coalescing import fusion_coalescing
        try:
            result = fusion_coalescing(fusion, device)
            report.extra["gpu_emitter"] = result.plan
        except Exception as exc:  # noqa: BLE001
            for entry in report.output_to_input:
                entry.extra["coalescing"] = _failed(GPU, exc)
            return
    from .emitters import minor_nontrivial
    from .gpu_coalescing import operand_json
    for row, entry in zip(rows, report.output_to_input):
        operand_shape, output_shape = shapes(row)
        minor = minor_nontrivial(output_shape) if output_shape is not None and not output_shape.is_tuple else None
        if result is None:
            why = ("not a fusion: XLA:GPU emits every op inside a fusion, and the fusion's emitter "
                   "decides how threads read")
            entry.extra["coalescing"] = {"target": GPU, "verdict": "unknown", "reason": why,
                                         "minor_output_dim": minor, "maps": [], "summary": f"unknown ({why})"}
            continue
        entry.extra["coalescing"] = operand_json(result, row.operand, device, minor)


_NOT_FUSIBLE = {"while", "conditional", "call", "custom-call", "fusion", "send", "recv",
               "all-reduce", "all-gather", "all-to-all", "collective-permute", "async-start",
               "async-done", "infeed", "outfeed"}


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


def _failed(target: str, exc: Exception) -> dict:
    text = f"{type(exc).__name__}: {exc}"
    return {"target": target, "verdict": "unknown", "error": text, "reason": text,
            "maps": [], "summary": f"not computed ({text})"}
