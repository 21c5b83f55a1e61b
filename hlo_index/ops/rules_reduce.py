"""reduce, reduce-window and select-and-scatter: reductions over dimensions and windows.

Variadic forms: operands are N inputs then N init values, and every output reads every input
(the reducer combines all of them). Windows follow XLA: the input is dilated by
``base_dilation``, padded by ``pad_low``/``pad_high``, and window tap ``s`` of output ``o``
sits at ``o * stride + s * window_dilation`` in that padded array; taps on padding or dilation
holes read the init value only. The window helpers below are shared with convolution.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import Expr, IndexingMap, Interval, const, dim, range_var
from ..hlo.model import Instruction, WindowDim
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval, generator_map, zero_result_map

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
_READS = Reads.of("dimensions", "window", "padding")

Constraint = tuple[Expr, Interval]


def window_of(instr: Instruction, rank: int) -> tuple[WindowDim, ...]:
    window = instr.attr("window")
    return tuple(window) if window else tuple(WindowDim(1) for _ in range(rank))


def _needs_range(low: int, high: int, allowed: Interval) -> bool:
    return low < allowed.lo or high > allowed.hi


def window_tap_to_input(
    out_coord: Expr, out_size: int, wd: WindowDim, in_size: int, tap: Expr | None
) -> tuple[Expr, list[Constraint]]:
    """Input coordinate read by window ``tap`` of output ``out_coord`` along one axis.

    The constraints drop taps on padding and on base-dilation holes. ``tap`` is None for a
    window of size 1 (the tap is 0).
    """
    padded = out_coord * wd.stride - wd.pad_low
    if tap is not None:
        padded = padded + tap * wd.window_dilation
    low = -wd.pad_low
    high = (out_size - 1) * wd.stride + (wd.size - 1) * wd.window_dilation - wd.pad_low
    constraints: list[Constraint] = []
    span = Interval(0, (in_size - 1) * wd.base_dilation)
    if _needs_range(low, high, span):
        constraints.append((padded, span))
    if wd.base_dilation == 1:
        return padded, constraints
    constraints.append((padded.mod(wd.base_dilation), Interval(0, 0)))
    return padded.floordiv(wd.base_dilation), constraints


def window_tap_to_output(
    in_coord: Expr, in_size: int, wd: WindowDim, out_size: int, tap: Expr | None
) -> tuple[Expr, list[Constraint]]:
    """Output coordinate whose window ``tap`` lands on input ``in_coord`` (inverse of the above)."""
    shifted = in_coord * wd.base_dilation + wd.pad_low
    if tap is not None:
        shifted = shifted - tap * wd.window_dilation
    low = wd.pad_low - (wd.size - 1) * wd.window_dilation
    high = (in_size - 1) * wd.base_dilation + wd.pad_low
    constraints: list[Constraint] = []
    span = Interval(0, (out_size - 1) * wd.stride)
    if _needs_range(low, high, span):
        constraints.append((shifted, span))
    if wd.stride == 1:
        return shifted, constraints
    constraints.append((shifted.mod(wd.stride), Interval(0, 0)))
    return shifted.floordiv(wd.stride), constraints


class RangeVars:
    """Allocates range variables in order; windows of size 1 get the constant tap 0 instead."""

    def __init__(self) -> None:
        self.intervals: list[Interval] = []

    def new(self, size: int) -> Expr | None:
        if size == 1:
            return None
        self.intervals.append(full_interval(size))
        return range_var(len(self.intervals) - 1)

    def new_or_zero(self, size: int) -> Expr:
        var = self.new(size)
        return const(0) if var is None else var


def window_input_map(out_dims: Sequence[int], in_dims: Sequence[int], window: Sequence[WindowDim]) -> IndexingMap:
    """Output of a windowed reduction -> the input elements its window covers."""
    ranges, results, constraints = RangeVars(), [], []
    for axis, wd in enumerate(window):
        expr, cons = window_tap_to_input(dim(axis), out_dims[axis], wd, in_dims[axis], ranges.new(wd.size))
        results.append(expr)
        constraints += cons
    return IndexingMap([full_interval(n) for n in out_dims], ranges.intervals, (), results, constraints)


def window_output_map(in_dims: Sequence[int], out_dims: Sequence[int], window: Sequence[WindowDim]) -> IndexingMap:
    """Input of a windowed reduction -> the outputs whose windows cover it."""
    ranges, results, constraints = RangeVars(), [], []
    for axis, wd in enumerate(window):
        expr, cons = window_tap_to_output(dim(axis), in_dims[axis], wd, out_dims[axis], ranges.new(wd.size))
        results.append(expr)
        constraints += cons
    return IndexingMap([full_interval(n) for n in in_dims], ranges.intervals, (), results, constraints)


def _per_output(instr: Instruction, m: IndexingMap) -> list[tuple[IndexingMap, ...]]:
    return [(m,) for _ in range(instr.shape.num_outputs)]


# ---- reduce -------------------------------------------------------------------------------


@output_to_input_rule("reduce", reads=_READS)
def reduce_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    arity = len(instr.operands) // 2
    out_dims = instr.shape.leaf(output_index).dims
    reduced = set(instr.attr("dimensions", ()))
    ranges, results, kept = RangeVars(), [], iter(range(len(out_dims)))
    for axis, size in enumerate(instr.operands[0].shape.dims):
        if axis in reduced:
            ranges.intervals.append(full_interval(size))  # kept even for size 1, as XLA does
            results.append(range_var(len(ranges.intervals) - 1))
        else:
            results.append(dim(next(kept)))
    input_map = IndexingMap([full_interval(n) for n in out_dims], ranges.intervals, (), results)
    init_map = zero_result_map(out_dims)
    return [OperandMaps(k, (input_map if k < arity else init_map,)) for k in range(2 * arity)]


@input_to_output_rule("reduce", reads=_READS)
def reduce_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    arity = len(instr.operands) // 2
    out_dims = instr.shape.leaf(0).dims
    if operand_index >= arity:
        return _per_output(instr, generator_map(out_dims))
    in_dims = instr.operands[operand_index].shape.dims
    reduced = set(instr.attr("dimensions", ()))
    kept = [dim(axis) for axis in range(len(in_dims)) if axis not in reduced]
    return _per_output(instr, IndexingMap.from_shape_dims(in_dims, kept))


# ---- reduce-window ------------------------------------------------------------------------


@output_to_input_rule("reduce-window", reads=_READS)
def reduce_window_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    arity = len(instr.operands) // 2
    out_dims = instr.shape.leaf(output_index).dims
    in_dims = instr.operands[0].shape.dims
    input_map = window_input_map(out_dims, in_dims, window_of(instr, len(in_dims)))
    init_map = zero_result_map(out_dims)
    return [OperandMaps(k, (input_map if k < arity else init_map,)) for k in range(2 * arity)]


@input_to_output_rule("reduce-window", reads=_READS)
def reduce_window_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    arity = len(instr.operands) // 2
    out_dims = instr.shape.leaf(0).dims
    if operand_index >= arity:
        return _per_output(instr, generator_map(out_dims))
    in_dims = instr.operands[operand_index].shape.dims
    return _per_output(instr, window_output_map(in_dims, out_dims, window_of(instr, len(in_dims))))


# ---- select-and-scatter -------------------------------------------------------------------
# Operands: operand (searched), source (one value per window), init. The output has the
# operand's shape; output x may receive the source value of every window covering x, and which
# window element is selected depends on the whole window of the operand.


def _covering_then_covered(dims: Sequence[int], source_dims: Sequence[int], window: Sequence[WindowDim]) -> IndexingMap:
    """x -> every element of every window that covers x (tap of x in the window, then tap read)."""
    ranges, results, constraints = RangeVars(), [], []
    for axis, wd in enumerate(window):
        source, cons = window_tap_to_output(dim(axis), dims[axis], wd, source_dims[axis], ranges.new(wd.size))
        element, cons2 = window_tap_to_input(source, source_dims[axis], wd, dims[axis], ranges.new(wd.size))
        results.append(element)
        constraints += cons + cons2
    return IndexingMap([full_interval(n) for n in dims], ranges.intervals, (), results, constraints)


@output_to_input_rule("select-and-scatter", reads=_READS)
def select_and_scatter_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    dims, source_dims = instr.shape.dims, instr.operands[1].shape.dims
    window = window_of(instr, len(dims))
    return [
        OperandMaps(0, (_covering_then_covered(dims, source_dims, window),)),
        OperandMaps(1, (window_output_map(dims, source_dims, window),)),
        OperandMaps(2, (zero_result_map(dims),)),
    ]


@input_to_output_rule("select-and-scatter", reads=_READS)
def select_and_scatter_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    dims, source_dims = instr.shape.dims, instr.operands[1].shape.dims
    window = window_of(instr, len(dims))
    if operand_index == 0:
        # The relation "x and y share a covering window" is symmetric.
        return [(_covering_then_covered(dims, source_dims, window),)]
    if operand_index == 1:
        return [(window_input_map(source_dims, dims, window),)]
    return [(generator_map(dims),)]
