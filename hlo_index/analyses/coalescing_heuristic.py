"""XLA's coalescing heuristics, for fusions no thread map covers and for the tiled (Triton) case.

* ``heuristic_coalesced`` (``IsReadCoalescedHeuristic``): one verdict for a whole fusion (or a
  producer / consumer pair): uncoalesced when some op transposes the minor dimension of a value
  that is not a broadcast or iota (through bitcasts and elementwise ops), unless the fusion is
  emitted by the transpose emitter, which reads through shared memory.
* ``tiled_bandwidth_utilization`` (``BandwidthUtilizationRateHeuristicForTiledMemoryAccess``):
  for an operand tile (sizes, strides), the contiguous bytes a tile reads over the DRAM->L2
  transactions they cost; ``tiled_read_coalesced`` (the removed ``IsTiledReadCoalescedHeuristic``):
  whether those contiguous bytes fill at least one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil

from ..hlo.model import Instruction, Shape
from .emitters import layout_permutation
from .gpu_devices import RTX_A6000, GpuDevice
from .physical_order import minor_nontrivial, physical_order
from .utilization import storage_bits


def transposes_minor_dimension(instr: Instruction) -> bool:
    """The op moves which element is next in memory: a transpose or layout-changing copy that
    sends the operand's minor (non-unit) dimension elsewhere."""
    if instr.opcode == "fusion" and instr.fused_computation is not None:
        return any(transposes_minor_dimension(i) for i in instr.fused_computation.instructions)
    perm = layout_permutation(instr)
    if perm is None:
        return False
    a, o = minor_nontrivial(instr.operands[0].shape), minor_nontrivial(instr.shape)
    if a is None or o is None:
        return False
    return perm[o] != a


def _is_broadcast_like(instr: Instruction) -> bool:
    for _ in range(256):
        if instr.opcode in ("broadcast", "iota"):
            return True
        if len(instr.operands) != 1:
            return False
        if instr.opcode != "bitcast" and not _elementwise(instr):
            return False
        instr = instr.operands[0]
    return False


def _elementwise(instr: Instruction) -> bool:
    return (
        not instr.shape.is_tuple
        and all(o.shape.dims == instr.shape.dims for o in instr.operands)
        and instr.opcode
        not in (
            "transpose",
            "copy",
            "reshape",
            "reverse",
            "slice",
            "pad",
            "dynamic-slice",
            "broadcast",
            "reduce",
            "sort",
            "gather",
        )
    )


def _bad_transpose(instr: Instruction) -> Instruction | None:
    fused = getattr(instr, "fused_computation", None)
    if fused is not None:
        for inner in fused.instructions:
            if transposes_minor_dimension(inner) and not _is_broadcast_like(inner.operands[0]):
                return inner
        return None
    if transposes_minor_dimension(instr) and not _is_broadcast_like(instr.operands[0]):
        return instr
    return None


def heuristic_coalesced(
    producer: Instruction, consumer: Instruction | None = None, emitter: str = "loop"
) -> tuple[bool, str]:
    """(coalesced, why) by XLA's whole-fusion heuristic."""
    if emitter != "transpose":
        for who in (producer, consumer):
            if who is None:
                continue
            bad = _bad_transpose(who)
            if bad is not None:
                return False, f"%{bad.name} transposes the minor dimension of a value that is not a broadcast or iota"
    return True, "no op transposes the minor dimension of a non-broadcast value"


def contiguous_bytes(shape: Shape, tile_sizes: Sequence[int], tile_strides: Sequence[int]) -> int:
    """Bytes of one tile that lie contiguously in memory: walk the dims minor to major while the
    stride is 1, each contributing min(tile, dim), stopping after a partially covered dim (a
    tile larger than its dim is padding, masked away)."""
    elements = 1
    for d in reversed(physical_order(shape)):
        if tile_strides[d] != 1:
            break
        elements *= min(tile_sizes[d], shape.dims[d])
        if tile_sizes[d] < shape.dims[d]:
            break
    return ceil(elements * storage_bits(shape) / 8)


def tiled_bandwidth_utilization(
    shape: Shape, tile_sizes: Sequence[int], tile_strides: Sequence[int], device: GpuDevice = RTX_A6000
) -> float:
    size = contiguous_bytes(shape, tile_sizes, tile_strides)
    t = device.dram_to_l2_transaction_bytes
    return size / (t * ceil(size / t))


def tiled_read_coalesced(
    shape: Shape, tile_sizes: Sequence[int], tile_strides: Sequence[int], device: GpuDevice = RTX_A6000
) -> bool:
    return contiguous_bytes(shape, tile_sizes, tile_strides) >= device.dram_to_l2_transaction_bytes
