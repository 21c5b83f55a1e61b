"""Indexing rules per HLO op. Use ``output_to_input`` / ``input_to_output``; never the dicts directly.

Every ``rules_*`` module here registers on import. The ops whose maps compose the computations they
call (``registry.COMPOSITE``: call, fusion, conditional, while, async-start) are registered by
``hlo_index.fusion``, the layer that composes computations; until it is imported, asking for one
raises ``CompositeRuleMissing`` rather than answering UNDEFINED.
"""

from __future__ import annotations

import sys

from ..affine import IndexingMap
from ..hlo.model import Instruction, Shape
from ..hlo.shapes import has_unbounded_dim
from .registry import (
    COMPOSITE,
    INPUT_TO_OUTPUT,
    OPAQUE_REASONS,
    OUTPUT_TO_INPUT,
    CompositeRuleMissing,
    OperandMaps,
    input_to_output_rule,
    opaque,
    output_to_input_rule,
)


def _undefined_reason(instr: Instruction) -> str:
    """Why ``instr``'s opcode has no rule; a composite op without its rules registered raises."""
    if instr.opcode in COMPOSITE:
        raise CompositeRuleMissing(instr.opcode)
    if instr.opcode in OPAQUE_REASONS:
        return OPAQUE_REASONS[instr.opcode]
    return f"no indexing rule for opcode '{instr.opcode}'"


def _inconsistent_shape(instr: Instruction) -> str | None:
    """Why the written result shape of ``instr`` cannot be right (XLA's parser does not verify it),
    or None when it agrees with what the operands and attributes give (or that is unknown)."""
    from ..hlo.written_shapes import written_shape_problem

    return written_shape_problem(instr)


def unbounded_dim_reason(instr: Instruction) -> str | None:
    """Why ``instr`` has no static map where its result or an operand has an unbounded dynamic
    dimension (``f32[?,784]``: its extent is known only at run time, so no domain bounds it)."""
    for shape in (instr.shape, *(o.shape for o in instr.operands)):
        if has_unbounded_dim(shape):
            return unbounded_reason(f"{instr.opcode} %{instr.name}", shape)
    return None


def unbounded_reason(what: str, shape: Shape) -> str:
    """The UNDEFINED reason of maps through ``shape``, which has an unbounded dynamic dimension."""
    return f"{what}: {shape} has an unbounded dynamic dimension ('?'), whose extent is known only at run time"


def output_to_input(instr: Instruction, output_index: int = 0) -> list[OperandMaps]:
    """Maps from output ``output_index`` of ``instr`` to each operand (one entry per operand)."""
    rule = OUTPUT_TO_INPUT.get(instr.opcode)
    unbounded = unbounded_dim_reason(instr)
    if unbounded is not None:
        return [OperandMaps(i, (IndexingMap.undefined(unbounded),)) for i in range(len(instr.operand_names))]
    if rule is None:
        reason = _undefined_reason(instr)
        return [OperandMaps(i, (IndexingMap.undefined(reason),)) for i in range(len(instr.operand_names))]
    try:
        found = rule(instr, output_index)
        if _fits(found, instr, output_index):
            return found
        # a rule that trusted a written shape its operands do not give (a bug where they agree)
        raise _Misshapen(f"{instr.opcode} %{instr.name}: a map's ranks are not its output's and operand's")
    except Exception:
        # an instruction whose written shape contradicts its operands has no true map: say so;
        # anything else is a bug in the rule and goes up as one
        inconsistent = _inconsistent_shape(instr) or _misshapen_reason(instr)
        if inconsistent is None:
            raise
        return [OperandMaps(i, (IndexingMap.undefined(inconsistent),)) for i in range(len(instr.operand_names))]


def _misshapen_reason(instr: Instruction) -> str | None:
    """Where a rule's maps do not fit the written shapes (``_Misshapen``) of an op without a shape
    inference here: those shapes do not fit one another, said; None for any other failure."""
    if not isinstance(sys.exc_info()[1], _Misshapen):
        return None
    operands = ", ".join(str(o.shape) for o in instr.operands)
    return f"the written shape {instr.shape} of {instr.opcode} %{instr.name} does not fit its operands ({operands})"


def _fits_in2out(found: list[tuple[IndexingMap, ...]], instr: Instruction, operand_index: int) -> bool:
    """Whether every map of ``found`` goes from the operand's rank to its output's (arrays only)."""
    if operand_index >= len(instr.operands) or instr.operands[operand_index].shape.is_tuple:
        return True
    rank = instr.operands[operand_index].shape.rank
    for k, maps in enumerate(found):
        out = instr.shape.tuple_shapes[k] if instr.shape.tuple_shapes is not None else instr.shape
        if out.is_tuple:
            continue
        if any(not m.is_undefined and (m.num_dims != rank or m.num_results != out.rank) for m in maps):
            return False
    return True


class _Misshapen(Exception):
    """A rule's map whose variables or results do not match the output's or the operand's rank."""


def _fits(found: list[OperandMaps], instr: Instruction, output_index: int) -> bool:
    """Whether every map of ``found`` goes from output ``output_index``'s rank to its operand's
    rank (array operands and outputs; the rest are not compared)."""
    out = instr.shape.leaf(output_index) if instr.shape.is_tuple else instr.shape
    if out.is_tuple:
        return True
    for om in found:
        if om.operand >= len(instr.operands):
            continue
        shape = instr.operands[om.operand].shape
        if shape.is_tuple:
            continue
        for m in om.maps:
            if not m.is_undefined and (m.num_dims != out.rank or m.num_results != shape.rank):
                return False
    return True


def input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    """Maps from operand ``operand_index`` to each output of ``instr`` (one entry per output)."""
    rule = INPUT_TO_OUTPUT.get(instr.opcode)
    unbounded = unbounded_dim_reason(instr)
    if unbounded is not None:
        return [(IndexingMap.undefined(unbounded),) for _ in range(instr.shape.num_outputs)]
    if rule is None:
        reason = _undefined_reason(instr)
        if instr.opcode in OUTPUT_TO_INPUT and instr.opcode not in OPAQUE_REASONS:
            reason = f"no input-to-output rule for opcode '{instr.opcode}'"
        return [(IndexingMap.undefined(reason),) for _ in range(instr.shape.num_outputs)]
    try:
        found = rule(instr, operand_index)
        if _fits_in2out(found, instr, operand_index):
            return found
        raise _Misshapen(f"{instr.opcode} %{instr.name}: a map's ranks are not its operand's and output's")
    except Exception:
        inconsistent = _inconsistent_shape(instr) or _misshapen_reason(instr)
        if inconsistent is None:
            raise
        return [(IndexingMap.undefined(inconsistent),) for _ in range(instr.shape.num_outputs)]


def _register_rule_modules() -> None:
    """Every module named ``rules_*.py`` in this package registers its rules on import (in name
    order; the file names are listed directly, pkgutil's import costs more than the listing)."""
    import importlib
    import os

    names = sorted(name for directory in __path__ for name in os.listdir(directory))
    for name in names:
        if name.startswith("rules_") and name.endswith(".py"):
            importlib.import_module(f"{__name__}.{name[:-3]}")


_register_rule_modules()

__all__ = [
    "OperandMaps",
    "output_to_input",
    "input_to_output",
    "output_to_input_rule",
    "input_to_output_rule",
    "opaque",
    "OUTPUT_TO_INPUT",
    "INPUT_TO_OUTPUT",
    "OPAQUE_REASONS",
    "COMPOSITE",
    "CompositeRuleMissing",
]
