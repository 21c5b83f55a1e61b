"""``async-start`` / ``async-update`` / ``async-done``: the wrapped computation, seen through the
async tuple.

``async-start(ops...)`` has shape ``((operand shapes...), result, context)``: element 0 forwards the
operands, element 1 is the wrapped computation's result, element 2 is an opaque context that reads
nothing. ``async-update`` forwards its operand's elements, ``async-done`` returns element 1.
Only top-level tuple elements can be addressed (``OperandMaps.operand_output``), so a nested element
(the operand tuple, or a tuple-shaped result) is UNDEFINED with that reason.

``async-start``'s rules compose the wrapped computation, so they live in the layer that composes
computations (``hlo_index.fusion.rules_async``); this module holds the async tuple's own rules.
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule

OPERANDS, RESULT, CONTEXT = 0, 1, 2


def undefined_for_all(instr: Instruction, reason: str) -> list[OperandMaps]:
    return [OperandMaps(i, (IndexingMap.undefined(reason),)) for i in range(len(instr.operand_names))]


def _forward_element(instr: Instruction, element: int) -> list[OperandMaps]:
    """Output reads element ``element`` of operand 0 (an async tuple) unchanged."""
    operand = instr.operands[0].shape if instr.operands else None
    if operand is None or not operand.is_tuple or element >= operand.num_outputs:
        return undefined_for_all(instr, f"{instr.opcode}: operand 0 is not an async tuple")
    shape = operand.leaf(element)
    if shape.is_tuple:
        return undefined_for_all(instr, f"{instr.opcode}: element {element} of the async tuple is itself a tuple")
    return [OperandMaps(0, (IndexingMap.identity(shape.dims),), element)]


@output_to_input_rule("async-update", reads=Reads())
def async_update_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return _forward_element(instr, output_index)


@output_to_input_rule("async-done", reads=Reads())
def async_done_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    if instr.shape.is_tuple:
        return undefined_for_all(instr, "async-done: a tuple-shaped result is a nested element of the async tuple")
    return _forward_element(instr, RESULT)


@input_to_output_rule("async-update", reads=Reads())
def async_update_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    # Tuple-shaped operand: maps are over the forwarded element's dims (one per element).
    return [
        (IndexingMap.identity(s.dims),)
        if not s.is_tuple
        else (IndexingMap.undefined("async-update: nested tuple element"),)
        for s in (instr.shape.leaf(i) for i in range(instr.shape.num_outputs))
    ]


@input_to_output_rule("async-done", reads=Reads())
def async_done_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if instr.shape.is_tuple:
        return [(IndexingMap.undefined("async-done: tuple-shaped result"),)] * instr.shape.num_outputs
    return [(IndexingMap.identity(instr.shape.dims),)]
