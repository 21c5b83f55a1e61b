"""Per-operand figures in ``analyze`` reports: utilization, coalescing and physical maps.

One of ``build.TARGET_FIGURES``: the analyses return figures, this module stores them in the
report. Each ``output_to_input`` operand entry gains:

* ``utilization``: ``hlo_index.analyses``' utilization dict with a one-line ``summary`` the text
  renderer prints under the operand (option ``analyses``; ``analyze`` sets it unless
  ``--no-analyses``, ``check`` never pays for it);
* ``coalescing`` (same option): the figure of the machine the dump runs on
  (``analyses.target_figures``). The target-less figure of ``operand_report`` is not computed
  here: the target's figure would replace it on every operand. On a TPU the key is ``tpu``
  (tiles, padding, lanes and sublanes: ``analyses.tpu_tiles``);
* ``physical_maps`` (option ``physical``): one map per logical map, from the output's logical
  index to the operand's linear physical element offset under its layout (tiles included).

A 4k-fusion dump has only a few hundred distinct (maps, operand shape, output shape)
combinations, so results are memoised on exactly that key (maps compare by canonical form).
"""

from __future__ import annotations

import functools
from typing import Any

from ..analyses.components import spent_points
from ..analyses.gpu_target import GPU, module_target
from ..context import budget_reason, current, register_table, remember
from ..hlo.model import Computation, Shape
from .coalescing_device import coalescing_device
from .model import OperandRows, TargetReport
from .texts import map_report

# Per analysis context, at most Budgets.operand_figures entries each.
_ANALYSES = register_table("report.operand_figures.figures")
_PHYSICAL = register_table("report.operand_figures.physical")
_BY_OBJECT = register_table("report.operand_figures.figures_by_object")


@functools.cache
def _readers() -> tuple:
    """(``operand_info``, ``output_to_input_table``, ``operand_utilization``,
    ``skipped_utilization``, ``utilization_summary``, ``target_coalescing``), imported on the first
    target's figures (those packages import the report's); a cached call, where import statements
    in the per-target path cost a tenth of a small fusion's figures."""
    from ..analyses import operand_utilization, skipped_utilization, utilization_summary
    from ..analyses.target_figures import target_coalescing
    from ..api import operand_info
    from ..fusion import output_to_input_table

    return (
        operand_info,
        output_to_input_table,
        operand_utilization,
        skipped_utilization,
        utilization_summary,
        target_coalescing,
    )


def clear_cache() -> None:
    tables = current().tables
    tables.pop(_ANALYSES, None)
    tables.pop(_PHYSICAL, None)
    tables.pop(_BY_OBJECT, None)


def _remember(slot: int, key, value):
    ctx = current()
    return remember(ctx.tables[slot], key, value, ctx.budgets.operand_figures)


def operand_figures(maps: tuple, operand_shape: Shape, output_shape: Shape, pool: list | None = None) -> dict:
    """``{"utilization": {...}}`` for one operand, memoised (``coalescing`` is the target's,
    filled by ``_fill_coalescing``).

    ``pool``: ``[points left]`` of the target's ``figure_points_per_target``, charged with the
    points each utilization enumerates (``analyses.components.spent_points``); once it is spent,
    the target's next utilizations not computed before are not counted (unknown, naming the
    budget)."""
    # Rows share map tuples: an identity memo (objects kept and checked) spares hashing the maps.
    # An entry is [maps, operand shape, output shape, figures computed in full, figures with
    # utilization skipped].
    ids = (id(maps), id(operand_shape), id(output_shape))
    entry: list | None = current().tables[_BY_OBJECT].get(ids)
    if entry is None or entry[0] is not maps or entry[1] is not operand_shape or entry[2] is not output_shape:
        entry = _remember(_BY_OBJECT, ids, [maps, operand_shape, output_shape, None, None])
    if entry[3] is not None:  # computed in full once: shared, whatever this target spent before
        return entry[3]
    if pool is not None and pool[0] <= 0:  # depends on what the target spent before: per call
        if entry[4] is None:
            entry[4] = _operand_figures(maps, operand_shape, output_shape, True)
        return entry[4]
    before = spent_points()
    figures = entry[3] = _operand_figures(maps, operand_shape, output_shape, False)
    if pool is not None:
        pool[0] -= spent_points() - before
    return figures


def _operand_figures(maps: tuple, operand_shape: Shape, output_shape: Shape, skipped: bool) -> dict:
    key = (maps, operand_shape, output_shape, skipped)
    hit = current().tables[_ANALYSES].get(key)
    if hit is not None:
        return hit
    operand_utilization, skipped_utilization, utilization_summary = _readers()[2:5]
    if skipped:
        limit = current().budgets.figure_points_per_target
        u = skipped_utilization(
            operand_shape,
            budget_reason(
                "figure_points_per_target",
                limit,
                "the target's utilization figures enumerated that many points already",
            ),
        )
    else:
        # Maps equal as keys may differ in spelling (a constraint vs a folded bound), and sampled
        # figures depend on the domain spelled: compute on the canonical form so a result depends
        # on the key alone, not on which equal map happened to be seen first.
        u = operand_utilization(_canonical(maps), operand_shape)
    figures = {"utilization": _with_summary(u.to_json(), utilization_summary(u))}
    return _remember(_ANALYSES, key, figures)


def _canonical(maps: tuple) -> tuple:
    return tuple(m.simplified() for m in maps)


def _with_summary(figures: dict | None, summary: str) -> dict:
    return {**(figures or {}), "summary": summary}


def physical_maps(maps: tuple, operand_shape: Shape) -> list[dict]:
    """The JSON entries (as in ``maps``) of each map composed with the operand's layout, memoised."""
    key = (maps, operand_shape)
    hit = current().tables[_PHYSICAL].get(key)
    if hit is not None:
        return hit
    from ..layout import to_physical

    entries = [map_report(to_physical(m, operand_shape)).to_json() for m in _canonical(maps)]
    return _remember(_PHYSICAL, key, entries)


def _output_shape(target, output: int) -> Shape | None:
    if isinstance(target, Computation):
        return target.root.shape.leaf(output) if target.root is not None else None
    return target.shape.leaf(output)


def _operand_shape(info: list, row) -> Shape | None:
    if row.operand >= len(info) or info[row.operand][1] is None:
        return None
    shape = info[row.operand][1]
    return shape.leaf(row.operand_element) if shape.is_tuple else shape


def add_operand_figures(report: TargetReport, target: Any, module: Any, options: dict) -> None:
    """Fill each ``output_to_input`` entry's ``extra`` with the requested figures: once per kind
    of entry (``OperandRows``), and into the entries made already, if any."""
    analyses = bool(options.get("analyses", False))
    physical = bool(options.get("physical", False))
    entries = report.output_to_input
    if not entries or not (analyses or physical) or not isinstance(entries, OperandRows):
        return
    operand_info, output_to_input_table = _readers()[:2]
    table = output_to_input_table(target)  # memoised by the fusion package: no second composition
    if len(table) != len(entries):
        return
    rows = [table.row(i) for i in entries.samples]  # a row of each kind stands for its kind
    figures: list[dict] = [{} for _ in rows]  # per kind, in the order of the JSON keys
    info = operand_info(target)
    # ~10^3 operands and outputs: each shape looked up once
    operand_shapes: dict[tuple[int, int], Shape | None] = {}
    output_shapes: dict[int, Shape | None] = {}

    def shapes_of(row) -> tuple:
        key = (row.operand, row.operand_element)
        operand_shape = operand_shapes.get(key, False)
        if operand_shape is False:
            operand_shape = operand_shapes[key] = _operand_shape(info, row)
        output_shape = output_shapes.get(row.output, False)
        if output_shape is False:
            output_shape = output_shapes[row.output] = _output_shape(target, row.output)
        return operand_shape, output_shape

    # keys in the order the JSON has always had: utilization, coalescing, physical_maps
    if analyses:
        pool = [current().budgets.figure_points_per_target]
        # kinds repeat (maps, operand shape, output shape): one answer each within the target
        # (the pool only shrinks, so a repeat gets what its first occurrence got)
        seen: dict[tuple[int, int, int], dict] = {}
        for row, extra in zip(rows, figures):
            shapes = shapes_of(row)
            key = (id(row.maps), id(shapes[0]), id(shapes[1]))  # all alive for this loop
            utilization = seen.get(key)
            if utilization is None:
                utilization = seen[key] = _utilization(row, shapes, pool)
            extra.update(utilization)
        _fill_coalescing(report, target, module, rows, figures, options, shapes_of)
    if physical:
        for row, extra in zip(rows, figures):
            _fill_physical(extra, row, shapes_of(row))
    for template, extra in zip(entries.templates, figures):
        template.extra.update(extra)
    if entries.entries is not None:
        for entry, kind in zip(entries.entries, entries.kind_of):
            entry.extra.update(figures[kind])


def _utilization(row, shapes: tuple, pool: list) -> dict:
    """The figures of one row's operand (empty when it has none)."""
    operand_shape, output_shape = shapes
    if operand_shape is None or output_shape is None or output_shape.is_tuple:
        return {}
    # A failing figure must not cost the operand its maps (the target would become an error).
    try:
        return operand_figures(row.maps, operand_shape, output_shape, pool)
    except Exception as exc:  # noqa: BLE001
        return {
            "utilization": {
                "error": f"{type(exc).__name__}: {exc}",
                "summary": f"not computed ({type(exc).__name__}: {exc})",
            }
        }


def _fill_coalescing(
    report: TargetReport, target: Any, module: Any, rows: list, figures: list[dict], options: dict, shapes_of
) -> None:
    """Each row's ``coalescing`` (into ``figures``) for the machine the dump runs on, and the
    target's name."""
    asked = options.get("target", "auto")
    device = coalescing_device(module, options) if module_target(module, asked).target == GPU else None
    coalescing = _readers()[5](target, module, rows, shapes_of, asked, device)
    report.extra["target"] = coalescing.target
    if coalescing.gpu_emitter is not None:
        report.extra["gpu_emitter"] = coalescing.gpu_emitter
    for extra, figure in zip(figures, coalescing.operands):
        if figure is not None:
            extra[coalescing.key] = figure


def _fill_physical(extra: dict, row, shapes: tuple) -> None:
    operand_shape, output_shape = shapes
    if operand_shape is None or output_shape is None or output_shape.is_tuple:
        return
    try:
        extra["physical_maps"] = physical_maps(row.maps, operand_shape)
    except Exception as exc:  # noqa: BLE001
        extra["physical_maps"] = [{"map": None, "unknown": f"{type(exc).__name__}: {exc}"}]
