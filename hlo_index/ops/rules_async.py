"""``async-start`` / ``async-update`` / ``async-done``: the wrapped computation, seen through the
async tuple.

``async-start(ops...)`` has shape ``((operand shapes...), result, context)``: element 0 forwards the
operands, element 1 is the wrapped computation's result, element 2 is an opaque context that reads
nothing. ``async-update`` forwards its operand's elements, ``async-done`` returns element 1.
Only top-level tuple elements can be addressed (``OperandMaps.operand_output``), so a nested element
(the operand tuple, or a tuple-shaped result) is UNDEFINED with that reason.
"""
from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction
from .registry import Reads, OperandMaps, input_to_output_rule, output_to_input_rule

OPERANDS, RESULT, CONTEXT = 0, 1, 2


def _undefined_all(instr: Instruction, reason: str) -> list[OperandMaps]:
    return [OperandMaps(i, (IndexingMap.undefined(reason),)) for i in range(len(instr.operand_names))]


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
        return _undefined_all(instr, reason)
    wrapped = instr.called.get("calls")
    if wrapped is None:
        return _undefined_all(instr, "async-start: wrapped computation not resolved")
    from .rules_call import maps_through_computation
    return maps_through_computation(instr, wrapped, 0)


@input_to_output_rule("async-start", reads=Reads.of("calls"))
def async_start_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    from ..fusion import computation_input_to_output
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


def _forward_element(instr: Instruction, element: int) -> list[OperandMaps]:
    """Output reads element ``element`` of operand 0 (an async tuple) unchanged."""
    operand = instr.operands[0].shape if instr.operands else None
    if operand is None or not operand.is_tuple or element >= operand.num_outputs:
        return _undefined_all(instr, f"{instr.opcode}: operand 0 is not an async tuple")
    shape = operand.leaf(element)
    if shape.is_tuple:
        return _undefined_all(instr, f"{instr.opcode}: element {element} of the async tuple is itself a tuple")
    return [OperandMaps(0, (IndexingMap.identity(shape.dims),), element)]


@output_to_input_rule("async-update", reads=Reads())
def async_update_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return _forward_element(instr, output_index)


@output_to_input_rule("async-done", reads=Reads())
def async_done_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    if instr.shape.is_tuple:
        return _undefined_all(instr, "async-done: a tuple-shaped result is a nested element of the async tuple")
    return _forward_element(instr, RESULT)


@input_to_output_rule("async-update", reads=Reads())
def async_update_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    # Tuple-shaped operand: maps are over the forwarded element's dims (one per element).
    return [(IndexingMap.identity(s.dims),) if not s.is_tuple else
            (IndexingMap.undefined("async-update: nested tuple element"),)
            for s in (instr.shape.leaf(i) for i in range(instr.shape.num_outputs))]


@input_to_output_rule("async-done", reads=Reads())
def async_done_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if instr.shape.is_tuple:
        return [(IndexingMap.undefined("async-done: tuple-shaped result"),)] * instr.shape.num_outputs
    return [(IndexingMap.identity(instr.shape.dims),)]
