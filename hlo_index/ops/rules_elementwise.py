"""Elementwise ops: every output element reads the same element of each operand.

A rank-0 operand next to a ranked output (the scalar predicate of ``select``, the scalar bounds
of ``clamp``) is read by every output element: a zero-result map ``(d0, ...) -> ()`` out to in,
and ``()[s0, ...] -> (s0, ...)`` in to out.
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction
from ..hlo.opcodes import ELEMENTWISE_OPCODES
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import generator_map, identity_map, zero_result_map


def _is_broadcast_scalar(instr: Instruction, operand_index: int) -> bool:
    return instr.operands[operand_index].shape.rank == 0 and instr.shape.rank > 0


def _misfit(instr: Instruction, operand_index: int) -> str | None:
    """Why operand ``operand_index`` is not read element for element: its dimensions are not the
    result's (XLA's verifier rejects such an op; nothing says which element it would read)."""
    shape, out = instr.operands[operand_index].shape, instr.shape
    if shape.is_tuple or out.is_tuple or shape.dims != out.dims:
        return f"{instr.opcode}: operand {operand_index} is {shape}, the result {out}, which XLA's verifier rejects"
    return None


@output_to_input_rule(*ELEMENTWISE_OPCODES, reads=Reads())
def elementwise_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    dims = instr.shape.dims
    maps = []
    for i in range(len(instr.operands)):
        misfit = None if _is_broadcast_scalar(instr, i) else _misfit(instr, i)
        if misfit:
            maps.append(OperandMaps(i, (IndexingMap.undefined(misfit),)))
        else:
            maps.append(
                OperandMaps(i, (zero_result_map(dims) if _is_broadcast_scalar(instr, i) else identity_map(dims),))
            )
    return maps


@input_to_output_rule(*ELEMENTWISE_OPCODES, reads=Reads())
def elementwise_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    dims = instr.shape.dims
    if _is_broadcast_scalar(instr, operand_index):
        return [(generator_map(dims),)]
    misfit = _misfit(instr, operand_index)
    if misfit:
        return [(IndexingMap.undefined(misfit),)]
    return [(identity_map(dims),)]
