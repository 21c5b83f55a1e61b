"""Ops that reinterpret one buffer: reshape, bitcast, bitcast-convert.

reshape keeps the row-major (logical) element order: each common-factor group of dims is
linearized and delinearized (collapse ``(d0 floordiv 8, d0 mod 8)``, expand ``d0 * 8 + d1``,
generic reshapes as their composition). A reshape is its own kind of inverse, so in-to-out is the
same construction with the shapes swapped.

bitcast keeps the physical (memory) order: an index is permuted into its shape's
major-to-minor order, reshaped between the two physical shapes, and permuted back into the other
shape's logical order (transpose ∘ reshape ∘ transpose). An element-width change is the same
with the wide side's physical shape given one more minor-most dim of ``wide / narrow`` elements
(a range variable when the wide side is the map's domain). Tiled layouts are UNDEFINED here
(memory order is tile-major; ``hlo_index.layout`` models tiles).

bitcast-convert between element types of different width adds (narrowing) or removes
(widening) a trailing dim of size ``wide_bits / narrow_bits``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import Expr, IndexingMap, dim, range_var
from ..hlo.model import Instruction, Shape
from ..layout import bitcast_map as tiled_bitcast_map
from ..layout import is_tiled
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval, identity_map, major_to_minor, reshape_exprs


def _reshape_map(src: Sequence[int], dst: Sequence[int]) -> IndexingMap:
    src, dst = tuple(src), tuple(dst)
    if 0 in src or 0 in dst:
        return IndexingMap.known_empty(len(src), len(dst))
    return IndexingMap.from_shape_dims(src, reshape_exprs([dim(k) for k in range(len(src))], src, dst))


@output_to_input_rule("reshape", reads=Reads())
def reshape_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return [OperandMaps(0, (_reshape_map(instr.shape.dims, instr.operands[0].shape.dims),))]


@input_to_output_rule("reshape", reads=Reads())
def reshape_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(_reshape_map(instr.operands[0].shape.dims, instr.shape.dims),)]


# ---- bitcast --------------------------------------------------------------------------------


def bitcast_undefined_reason(src: Shape, dst: Shape) -> str | None:
    """Why a bitcast from ``src`` to ``dst`` has no transpose-reshape-transpose map, or None."""
    for side, s in (("operand", src), ("output", dst)):
        if s.is_tuple:
            return f"bitcast of a tuple-shaped {side}"
        if s.layout is not None and s.layout.tiles:
            return (
                f"bitcast with a tiled {side} layout: memory order is tile-major, not a "
                f"transpose-reshape-transpose of the logical shape"
            )
    sb, db = src.element_bits, dst.element_bits
    if not sb or not db or (sb % db and db % sb):
        return (
            f"bitcast between element types whose widths do not divide each other "
            f"({src.element_type} {sb} bits, {dst.element_type} {db} bits)"
        )
    if src.num_elements * sb != dst.num_elements * db:
        return (
            f"bitcast between buffers of different bit sizes ({src.num_elements} x {sb} vs {dst.num_elements} x {db})"
        )
    return None


def bitcast_map(src: Shape, dst: Shape) -> IndexingMap:
    """Map from an index of ``src`` to the index of ``dst`` sharing its memory location."""
    if not src.is_tuple and not dst.is_tuple and (is_tiled(src) or is_tiled(dst)):
        # Tile-major memory order: the layout engine composes logical -> physical -> logical.
        return tiled_bitcast_map(src, dst)
    reason = bitcast_undefined_reason(src, dst)
    if reason is not None:
        return IndexingMap.undefined(reason)
    if src.num_elements == 0:
        return IndexingMap.known_empty(src.rank, dst.rank)
    src_order, dst_order = major_to_minor(src), major_to_minor(dst)
    exprs = [dim(k) for k in src_order]
    src_physical = [src.dims[k] for k in src_order]
    dst_physical = [dst.dims[k] for k in dst_order]
    ranges = []
    if src.element_bits > dst.element_bits:  # one source element spans `ratio` destination ones
        ratio = src.element_bits // dst.element_bits
        exprs.append(range_var(0))
        src_physical.append(ratio)
        ranges.append(full_interval(ratio))
        physical = reshape_exprs(exprs, src_physical, dst_physical)
    elif src.element_bits < dst.element_bits:  # `ratio` source elements make one destination one
        ratio = dst.element_bits // src.element_bits
        physical = reshape_exprs(exprs, src_physical, dst_physical + [ratio])[:-1]
    else:
        physical = reshape_exprs(exprs, src_physical, dst_physical)
    results: list[Expr] = [None] * dst.rank  # type: ignore[list-item]  # every position is filled below
    for position, logical in enumerate(dst_order):
        results[logical] = physical[position]
    return IndexingMap.from_shape_dims(src.dims, results, range_vars=ranges)


@output_to_input_rule("bitcast", reads=Reads())
def bitcast_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return [OperandMaps(0, (bitcast_map(instr.shape, instr.operands[0].shape),))]


@input_to_output_rule("bitcast", reads=Reads())
def bitcast_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [(bitcast_map(instr.operands[0].shape, instr.shape),)]


# ---- bitcast-convert ------------------------------------------------------------------------


def _drop_last(dims: Sequence[int]) -> IndexingMap:
    """(d0, ..., dn) -> (d0, ..., dn-1): a narrow element belongs to the wide one it was cut from."""
    return IndexingMap.from_shape_dims(tuple(dims), [dim(k) for k in range(len(dims) - 1)])


def _add_last(dims: Sequence[int], ratio: int) -> IndexingMap:
    """(d0, ...)[s0] -> (d0, ..., s0): a wide element covers ``ratio`` narrow ones."""
    dims = tuple(dims)
    return IndexingMap.from_shape_dims(
        dims, [dim(k) for k in range(len(dims))] + [range_var(0)], range_vars=[full_interval(ratio)]
    )


@output_to_input_rule("bitcast-convert", reads=Reads())
def bitcast_convert_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    src, dst = instr.operands[0].shape, instr.shape
    if src.element_bits == dst.element_bits:
        return [OperandMaps(0, (identity_map(dst.dims),))]
    if src.element_bits > dst.element_bits:
        return [OperandMaps(0, (_drop_last(dst.dims),))]
    return [OperandMaps(0, (_add_last(dst.dims, dst.element_bits // src.element_bits),))]


@input_to_output_rule("bitcast-convert", reads=Reads())
def bitcast_convert_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    src, dst = instr.operands[0].shape, instr.shape
    if src.element_bits == dst.element_bits:
        return [(identity_map(src.dims),)]
    if src.element_bits > dst.element_bits:
        return [(_add_last(src.dims, src.element_bits // dst.element_bits),)]
    return [(_drop_last(src.dims),)]
