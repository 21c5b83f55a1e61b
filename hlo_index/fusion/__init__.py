"""Indexing maps of fusions, calls and whole computations, composed from the op rules.

``output_to_input(target)`` / ``input_to_output(target)`` accept a fusion or call instruction
(its callee is analysed), any other instruction (its op rule), or a computation (its root against
its parameters). Each returns one ``OperandIndexing`` per (output, operand) pair, in a fixed order.

Importing this package registers, into the one op registry (``hlo_index.ops``), the rules of the ops
whose maps compose the computations they call (``ops.registry.COMPOSITE``): ``rules_call``,
``rules_control_flow`` (with ``loops``) and ``rules_async``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import ops
from ..affine import IndexingMap
from ..context import current, register_table
from ..hlo.model import Computation, Instruction
from . import rules_async, rules_call, rules_control_flow  # noqa: F401  (register the composite op rules)
from .compose import clear_cache, computation_input_to_output, computation_output_to_input
from .mapset import MapSet, distinct, finalize
from .rule_cache import spread_unknown
from .semantic import dedupe_semantically
from .traverse import callee_of
from .walk import ELEMENT_INPUT_TO_OUTPUT, ParameterMaps, blame, compose_step

Target = Instruction | Computation


@dataclass(frozen=True, slots=True)
class OperandIndexing:
    """The distinct maps between one output of a target and one of its operands.

    ``operand`` is the operand number (a computation's parameter number); ``output`` the output
    index; ``operand_element`` the tuple element of a tuple-shaped operand (0 for arrays). For
    output-to-input the maps go from the output's index space to the operand's; for
    input-to-output, the other way. No maps: that output does not depend on that operand.
    """

    operand: int
    output: int
    maps: tuple[IndexingMap, ...]
    operand_element: int = 0

    @property
    def deduplicated(self) -> bool:
        """True when the operand is read through exactly one distinct map."""
        return len(self.maps) == 1

    @property
    def known(self) -> bool:
        return bool(self.maps) and not any(m.is_undefined for m in self.maps)


def _operand_count(target: Target) -> int:
    if isinstance(target, Computation):
        return 1 + max(target.parameters, default=-1)
    return len(target.operands) or len(target.operand_names)


def _num_outputs(target: Target) -> int:
    if isinstance(target, Computation):
        return target.root.shape.num_outputs if target.root is not None else 0
    return target.shape.num_outputs


def _computation_out2in(comp: Computation, operands: int) -> list[OperandIndexing]:
    results = [computation_output_to_input(comp, out) for out in range(_num_outputs(comp))]
    # fusions of one structure share their results' objects (``compose``): and so their rows
    memo: dict[tuple[int, ...], tuple[list[ParameterMaps], list[OperandIndexing]]] = current().tables[_ROWS_BY_RESULTS]
    key = (operands, *map(id, results))
    hit = memo.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], results)):
        return hit[1]
    rows = _rows(results, operands)
    memo[key] = (results, rows)
    return rows


# A whole ENTRY has ~10^6 rows: they are made through the slots' own setters, which skips the
# frozen dataclass's ``__init__`` (an ``object.__setattr__`` call per field) and is twice as fast.
_new_row = object.__new__
_set_operand, _set_output, _set_maps, _set_element = (
    OperandIndexing.__dict__[name].__set__ for name in ("operand", "output", "maps", "operand_element")
)


def _row(operand: int, output: int, maps: tuple[IndexingMap, ...], element: int = 0) -> OperandIndexing:
    """``OperandIndexing(operand, output, maps, element)``, made faster."""
    row = _new_row(OperandIndexing)
    _set_operand(row, operand)
    _set_output(row, output)
    _set_maps(row, maps)
    _set_element(row, element)
    return row


def _rows(results: list[ParameterMaps], operands: int) -> list[OperandIndexing]:
    rows: list[OperandIndexing] = []
    append = rows.append
    for out, per_param in enumerate(results):
        elements_of: dict[int, list[int]] = {}
        for p, e in per_param:  # keys are sorted: elements come out ascending
            elements_of.setdefault(p, []).append(e)
        for operand in range(operands):
            elements = elements_of.get(operand)
            if elements is None:  # most (output, parameter) pairs of a whole ENTRY: not read
                append(_row(operand, out, ()))
                continue
            for element in elements:
                append(_row(operand, out, per_param[(operand, element)], element))
    return rows


# id(target) -> (target, rows) per analysis context: an identity memo (the report and its per-operand
# figures both ask; a whole ENTRY has outputs x parameters rows)
_ROWS = register_table("fusion.target_rows")
# (operands, ids of the per-output results) -> (the results, rows): an identity memo
_ROWS_BY_RESULTS = register_table("fusion.target_rows_by_results")


def output_to_input(target: Target) -> list[OperandIndexing]:
    """Maps from each output of ``target`` to each operand, ordered by (output, operand)."""
    operands = _operand_count(target)
    comp = target if isinstance(target, Computation) else callee_of(target)
    if comp is not None:
        memo = current().tables[_ROWS]
        hit = memo.get(id(target))
        if hit is None or hit[0] is not target:
            hit = memo[id(target)] = (target, _computation_out2in(comp, operands))
        return list(hit[1])  # a copy: callers may reorder it
    assert isinstance(target, Instruction)  # a computation has returned above
    rows = []
    for out in range(_num_outputs(target)):
        found = spread_unknown(target, ops.output_to_input(target, out))
        for operand in range(operands):
            # a tuple-shaped operand may be read through several of its elements: one row each
            by_element: dict[int, list[IndexingMap]] = {}
            for om in found:
                if om.operand == operand:
                    by_element.setdefault(om.operand_output, []).extend(om.maps)
            if not by_element:
                rows.append(OperandIndexing(operand, out, (), 0))
            rows.extend(
                OperandIndexing(operand, out, finalize(distinct(by_element[element])), element)
                for element in sorted(by_element)
            )
    return rows


def input_to_output(target: Target) -> list[OperandIndexing]:
    """Maps from each operand of ``target`` to each output, ordered by (operand, output)."""
    operands = _operand_count(target)
    comp = target if isinstance(target, Computation) else callee_of(target)
    rows = []
    if comp is not None:
        for operand in range(operands):
            param = comp.parameters.get(operand)
            if param is not None and param.shape.is_tuple:  # one row per element it holds
                for element in range(param.shape.num_outputs):
                    for out, maps in enumerate(computation_input_to_output(comp, operand, element)):
                        rows.append(_row(operand, out, maps, element))
                continue
            for out, maps in enumerate(computation_input_to_output(comp, operand)):
                rows.append(_row(operand, out, maps))
        return rows
    assert isinstance(target, Instruction)  # a computation has returned above
    by_element = ELEMENT_INPUT_TO_OUTPUT.get(target.opcode)
    for operand in range(operands):
        shape = target.operands[operand].shape if operand < len(target.operands) else None
        if by_element is not None and shape is not None and shape.is_tuple:  # one row per element
            for element in range(shape.num_outputs):
                for out, maps in enumerate(by_element(target, operand, element)):
                    rows.append(OperandIndexing(operand, out, finalize(distinct(maps)), element))
            continue
        for out, maps in enumerate(ops.input_to_output(target, operand)):
            rows.append(OperandIndexing(operand, out, finalize(distinct(maps))))
    return rows


__all__ = [
    "OperandIndexing",
    "Target",
    "output_to_input",
    "input_to_output",
    "callee_of",
    "computation_output_to_input",
    "computation_input_to_output",
    "compose_step",
    "blame",
    "clear_cache",
    "MapSet",
    "dedupe_semantically",
]
