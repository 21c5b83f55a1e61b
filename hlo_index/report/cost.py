"""Each target's ``cost`` and each module's ``cost_totals`` in ``analyze`` reports.

One of ``build.TARGET_FIGURES`` (``add_cost``, after the operand figures it reads) and of
``build.MODULE_FIGURES`` (``add_cost_totals``). Option ``cost`` (a ``TargetCostOptions``;
``analyze`` sets it unless ``--no-analyses``) turns both on; ``fusion_candidate`` names the
producer of the fusion what-if.

The cost model reuses what the report has already computed instead of computing it again: the
exact utilization of each operand (the ``utilization`` figures) and, where the emitter's threads
read the same elements on the cost's device as on the device of the ``coalescing`` figures, their
verdicts. Fusions equal in what the cost reads of them (``fusion_cost_key``: their structure, but
for where their slices start) with equal given figures have equal costs: one is computed per key
and module, the others share it.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Sequence
from dataclasses import replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..context import current, register_table
from ..hlo.model import Computation, Instruction
from .coalescing_device import coalescing_device
from .model import DiagnosticReport, ModuleReport, OperandReport, OperandRows, TargetReport, entry_views

# the cost models are imported when a report asks for a cost
if TYPE_CHECKING:
    from ..analyses.cost.options import TargetCostOptions

# Per analysis context: id(module) -> _ModuleCost (the entry keeps the module alive).
_MODULES = register_table("report.cost.modules")
TOP_SHARE = 10  # the totals say what share of the time the heaviest this many targets take
VERDICTS = {"coalesced": True, "uncoalesced": False}


@functools.cache
def _models() -> tuple:
    """(``target_cost``,), imported on the first cost a report asks for (a cached call, where an
    import statement in the per-target path would cost as much as the rest of a shared target's cost)."""
    from ..analyses.cost import target_cost

    return (target_cost,)


@functools.cache
def _default_device() -> Any:
    """The coalescing figures' default device, imported for the first GPU fusion (a CPU dump's cost
    never reads the GPU tables)."""
    from ..analyses.gpu_devices import RTX_A6000

    return RTX_A6000


@functools.cache
def _plan_for() -> Any:
    """``emitter_plans.plan_for``, imported when a GPU fusion's coalescing devices first need
    comparing (``_ModuleCost.same_threads``): a CPU dump's cost never reads the emitters' plans."""
    from ..analyses.emitter_plans import plan_for

    return plan_for


class _ModuleCost:
    """One module's cost state: its session, the shared costs, the targets' costs so far."""

    def __init__(self, module: Any, options: TargetCostOptions) -> None:
        self.module = module
        self.options = options
        self.session = _models()[0].CostSession(module, options, share_fusions=True)
        # per device of the coalescing figures: (the device, whether the emitters' threads on it
        # read as on the cost's device whatever the fusion, whether they may for some)
        self._devices: dict[int, tuple] = {}
        self.structure_key = self.session.structure_key
        self.by_key: dict = {}
        # per fusion structure key: the rows of its first target and their cost (``_RowsSeen``)
        self.by_structure: dict = {}
        # the report's utilization figures (shared objects): id(figure) -> (figure, its
        # (bytes read, reads per element, distinct elements), a token equal for equal values)
        self.figures: dict[int, tuple] = {}
        self.tokens: dict[tuple, int] = {}
        self.costs: list = []  # (target name, FusionCost json)
        self.candidate_seen = False
        self.missing_consumers: list[str] = []
        self._totals: dict | None = None
        # rows of the totals made where the targets were costed (``total_row``): id(instruction) ->
        # (the instruction, its row)
        self.known_rows: dict[int, tuple] = {}

    def totals(self) -> dict:
        """The module's figures as XLA sums a module (a fresh dict each time), summed once."""
        if self._totals is None:
            self._totals = _models()[0].cost_totals(self.module, [], self.options, self.session, self.known_rows)
        return dict(self._totals)

    def same_threads(self, fusion: Instruction, report_device: Any) -> bool:
        """Whether the emitter's threads read the same elements on the cost's device as on the
        device of the report's coalescing figures (so their verdicts hold on both)."""
        device = self.session.device
        if device is None:
            return False
        mine = device.emitter_device()
        hit = self._devices.get(id(report_device))
        if hit is None or hit[0] is not report_device:
            same_warps = (mine.warp_size, mine.transaction_bytes, mine.coalesced_threshold) == (
                report_device.warp_size,
                report_device.transaction_bytes,
                report_device.coalesced_threshold,
            )
            hit = self._devices[id(report_device)] = (report_device, same_warps and mine == report_device, same_warps)
        if hit[1] or not hit[2]:
            return hit[1]
        plan_for = _plan_for()
        # The devices enter the emitters' thread maps only through the unroll factor and the
        # vector size (core count, threads per core), which the plan's notes and grid show.
        a, b = plan_for(fusion, mine), plan_for(fusion, report_device)
        return a is b or (a.emitter, a.unmodelled, a.loops, a.innermost, a.threads_per_block, a.blocks, a.notes) == (
            b.emitter,
            b.unmodelled,
            b.loops,
            b.innermost,
            b.threads_per_block,
            b.blocks,
            b.notes,
        )


def _module_cost(module: Any, asked: TargetCostOptions) -> _ModuleCost:
    """The module's cost state; its options are ``asked`` without the what-if (the what-if
    target gets a session of its own)."""
    table = current().tables[_MODULES]
    hit = table.get(id(module))
    if hit is None or hit.module is not module:
        hit = table[id(module)] = _ModuleCost(module, replace(asked, consumers=None, multi_output=False))
    return hit


def prepare_totals(module: Any, options: dict) -> None:
    """Make now what the module's totals add for each instruction of its entry other than a fusion
    (a fusion's, ``total_row``, comes with its target): what a process can do while others
    analyse the module's targets. Nothing when no cost is asked."""
    asked = options.get("cost")
    if asked is None or module is None or module.entry is None:
        return
    state = _module_cost(module, asked)
    # a row that fails: the totals make the rest, and say what failed where a serial run does
    with contextlib.suppress(Exception):
        state.known_rows.update((id(i), (i, row)) for i, row in state.session.rows_but_fusions(module.entry))


def total_row(module: Any, options: dict, target: Any) -> tuple | None:
    """What the module's totals add for ``target`` (a fusion of the entry; None for any other target,
    whose figures the totals read through its caller, or when no cost is asked): made by the
    process that analysed it, while what it reads is at hand, and given to the process that sums
    the module (``take_total_rows``)."""
    asked = options.get("cost")
    if asked is None or module is None or not isinstance(target, Instruction) or target.opcode != "fusion":
        return None
    if target.computation is not module.entry:
        return None
    try:
        return _module_cost(module, asked).session.total_row(target)
    except Exception:  # noqa: BLE001  the totals make it again, and say what failed where a serial run does
        return None


def take_total_rows(module: Any, options: dict, rows: list[tuple[Any, tuple]]) -> None:
    """(target, ``total_row`` of it) pairs made elsewhere, for the module's totals to add as they are."""
    asked = options.get("cost")
    if asked is None or module is None:
        return
    known = _module_cost(module, asked).known_rows
    for target, row in rows:
        known[id(target)] = (target, row)  # the entry keeps the target alive: its id stays its


def module_entries(module: Any, options: dict) -> list:
    """The module's per-target cost entries (what ``add_cost_totals`` sums), in target order: a
    list the caller may splice (``build`` does when workers analysed targets); a fresh empty list
    when no cost is asked."""
    asked = options.get("cost")
    if asked is None or module is None:
        return []
    return _module_cost(module, asked).costs


def _distinct_rows(rows: Sequence[OperandReport]) -> tuple[Sequence[OperandReport], list | None]:
    """The rows as ``_ReadRows`` reads them: each distinct row once, in the order of its first
    occurrence, and, where it differs, in the order of its last (None where it is the same).
    Rows stored by kind repeat their kinds' templates (most rows of a fusion): what the cost
    reads of equal rows (first row, last verdict, equal maps, equal tiles) follows from the
    kinds alone."""
    if type(rows) is not OperandRows or rows.entries is not None:
        return rows, None
    kinds = list(dict.fromkeys(rows.kind_of))
    templates = rows.templates
    first = list(map(templates.__getitem__, kinds))
    if len(kinds) == 1:
        return first, None
    last = list(dict.fromkeys(reversed(rows.kind_of)))
    last.reverse()
    return first, (None if last == kinds else list(map(templates.__getitem__, last)))


class _ReadRows:
    """What the cost reads of a target's output-to-input rows, in one pass over them: per
    operand, its first row with maps (None: none) and, for the operands with several, all of
    them; its GPU coalescing verdict (the last row's; None where it has none) and the bytes of
    the TPU tiles each of its rows touches. ``gpu``: whether the verdicts are read (a GPU cost).

    ``rows`` may hold each distinct row once, in the order of its first occurrence
    (``_distinct_rows``); ``last``: the same in the order of its last, where that differs."""

    __slots__ = ("first", "read", "several", "verdicts", "any_gpu", "tile_bytes")

    def __init__(
        self, rows: Sequence[OperandReport], operands: int, gpu: bool = True, last: list | None = None
    ) -> None:
        first: list = [None] * operands
        read: list[int] = []  # the operands with a row with maps
        several: dict[int, list] = {}
        verdicts: list[bool | None] = [None] * operands
        tiles: dict[int, list] = {}
        any_gpu = False
        for row in rows:
            k = row.operand
            if k >= operands:
                continue
            extra = row.extra
            figure = extra.get("coalescing") if gpu else None
            if figure and figure.get("target") == "gpu":
                any_gpu = True
                verdicts[k] = VERDICTS.get(figure.get("verdict"))
            if not row.maps:
                continue
            seen = first[k]
            if seen is None:
                first[k] = row
                read.append(k)
            else:
                several.setdefault(k, [seen]).append(row)
            figure = extra.get("tpu")
            if figure and figure.get("target") == "tpu":
                count, size = figure.get("tiles_read"), figure.get("tile_bytes")
                tiles.setdefault(k, []).append(count * size if count is not None and size is not None else None)
        if gpu and last is not None and any_gpu:
            # each operand's verdict is its last row's
            verdicts = [None] * operands
            for row in last:
                k = row.operand
                figure = row.extra.get("coalescing") if k < operands else None
                if figure and figure.get("target") == "gpu":
                    verdicts[k] = VERDICTS.get(figure.get("verdict"))
        self.first, self.read, self.several, self.verdicts, self.any_gpu = first, read, several, verdicts, any_gpu
        self.tile_bytes = _tpu_tile_bytes([tiles.get(k, []) for k in range(operands)]) if tiles else None


_OPERAND, _MAPS, _EXTRA = attrgetter("operand"), attrgetter("maps"), attrgetter("extra")


class _RowsSeen:
    """The first target of a fusion structure: what its cost read of its rows (each row's operand,
    map reports and figures) and its cost. A target of the same structure whose rows are equal
    in all three (most are: the figures are shared objects, compared by identity first) has the
    same cost, read without going through its rows one by one: rows stored by kind are equal
    where their kinds are (per row, its kind; per kind, its template's three), else the rows
    are compared one by one."""

    __slots__ = ("rows", "kinds", "operands", "maps", "extras", "cost")

    def __init__(self, rows: Sequence[OperandReport], cost_json: dict, time_us: float | None) -> None:
        self.rows = rows
        self.kinds = _kinds(rows)
        self.operands: list | None = None  # the rows' three, listed on the first comparison that needs them
        self.maps: list | None = None
        self.extras: list | None = None
        self.cost = (cost_json, time_us)

    def shared_with(self, rows: Sequence[OperandReport]) -> tuple | None:
        """The cost, when ``rows`` read as the first target's did; else None."""
        kinds = self.kinds
        if kinds is not None and kinds[0] == getattr(rows, "kind_of", None):
            mine = _kinds(rows)
            if mine is not None and mine[1:] == kinds[1:]:
                return self.cost
        if self.extras is None:
            views = entry_views(self.rows)
            self.operands = list(map(_OPERAND, views))
            self.maps = list(map(_MAPS, views))
            self.extras = list(map(_EXTRA, views))
        views = entry_views(rows)
        if (
            len(views) == len(self.extras)
            and list(map(_EXTRA, views)) == self.extras
            and list(map(_OPERAND, views)) == self.operands
            and list(map(_MAPS, views)) == self.maps
        ):
            return self.cost
        return None


def _kinds(rows: Sequence[OperandReport]) -> tuple | None:
    """Rows stored by kind (none made): per row its kind, and per kind its template's figures,
    operand and maps; None for other rows."""
    if type(rows) is not OperandRows or rows.entries is not None:
        return None
    templates = rows.templates
    return (
        rows.kind_of,
        list(map(_EXTRA, templates)),
        list(map(_OPERAND, templates)),
        list(map(_MAPS, templates)),
    )


def _utilization(state: _ModuleCost, rows: _ReadRows) -> tuple[list[tuple | None], tuple]:
    """Per operand, (bytes read, reads per element, distinct elements) from the report's
    ``utilization`` figures: an operand read by exactly one output (as ``exact_figures``), or by
    several outputs through the same maps (a multi-output fusion's outputs computed from the same
    elements: the union is any one of them); and the same as tokens, a cheap part of a key (-1:
    none)."""
    out: list[tuple | None] = [None] * len(rows.first)
    tokens = [-1] * len(rows.first)
    memo = state.figures
    first, several = rows.first, rows.several
    for k in sorted(rows.read):
        extra = first[k].extra
        if "operand_element" in extra or (k in several and not _same_maps(several[k])):
            continue
        u = extra.get("utilization")
        if not u or u.get("bytes_read") is None:
            continue
        hit = memo.get(id(u))
        if hit is None or hit[0] is not u:
            figure = (u["bytes_read"], u.get("multiplicity"), u.get("distinct_elements"))
            hit = memo[id(u)] = (u, figure, state.tokens.setdefault(figure, len(state.tokens)))
        out[k], tokens[k] = hit[1], hit[2]
    return out, tuple(tokens)


def _same_maps(rows: list) -> bool:
    """Whether the rows read through the same maps (the same objects, or the same texts)."""
    first = rows[0].maps
    texts = None
    for r in rows[1:]:
        if r.maps is first:
            continue
        if texts is None:
            texts = _map_texts(first)
        if _map_texts(r.maps) != texts:
            return False
    return True


def _map_texts(maps) -> tuple[str, ...]:
    return tuple(str(m) for m in maps)


def add_cost(report: TargetReport, target: Any, module: Any, options: dict) -> None:
    """``report.extra["cost"]``: the target's cost (``FusionCost.to_json``)."""
    asked = options.get("cost")
    if asked is None:
        return
    target_cost = _models()[0]
    cost_of_target = target_cost.cost_of_target
    state = _module_cost(module, asked)
    if isinstance(target, Computation):
        cost = cost_of_target(target, module, state.options, state.session)
        report.extra["cost"] = cost.to_json()
        state.costs.append((report.name, report.extra["cost"], cost.time_us))
        return
    # the what-if reads the fused utilizations of this very fusion: it shares nothing
    candidate = options.get("fusion_candidate") == target.name and asked.consumers is not None
    structure = state.structure_key(target) if target.opcode == "fusion" else None
    seen = state.by_structure.get(structure) if structure is not None and not candidate else None
    if seen is not None:
        shared = seen.shared_with(report.output_to_input)
        if shared is not None:
            report.extra["cost"] = shared[0]
            state.costs.append((report.name, *shared))
            return
    operands = len(target.operands)
    # the rows' operands, maps and figures: by kind rows are read through their kinds' templates
    views, last = _distinct_rows(report.output_to_input)
    rows = _ReadRows(views, operands, state.session.gpu, last)
    utilization, tokens = _utilization(state, rows) if report.output_to_input else (None, ())
    given = None
    if state.session.gpu and target.opcode == "fusion" and report.output_to_input and rows.any_gpu:
        given = rows.verdicts
    if candidate:  # its own session
        state.candidate_seen = True
        comp = target.computation
        state.missing_consumers = [c for c in asked.consumers if comp is None or c not in comp.by_name]
        cost = cost_of_target(target, module, asked, target_cost.CostSession(module, asked), utilization=utilization)
        report.extra["cost"] = cost.to_json()
        state.costs.append((report.name, report.extra["cost"], cost.time_us))
        return
    cost_key = state.session.cost_key(target) if structure is not None else None
    key = (cost_key, tokens, tuple(given or ())) if structure is not None else None
    hit = state.by_key.get(key) if key is not None else None
    coalesced = None
    if hit is None:
        if given is not None and state.same_threads(target, coalescing_device(module, options) or _default_device()):
            coalesced = given
        if cost_key is not structure and state.session.reads_maps(target, coalesced):
            # the estimate reads the maps, where the slices' starts count: shared by structure only
            key = (structure, tokens, tuple(given or ()))
            hit = state.by_key.get(key)
    if hit is None:
        cost = cost_of_target(
            target, module, state.options, state.session, utilization=utilization, coalesced=coalesced
        )
        hit = (cost.to_json(), cost.time_us)
        if key is not None:
            state.by_key[key] = hit
    cost_json = hit[0]
    tiles = rows.tile_bytes
    if tiles is not None:
        cost_json = {**cost_json, "exact": {**cost_json["exact"], **tiles}}
    report.extra["cost"] = cost_json
    state.costs.append((report.name, cost_json, hit[1]))
    if structure is not None and seen is None:
        state.by_structure[structure] = _RowsSeen(report.output_to_input, cost_json, hit[1])


def _tpu_tile_bytes(per: list[list]) -> dict | None:
    """On a TPU: per operand, the bytes of the tiles its reads touch, tile padding included (the
    ``tpu`` figure's tiles read x tile bytes: what the TPU moves; ``per``: per operand, those of
    each of its rows), and their sum; None elsewhere. An operand read by several outputs through
    different tiles has none (null)."""
    if not any(per):
        return None
    bytes_read = [rows[0] if rows and all(r == rows[0] for r in rows) else None for rows in per]
    known = [b for b in bytes_read if b is not None]
    return {
        "operand_tile_bytes_read": bytes_read,
        "tile_bytes_read": sum(known) if len(known) == len(bytes_read) else None,
    }


def _gpu_only_options(asked: Any) -> list[str]:
    """The options given that only XLA:GPU's model reads (a CPU or TPU module ignores them)."""
    return [
        flag
        for flag, given in (
            ("--tile", asked.tile is not None),
            ("--launch", asked.launch is not None),
            ("--cost-model indexing", asked.cost_model != "classic"),
            ("--fusion-candidate", asked.consumers is not None),
        )
        if given
    ]


def add_cost_totals(report: ModuleReport, module: Any, options: dict) -> None:
    """``report.extra["cost_totals"]``: the module's figures as XLA sums a module, the targets'
    estimated time, its split by bound and the share of the heaviest ``TOP_SHARE`` targets."""
    asked = options.get("cost")
    if asked is None or module is None:
        return
    state = _module_cost(module, asked)
    candidate = options.get("fusion_candidate")
    if candidate and not state.candidate_seen and report.targets:
        report.diagnostics.append(
            DiagnosticReport(
                "error",
                f"cost: --fusion-candidate %{candidate.lstrip('%')} is not among the analysed targets",
                path=module.source,
            )
        )
    for name in state.missing_consumers:
        report.diagnostics.append(
            DiagnosticReport(
                "error",
                f"cost: --fusion-consumers: no instruction %{name} beside %{candidate} in module {module.name}",
                path=module.source,
            )
        )
    gpu_only = _gpu_only_options(asked)
    if gpu_only and not state.session.gpu:
        from ..analyses.gpu_target import module_target

        kind = module_target(module, asked.target).target
        report.diagnostics.append(
            DiagnosticReport(
                "warning",
                f"cost: {', '.join(gpu_only)} {'apply' if len(gpu_only) > 1 else 'applies'} only to XLA:GPU's "
                f"performance model; module {module.name} is costed as a {kind} module, so "
                f"{'they change' if len(gpu_only) > 1 else 'it changes'} nothing here",
                path=module.source,
            )
        )
    ignored = state.session.ignored_device
    if ignored is not None:
        report.diagnostics.append(
            DiagnosticReport(
                "warning",
                f"cost: --device {ignored} is a TPU chip; module {module.name} is a GPU module, costed on "
                f"{state.session.device.name if state.session.device is not None else 'its own device'} "
                f"({state.session.device_assumed})",
                path=module.source,
            )
        )
    totals = state.totals()
    times = [(t, c.get("bound")) for _, c, t in state.costs if t is not None]
    finite = [(t, b) for t, b in times if not math.isinf(t)]
    total = sum(t for t, _ in finite) if times else None
    by_bound: dict[str, float] = {}
    for t, b in finite:
        by_bound[b or "unknown"] = by_bound.get(b or "unknown", 0.0) + t
    top = sorted((t for t, _ in finite), reverse=True)[:TOP_SHARE]
    device = state.session.device.name if state.session.device is not None else state.session.roofline_device
    totals.update(
        {
            "time_us": total,
            "device": device,
            "device_assumed": state.session.device_assumed,
            "targets": len(state.costs),
            "targets_timed": len(times),
            "targets_unbounded": len(times) - len(finite),
            "time_by_bound_us": dict(sorted(by_bound.items())),
            "top_share": (sum(top) / total) if total else None,
            "top_share_of": TOP_SHARE,
            "time_uses": state.options.time_uses,
        }
    )
    report.extra["cost_totals"] = totals
