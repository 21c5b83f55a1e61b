"""XLA's ``GpuPerformanceModelWithIndexingAnalysis``: run time from the indexing maps of a fusion.

* untiled (``run_time``): every fused instruction and operand is reached from the root by a set
  of maps; an instruction computes ``flops per element x the map's iteration space`` per map, an
  operand is read ``element size x the iteration space`` bytes per map (repeats counted), at the
  coalescing rate of XLA's heuristic; launch grid of the emitter; writes = the root's bytes;
* tiled (``tiled_run_time``, block-level / Triton fusions): one block per output tile; each
  instruction's tile comes from propagating the root tile through its map (``tiling.propagate``);
  flops = flops per element x the tile padded to powers of two x blocks, reads = the operand
  tile (clipped to the shape) x blocks at the tile's bandwidth rate (contiguous bytes over whole
  DRAM->L2 transactions), writes = the root's bytes at the root tile's rate; a root, operand or
  iota tile past 0.4 x the registers of a block spills: infinite time; threads = warps x warp
  size, warps from the largest padded tile (<= 256: 1, <= 1024: 2, <= 4096: 4, else 8);
* ``best_tiling``: XLA's search: every root tiling of powers of two below each dim and the dim
  itself, the valid ones estimated, the fastest kept (ties: the first).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...hlo.model import Instruction
from ..tiling import TileError, propagate, tile_counts
from .devices import DeviceSpec
from .flops import ELEMENTWISE
from .gpu_model import RunTime, coalescing_rate, combine, compute_time_us, launch_dimensions, read_time_us
from .hlo_cost import HloCost, fused_body
from .op_profiles import flops_per_element
from .shapes import element_bytes, elements, leaves, shape_bytes
from .triton_fusions import block_level_config, block_level_launch, is_block_level, is_triton_gemm

REGISTER_FRACTION = 0.4
MAX_TILE_ELEMENTS = 1 << 20  # the block-level emitter's largest tensor
ZERO_FLOP_OPS = frozenset(
    {
        "bitcast",
        "broadcast",
        "constant",
        "dynamic-slice",
        "dynamic-update-slice",
        "gather",
        "iota",
        "pad",
        "parameter",
        "slice",
        "transpose",
        "tuple",
        "get-tuple-element",
    }
)


class TilingError(ValueError):
    """The fusion cannot be tiled with the given sizes (XLA's failed status)."""


@dataclass
class TiledRunTime(RunTime):
    """A tiled estimate: the run time and the block-level parameters it assumed."""

    tile_sizes: list = field(default_factory=list)  # per fusion output
    num_warps: int = 0
    operand_rates: list = field(default_factory=list)  # per fusion operand: bandwidth rate


def padded_size(sizes: Sequence[int]) -> int:
    n = 1
    for s in sizes:
        n *= 1 << max(int(s) - 1, 0).bit_length()
    return n


def num_warps_for(largest_padded_tile: int) -> int:
    if largest_padded_tile <= 256:
        return 1
    if largest_padded_tile <= 1024:
        return 2
    if largest_padded_tile <= 4096:
        return 4
    return 8


def fits_in_registers(padded: int, device: DeviceSpec) -> bool:
    return padded <= REGISTER_FRACTION * device.registers_per_block_limit


def tile_bandwidth_rate(shape, sizes: Sequence[int], strides: Sequence[int], device: DeviceSpec) -> float:
    """Contiguous bytes of the tile over the whole DRAM->L2 transactions they take."""
    contiguous = 1
    order = (
        list(shape.layout.minor_to_major)
        if shape.layout is not None and shape.layout.minor_to_major
        else list(range(shape.rank - 1, -1, -1))
    )
    for d in order:
        if strides[d] != 1:
            break
        contiguous *= min(sizes[d], shape.dims[d])
        if sizes[d] < shape.dims[d]:
            break
    size = contiguous * element_bytes(shape.element_type)
    t = device.dram_to_l2_transaction_size_bytes
    return size / (t * math.ceil(size / t)) if size > 0 else 1.0


# ---- maps from the root to every fused instruction ------------------------------------------


def instruction_maps(comp, root: Instruction) -> list[tuple[Instruction, tuple]]:
    """(instruction, distinct maps from ``root``'s output to it), for every instruction ``root``
    reaches, root first."""
    from ...fusion.mapset import distinct, union
    from ...fusion.rule_cache import identity, output_to_input_steps
    from ...fusion.walk import compose_step
    from .hlo_cost import post_order

    order = post_order(comp)
    # a variadic root (reduce, sort) is followed from its first output, as XLA does
    maps: dict[int, tuple] = {id(root): (identity(root.shape.leaf(0).dims),)}
    out = []
    for instr in reversed(order):
        got = maps.get(id(instr))
        if not got or (instr.shape.is_tuple and instr is not root):
            continue
        out.append((instr, got))
        dims = instr.shape.leaf(0).dims
        for position, _element, op_maps, passthrough in output_to_input_steps(instr, 0):
            new = (
                got
                if passthrough
                else distinct([compose_step(op_map, m, instr, dims) for op_map in op_maps for m in got])
            )
            operand = instr.operands[position]
            maps[id(operand)] = union(maps.get(id(operand), ()), new)
    return out


def iteration_space(m, instr: Instruction) -> int:
    if m.is_undefined:
        return elements(instr.shape)
    if m.is_known_empty:
        return 0
    n = 1
    for iv in list(m.dims) + list(m.range_vars):
        n *= iv.hi - iv.lo + 1
    return n


# ---- the model -------------------------------------------------------------------------------


class IndexingPerformanceModel:
    """Estimates under one device and one cost analysis (for the op profiles and flops of the
    instructions the per-element rule does not cover)."""

    def __init__(self, device: DeviceSpec, cost: HloCost) -> None:
        self.device = device
        self.cost = cost

    # ---- flops per element --------------------------------------------------------------
    def flops_per_element(self, instr: Instruction) -> int:
        op = instr.opcode
        if op in ZERO_FLOP_OPS:
            return 0
        options = self.cost.options
        if op == "concatenate":
            d = instr.attrs.get("dimensions", (0,))[0]
            return 400 if d > 0 and instr.operands[0].shape.dims[d] & 31 else 6
        if op in ELEMENTWISE:
            return flops_per_element(op, instr.shape.element_type, options.capability, options.profiles)
        if op == "reduce":
            reducer = instr.called["to_apply"]
            per = sum(self.flops_per_element(i) for i in reducer.instructions)
            out = instr.shape.tuple_shapes[0] if instr.shape.tuple_shapes is not None else instr.shape
            factor = elements(instr.operands[0].shape) // max(elements(out), 1)
            return (factor - 1) * per
        n = elements(instr.shape.tuple_shapes[0] if instr.shape.tuple_shapes is not None else instr.shape)
        return int(self.cost.of(instr).flops // n) if n else 0

    # ---- untiled ------------------------------------------------------------------------
    def run_time(self, instr: Instruction, fusion: Instruction | None = None) -> RunTime:
        """``EstimateRunTimeForInstruction`` (``fusion``: the kernel to estimate when it is not
        ``instr`` itself, e.g. a producer fused into its consumer)."""
        from ..coalescing_heuristic import heuristic_coalesced
        from .gpu_model import as_fusion

        device = self.device
        if instr.opcode == "bitcast":
            return RunTime(0.0, 0.0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0, "none")
        fusion = fusion or as_fusion(instr)
        comp, root = fused_body(fusion)
        if root.opcode == "tuple":
            raise TilingError("the indexing cost model does not support multi-output fusions")
        launch = launch_dimensions(fusion, device)
        coalesced, _ = heuristic_coalesced(fusion, emitter=launch.emitter)
        flops = 0
        read = 0.0
        bytes_read = 0
        per_operand = []
        for value, maps in instruction_maps(comp, root):
            if value.opcode == "parameter":
                assert value.parameter_number is not None, value.name
                operand = fusion.operands[value.parameter_number]
                size = element_bytes(operand.shape.element_type)
                total = sum(size * iteration_space(m, operand) for m in maps)
                net = min(shape_bytes(operand.shape), total)
                bytes_read += total
                t = read_time_us(
                    device, launch.blocks, net, total, coalescing_rate(operand.shape.element_type, device, coalesced)
                )
                per_operand.append(t)
                read += t
            else:
                per = self.flops_per_element(value)
                flops += sum(per * iteration_space(m, value) for m in maps)
        written = sum(shape_bytes(x) for x in leaves(root.shape))
        write = float(written) / device.memory_bandwidth * 1e6
        compute = compute_time_us(device, flops, launch.blocks, launch.threads_per_block)
        return RunTime(
            float(flops),
            float(bytes_read),
            float(written),
            launch.blocks,
            launch.threads_per_block,
            read,
            write,
            compute,
            combine(compute, read + write),
            launch.emitter,
            per_operand,
            [coalesced] * len(per_operand),
        )

    def run_times(self, producer: Instruction, consumers: Sequence[Instruction]) -> tuple[float, float]:
        """``EstimateRunTimes``: (unfused, fused) in microseconds, launch overheads included; each
        fused kernel estimated from its own maps."""
        from .fused_kernel import fuse
        from .gpu_model import KERNEL_LAUNCH_OVERHEAD_US

        unfused = KERNEL_LAUNCH_OVERHEAD_US * (len(consumers) + 1) + self.run_time(producer).exec_time_us
        fused = KERNEL_LAUNCH_OVERHEAD_US * len(consumers)
        for consumer in consumers:
            unfused += self.run_time(consumer).exec_time_us
            fused += self.run_time(consumer, fusion=fuse(producer, consumer)).exec_time_us
        return unfused, fused

    # ---- tiled --------------------------------------------------------------------------
    def tiled_run_time(
        self,
        fusion: Instruction,
        tile_sizes: Sequence[int],
        num_blocks: int | None = None,
        threads_per_block: int | None = None,
        num_warps: int | None = None,
    ) -> TiledRunTime:
        """``EstimateRunTimeForTiledFusion`` with output tile ``tile_sizes`` of the fusion's real
        root (the root no other fused instruction uses); raises ``TilingError`` when a map does
        not give a tile."""
        device = self.device
        comp = fusion.fused_computation
        roots = _roots(comp)
        real = _real_root(comp, roots)
        _check_array_roots(roots)
        dims = real.shape.dims
        try:
            counts = tile_counts(dims, tile_sizes)
        except TileError as e:
            raise TilingError(str(e)) from e
        blocks_from_tiles = math.prod(counts)
        tiles: list[tuple[Instruction, tuple[int, ...], tuple[int, ...]]] = []  # (instr, sizes, strides)
        seen = set()
        for value, maps in instruction_maps(comp, real):
            for m in maps:
                t = propagate(m, dims, tile_sizes)
                t_sizes: tuple[int, ...]
                t_strides: tuple[int, ...]
                if not t.is_tile:
                    if value.opcode == "constant" and value.shape.rank == 0:
                        t_sizes, t_strides, key_off = (), (), ""
                    else:
                        raise TilingError(f"{value.name}: {t.reason}")
                else:
                    assert t.sizes is not None and t.strides is not None  # a tile has both
                    t_sizes, t_strides, key_off = t.sizes, t.strides, str(t.offsets)
                key = (id(value), t_sizes, t_strides, key_off)
                if key in seen:
                    continue
                seen.add(key)
                tiles.append((value, t_sizes, t_strides))
        root_tiles: dict[int, tuple[Instruction, tuple[int, ...], tuple[int, ...]]] = {}
        for value, sizes, strides in tiles:
            if any(value is r for r in roots):
                root_tiles.setdefault(id(value), (value, sizes, strides))
        missing = [r.name for r in roots if id(r) not in root_tiles]
        if missing:
            raise TilingError(f"output {missing[0]} is not reached from the tiled root {real.name}")
        largest = max((padded_size(s) for _, s, _ in tiles), default=1)
        warps = num_warps or num_warps_for(largest)
        blocks = num_blocks or blocks_from_tiles
        threads = threads_per_block or warps * device.threads_per_warp
        out_sizes = [list(root_tiles[id(r)][1]) for r in roots]
        infinite = not all(fits_in_registers(padded_size(root_tiles[id(r)][1]), device) for r in roots) or any(
            (v.opcode in ("parameter", "iota")) and not fits_in_registers(padded_size(s), device) for v, s, _ in tiles
        )
        if infinite:
            inf = math.inf
            return TiledRunTime(
                0.0, 0.0, 0.0, blocks, threads, inf, inf, inf, inf, "block-level", tile_sizes=out_sizes, num_warps=warps
            )
        flops = 0
        per_operand: dict[int, list] = {}
        bytes_read = 0
        for value, sizes, strides in tiles:
            if value.opcode != "parameter":
                flops += self.flops_per_element(value) * blocks * padded_size(sizes)
                continue
            number = value.parameter_number
            assert number is not None, value.name
            operand = fusion.operands[number]
            shape = operand.shape
            n = blocks
            for s, d in zip(sizes, shape.dims):
                n *= min(s, d)
            b = element_bytes(shape.element_type) * n
            bytes_read += b
            rate = tile_bandwidth_rate(shape, sizes, strides, device)
            entry = per_operand.setdefault(number, [0, 1.0])
            entry[0] += b
            entry[1] = min(entry[1], rate)
        read = 0.0
        times, rates = [], []
        for k, operand in enumerate(fusion.operands):
            total, rate = per_operand.get(k, (0, 1.0))
            time_us = (
                read_time_us(device, blocks, min(shape_bytes(operand.shape), total), total, rate) if total else 0.0
            )
            times.append(time_us)
            rates.append(rate)
            read += time_us
        write = 0.0
        written = 0
        for r in roots:
            _, sizes, strides = root_tiles[id(r)]
            rate = tile_bandwidth_rate(r.shape, sizes, strides, device)
            bw = int(rate * device.memory_bandwidth)
            b = shape_bytes(r.shape)
            write += b / bw * 1e6
            written += b
        compute = compute_time_us(device, flops, blocks, threads)
        return TiledRunTime(
            float(flops),
            float(bytes_read),
            float(written),
            blocks,
            threads,
            read,
            write,
            compute,
            combine(compute, read + write),
            "block-level",
            times,
            [],
            tile_sizes=out_sizes,
            num_warps=warps,
            operand_rates=rates,
        )

    def best_tiling(self, fusion: Instruction) -> TiledRunTime:
        """XLA's search for the fastest tiling of a block-level fusion."""
        comp = fusion.fused_computation
        roots = _roots(comp)
        _check_array_roots(roots)
        real = _real_root(comp, roots)
        choices = [candidate_sizes(d) for d in real.shape.dims]
        best: TiledRunTime | None = None
        for sizes in itertools.product(*choices):
            if padded_size(sizes) > MAX_TILE_ELEMENTS:
                continue
            try:
                rt = self.tiled_run_time(fusion, sizes)
            except TilingError:
                continue
            if math.isinf(rt.exec_time_us):
                continue
            if best is None or rt.exec_time_us < best.exec_time_us:
                best = rt
        if best is None:
            raise TilingError("no valid tiling found")
        return best


def candidate_sizes(dim: int) -> list[int]:
    out = []
    t = 1
    while t < dim:
        out.append(t)
        t *= 2
    out.append(max(dim, 1))
    return out


def _roots(comp) -> list[Instruction]:
    root = comp.root
    if root.opcode != "tuple":
        return [root]
    out: list[Instruction] = []
    for o in root.operands:
        if not any(o is r for r in out):
            out.append(o)
    return out


def _check_array_roots(roots: list[Instruction]) -> None:
    """Output tiles are boxes of an array: a root of tuple shape (a variadic reduce or sort) has none."""
    for r in roots:
        if r.shape.is_tuple:
            raise TilingError(f"output {r.name} has a tuple shape ({r.opcode} of several arrays): no output tile")


def _real_root(comp, roots: list[Instruction]) -> Instruction:
    used = {id(o) for i in comp.instructions if i is not comp.root for o in i.operands}
    for r in roots:
        if id(r) not in used:
            return r
    return roots[0]


__all__ = [
    "IndexingPerformanceModel",
    "TiledRunTime",
    "TilingError",
    "block_level_config",
    "block_level_launch",
    "candidate_sizes",
    "instruction_maps",
    "is_block_level",
    "is_triton_gemm",
    "num_warps_for",
    "padded_size",
]
