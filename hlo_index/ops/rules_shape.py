"""Data-movement ops that move elements without reshaping: broadcast, transpose, reverse, slice,
pad, concatenate, and the operand-less producers iota, constant, parameter.

Out-to-in maps have the output's dims (bounds ``[0, n-1]``); which output elements read an
operand at all is said by constraints (concatenate, pad), which the map engine may fold into the
domain. In-to-out maps have the operand's dims.

Operand-less ops: ``output_to_input`` is an empty list. ``input_to_output`` of iota and constant
is the generator map ``()[s0, ...] -> (s0, ...)`` (as the spec prints for iota) whatever the
operand index; a parameter's is the identity from the caller's argument to the parameter.

Pad's operand 1, the padding value, is a scalar read only by padding positions (edges and
interior holes). That set is not a box, so it is given exactly as a union of zero-result maps,
one per way a position can be padding along one dim (below the low edge, above the high edge,
in an interior hole): XLA's single full-domain ``(d0, d1) -> ()`` over-approximates it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..affine import Expr, IndexingMap, Interval, dim, range_var
from ..hlo.model import Instruction, PadDim
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval, generator_map, identity_map

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
_READS = Reads.of("dimensions", "padding", "slice", "iota_dimension")


# ---- operand-less producers ----------------------------------------------------------------


@output_to_input_rule("iota", "constant", "parameter", reads=_READS)
def producer_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return []


@input_to_output_rule("iota", "constant", reads=_READS)
def generated_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(generator_map(instr.shape.leaf(i).dims),) for i in range(instr.shape.num_outputs)]


@input_to_output_rule("parameter", reads=_READS)
def parameter_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if instr.shape.is_tuple:
        reason = "tuple-shaped parameter: address one element through get-tuple-element"
        return [(IndexingMap.undefined(reason),) for _ in range(instr.shape.num_outputs)]
    return [(identity_map(instr.shape.dims),)]


# ---- broadcast ------------------------------------------------------------------------------


@output_to_input_rule("broadcast", reads=_READS)
def broadcast_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    dims = tuple(instr.attr("dimensions", ()))
    m = IndexingMap.from_shape_dims(instr.shape.dims, [dim(d) for d in dims])
    return [OperandMaps(0, (m,))]


@input_to_output_rule("broadcast", reads=_READS)
def broadcast_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    dims = tuple(instr.attr("dimensions", ()))
    source = {out_dim: i for i, out_dim in enumerate(dims)}
    results: list[Expr] = []
    ranges: list[Interval] = []
    for k, size in enumerate(instr.shape.dims):
        if k in source:
            results.append(dim(source[k]))
        else:
            results.append(range_var(len(ranges)))
            ranges.append(full_interval(size))
    return [(IndexingMap.from_shape_dims(instr.operands[0].shape.dims, results, range_vars=ranges),)]


# ---- transpose, reverse ---------------------------------------------------------------------


@output_to_input_rule("transpose", reads=_READS)
def transpose_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    perm = tuple(instr.attr("dimensions"))
    inverse = {p: i for i, p in enumerate(perm)}
    m = IndexingMap.from_shape_dims(instr.shape.dims, [dim(inverse[j]) for j in range(len(perm))])
    return [OperandMaps(0, (m,))]


@input_to_output_rule("transpose", reads=_READS)
def transpose_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    perm = tuple(instr.attr("dimensions"))
    return [(IndexingMap.from_shape_dims(instr.operands[0].shape.dims, [dim(p) for p in perm]),)]


def _reverse_map(instr: Instruction) -> IndexingMap:
    flipped = set(instr.attr("dimensions", ()))
    dims = instr.shape.dims
    return IndexingMap.from_shape_dims(
        dims, [(-dim(k) + (n - 1)) if k in flipped else dim(k) for k, n in enumerate(dims)]
    )


@output_to_input_rule("reverse", reads=_READS)
def reverse_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return [OperandMaps(0, (_reverse_map(instr),))]


@input_to_output_rule("reverse", reads=_READS)
def reverse_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(_reverse_map(instr),)]


# ---- slice ------------------------------------------------------------------------------------


@output_to_input_rule("slice", reads=_READS)
def slice_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    results = [
        dim(k) * s.stride + s.start if s.stride != 1 else dim(k) + s.start for k, s in enumerate(instr.attr("slice"))
    ]
    return [OperandMaps(0, (IndexingMap.from_shape_dims(instr.shape.dims, results),))]


@input_to_output_rule("slice", reads=_READS)
def slice_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    operand_dims = instr.operands[0].shape.dims
    if 0 in instr.shape.dims:
        return [(IndexingMap.known_empty(len(operand_dims), instr.shape.rank),)]
    results, constraints = [], []
    for k, (s, n) in enumerate(zip(instr.attr("slice"), instr.shape.dims)):
        shifted = dim(k) - s.start
        constraints.append((dim(k), Interval(s.start, s.start + (n - 1) * s.stride)))
        if s.stride == 1:
            results.append(shifted)
        else:
            results.append(shifted.floordiv(s.stride))
            constraints.append((shifted % s.stride, Interval(0, 0)))
    return [(IndexingMap.from_shape_dims(operand_dims, results, constraints=constraints),)]


# ---- pad ------------------------------------------------------------------------------------


def _pad_edges(operand_size: int, p: PadDim) -> tuple[int, int]:
    """Output positions of the first and last operand element along one dim (may be off the ends)."""
    last = p.low + (operand_size - 1) * (p.interior + 1)
    return p.low, last


@output_to_input_rule("pad", reads=_READS)
def pad_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    out_dims = instr.shape.dims
    operand_dims = instr.operands[0].shape.dims
    padding = instr.attr("padding")
    results, constraints, empty = [], [], False
    for k, (p, n, size) in enumerate(zip(padding, operand_dims, out_dims)):
        first, last = _pad_edges(n, p)
        lo, hi = max(first, 0), min(last, size - 1)
        empty |= n == 0 or lo > hi
        shifted = dim(k) - p.low
        if lo > 0 or hi < size - 1:
            constraints.append((dim(k), Interval(lo, hi)))
        if p.interior == 0:
            results.append(shifted)
        else:
            results.append(shifted.floordiv(p.interior + 1))
            constraints.append((shifted % (p.interior + 1), Interval(0, 0)))
    operand_maps = () if empty else (IndexingMap.from_shape_dims(out_dims, results, constraints=constraints),)
    value_maps = tuple(
        IndexingMap.from_shape_dims(out_dims, (), constraints=c) for c in _padding_position_constraints(instr, dim)
    )
    return [OperandMaps(0, operand_maps), OperandMaps(1, value_maps)]


def _padding_position_constraints(instr: Instruction, var: Callable[[int], Expr]) -> list[list[tuple[Expr, Interval]]]:
    """One constraint list per piece of the padding region: a dim below the low edge, above the
    high edge, or in an interior hole. A position is padding iff it lies in some piece."""
    pieces: list[list[tuple[Expr, Interval]]] = []
    operand_dims = instr.operands[0].shape.dims
    for k, (p, n, size) in enumerate(zip(instr.attr("padding"), operand_dims, instr.shape.dims)):
        if n == 0:  # nothing of the operand survives: everything is padding
            return [[]]
        first, last = _pad_edges(n, p)
        if first > 0:
            pieces.append([(var(k), Interval(0, min(first, size) - 1))])
        if last < size - 1:
            pieces.append([(var(k), Interval(max(last + 1, 0), size - 1))])
        lo, hi = max(first, 0), min(last, size - 1)
        if p.interior > 0 and lo <= hi:
            pieces.append([(var(k), Interval(lo, hi)), ((var(k) - p.low) % (p.interior + 1), Interval(1, p.interior))])
    return pieces


@input_to_output_rule("pad", reads=_READS)
def pad_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    out_dims = instr.shape.dims
    padding = instr.attr("padding")
    if operand_index == 1:
        ranges = [full_interval(d) for d in out_dims]
        results = [range_var(k) for k in range(len(out_dims))]
        return [tuple(IndexingMap((), ranges, (), results, c) for c in _padding_position_constraints(instr, range_var))]
    operand_dims = instr.operands[0].shape.dims
    results, constraints = [], []
    for k, (p, n, size) in enumerate(zip(padding, operand_dims, out_dims)):
        position = dim(k) * (p.interior + 1) + p.low if p.interior else dim(k) + p.low
        results.append(position)
        # Negative padding drops operand elements that land outside the output.
        if p.low < 0 or _pad_edges(n, p)[1] > size - 1:
            constraints.append((position, Interval(0, size - 1)))
    return [(IndexingMap.from_shape_dims(operand_dims, results, constraints=constraints),)]


# ---- concatenate ----------------------------------------------------------------------------


def _concat_offsets(instr: Instruction) -> tuple[int, list[int]]:
    axis = instr.attr("dimensions")[0]
    offsets, total = [], 0
    for op in instr.operands:
        offsets.append(total)
        total += op.shape.dims[axis]
    return axis, offsets


@output_to_input_rule("concatenate", reads=_READS)
def concatenate_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    axis, offsets = _concat_offsets(instr)
    out_dims = instr.shape.dims
    result = []
    for i, (op, offset) in enumerate(zip(instr.operands, offsets)):
        size = op.shape.dims[axis]
        if size == 0:
            result.append(OperandMaps(i, ()))
            continue
        results = [dim(k) - offset if k == axis and offset else dim(k) for k in range(len(out_dims))]
        m = IndexingMap.from_shape_dims(
            out_dims, results, constraints=[(dim(axis), Interval(offset, offset + size - 1))]
        )
        result.append(OperandMaps(i, (m,)))
    return result


@input_to_output_rule("concatenate", reads=_READS)
def concatenate_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    axis, offsets = _concat_offsets(instr)
    dims = instr.operands[operand_index].shape.dims
    offset = offsets[operand_index]
    results = [dim(k) + offset if k == axis and offset else dim(k) for k in range(len(dims))]
    return [(IndexingMap.from_shape_dims(dims, results),)]
