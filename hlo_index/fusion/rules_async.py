"""``async-start``: the wrapped computation, seen through the async tuple (``ops.rules_async``).

Element 0 of the tuple forwards the operands, element 1 is the wrapped computation's result (its
maps composed through the computation), element 2 is the opaque context, which reads nothing.
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction
from ..ops.registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from ..ops.rules_async import CONTEXT, undefined_for_all
from .compose import computation_input_to_output
from .rules_call import maps_through_computation


def _nested(instr: Instruction, element: int) -> str | None:
    """Why element ``element`` of ``instr``'s tuple cannot be addressed, or None."""
    if not instr.shape.is_tuple or element >= instr.shape.num_outputs:
        return f"{instr.opcode}: output {element} is not an element of its async tuple"
    if instr.shape.leaf(element).is_tuple:
        return f"{instr.opcode}: output {element} is itself a tuple (nested tuples are not addressable)"
    return None


@output_to_input_rule("async-start", reads=Reads.of("calls"))
def async_start_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    if output_index == CONTEXT:
        return [OperandMaps(i, ()) for i in range(len(instr.operand_names))]
    reason = _nested(instr, output_index)
    if reason is not None:
        return undefined_for_all(instr, reason)
    wrapped = instr.called.get("calls")
    if wrapped is None:
        return undefined_for_all(instr, "async-start: wrapped computation not resolved")
    return maps_through_computation(instr, wrapped, 0)


@input_to_output_rule("async-start", reads=Reads.of("calls"))
def async_start_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    outputs: list[tuple[IndexingMap, ...]] = []
    wrapped = instr.called.get("calls")
    for element in range(instr.shape.num_outputs):
        reason = _nested(instr, element)
        if element == CONTEXT:
            outputs.append(())
        elif reason is not None:
            outputs.append((IndexingMap.undefined(reason),))
        elif wrapped is None:
            outputs.append((IndexingMap.undefined("async-start: wrapped computation not resolved"),))
        else:
            outputs.append(tuple(computation_input_to_output(wrapped, operand_index)[0]))
    return outputs
