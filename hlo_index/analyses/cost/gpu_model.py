"""XLA's ``GpuPerformanceModel``: the run time of one kernel on a device from its flops, bytes and
launch dimensions, and the what-if of fusing a producer into its consumers (``EstimateRunTimes``).

* launch dimensions: the emitter XLA would use (``emitter_plans.plan_for``); a plain instruction
  is costed as the one-instruction fusion XLA would make of it;
* compute: flops / (2 x clock x min(threads per block, FPUs per core) x min(blocks, cores)),
  the per-ns rate truncated to an integer as XLA does;
* reads: per operand, the first read of its net bytes from DRAM at the bandwidth times the
  coalescing rate (1, or element size / 64 B), re-reads at 2.5x (L2) or 20x (L1 too) when the
  net bytes fit, every bandwidth capped at blocks x clock x 32 B; writes at the bandwidth;
* exec = compute + memory - 0.95 x min(compute, memory).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ...hlo.model import Instruction
from ..coalescing_heuristic import heuristic_coalesced
from ..emitter_plans import plan_for
from .devices import DeviceSpec
from .fused_kernel import entry_root, fuse
from .hlo_cost import PASS_THROUGH, HloCost, f32, fused_body
from .shapes import element_bytes, elements, elements_recursive, shape_bytes

KERNEL_LAUNCH_OVERHEAD_US = 1.0
L2_CACHE_SPEEDUP = 2.5
L1_CACHE_SPEEDUP = 8.0
MEMORY_COMPUTE_PARALLELISM = 0.95


@dataclass
class RunTime:
    """``EstimateRunTimeData``: times in microseconds."""

    flops: float
    bytes_read: float
    bytes_written: float
    blocks: int
    threads_per_block: int
    read_time_us: float
    write_time_us: float
    compute_time_us: float
    exec_time_us: float
    emitter: str = ""
    operand_read_us: list = field(default_factory=list)  # per operand
    operand_coalesced: list = field(default_factory=list)

    @property
    def memory_time_us(self) -> float:
        return self.read_time_us + self.write_time_us

    @property
    def launch(self) -> Launch:
        """The launch grid this estimate is for."""
        return Launch(self.emitter, self.blocks, self.threads_per_block)

    @property
    def bound(self) -> str:
        if math.isinf(self.exec_time_us):
            return "registers"
        return "compute" if self.compute_time_us > self.memory_time_us else "memory"


def combine(compute_us: float, memory_us: float) -> float:
    return compute_us + memory_us - min(compute_us, memory_us) * MEMORY_COMPUTE_PARALLELISM


def flops_per_ns(device: DeviceSpec, blocks: int, threads_per_block: int) -> int:
    fpus = min(threads_per_block, device.fpus_per_core)
    cores = min(blocks, device.core_count)
    return int(device.clock_rate_ghz * 2 * fpus * cores)


def compute_time_us(device: DeviceSpec, flops: float, blocks: int, threads_per_block: int) -> float:
    rate = flops_per_ns(device, blocks, threads_per_block)
    return quotient32(flops, float(rate)) / 1e3 if rate > 0 else 0.0


def _adjust(device: DeviceSpec, bandwidth: float, blocks: int) -> float:
    # float32 products: the double product of two float32 values is exact, so ``f32`` of it is the
    # float32 product numpy would give (without numpy's per-scalar cost: this runs per operand)
    per_block = f32(f32(f32(float(device.clock_rate_ghz)) * 1e9) * f32(float(device.memory_transactions_per_clock)))
    return min(f32(bandwidth), f32(f32(float(blocks)) * per_block))


def coalescing_rate(element_type: str, device: DeviceSpec, coalesced: bool) -> float:
    size = 4 if element_type in ("tuple", "token") else element_bytes(element_type)
    return 1.0 if coalesced else size / device.dram_to_l2_transaction_size_bytes


def read_time_us(device: DeviceSpec, blocks: int, net: float, total: float, rate: float = 1.0) -> float:
    """``ReadTimeWithDRAMHeuristic`` (its bandwidths float32, as XLA's; ``_adjust``'s products)."""
    bandwidth = f32(float(device.memory_bandwidth))
    rate32 = f32(float(rate))
    dram = f32(bandwidth * rate32)
    rest = bandwidth
    if net < device.l2_cache_size:
        rest = f32(rest * L2_CACHE_SPEEDUP)
        if net < device.l1_cache_size_per_SM * device.core_count:
            rest = f32(rest * L1_CACHE_SPEEDUP)
    else:
        rest = f32(rest * rate32)
    dram_bw = _adjust(device, dram, blocks)
    rest_bw = _adjust(device, rest, blocks)
    from_dram = min(net, total)
    again = total - from_dram
    return (from_dram / dram_bw + again / rest_bw) * 1e6


def write_time_us(device: DeviceSpec, written: float) -> float:
    return quotient32(written, float(device.memory_bandwidth)) * 1e6


def quotient32(a: float | int, b: float) -> float:
    """``float32(a) / float32(b)`` as float32 divides (``f32`` of the double quotient of two float32
    values is float32's quotient); IEEE's inf or nan for a zero divisor, as float32 gives them."""
    divisor = f32(b)
    dividend = f32(float(a))
    if divisor == 0.0:
        if dividend == 0.0 or math.isnan(dividend):
            return math.nan
        return math.inf if (dividend > 0) == (math.copysign(1.0, divisor) > 0) else -math.inf
    return f32(dividend / divisor)


# ---- launch dimensions and coalescing --------------------------------------------------------


def as_fusion(instr: Instruction) -> Instruction:
    """A fusion for ``instr``: itself, or the one-instruction fusion XLA would make of it."""
    if instr.opcode == "fusion":
        return instr
    from ...hlo import parse_module_text
    from ...hlo.printer import format_computation, format_instruction

    module = instr.computation.module if instr.computation is not None else None
    called = []
    seen: set[int] = set()

    def add(comp):
        if id(comp) in seen:
            return
        seen.add(id(comp))
        for i in comp.instructions:
            for c in i.called.values():
                add(c)
        called.append(format_computation(replace_entry(comp)))

    for c in instr.called.values():
        add(c)
    params = []
    for k, o in enumerate(instr.operands):
        params.append(f"  %p{k} = {_shape_text(o)} parameter({k})")
    body = replace(instr, operand_names=tuple(f"p{k}" for k in range(len(instr.operands))), is_root=True, metadata=None)
    fused = "%wrapped_computation {\n" + "\n".join(params) + "\n  " + format_instruction(body) + "\n}"
    entry_params = "\n".join(f"  %p{k} = {_shape_text(o)} parameter({k})" for k, o in enumerate(instr.operands))
    kind = "kInput" if instr.opcode in ("reduce", "transpose", "scatter") else "kLoop"
    args = ", ".join(f"%p{k}" for k in range(len(instr.operands)))
    entry = (
        f"ENTRY %wrapped_entry {{\n{entry_params}\n  ROOT %{instr.name} = {_shape_text(instr)} "
        f"fusion({args}), kind={kind}, calls=%wrapped_computation\n}}"
    )
    header = f"HloModule wrapped_{module.name if module else 'm'}"
    text = "\n\n".join([header] + called + [fused, entry])
    return entry_root(parse_module_text(text))


def replace_entry(comp):
    return replace(comp, is_entry=False) if comp.is_entry else comp


def _shape_text(instr: Instruction) -> str:
    from ...hlo.shape_format import format_shape

    return format_shape(instr.shape)


@dataclass
class Launch:
    emitter: str
    blocks: int
    threads_per_block: int


def launch_dimensions(fusion: Instruction, device: DeviceSpec) -> Launch:
    """The emitter's launch grid; XLA's fallback (128 threads, one per output element of the
    first root) where no emitter model applies."""
    plan = plan_for(fusion, device.emitter_device())
    if plan.unmodelled or plan.blocks <= 0:
        comp = fusion.fused_computation
        root = comp.root if comp is not None and comp.root is not None else fusion
        first = root.operands[0] if root.opcode == "tuple" and root.operands else root
        n = elements_recursive(first.shape)
        return Launch(plan.emitter or "fallback", max(1, -(-n // 128)), 128)
    return Launch(plan.emitter, plan.blocks, plan.threads_per_block)


SCAN_LIMIT = 4096  # an inner loop longer than this is judged by XLA's heuristic, not scanned


def operand_coalesced(fusion: Instruction, device: DeviceSpec) -> list[bool]:
    """Per operand, whether the emitter's warps read it coalesced (the thread maps where they are
    known and small enough to scan, else XLA's heuristic)."""
    from ..gpu_coalescing import parameter_thread_maps
    from ..warp_reads import warp_read

    emitter_device = device.emitter_device()
    plan = plan_for(fusion, emitter_device)
    n = len(fusion.operands)
    if plan.unmodelled:
        return [heuristic_coalesced(fusion)[0]] * n
    maps = parameter_thread_maps(fusion.fused_computation, plan)
    out = []
    for k, operand in enumerate(fusion.operands):
        shape = operand.shape
        operand_maps = maps.get(k, ())
        if shape.is_tuple or shape.rank == 0 or not operand_maps:
            out.append(True)
            continue
        if any(m.is_undefined or _longest_inner(m) > SCAN_LIMIT for m in operand_maps):
            out.append(heuristic_coalesced(fusion, emitter=plan.emitter)[0])
            continue
        reads = [warp_read(m, shape, plan, emitter_device) for m in operand_maps]
        out.append(all(r.coalesced for r in reads))
    return out


def _longest_inner(m) -> int:
    sizes = [iv.hi - iv.lo + 1 for iv in m.range_vars] + [iv.hi - iv.lo + 1 for iv in m.dims[2:]]
    return max(sizes, default=1)


# ---- the model -----------------------------------------------------------------------------------


class GpuPerformanceModel:
    """Estimates under one device and one cost analysis (memoised per instruction)."""

    def __init__(self, device: DeviceSpec, cost: HloCost) -> None:
        self.device = device
        self.cost = cost
        self._memo: dict[int, RunTime] = {}
        self._fusions: dict[int, Instruction] = {}
        # (blocks, net bytes, total bytes, coalescing rate) -> read_time_us: operands repeat
        self._read_times: dict[tuple, float] = {}
        # id(instruction) -> (the instruction, ``operand_sizes`` of it)
        self._sizes: dict[int, tuple] = {}
        self._rates: dict[str, tuple[float, float]] = {}  # element type -> ``coalescing_rate`` pair

    def fusion_of(self, instr: Instruction) -> Instruction:
        key = id(instr)
        if key not in self._fusions:
            self._fusions[key] = as_fusion(instr)
        return self._fusions[key]

    def run_time(
        self,
        instr: Instruction,
        launch: Launch | None = None,
        coalesced: Sequence[bool | None] | None = None,
        operand_bytes: Sequence[tuple[float, float] | None] | None = None,
        written: float | None = None,
    ) -> RunTime:
        """``EstimateRunTimeForInstruction``. ``coalesced``: per operand, a verdict the caller has
        already (the report layer's coalescing figures); None entries, or none given, are judged
        here. ``operand_bytes``: per operand, (bytes from DRAM, bytes read in all) to use in place
        of XLA's figures (None entries keep XLA's); ``written``: the bytes written, likewise."""
        # only the estimate of the model's own launch grid, verdicts and figures is remembered
        own = launch is None and coalesced is None and operand_bytes is None and written is None
        if own and id(instr) in self._memo:
            return self._memo[id(instr)]
        device = self.device
        props = self.cost.of(instr)
        if instr.opcode == "bitcast" or (instr.opcode in ("parameter", "constant", "get-tuple-element", "tuple")):
            rt = RunTime(0.0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, "none")
            self._memo[id(instr)] = rt
            return rt
        fusion = self.fusion_of(instr)
        launch = launch or launch_dimensions(fusion, device)
        known = list(coalesced or ())
        if coalesced is None or None in known or len(known) != len(instr.operands):
            judged = operand_coalesced(fusion, device)
            verdicts = [ok if (g := known[k] if k < len(known) else None) is None else g for k, ok in enumerate(judged)]
        else:
            verdicts = [ok for ok in known if ok is not None]  # every one given
        compute = compute_time_us(device, max(props.flops, 0.0), launch.blocks, launch.threads_per_block)
        read, bytes_read, per_operand = self._reads(instr, props, launch.blocks, verdicts, operand_bytes)
        written = max(props.output_bytes, 0.0) if written is None else written
        write = write_time_us(device, written)
        rt = RunTime(
            props.flops,
            bytes_read,
            written,
            launch.blocks,
            launch.threads_per_block,
            read,
            write,
            compute,
            combine(compute, read + write),
            launch.emitter,
            per_operand,
            verdicts,
        )
        if own:
            self._memo[id(instr)] = rt
        return rt

    def run_time_reading(
        self,
        base: RunTime,
        instr: Instruction,
        coalesced: Sequence[bool | None],
        operand_bytes: Sequence[tuple[float, float] | None],
        written: float | None = None,
    ) -> RunTime:
        """``run_time(instr, base.launch, coalesced, operand_bytes, written)``, where ``base`` is
        ``run_time(instr, ...)`` with XLA's bytes: the same kernel on the same grid has its flops and
        compute time, and, with ``written`` None, its write time; only the reads are estimated."""
        if (
            None in coalesced
            or len(coalesced) != len(instr.operands)
            or instr.opcode in ("bitcast", "parameter", "constant", "get-tuple-element", "tuple")
        ):
            return self.run_time(instr, base.launch, coalesced, operand_bytes, written)
        props = self.cost.of(instr)
        read, bytes_read, per_operand = self._reads(instr, props, base.blocks, coalesced, operand_bytes)
        if written is None:
            written, write = base.bytes_written, base.write_time_us
        else:
            write = write_time_us(self.device, written)
        compute = base.compute_time_us
        return RunTime(
            base.flops,
            bytes_read,
            written,
            base.blocks,
            base.threads_per_block,
            read,
            write,
            compute,
            combine(compute, read + write),
            base.emitter,
            per_operand,
            list(coalesced),
        )

    def _reads(
        self,
        instr: Instruction,
        props,
        blocks: int,
        verdicts: Sequence[bool | None],
        operand_bytes: Sequence[tuple[float, float] | None] | None,
    ) -> tuple[float, float, list[float]]:
        """(read time, bytes read, per operand its read time) of ``instr``'s operands."""
        device = self.device
        read = 0.0
        bytes_read = 0.0
        per_operand = []
        read_times = self._read_times
        xla_bytes = props.operand_bytes
        for k, (size, rates, _) in enumerate(self.operand_sizes(instr)):
            total = max(xla_bytes[k], 0.0) if k < len(xla_bytes) else size
            net = min(size, total)
            given = operand_bytes[k] if operand_bytes is not None and k < len(operand_bytes) else None
            if given is not None:
                net, total = given
            key = (blocks, net, total, rates[0] if k >= len(verdicts) or verdicts[k] else rates[1])
            t = read_times.get(key)
            if t is None:
                t = read_times[key] = read_time_us(device, *key)
            per_operand.append(t)
            read += t
            bytes_read += total
        return read, bytes_read, per_operand

    def operand_sizes(self, instr: Instruction) -> list[tuple[float, tuple[float, float], float | None]]:
        """Per operand of ``instr``: its bytes, its coalescing rates (coalesced, uncoalesced) and
        its bytes per element (None for a tuple), found once per instruction (both estimates of a
        target read them)."""
        hit = self._sizes.get(id(instr))
        if hit is None or hit[0] is not instr:
            device = self.device
            rates_of = self._rates
            sizes = []
            for o in instr.operands:
                shape = o.shape
                element_type = "tuple" if shape.tuple_shapes is not None else shape.element_type
                rates = rates_of.get(element_type)
                if rates is None:  # per element type: (coalesced, uncoalesced) on this device
                    rates = rates_of[element_type] = (
                        coalescing_rate(element_type, device, True),
                        coalescing_rate(element_type, device, False),
                    )
                size = shape_bytes(shape)
                sizes.append(
                    (float(size), rates, None if shape.tuple_shapes is not None else size / max(elements(shape), 1))
                )
            hit = self._sizes[id(instr)] = (instr, sizes)  # the entry keeps ``instr``: its id stays its
        return hit[1]

    # ---- producer / consumer ---------------------------------------------------------------
    def fused_run_time(self, producer: Instruction, consumer: Instruction, multi_output: bool = False) -> RunTime:
        """The kernel of ``producer`` fused into ``consumer``, costed as a fusion of its own (its
        flops, bytes and launch grid from the fused computation); ``multi_output``: the producer's
        value is still written, which adds its write time to the kernel's memory time."""
        fused = fuse(producer, consumer)
        rt = self.run_time(fused)
        if not multi_output:
            return rt
        side = self.run_time(producer)
        write = rt.write_time_us + side.write_time_us
        return replace(
            rt,
            bytes_written=rt.bytes_written + side.bytes_written,
            write_time_us=write,
            exec_time_us=combine(rt.compute_time_us, rt.read_time_us + write),
        )

    def run_times(
        self, producer: Instruction, consumers: Sequence[Instruction], multi_output: bool = False
    ) -> tuple[float, float]:
        """``EstimateRunTimes``: (unfused, fused) in microseconds, launch overheads included."""
        p_rt = self.run_time(producer)
        unfused = KERNEL_LAUNCH_OVERHEAD_US * (len(consumers) + 1) + p_rt.exec_time_us
        fused = KERNEL_LAUNCH_OVERHEAD_US * len(consumers)
        for consumer in consumers:
            unfused += self.run_time(consumer).exec_time_us
            fused += self.fused_run_time(producer, consumer, multi_output).exec_time_us
        return unfused, fused

    # ---- helpers --------------------------------------------------------------------------
    def _fusion_operands(self, producer: Instruction, consumer: Instruction) -> list[Instruction]:
        out: dict[int, Instruction] = {}
        for o in producer.operands:
            out.setdefault(id(o), o)
        for o in consumer.operands:
            if o is producer or (o.opcode == "get-tuple-element" and o.operands[0] is producer):
                continue
            out.setdefault(id(o), o)
        return list(out.values())

    def _indices(self, user: Instruction, value: Instruction) -> list[int]:
        return [
            k
            for k, o in enumerate(user.operands)
            if o is value or (o.opcode == "get-tuple-element" and o.operands[0] is value and value.shape.is_tuple)
        ]

    def operand_utilization(self, user: Instruction, value: Instruction) -> float:
        props = self.cost.of(user)
        return float(sum(props.operand_utilization[k] for k in self._indices(user, value)))

    def _operand_bytes(self, user: Instruction, value: Instruction) -> float:
        props = self.cost.of(user)
        ks = [k for k, o in enumerate(user.operands) if o is value]
        return float(props.operand_bytes[ks[0]]) if ks else 0.0

    def shared_operand_bytes(self, producer: Instruction, consumer: Instruction, operand: Instruction) -> int:
        util = self.operand_utilization(consumer, producer)
        by_producer = self._operand_bytes(producer, operand)
        by_consumer = self._operand_bytes(consumer, operand)
        common = 0.0
        if any(o is operand for o in producer.operands):
            common = self._common_utilization(producer, producer.operands.index(operand), consumer)
        size = shape_bytes(operand.shape)
        return round(by_producer * util) + int(by_consumer) - round(size * common)

    def _common_utilization(self, producer: Instruction, k: int, consumer: Instruction) -> float:
        operand = producer.operands[k]
        if not any(o is operand for o in consumer.operands):
            return 0.0
        elementwise = producer.opcode in PASS_THROUGH - {"tuple", "get-tuple-element"}
        if producer.opcode == "fusion":
            self.cost.of(producer)
            comp, root = fused_body(producer)
            elementwise = self.cost.common_elementwise_utilization(comp.parameters[k], root) == 1.0
        if not elementwise:
            return 0.0
        if consumer.opcode == "fusion":
            self.cost.of(consumer)
            comp, _ = fused_body(consumer)
            common_k = consumer.operands.index(operand)
            return sum(
                self.cost.common_elementwise_utilization(comp.parameters[common_k], comp.parameters[j])
                for j in self._indices(consumer, producer)
            )
        if consumer.opcode in PASS_THROUGH - {"tuple", "get-tuple-element"}:
            return 1.0
        return 0.0
