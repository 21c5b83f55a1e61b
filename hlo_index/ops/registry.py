"""One opcode -> rule registry for both directions.

A rule file defines, side by side, ``output_to_input`` and ``input_to_output`` for one op family
and registers them with the decorators below. ``hlo_index.ops`` imports every rule module, so a
new op is one function pair in one file.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..affine import IndexingMap
from ..hlo.model import Instruction


@dataclass(frozen=True, slots=True)
class OperandMaps:
    """The maps from one output of an instruction to one of its operands.

    ``maps`` are the distinct maps (an operand read through two patterns has two; an operand
    this output does not read has none). ``operand_output`` says which tuple element of a
    tuple-shaped operand is addressed (get-tuple-element); it is 0 for array operands.
    """

    operand: int
    maps: tuple[IndexingMap, ...]
    operand_output: int = 0


OutputToInputRule = Callable[[Instruction, int], list[OperandMaps]]
"""(instr, output_index) -> one OperandMaps per operand, in operand order."""

InputToOutputRule = Callable[[Instruction, int], list[tuple[IndexingMap, ...]]]
"""(instr, operand_index) -> per output index of instr, the maps from that operand to the output."""

OUTPUT_TO_INPUT: dict[str, OutputToInputRule] = {}
INPUT_TO_OUTPUT: dict[str, InputToOutputRule] = {}
# Opcodes whose maps are UNDEFINED by design, with the reason (opaque computation, I/O, ...).
OPAQUE_REASONS: dict[str, str] = {}


def output_to_input_rule(*opcodes: str):
    def register(fn: OutputToInputRule) -> OutputToInputRule:
        for op in opcodes:
            OUTPUT_TO_INPUT[op] = fn
        return fn
    return register


def input_to_output_rule(*opcodes: str):
    def register(fn: InputToOutputRule) -> InputToOutputRule:
        for op in opcodes:
            INPUT_TO_OUTPUT[op] = fn
        return fn
    return register


def opaque(reason: str, *opcodes: str) -> None:
    for op in opcodes:
        OPAQUE_REASONS[op] = reason
