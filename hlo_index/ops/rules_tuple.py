"""Tuple plumbing: get-tuple-element, tuple, opt-barrier, copy-start / copy-done.

All move whole arrays unchanged, so every map is an identity; what they change is which tuple
element is addressed. ``OperandMaps.operand_output`` names the element of a tuple-shaped operand.
In-to-out maps of a tuple-shaped operand have the dims of the element the op forwards.
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction, Shape
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import identity_map


def _identity_or_undefined(shape: Shape) -> IndexingMap:
    if shape.is_tuple:
        return IndexingMap.undefined("nested tuple element: address it through get-tuple-element")
    return identity_map(shape.dims)


@output_to_input_rule("get-tuple-element", reads=Reads.of("index"))
def get_tuple_element_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return [OperandMaps(0, (_identity_or_undefined(instr.shape),), operand_output=instr.attr("index"))]


@input_to_output_rule("get-tuple-element", reads=Reads.of("index"))
def get_tuple_element_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(_identity_or_undefined(instr.shape),)]


@output_to_input_rule("tuple", reads=Reads.of("index"))
def tuple_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    element = instr.shape.leaf(output_index)
    return [
        OperandMaps(i, (_identity_or_undefined(element),) if i == output_index else ())
        for i in range(len(instr.operands))
    ]


@input_to_output_rule("tuple", reads=Reads.of("index"))
def tuple_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [
        (_identity_or_undefined(instr.shape.leaf(j)),) if j == operand_index else ()
        for j in range(instr.shape.num_outputs)
    ]


@output_to_input_rule("opt-barrier", reads=Reads.of("index"))
def opt_barrier_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    element = instr.shape.leaf(output_index)
    return [OperandMaps(0, (_identity_or_undefined(element),), operand_output=output_index)]


@input_to_output_rule("opt-barrier", reads=Reads.of("index"))
def opt_barrier_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(_identity_or_undefined(instr.shape.leaf(j)),) for j in range(instr.shape.num_outputs)]


@output_to_input_rule("copy-start", reads=Reads.of("index"))
def copy_start_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    # Outputs: (destination, source alias, u32[] context); the context reads no operand element.
    if output_index >= 2:
        return [OperandMaps(0, ())]
    return [OperandMaps(0, (identity_map(instr.operands[0].shape.dims),))]


@input_to_output_rule("copy-start", reads=Reads.of("index"))
def copy_start_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    m = identity_map(instr.operands[0].shape.dims)
    return [(m,) if j < 2 else () for j in range(instr.shape.num_outputs)]


@output_to_input_rule("copy-done", reads=Reads.of("index"))
def copy_done_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return [OperandMaps(0, (identity_map(instr.shape.dims),), operand_output=0)]


@input_to_output_rule("copy-done", reads=Reads.of("index"))
def copy_done_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(identity_map(instr.shape.dims),)]
