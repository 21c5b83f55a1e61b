"""Reference read sets of sort and topk: an output element may come from anywhere on its row.

Which element lands at a position depends on the values of the whole row along the sort
dimension of every operand (the comparator receives all of them), so the whole row is read.
"""
from __future__ import annotations

from typing import Optional

from ..hlo.model import Instruction
from . import reads


@reads("sort")
def sort_reads(instr: Instruction, output_index: int, out_point: tuple, operand_index: int,
               runtime_values: Optional[dict]) -> set:
    (axis,) = instr.attr("dimensions")
    length = instr.operands[operand_index].shape.dims[axis]
    return {out_point[:axis] + (k,) + out_point[axis + 1:] for k in range(length)}


@reads("topk")
def topk_reads(instr: Instruction, output_index: int, out_point: tuple, operand_index: int,
               runtime_values: Optional[dict]) -> set:
    length = instr.operands[0].shape.dims[-1]
    return {out_point[:-1] + (k,) for k in range(length)}
