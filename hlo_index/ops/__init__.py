"""Indexing rules per HLO op. Use ``output_to_input`` / ``input_to_output``; never the dicts directly."""
from __future__ import annotations

from ..affine import IndexingMap
from ..hlo.model import Instruction
from .registry import (INPUT_TO_OUTPUT, OPAQUE_REASONS, OUTPUT_TO_INPUT, OperandMaps,
                       input_to_output_rule, opaque, output_to_input_rule)


def _undefined_reason(instr: Instruction) -> str:
    if instr.opcode in OPAQUE_REASONS:
        return OPAQUE_REASONS[instr.opcode]
    return f"no indexing rule for opcode '{instr.opcode}'"


def output_to_input(instr: Instruction, output_index: int = 0) -> list[OperandMaps]:
    """Maps from output ``output_index`` of ``instr`` to each operand (one entry per operand)."""
    rule = OUTPUT_TO_INPUT.get(instr.opcode)
    if rule is None:
        reason = _undefined_reason(instr)
        return [OperandMaps(i, (IndexingMap.undefined(reason),)) for i in range(len(instr.operand_names))]
    return rule(instr, output_index)


def input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    """Maps from operand ``operand_index`` to each output of ``instr`` (one entry per output)."""
    rule = INPUT_TO_OUTPUT.get(instr.opcode)
    if rule is None:
        reason = _undefined_reason(instr)
        if instr.opcode in OUTPUT_TO_INPUT and instr.opcode not in OPAQUE_REASONS:
            reason = f"no input-to-output rule for opcode '{instr.opcode}'"
        return [(IndexingMap.undefined(reason),) for _ in range(instr.shape.num_outputs)]
    return rule(instr, operand_index)


def _register_rule_modules() -> None:
    """Every module named ``rules_*.py`` in this package registers its rules on import."""
    import importlib
    import pkgutil
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("rules_"):
            importlib.import_module(f"{__name__}.{info.name}")


_register_rule_modules()

__all__ = ["OperandMaps", "output_to_input", "input_to_output", "output_to_input_rule",
           "input_to_output_rule", "opaque", "OUTPUT_TO_INPUT", "INPUT_TO_OUTPUT", "OPAQUE_REASONS"]
