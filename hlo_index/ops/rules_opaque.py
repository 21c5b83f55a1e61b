"""Ops whose element access is not a static function of indices: UNDEFINED, with the reason.

Also the two ordering-only ops, ``add-dependency`` and ``domain``, which pass their first
operand through unchanged (identity maps; the token of add-dependency is read as a scalar).
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction
from .registry import OperandMaps, Reads, input_to_output_rule, opaque, output_to_input_rule
from .shape_maps import generator_map, zero_result_map

opaque(
    "custom-call: runs external code whose element access pattern is unknown (targets with "
    "published semantics are in rules_custom_call.py)",
    "custom-call",
)
opaque(
    "random number generation: output values come from generator state, not from positions of input elements",
    "rng",
    "rng-bit-generator",
    "rng-get-and-update-state",
)
opaque(
    "host/device I/O: the data comes from outside the program, not from operand elements",
    "infeed",
    "outfeed",
    "send",
    "recv",
    "send-done",
    "recv-done",
)
opaque(
    "fft: every output element mixes whole transform axes through complex arithmetic "
    "(output and input shapes differ for rfft/irfft); not modelled",
    "fft",
)
opaque(
    "linear-algebra solver: reads whole (triangular parts of) matrices with loop-carried dependencies; not modelled",
    "cholesky",
    "triangular-solve",
)
opaque("device id: no operand elements are read, the value is the executing device's id", "partition-id", "replica-id")
opaque("after-all: joins tokens to order side effects; no array data is read", "after-all")
opaque(
    "dynamic shape op: the result depends on runtime dimension sizes",
    "get-dimension-size",
    "set-dimension-size",
    "dynamic-reshape",
)
opaque("ragged-all-to-all: chunk offsets and sizes come from runtime operands", "ragged-all-to-all")
opaque(
    "collective-reduce / scan / shuffle: in no HloOpcode list of XLA's published sources "
    "(hlo_opcode.h) that hlo-index was checked against, so no element semantics to derive maps from",
    "collective-reduce",
    "scan",
    "shuffle",
)


# ---- ordering-only pass-through ops -------------------------------------------------------


@output_to_input_rule("add-dependency", "domain", reads=Reads())
def pass_through_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    dims = instr.shape.leaf(output_index).dims
    element = output_index if instr.shape.is_tuple else 0
    maps = [OperandMaps(0, (IndexingMap.identity(dims),), element)]
    return maps + [OperandMaps(k, (zero_result_map(dims),)) for k in range(1, len(instr.operands))]


@input_to_output_rule("add-dependency", "domain", reads=Reads())
def pass_through_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if operand_index > 0:
        return [(generator_map(instr.shape.leaf(i).dims),) for i in range(instr.shape.num_outputs)]
    return [(IndexingMap.identity(instr.shape.leaf(i).dims),) for i in range(instr.shape.num_outputs)]
