"""conditional and while: maps through the called computations.

conditional: operand 0 (the predicate or branch index, a scalar) is read by every output
element; operand k >= 1 is branch k-1's parameter and is read through that branch's maps. With
a runtime predicate the relation is the union over the branches (as a runtime offset's maps
are the union over its values); with a ``constant`` predicate only the branch taken is read.

while: see ``loops`` (trip count, per tuple element of the loop state). Input to output, per
element of the initial state: the output-to-input relation read the other way (``loops.inverse``).
A tuple-shaped operand is addressed per element: one ``OperandMaps`` per element read.
"""

from __future__ import annotations

from ..affine import IndexingMap
from ..context import current, register_table
from ..hlo.model import Computation, Instruction
from ..ops.registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from ..ops.shape_maps import generator_map, zero_result_map
from ..ops.starts import constant_values
from .compose import computation_input_to_output, computation_output_to_input
from .loops.inverse import inverse
from .loops.matrix import loop_matrix
from .mapset import Maps, distinct, finalize, shared
from .rule_cache import ELEMENTS_ADDRESSED
from .subsume import drop_contained, drop_subsumed
from .walk import ELEMENT_INPUT_TO_OUTPUT, ParameterMaps

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint): the callees by body,
# a constant predicate / a while's initial counter (a constant inside the init tuple; tuple
# operands' element values are part of the key), the known trip count in backend_config.
_CONDITIONAL_READS = Reads.of("true_computation", "false_computation", "branch_computations", operand_values=True)
_WHILE_READS = Reads.of("body", "condition", "backend_config", operand_values=True)


def branches(instr: Instruction) -> list[Computation | None]:
    """Branch computations in operand order (operand k + 1 feeds branch k)."""
    if "true_computation" in instr.attrs or "false_computation" in instr.attrs:
        return [instr.called.get("true_computation"), instr.called.get("false_computation")]
    count = len(instr.operands) - 1
    return [instr.called.get(f"branch_computations.{k}") for k in range(count)]


def taken_branch(instr: Instruction) -> int | None:
    """The branch a ``constant`` predicate / index selects (XLA: an index out of range runs the
    last branch), None when it is only known at runtime."""
    values = constant_values(instr.operands[0]) if instr.operands else None
    if values is None or values.size != 1:
        return None
    value = int(values.flat[0])
    if instr.operands[0].shape.element_type == "pred":
        return 0 if value else 1
    count = len(instr.operands) - 1
    return value if 0 <= value < count else count - 1


def per_element(operand: int, per_param: ParameterMaps, parameter: int = 0) -> list[OperandMaps]:
    """One OperandMaps per tuple element of ``parameter`` that ``per_param`` reads (none: not read)."""
    entries = sorted((e, maps) for (p, e), maps in per_param.items() if p == parameter)
    return [OperandMaps(operand, maps, e) for e, maps in entries] or [OperandMaps(operand, ())]


@output_to_input_rule("conditional", reads=_CONDITIONAL_READS)
def conditional_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    out_dims = instr.shape.leaf(output_index).dims
    result = [OperandMaps(0, (zero_result_map(out_dims),))]
    taken = taken_branch(instr)
    for b, comp in enumerate(branches(instr)):
        operand = b + 1
        if taken is not None and b != taken:
            result.append(OperandMaps(operand, ()))
        elif comp is None or comp.root is None:
            result.append(
                OperandMaps(operand, (IndexingMap.undefined(f"conditional: branch {b} computation not resolved"),))
            )
        else:
            result += per_element(operand, computation_output_to_input(comp, output_index))
    return result


@input_to_output_rule("conditional", reads=_CONDITIONAL_READS)
def conditional_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    outputs = instr.shape.num_outputs
    if operand_index == 0:
        return [(generator_map(instr.shape.leaf(j).dims),) for j in range(outputs)]
    b = operand_index - 1
    taken = taken_branch(instr)
    if taken is not None and b != taken:
        return [() for _ in range(outputs)]
    comp = branches(instr)[b] if b < len(branches(instr)) else None
    if comp is None or comp.root is None:
        return [(IndexingMap.undefined(f"conditional: branch {b} computation not resolved"),)] * outputs
    if instr.operands[operand_index].shape.is_tuple:
        return [
            (IndexingMap.undefined("conditional: input-to-output maps of a tuple-shaped branch operand"),)
        ] * outputs
    return list(computation_input_to_output(comp, 0))


@output_to_input_rule("while", reads=_WHILE_READS)
def while_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    """Per element of the initial loop state, its maps (``loop_matrix``); every element read
    through one UNDEFINED map where the loop's maps are not known at all. An UNDEFINED map of a
    pair is that element's read alone (its known maps beside it: what the body reads through
    an op whose maps are unknown), so the walks do not spread it to the other elements."""
    matrix = loop_matrix(instr)
    if isinstance(matrix, str):
        unknown = (IndexingMap.undefined(matrix),)
        return [OperandMaps(0, unknown, k) for k in range(instr.operands[0].shape.num_outputs)]
    row = matrix.get(output_index, {})
    return [OperandMaps(0, maps, k) for k, maps in sorted(row.items())] or [OperandMaps(0, ())]


ELEMENTS_ADDRESSED.add("while")


@input_to_output_rule("while", reads=_WHILE_READS)
def while_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    reason = "while: input-to-output maps of the tuple-shaped loop state as a whole (ask per element)"
    return [(IndexingMap.undefined(reason),) for _ in range(instr.shape.num_outputs)]


# id(while) -> (while, {element: per output maps}) per analysis context: an identity memo, since
# walks ask once per element reaching the loop and per value holding it
_COLUMNS = register_table("fusion.control_flow.while_columns")


def while_element_input_to_output(instr: Instruction, operand_index: int, element: int) -> list[Maps]:
    """Maps from element ``element`` of the initial loop state to each element of the final one:
    the loop's output-to-input relation (``loop_matrix``, exact) read the other way, map by map."""
    memo: dict[int, tuple[Instruction, dict[int, list[Maps]]]] = current().tables[_COLUMNS]
    hit = memo.get(id(instr))
    if hit is None or hit[0] is not instr:
        hit = memo[id(instr)] = (instr, {})
    columns = hit[1]
    column = columns.get(element)
    if column is None:
        column = columns[element] = _column(instr, element)
    return column


def _column(instr: Instruction, element: int) -> list[Maps]:
    outputs = instr.shape.num_outputs
    matrix = loop_matrix(instr)
    if isinstance(matrix, str):
        return [shared((IndexingMap.undefined(matrix),))] * outputs
    source = instr.operands[0].shape.leaf(element).dims
    column = []
    for j in range(outputs):
        maps = distinct(inverse(m, source) for m in matrix.get(j, {}).get(element, ()))
        column.append(finalize(drop_contained(drop_subsumed(tuple(m for m in maps if not m.is_known_empty)))))
    return column


ELEMENT_INPUT_TO_OUTPUT["while"] = while_element_input_to_output
