"""``call`` and ``fusion`` as ops inside another computation: the callee analysed as a whole."""

from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Computation, Instruction
from ..ops.registry import OperandMaps, input_to_output_rule, output_to_input_rule
from .compose import computation_input_to_output, computation_output_to_input
from .traverse import callee_misfit, callee_of


@output_to_input_rule("call", "fusion")
def call_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    callee = callee_of(instr)
    misfit = "called computation not resolved" if callee is None else callee_misfit(instr, callee)
    if misfit is not None or callee is None:
        reason = f"{instr.opcode}: {misfit}" + ("" if callee is None else ", which XLA's verifier rejects")
        return [OperandMaps(i, (IndexingMap.undefined(reason),)) for i in range(len(instr.operand_names))]
    return maps_through_computation(instr, callee, output_index)


def maps_through_computation(instr: Instruction, callee: Computation, output_index: int) -> list[OperandMaps]:
    """Maps from output ``output_index`` of ``callee`` to each operand of ``instr`` (whose operands
    are ``callee``'s parameters, in order)."""
    per_param = computation_output_to_input(callee, output_index)
    result = []
    for operand in range(len(instr.operand_names)):
        # a tuple-shaped operand read through several elements gets one OperandMaps per element
        elements = sorted(e for (p, e) in per_param if p == operand)
        if not elements:
            result.append(OperandMaps(operand, ()))
        result.extend(OperandMaps(operand, per_param[(operand, element)], element) for element in elements)
    return result


@input_to_output_rule("call", "fusion")
def call_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    callee = callee_of(instr)
    misfit = "called computation not resolved" if callee is None else callee_misfit(instr, callee)
    if misfit is not None or callee is None:
        reason = f"{instr.opcode}: {misfit}" + ("" if callee is None else ", which XLA's verifier rejects")
        return [(IndexingMap.undefined(reason),) for _ in range(instr.shape.num_outputs)]
    return list(computation_input_to_output(callee, operand_index))
