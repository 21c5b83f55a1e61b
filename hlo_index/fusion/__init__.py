"""Indexing maps of fusions, calls and whole computations, composed from the op rules.

``output_to_input(target)`` / ``input_to_output(target)`` accept a fusion or call instruction
(its callee is analysed), any other instruction (its op rule), or a computation (its root against
its parameters). Each returns one ``OperandIndexing`` per (output, operand) pair, in a fixed order;
``output_to_input_table`` / ``input_to_output_table`` give the same rows as columns (``RowTable``),
which a whole ENTRY's ~10^6 rows are cheaper as.

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
from ..hlo.shapes import has_unbounded_dim
from . import rules_async, rules_call, rules_control_flow  # noqa: F401  (register the composite op rules)
from .compose import clear_cache, computation_input_to_output, computation_output_to_input
from .mapset import MapSet, distinct, finalize
from .rule_cache import spread_unknown
from .semantic import dedupe_semantically
from .traverse import callee_misfit, callee_of
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


class RowTable:
    """A target's rows in one direction as columns: row ``i`` is ``OperandIndexing(operands[i],
    outputs[i], maps[i], elements[i])``, in the order ``output_to_input`` / ``input_to_output``
    give. A whole ENTRY has ~10^6 rows, most of them "not read": the columns are made a block (one
    output, or one operand) at a time, and row objects only when asked for. Read-only."""

    __slots__ = ("operands", "outputs", "maps", "elements", "_rows")

    def __init__(
        self, operands: list[int], outputs: list[int], maps: list[tuple[IndexingMap, ...]], elements: list[int]
    ) -> None:
        self.operands = operands
        self.outputs = outputs
        self.maps = maps
        self.elements = elements
        self._rows: list[OperandIndexing] | None = None

    @classmethod
    def of_rows(cls, rows: list[OperandIndexing]) -> RowTable:
        table = cls(
            [r.operand for r in rows],
            [r.output for r in rows],
            [r.maps for r in rows],
            [r.operand_element for r in rows],
        )
        table._rows = rows
        return table

    def __len__(self) -> int:
        return len(self.outputs)

    def row(self, index: int) -> OperandIndexing:
        if self._rows is not None:
            return self._rows[index]
        return _row(self.operands[index], self.outputs[index], self.maps[index], self.elements[index])

    def rows(self) -> list[OperandIndexing]:
        """The rows as objects (made once; do not change the list)."""
        if self._rows is None:
            self._rows = list(map(_row, self.operands, self.outputs, self.maps, self.elements))
        return self._rows


def _computation_out2in(comp: Computation, operands: int) -> RowTable:
    results = [computation_output_to_input(comp, out) for out in range(_num_outputs(comp))]
    # fusions of one structure share their results' objects (``compose``): and so their rows
    memo: dict[tuple[int, ...], tuple[list[ParameterMaps], RowTable]] = current().tables[_ROWS_BY_RESULTS]
    key = (operands, *map(id, results))
    hit = memo.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], results)):
        return hit[1]
    table = _out2in_table(results, operands)
    memo[key] = (results, table)
    return table


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


def _out2in_table(results: list[ParameterMaps], operands: int) -> RowTable:
    """Per output, a row per operand (not read: no maps) and one per element read of a tuple operand."""
    table = RowTable([], [], [], [])
    every_operand, zeros = range(operands), [0] * operands
    unread: list[tuple[IndexingMap, ...]] = [()] * operands
    for out, per_param in enumerate(results):
        if all(e == 0 for _, e in per_param):  # one row per operand: a block of them, then the reads
            block = unread.copy()
            for (p, _), maps in per_param.items():
                if p < operands:
                    block[p] = maps
            table.operands.extend(every_operand)
            table.outputs.extend([out] * operands)
            table.maps.extend(block)
            table.elements.extend(zeros)
            continue
        elements_of: dict[int, list[int]] = {}
        for p, e in per_param:  # keys are sorted: elements come out ascending
            elements_of.setdefault(p, []).append(e)
        for operand in every_operand:
            for element in elements_of.get(operand, (0,)):
                table.operands.append(operand)
                table.outputs.append(out)
                table.maps.append(per_param.get((operand, element), ()))
                table.elements.append(element)
    return table


def _in2out_table(comp: Computation, operands: int) -> RowTable:
    """Per operand (per element of a tuple operand), a row per output."""
    table = RowTable([], [], [], [])
    for operand in range(operands):
        param = comp.parameters.get(operand)
        tuple_param = param is not None and param.shape.is_tuple
        for element in range(param.shape.num_outputs) if param is not None and tuple_param else (0,):
            per_output = computation_input_to_output(comp, operand, element if tuple_param else None)
            table.operands.extend([operand] * len(per_output))
            table.outputs.extend(range(len(per_output)))
            table.maps.extend(per_output)
            table.elements.extend([element] * len(per_output))
    return table


# id(target) -> (target, its output-to-input table) per analysis context: an identity memo (the
# report and its per-operand figures both ask; a whole ENTRY has outputs x parameters rows)
_ROWS = register_table("fusion.target_rows")
# (operands, ids of the per-output results) -> (the results, table): an identity memo
_ROWS_BY_RESULTS = register_table("fusion.target_rows_by_results")


def output_to_input(target: Target) -> list[OperandIndexing]:
    """Maps from each output of ``target`` to each operand, ordered by (output, operand)."""
    return list(output_to_input_table(target).rows())  # a copy: callers may reorder it


def output_to_input_table(target: Target) -> RowTable:
    """``output_to_input(target)`` as columns (memoised per analysis context)."""
    operands = _operand_count(target)
    comp = target if isinstance(target, Computation) else callee_of(target)
    if comp is not None:
        memo: dict[int, tuple[Target, RowTable]] = current().tables[_ROWS]
        hit = memo.get(id(target))
        if hit is None or hit[0] is not target:
            table = _misfit_table(target, comp, operands)
            hit = memo[id(target)] = (target, _computation_out2in(comp, operands) if table is None else table)
        return hit[1]
    misfit = _misfit_table(target, comp, operands)
    if misfit is not None:
        return misfit
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
    return RowTable.of_rows(rows)


def input_to_output(target: Target) -> list[OperandIndexing]:
    """Maps from each operand of ``target`` to each output, ordered by (operand, output)."""
    return input_to_output_table(target).rows()


def _misfit_table(target: Target, comp: Computation | None, operands: int) -> RowTable | None:
    """Every (output, operand) pair UNDEFINED, where the called computation does not fit the fusion
    or call (``callee_misfit``); else None."""
    reason = _unbounded(target)
    if reason is None and comp is not None and not isinstance(target, Computation):
        misfit = callee_misfit(target, comp)
        if misfit is not None:
            reason = f"{target.opcode}: {misfit}, which XLA's verifier rejects"
    if reason is None:
        return None
    unknown = (IndexingMap.undefined(reason),)
    return RowTable.of_rows(
        [OperandIndexing(operand, out, unknown) for out in range(_num_outputs(target)) for operand in range(operands)]
    )


def _unbounded(target: Target) -> str | None:
    """Why no map of ``target`` is static: an output or operand with an unbounded dynamic
    dimension (``f32[?,784]``); None where every extent is known."""
    if not isinstance(target, Computation):
        return ops.unbounded_dim_reason(target)
    shapes = [p.shape for _, p in sorted(target.parameters.items())]
    shapes += [target.root.shape] if target.root is not None else []
    shape = next((s for s in shapes if has_unbounded_dim(s)), None)
    return None if shape is None else ops.unbounded_reason(f"computation %{target.name}", shape)


def input_to_output_table(target: Target) -> RowTable:
    """``input_to_output(target)`` as columns (a new table each call)."""
    operands = _operand_count(target)
    comp = target if isinstance(target, Computation) else callee_of(target)
    misfit = _misfit_table(target, comp, operands)
    if misfit is not None:
        return misfit
    if comp is not None:
        return _in2out_table(comp, operands)
    assert isinstance(target, Instruction)  # a computation has returned above
    rows = []
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
    return RowTable.of_rows(rows)


__all__ = [
    "OperandIndexing",
    "RowTable",
    "output_to_input_table",
    "input_to_output_table",
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
