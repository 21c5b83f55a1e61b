"""batch-norm-training / -inference / -grad: exact per-feature maps.

``feature_index`` f names the feature dimension of the array operand. Training normalises each
element with its feature's mean and variance, computed over the whole feature slice (every
element whose coordinate f is the same), then scales and offsets it by its feature's entries; the
mean / variance outputs read the slice. Inference reads the element itself and its feature's
scale, offset, mean and variance. Grad: the operand gradient reads both arrays over the feature
slice (through the slice sums) and the feature's scale / mean / variance; the scale gradient
reads the slices and the feature's mean / variance; the offset gradient sums the output gradient.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import Expr, IndexingMap, dim, range_var
from ..hlo.model import Instruction, Shape
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval, identity_map

SLICE, SELF, FEATURE = "slice", "self", "feature"

# opcode -> per output, per operand: how that output reads that operand (None: not at all).
READS: dict[str, tuple[tuple[str | None, ...], ...]] = {
    "batch-norm-training": ((SLICE, FEATURE, FEATURE), (SLICE, None, None), (SLICE, None, None)),
    "batch-norm-inference": ((SELF, FEATURE, FEATURE, FEATURE, FEATURE),),
    "batch-norm-grad": (
        (SLICE, FEATURE, FEATURE, FEATURE, SLICE),
        (SLICE, None, FEATURE, FEATURE, SLICE),
        (None, None, None, None, SLICE),
    ),
}


def feature_index(instr: Instruction) -> int | None:
    value = instr.attr("feature_index")
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _check(instr: Instruction) -> str | None:
    f = feature_index(instr)
    if f is None or not instr.operands:
        return f"{instr.opcode}: no feature_index attribute"
    array = instr.operands[0].shape
    if not 0 <= f < array.rank:
        return f"{instr.opcode}: feature_index {f} outside the operand's rank {array.rank}"
    roles = READS[instr.opcode]
    if len(instr.operands) != len(roles[0]) or instr.shape.num_outputs != len(roles):
        return f"{instr.opcode}: unexpected operand or output count"
    return None


def _is_array(instr: Instruction, shape: Shape) -> bool:
    return shape.rank == instr.operands[0].shape.rank


def _slice_map(from_dims: Sequence[int], array_dims: Sequence[int], f: int, feature_expr: Expr) -> IndexingMap:
    """``from`` element -> every array element whose feature coordinate is ``feature_expr``."""
    others = [a for a in range(len(array_dims)) if a != f]
    results = [feature_expr if a == f else range_var(others.index(a)) for a in range(len(array_dims))]
    return IndexingMap(
        [full_interval(n) for n in from_dims], [full_interval(array_dims[a]) for a in others], (), results
    )


def _map(
    kind: str, from_dims: Sequence[int], from_array: bool, to_dims: Sequence[int], to_array: bool, f: int
) -> IndexingMap:
    feature = dim(f) if from_array else dim(0)
    if kind == SELF:
        return identity_map(from_dims)
    if to_array:  # a slice of the array (SLICE from an array or a vector)
        return _slice_map(from_dims, to_dims, f, feature)
    return IndexingMap([full_interval(n) for n in from_dims], (), (), [feature])  # the feature's entry


@output_to_input_rule(*READS, reads=Reads.of("feature_index"))
def batch_norm_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    problem = _check(instr)
    if problem:
        return [OperandMaps(k, (IndexingMap.undefined(problem),)) for k in range(len(instr.operands))]
    f: int = feature_index(instr)  # type: ignore[assignment]  # _check found it
    out = instr.shape.leaf(output_index)
    result = []
    for k, kind in enumerate(READS[instr.opcode][output_index]):
        if kind is None:
            result.append(OperandMaps(k, ()))
            continue
        operand = instr.operands[k].shape
        result.append(
            OperandMaps(k, (_map(kind, out.dims, _is_array(instr, out), operand.dims, _is_array(instr, operand), f),))
        )
    return result


@input_to_output_rule(*READS, reads=Reads.of("feature_index"))
def batch_norm_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    problem = _check(instr)
    if problem:
        return [(IndexingMap.undefined(problem),) for _ in range(instr.shape.num_outputs)]
    f: int = feature_index(instr)  # type: ignore[assignment]  # _check found it
    operand = instr.operands[operand_index].shape
    per_output: list[tuple[IndexingMap, ...]] = []
    for j, roles in enumerate(READS[instr.opcode]):
        kind = roles[operand_index]
        if kind is None:
            per_output.append(())
            continue
        out = instr.shape.leaf(j)
        # The relations are symmetric in the feature: invert by swapping the two sides.
        per_output.append((_map(kind, operand.dims, _is_array(instr, operand), out.dims, _is_array(instr, out), f),))
    return per_output
