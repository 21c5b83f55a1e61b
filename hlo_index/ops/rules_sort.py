"""sort and topk: where an element ends up depends on its whole row along the sorted dimension.

Output j of a sort moves operand j's elements by a permutation that the comparator computes
from the key operands (those whose parameters ``2i``/``2i+1`` the comparator reaches), so it
reads operand j and every key operand along the sort dimension, through one range variable.
Without a resolved comparator every operand counts as a key.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import IndexingMap, dim, range_var
from ..hlo.model import Instruction
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
_READS = Reads.of("dimensions", "to_apply", "k", "largest", "is_stable")


def row_map(from_dims: Sequence[int], axis: int, row_length: int) -> IndexingMap:
    """``x -> x with coordinate `axis` replaced by s0 in [0, row_length - 1]``."""
    results = [range_var(0) if a == axis else dim(a) for a in range(len(from_dims))]
    return IndexingMap([full_interval(n) for n in from_dims], [full_interval(row_length)], (), results)


def sort_key_operands(instr: Instruction) -> set[int]:
    """Operands the comparator looks at; all of them when that cannot be told."""
    everything = set(range(len(instr.operands)))
    comparator = instr.called.get("to_apply")
    if comparator is None or comparator.root is None:
        return everything
    keys, stack, seen = set(), [comparator.root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.called:  # a nested call: do not look inside, stay conservative
            return everything
        if node.opcode == "parameter" and node.parameter_number is not None:
            keys.add(node.parameter_number // 2)
        stack.extend(node.operands)
    return keys


def _sort_axis(instr: Instruction) -> int:
    axis: int
    (axis,) = instr.attr("dimensions")
    return axis


@output_to_input_rule("sort", reads=_READS)
def sort_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    dims, axis = instr.shape.leaf(output_index).dims, _sort_axis(instr)
    m = row_map(dims, axis, dims[axis])
    read = sort_key_operands(instr) | {output_index}
    return [OperandMaps(k, (m,) if k in read else ()) for k in range(len(instr.operands))]


@input_to_output_rule("sort", reads=_READS)
def sort_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    dims, axis = instr.operands[operand_index].shape.dims, _sort_axis(instr)
    m = row_map(dims, axis, dims[axis])
    is_key = operand_index in sort_key_operands(instr)
    return [(m,) if is_key or j == operand_index else () for j in range(instr.shape.num_outputs)]


# topk: operand [..., n] -> (values [..., k], indices [..., k]), along the last dimension.


@output_to_input_rule("topk", reads=_READS)
def topk_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    out_dims = instr.shape.leaf(output_index).dims
    row = instr.operands[0].shape.dims[-1]
    return [OperandMaps(0, (row_map(out_dims, len(out_dims) - 1, row),))]


@input_to_output_rule("topk", reads=_READS)
def topk_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    dims = instr.operands[0].shape.dims
    k = instr.shape.leaf(0).dims[-1]
    return [(row_map(dims, len(dims) - 1, k),)] * instr.shape.num_outputs
