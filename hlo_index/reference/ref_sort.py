"""Reference read sets of sort and topk: an output element may come from anywhere on its row.

Sort output j is operand j permuted along the sort dimension; the permutation is decided by the
comparator, which sees parameters 2i and 2i+1 for operand i. So output j reads, along its row,
operand j and every operand whose comparator parameters influence the comparator's result
(every operand when the comparator is not available or calls other computations).
"""

from __future__ import annotations

from ..hlo.model import Instruction
from . import reads


def _comparator_operands(instr: Instruction) -> set[int]:
    comparator = instr.called.get("to_apply")
    if comparator is None or comparator.root is None:
        return set(range(len(instr.operands)))
    used, frontier = set(), [comparator.root]
    visited: list = []
    while frontier:
        node = frontier.pop()
        if any(node is v for v in visited):
            continue
        visited.append(node)
        if node.called:
            return set(range(len(instr.operands)))
        if node.opcode == "parameter" and node.parameter_number is not None:
            used.add(node.parameter_number // 2)
        frontier += list(node.operands)
    return used


@reads("sort")
def sort_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if operand_index != output_index and operand_index not in _comparator_operands(instr):
        return set()
    (axis,) = instr.attr("dimensions")
    length = instr.operands[operand_index].shape.dims[axis]
    return {out_point[:axis] + (k,) + out_point[axis + 1 :] for k in range(length)}


@reads("topk")
def topk_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    length = instr.operands[0].shape.dims[-1]
    return {out_point[:-1] + (k,) for k in range(length)}
