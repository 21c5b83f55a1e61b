"""The cost of one target as the report layer shows it: ``cost_of_target(target, module, options)``
gives a ``FusionCost`` (XLA's figures under XLA's keys, the exact figures from hlo-index's maps
beside them, the estimated time where a model applies, a one-line explanation), and
``cost_totals(module, costs)`` the module's figures as XLA's ``HloCostAnalysis`` sums a module.

Which model: a GPU module (``gpu_target.detect_target``) gets the GPU variant of the cost
analysis and ``GpuPerformanceModel`` (``cost_model="indexing"``: the indexing-based model; a
block-level / Triton fusion, or one given ``tile``: the per-tile model) on ``device``, or, when
none is given, the default for the dump's compute capability (``sm_X.Y`` in its file name, XLA's
dump naming; table ``devices.DEFAULT_FOR_MAJOR``; XLA's test device when unknown). A CPU module
gets the generic variant, and a time only from a user-given ``roofline`` (peak FLOP/s, bytes/s):
max(flops / peak, bytes / bandwidth).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from itertools import compress, count, repeat
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING

from ...hlo.dump_names import read_dump_name
from ...hlo.model import Computation, Instruction
from ...units import bytes_text, time_text
from ..structure_keys import fusion_structure_key
from .cost_keys import fusion_cost_key
from .exact_time import exact_run_time
from .flops import CostOptions
from .hlo_cost import HloCost, Properties, computation_totals_under, figure_rows, shared_visit_order
from .options import TargetCostOptions
from .triton_fusions import TRITON_GEMM_KINDS, UnreadableConfig, block_level_config, block_level_launch, triton_kind

# The GPU models and the device tables are imported when a GPU module or a device asks for them.
if TYPE_CHECKING:
    from .devices import DeviceSpec
    from .gpu_model import GpuPerformanceModel, RunTime
    from .indexing_model import IndexingPerformanceModel, TiledRunTime

DEFAULT_OPTIONS = TargetCostOptions()
# the AMD GPU of the named devices, the nearer guess for any ROCm dump (64-thread wavefronts)
ROCM_DEFAULT_DEVICE = "mi200"
# XLA times a Triton gemm from its Triton tiling (block_m x block_n output tiles, K tiles of the
# operands), which neither the loop-emitter model nor the coalescing heuristic describes
TRITON_GEMM_UNMODELLED = "not modelled: Triton gemm fusion (XLA costs it with its Triton tiling)"


# ``FusionCost``'s figures that ``to_json`` writes, in its order (then ``intensity`` and
# ``explanation``)
_JSON_KEYS = (
    "flops",
    "transcendentals",
    "bytes_accessed",
    "operand_bytes_accessed",
    "output_bytes_accessed",
    "operand_utilization",
    "bytes_read",
    "bytes_written",
    "device",
    "device_assumed",  # why this device, when the user gave none
    "model",  # which estimator gave the time
    "time_us",
    "compute_time_us",
    "read_time_us",
    "write_time_us",
    "bound",
    "launch",
    "tile_sizes",
    "fused",
    "time_unfused_us",
    "time_fused_us",
    "exact",
    "time_uses",
)
_JSON_FIGURES = attrgetter(*_JSON_KEYS)


class FusionCost:
    """One target's cost. Times in microseconds (``math.inf`` when the model says the kernel
    spills registers); ``None`` where the figure does not apply. (A plain record: a dataclass's
    generated methods would be compiled on every import of the cost model.)"""

    __slots__ = (*_JSON_KEYS, "operand_read_us", "operand_coalesced", "explanation")

    def __init__(
        self,
        flops: float,
        transcendentals: float,
        bytes_accessed: float,
        operand_bytes_accessed: list,
        output_bytes_accessed: float,
        operand_utilization: list,
        *,
        time_us: float | None = None,
    ) -> None:
        self.flops = flops
        self.transcendentals = transcendentals
        self.bytes_accessed = bytes_accessed
        self.operand_bytes_accessed = operand_bytes_accessed
        self.output_bytes_accessed = output_bytes_accessed
        self.operand_utilization = operand_utilization
        self.bytes_read: float | None = None
        self.bytes_written: float | None = None
        self.device: str | None = None
        self.device_assumed: str | None = None
        self.model: str | None = None
        self.time_us = time_us
        self.compute_time_us: float | None = None
        self.read_time_us: float | None = None
        self.write_time_us: float | None = None
        self.bound: str | None = None
        self.launch: dict | None = None
        self.tile_sizes: list | None = None
        self.fused: dict | None = None
        self.time_unfused_us: float | None = None
        self.time_fused_us: float | None = None
        self.exact: dict = {}
        self.time_uses = "xla"
        self.operand_read_us: list = []
        self.operand_coalesced: list = []
        self.explanation = ""

    @property
    def intensity(self) -> float | None:
        return self.flops / self.bytes_accessed if self.bytes_accessed and self.bytes_accessed > 0 else None

    def to_json(self) -> dict:
        # ``_json_value`` of each figure, its commonest cases first: floats, per-operand lists, plain values
        values = [
            (int(v) if v.is_integer() and -_WHOLE < v < _WHOLE else _json_float(v))
            if (kind := type(v)) is float
            else _json_list(v)
            if kind is list
            else v
            if kind in _PLAIN
            else _json_dict(v)
            if kind is dict
            else _json_value(v)
            for v in _JSON_FIGURES(self)
        ]
        out = dict(zip(_JSON_KEYS, values))
        out["intensity"] = _json_value(self.intensity)
        out["explanation"] = self.explanation
        return out


_PLAIN = frozenset({int, str, bool, type(None)})
_WHOLE = float(2**53)


def _json_value(v):
    kind = type(v)
    if kind is float:
        # most figures: a whole float below 2**53, written as an int (``_json_float``)
        return int(v) if v.is_integer() and -_WHOLE < v < _WHOLE else _json_float(v)
    if kind in _PLAIN:
        return v
    if kind is list:
        return _json_list(v)
    if isinstance(v, float):
        return _json_float(v)
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return _json_list(v)
    return v


def _json_dict(v: dict) -> dict:
    """A dict of figures: most (a launch grid) hold ints alone, copied as they are."""
    if set(map(type, v.values())) <= _AS_THEY_ARE:
        return dict(v)
    return {k: _json_list(x) if type(x) is list else _json_value(x) for k, x in v.items()}


_AS_THEY_ARE = frozenset({int, type(None)})
_FLOATS = frozenset({float})
_IS_INTEGER = float.is_integer


def _json_list(v: list | tuple) -> list:
    """Most lists are per-operand figures: ints or None, kept as they are, or whole floats,
    written as ints (each list converted at once where it can be)."""
    kinds = set(map(type, v))
    if kinds <= _AS_THEY_ARE:
        return list(v)
    if kinds == _FLOATS:
        first = v[0]
        if v.count(first) == len(v):  # one figure throughout (most utilizations and reads per element)
            return [_json_value(first)] * len(v)
        if all(map(_IS_INTEGER, v)) and min(v) > -_WHOLE and max(v) < _WHOLE:  # never inf or nan
            return list(map(int, v))
        return [int(x) if x.is_integer() and -_WHOLE < x < _WHOLE else _json_float(x) for x in v]
    return [_json_value(x) for x in v]


def _json_float(v: float):
    if v.is_integer():  # never inf or nan
        return int(v) if abs(v) < 2**53 else v
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if math.isnan(v):
        return None
    return v


# ---- target and device -------------------------------------------------------------------------


def is_gpu_module(module, requested: str = "auto") -> bool:
    from ..gpu_target import GPU, module_target

    return module_target(module, requested).target == GPU


def _has_backend_markers(module) -> bool:
    from ..gpu_target import has_backend_markers

    return has_backend_markers(module)


def capability_of(module) -> tuple[int, int] | None:
    """The compute capability XLA writes into GPU dump file names (``...sm_8.0_gpu_after_...``)."""
    named = read_dump_name(getattr(module, "source", "") or "")
    return named.capability if named is not None else None


def device_of(module, options: TargetCostOptions) -> tuple[DeviceSpec, str | None]:
    """(device, why it was assumed: None when the user named it)."""
    from .devices import device_beside, device_for_capability, load_device

    if options.device:
        return load_device(options.device), None
    beside = device_beside(getattr(module, "source", "") or "")
    if beside is not None:
        return beside[0], f"from the dump: {Path(beside[1]).name}, the GPU XLA compiled for"
    named = read_dump_name(getattr(module, "source", "") or "")
    cap = named.capability if named is not None else None
    if named is not None and named.rocm_arch is not None:  # XLA:ROCm names the GPU's architecture
        device = load_device(ROCM_DEFAULT_DEVICE)
        return device, (
            f"ROCm {named.rocm_arch} in the dump's name: {device.name} ({device.description}, "
            f"{device.capability}), the AMD GPU modelled"
        )
    device = device_for_capability(cap[0] if cap else None)
    why = (
        f"compute capability {cap[0]}.{cap[1]} in the dump's name"
        if cap
        else "no compute capability in the dump: XLA's test device"
    )
    return device, why


# ---- the entry points ------------------------------------------------------------------------


class CostSession:
    """Shared state for the targets of one module (the cost analysis memoises per instruction).

    ``share_fusions``: fusions equal in what the cost reads of them (``fusion_cost_key``) share
    their figures, which is what a report over a whole dump wants; the producer / consumer what-if
    needs every fusion's own fused utilizations, so a session for one keeps them apart.

    A CPU (or TPU) module given a ``device`` gets the roofline of its figures: peak FLOP/s =
    2 x clock x FPUs per core x cores, bandwidth = ``memory_bandwidth``."""

    def __init__(self, module, options: TargetCostOptions = DEFAULT_OPTIONS, share_fusions: bool = False) -> None:
        self.module = module
        self.options = options
        self.gpu = is_gpu_module(module, options.target) or (
            # a GPU description given for a module that shows neither backend (XLA's test modules)
            options.device is not None and options.target == "auto" and not _has_backend_markers(module)
        )
        self.device: DeviceSpec | None = None
        self.device_assumed: str | None = None
        self.ignored_device: str | None = None  # a TPU chip given for a GPU module
        if self.gpu:
            from .devices import TPU_CHIPS

            asked = options
            if options.device in TPU_CHIPS:
                # a chip for the TPU modules of a run: this GPU module keeps the GPU its dump names
                asked, self.ignored_device = replace(options, device=None), options.device
            self.device, self.device_assumed = device_of(module, asked)
        self.roofline = options.roofline
        self.roofline_device: str | None = None
        self.roofline_source = "user-given"  # where the roofline's two figures come from
        if not self.gpu and self.roofline is None and options.device:
            from .devices import TPU_CHIPS, load_device

            chip = TPU_CHIPS.get(options.device)
            if chip is not None:
                self.roofline, self.roofline_device, self.roofline_source = chip.roofline, chip.name, chip.description
            else:
                given = load_device(options.device)
                self.roofline = device_roofline(given)
                self.roofline_device = given.name
        capability = self.device.capability if self.device is not None else None
        # the report keys its targets' figures by structure too: one key per fusion for both
        self.structure_key = fusion_structure_key
        # what the cost figures read of a fusion: its structure but for where its slices start
        self.cost_key = fusion_cost_key
        self.share_fusions = share_fusions
        self.cost = HloCost(
            CostOptions(
                count_multiple_input_accesses=options.count_multiple_input_accesses, gpu=self.gpu, capability=capability
            ),
            self.cost_key if share_fusions else None,
        )
        self._totals_costs: tuple[HloCost, ...] | None = None
        self._total_rows: Callable[[Instruction], tuple] | None = None
        self.models: GpuModels | None = None
        if self.device is not None:
            from .gpu_model import GpuPerformanceModel

            self.models = GpuModels(self.device, GpuPerformanceModel(self.device, self.cost))

    def totals_costs(self) -> tuple[HloCost, ...]:
        """The costs ``cost_totals`` sums the module under: this session's, and on a GPU the generic
        analysis too (what jax's ``compiled.cost_analysis()`` reports, whatever the backend; a GPU
        module's own figures come from the GPU variant, which multiplies each fused instruction's
        flops by how often the loop emitter would recompute it)."""
        if self._totals_costs is None:
            if self.gpu:
                # fusions equal in structure have equal generic figures too: one is costed per structure
                shared = self.cost_key if self.share_fusions else None
                self._totals_costs = (self.cost, HloCost(replace(self.cost.options, gpu=False), shared))
            else:
                self._totals_costs = (self.cost,)
        return self._totals_costs

    def total_row(self, instr: Instruction) -> tuple:
        """``instr``'s figures under ``totals_costs()`` in one row (``hlo_cost.figure_rows``): what
        the module's totals add for it, made by the process that costs it."""
        if self._total_rows is None:
            self._total_rows = figure_rows(self.totals_costs())
        return self._total_rows(instr)

    def rows_but_fusions(self, comp) -> Iterator[tuple[Instruction, tuple]]:
        """Each instruction of ``comp`` but its fusions, with its ``total_row``, in the order the
        totals visit them (that order made now too)."""
        for instr in shared_visit_order(comp):
            if instr.opcode != "fusion":
                yield instr, self.total_row(instr)

    def reads_maps(self, target: Instruction, coalesced: Sequence[bool | None] | None) -> bool:
        """Whether the estimate of ``target`` reads its indexing maps (where its slices start may
        count; ``fusion_cost_key`` leaves that out): a GPU estimate that judges a coalescing
        verdict itself (none given for some operand), or a tiled or indexing-model one."""
        if self.models is None:
            return False
        options = self.options
        if options.cost_model == "indexing" or options.tile is not None or triton_kind(target) == "__triton":
            return True
        return coalesced is None or len(coalesced) != len(target.operands) or None in coalesced


class GpuModels:
    """A GPU session's device and XLA's two performance models on it (the indexing model, which
    only some options and fusions ask for, is built, and its module imported, on first use)."""

    def __init__(self, device: DeviceSpec, classic: GpuPerformanceModel) -> None:
        self.device = device
        self.classic = classic
        self._indexing: IndexingPerformanceModel | None = None

    @property
    def indexing(self) -> IndexingPerformanceModel:
        if self._indexing is None:
            from .indexing_model import IndexingPerformanceModel

            self._indexing = IndexingPerformanceModel(self.device, self.classic.cost)
        return self._indexing


def device_roofline(device: DeviceSpec) -> tuple[float, float]:
    """(peak FLOP/s, bytes/s) of a device's figures."""
    return 2.0 * device.clock_rate_ghz * 1e9 * device.fpus_per_core * device.core_count, float(device.memory_bandwidth)


def cost_of_target(
    target,
    module,
    options: TargetCostOptions = DEFAULT_OPTIONS,
    session: CostSession | None = None,
    *,
    utilization: Sequence[tuple | None] | None = None,
    coalesced: Sequence[bool | None] | None = None,
) -> FusionCost:
    """The cost of a fusion, an instruction or a computation (its instructions summed; no time).

    Figures the caller has already, instead of computing them again: ``utilization`` (per
    operand, (bytes read, reads per element, distinct elements) of the maps, or None) and
    ``coalesced`` (per operand, the coalescing verdict; None where unknown)."""
    session = session or CostSession(module, options)
    if isinstance(target, Computation):
        p = session.cost.computation_totals(target)
        cost = FusionCost(p.flops, p.transcendentals, p.bytes_accessed, [], p.output_bytes, [])
        if session.models is not None or session.roofline:
            # a device is there: the reason is the target, not a missing device
            cost.model = "none (a whole computation: times are estimated per kernel, a fusion or an instruction)"
        cost.explanation = explain(cost)
        return cost
    p = session.cost.of(target)
    cost = _from_properties(p)
    if utilization is not None:
        cost.exact = exact_from_figures(p, utilization)
    elif options.exact:
        cost.exact = exact_figures(target, p)
    if session.models is not None and target.opcode not in ("parameter", "constant", "get-tuple-element", "tuple"):
        _gpu_time(cost, target, session, session.models, coalesced)
    elif session.roofline:
        _roofline_time(cost, session.roofline, session.roofline_source)
        cost.device = session.roofline_device
    cost.explanation = explain(cost)
    return cost


def cost_totals(
    module,
    costs: Sequence[FusionCost] = (),
    options: TargetCostOptions = DEFAULT_OPTIONS,
    session: CostSession | None = None,
    known: dict[int, tuple] | None = None,
) -> dict:
    """The module's figures as XLA's ``HloCostAnalysis`` sums them (every instruction of the entry
    computation, called computations through their callers, float32 sums); ``time_us``: the sum
    of the given targets' times (None when none has one). ``known``: rows of ``session.total_row``
    made already (id(instruction) -> (the instruction, its row))."""
    session = session or CostSession(module, options)
    times = [c.time_us for c in costs if c.time_us is not None]
    summed = session.totals_costs()
    if len(summed) == 1 and not known:
        # summed already where the entry itself was a target
        t = generic = session.cost.computation_totals(module.entry)
    else:
        totals = computation_totals_under(summed, module.entry, session.total_row, known)
        t, generic = (totals[0], totals[1]) if len(totals) == 2 else (totals[0], totals[0])
    return _json_value(
        {
            "flops": t.flops,
            "transcendentals": t.transcendentals,
            "bytes_accessed": t.bytes_accessed,
            "time_us": sum(times) if times else None,
            "hlo_cost_analysis": {
                "flops": generic.flops,
                "transcendentals": generic.transcendentals,
                "bytes_accessed": generic.bytes_accessed,
            },
        }
    )


# ---- pieces ----------------------------------------------------------------------------------


def _from_properties(p: Properties) -> FusionCost:
    return FusionCost(
        p.flops, p.transcendentals, p.bytes_accessed, list(p.operand_bytes), p.output_bytes, list(p.operand_utilization)
    )


def exact_figures(target: Instruction, p: Properties) -> dict:
    """Distinct elements read per operand from hlo-index's own maps (bytes = distinct x element
    size), reads per distinct element, and where XLA's figure differs."""
    from ...fusion import output_to_input
    from ..utilization import operand_utilization

    rows = output_to_input(target)
    figures: list[tuple | None] = []
    for k, operand in enumerate(target.operands):
        maps = [m for r in rows if r.operand == k for m in r.maps]
        outputs = {r.output for r in rows if r.operand == k and r.maps}
        if operand.shape.is_tuple or not maps or len(outputs) > 1:
            figures.append(None)
            continue
        u = operand_utilization(maps, operand.shape)
        figures.append((u.bytes_read, u.multiplicity, u.distinct_elements))
    return exact_from_figures(p, figures)


_NOT_KNOWN = (None, None, None)


def exact_from_figures(p: Properties, figures: Sequence[tuple | None]) -> dict:
    """The ``exact`` dict from per-operand (bytes read, reads per element, distinct elements)
    of the maps (None: not known), beside XLA's figures ``p``."""
    everything = None not in figures  # most targets: every operand's figures are known
    known = figures if everything else [_NOT_KNOWN if f is None else f for f in figures]
    read, per_element, distinct = map(list, zip(*known)) if known else ([], [], [])
    xla = p.operand_bytes
    if everything:
        # the operands more than half a byte apart (the differences taken at once), XLA's known
        apart = compress(count(), map(operator.gt, map(abs, map(operator.sub, xla, read)), repeat(0.5)))
        differs = [k for k in apart if xla[k] >= 0]
    else:
        differs = [k for k, (x, e) in enumerate(zip(xla, read)) if e is not None and x >= 0 and abs(x - e) > 0.5]
    return {
        "operand_bytes_read": read,
        "operand_distinct_elements": distinct,
        "operand_reads_per_element": per_element,
        "operands_where_xla_differs": differs,
    }


def _gpu_time(
    cost: FusionCost,
    target: Instruction,
    session: CostSession,
    models: GpuModels,
    coalesced: Sequence[bool | None] | None = None,
) -> None:
    options = session.options
    cost.device = models.device.name
    cost.device_assumed = session.device_assumed
    kind = triton_kind(target)  # the backend config read once for both questions
    tiled = target.opcode == "fusion" and (options.tile is not None or kind == "__triton")
    exact_rt: RunTime | None = None
    if not tiled and kind in TRITON_GEMM_KINDS:
        cost.model = TRITON_GEMM_UNMODELLED
        cost.launch = block_level_launch(target)
        return
    rt: RunTime
    if tiled or options.cost_model == "indexing":
        from .indexing_model import TilingError

        try:
            if tiled:
                tiled_rt = _tiled(target, options, models.indexing)
                cost.model = "gpu_indexing_performance_model (tiled)"
                cost.tile_sizes = tiled_rt.tile_sizes
                rt = tiled_rt
            else:
                rt = models.indexing.run_time(target)
                cost.model = "gpu_indexing_performance_model"
        except (TilingError, UnreadableConfig) as e:
            cost.model = f"none ({e})"
            return
    else:
        launch = None
        if options.launch:
            from .gpu_model import Launch

            launch = Launch("given", options.launch[0], options.launch[1])
        rt = models.classic.run_time(target, launch, coalesced)
        cost.model = "gpu_performance_model"
        if cost.exact:
            # the same kernel: its launch grid and its operands' verdicts (given or judged) as the
            # estimate above found them
            exact_rt = exact_run_time(cost, target, models.classic, models.device.l2_cache_size, rt)
    _set_runtime(cost, rt)
    if exact_rt is not None and options.time_uses == "exact":
        _set_runtime(cost, exact_rt)
        cost.time_uses = "exact"
    if options.consumers is not None:
        by_name = target.computation.by_name if target.computation is not None else {}
        consumers = [by_name[c] for c in options.consumers if c in by_name]
        if options.cost_model == "indexing":
            cost.time_unfused_us, cost.time_fused_us = models.indexing.run_times(target, consumers)
        else:
            cost.time_unfused_us, cost.time_fused_us = models.classic.run_times(
                target, consumers, multi_output=options.multi_output
            )
        if consumers:
            fused_rt = models.classic.fused_run_time(target, consumers[0], options.multi_output)
            cost.fused = {
                "flops": fused_rt.flops,
                "bytes_read": fused_rt.bytes_read,
                "bytes_written": fused_rt.bytes_written,
                "time_us": fused_rt.exec_time_us,
                "compute_time_us": fused_rt.compute_time_us,
                "read_time_us": fused_rt.read_time_us,
                "write_time_us": fused_rt.write_time_us,
                "bound": fused_rt.bound,
                "launch": {"blocks": fused_rt.blocks, "threads_per_block": fused_rt.threads_per_block},
            }


def _tiled(target: Instruction, options: TargetCostOptions, model: IndexingPerformanceModel) -> TiledRunTime:
    blocks, threads = options.launch or (None, None)
    if isinstance(options.tile, str):  # "auto"
        return model.best_tiling(target)
    if options.tile is not None:
        return model.tiled_run_time(target, list(options.tile), num_blocks=blocks, threads_per_block=threads)
    config = block_level_config(target)
    if config is None or not config[0]:
        return model.best_tiling(target)
    tiles, warps = config
    return model.tiled_run_time(target, tiles[0], num_blocks=blocks, threads_per_block=threads, num_warps=warps)


def _set_runtime(cost: FusionCost, rt: RunTime) -> None:
    cost.bytes_read, cost.bytes_written = rt.bytes_read, rt.bytes_written
    cost.time_us, cost.compute_time_us = rt.exec_time_us, rt.compute_time_us
    cost.read_time_us, cost.write_time_us = rt.read_time_us, rt.write_time_us
    cost.bound = rt.bound
    cost.launch = {"blocks": rt.blocks, "threads_per_block": rt.threads_per_block}
    cost.operand_read_us = list(rt.operand_read_us)
    cost.operand_coalesced = list(rt.operand_coalesced)


def _roofline_time(cost: FusionCost, roofline: tuple[float, float], source: str = "user-given") -> None:
    peak, bandwidth = roofline
    compute = max(cost.flops, 0.0) / peak * 1e6
    memory = max(cost.bytes_accessed, 0.0) / bandwidth * 1e6
    cost.model = f"roofline ({source} {peak:g} FLOP/s, {bandwidth:g} B/s)"
    cost.time_us = max(compute, memory)
    cost.compute_time_us, cost.read_time_us = compute, memory
    cost.bound = "compute" if compute > memory else "memory"


# ---- text ------------------------------------------------------------------------------------


def _size_text(cost: FusionCost) -> str:
    # XLA's HloCostAnalysis counts what it cannot see into (a custom-call) as -1: say so in words
    flops = f"{cost.flops:.3g} flops" if cost.flops >= 0 else "flops unknown"
    accessed = f"{bytes_text(cost.bytes_accessed)} accessed" if cost.bytes_accessed >= 0 else "bytes unknown"
    unknown = " (XLA's cost analysis counts a custom-call as -1)" if min(cost.flops, cost.bytes_accessed) < 0 else ""
    return f"{flops}, {accessed}{unknown}"


def _distinct_text(cost: FusionCost, read_bytes: float) -> str:
    """Where XLA's count of the bytes read (re-reads included, which its time uses) is not the
    distinct bytes the maps read: both, so "read" is never two figures under one word."""
    exact = cost.exact.get("operand_bytes_read") if cost.time_uses == "xla" else None
    if not exact or None in exact:
        return ""
    distinct = float(sum(exact))
    if abs(distinct - read_bytes) <= 0.005 * max(read_bytes, 1.0):
        return ""
    return f" as XLA counts it ({bytes_text(distinct)} distinct)"


def explain(cost: FusionCost) -> str:
    """One line: the time, the device and bound, and what dominates."""
    if cost.time_us is None and cost.model == TRITON_GEMM_UNMODELLED:
        return f"{_size_text(cost)}; time {cost.model}, left out of the time totals"
    if cost.time_us is None:
        intensity = cost.intensity
        extra = f", {intensity:.2f} flops/byte" if intensity is not None else ""
        model = cost.model or ""
        # a device was given or assumed, but its model does not time this target: say why
        why = model[len("none (") : -1] if model.startswith("none (") else "give a device or a roofline"
        return _size_text(cost) + extra + f" (no time: {why})"
    where = f" on {cost.device}" if cost.device else ""
    if math.isinf(cost.time_us):
        return f"inf{where}: a tile does not fit in registers (spills)"
    head = f"{time_text(cost.time_us, digits=1)}{where}, {cost.bound}-bound"
    if cost.bound == "compute":
        return f"{head}: {_size_text(cost)}"
    read_bytes = cost.bytes_read or cost.bytes_accessed
    parts = [f"{bytes_text(read_bytes)} read{_distinct_text(cost, read_bytes)}"]
    read = cost.read_time_us or 0.0
    slow = [(t, k) for k, (t, ok) in enumerate(zip(cost.operand_read_us, cost.operand_coalesced)) if not ok]
    if slow and read > 0:
        t, k = max(slow)
        parts.append(f"{100 * t / read:.0f}% of the read time is operand {k} read uncoalesced")
    elif cost.operand_read_us and read > 0:
        t, k = max((t, k) for k, t in enumerate(cost.operand_read_us))
        parts.append(f"operand {k} takes {100 * t / read:.0f}% of the read time")
    return f"{head}: " + ", ".join(parts)


__all__ = [
    "CostSession",
    "FusionCost",
    "GpuModels",
    "TargetCostOptions",
    "capability_of",
    "cost_of_target",
    "cost_totals",
    "device_of",
    "device_roofline",
    "fusion_structure_key",
    "explain",
    "exact_figures",
    "exact_from_figures",
    "is_gpu_module",
]
