"""dynamic-slice, dynamic-update-slice, gather: addresses read from other operands (scatter, which
shares the start handling below, is in ``rules_scatter.py``).

A start index known only at runtime is a runtime variable whose interval is its feasible
range after XLA's handling: dynamic-slice, dynamic-update-slice and gather clamp starts into
``[0, dim - size]``; scatter skips a window whose start lies outside that range. A start that
comes from a ``constant`` (uniform over the batch) or an ``iota`` is folded into the map.
Gather and scatter starts depend on the batch position: the runtime variable stands for the
start at the batch position of the element being mapped.

dynamic-update-slice output -> operand 0 is exact: the complement of the update box, piecewise,
with constraints on the runtime offsets when they are not static.
"""
from __future__ import annotations

import itertools
import re
from typing import Optional, Sequence

import numpy as np

from ..affine import Expr, IndexingMap, Interval, RuntimeVar, const, dim, range_var, runtime_var
from ..hlo.model import Instruction
from .registry import Reads, OperandMaps, input_to_output_rule, output_to_input_rule
from .rules_reduce import RangeVars
from .shape_maps import full_interval, generator_map, zero_result_map

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
INDEXED_READS = Reads.of("collapsed_slice_dims", "index_vector_dim", "input_batching_dims", "inserted_window_dims", "offset_dims", "operand_batching_dims", "scatter_dims_to_operand_dims", "scatter_indices_batching_dims", "slice_sizes", "dynamic_slice_sizes", "start_index_map", "start_indices_batching_dims", "update_window_dims", "to_apply", operand_values=True)

KnownStart = tuple[Expr, int, int]   # expression, smallest and largest value


# ---- where start indices come from --------------------------------------------------------

def constant_values(op: Instruction) -> Optional[np.ndarray]:
    """The integer elements of a ``constant`` operand, shaped like it, or None."""
    if op.opcode != "constant" or op.literal is None or op.shape.is_tuple:
        return None
    words = re.findall(r"-?\d+|true|false", op.literal)
    if len(words) != op.shape.num_elements:
        return None
    values = [1 if w == "true" else 0 if w == "false" else int(w) for w in words]
    return np.asarray(values, dtype=np.int64).reshape(op.shape.dims)


def known_start(indices: Instruction, index_vector_dim: int, component: int,
                batch_exprs: Sequence[Expr]) -> Optional[KnownStart]:
    """Start component ``component`` when the indices operand is a constant or an iota.

    ``batch_exprs`` are the expressions of the indices' batch coordinates (its dims other than
    ``index_vector_dim``, in order) in the map being built.
    """
    rank = indices.shape.rank
    if indices.opcode == "iota":
        axis = indices.attr("iota_dimension", 0)
        if axis == index_vector_dim and index_vector_dim < rank:
            return const(component), component, component
        position = axis if axis < index_vector_dim else axis - 1
        return batch_exprs[position], 0, indices.shape.dims[axis] - 1
    values = constant_values(indices)
    if values is None:
        return None
    vectors = values[..., None] if index_vector_dim == rank else np.moveaxis(values, index_vector_dim, -1)
    column = vectors[..., component]
    if column.size == 0 or not (column == column.flat[0]).all():
        return None
    value = int(column.flat[0])
    return const(value), value, value


class Starts:
    """Builds start expressions, allocating runtime variables for the ones not known statically.

    A start known statically (an iota) that is in range for some positions and clamped for others
    is exact as pieces: ``choice`` picks one piece per such start (in the order they are met);
    ``arity`` records how many pieces each had and ``constraints`` the domain of the chosen ones.
    """

    def __init__(self, choice: tuple[int, ...] = ()) -> None:
        self.runtime: list[RuntimeVar] = []
        self.never_valid = False   # scatter: a folded start that is always out of bounds
        self.choice = choice
        self.arity: list[int] = []
        self.constraints: list[tuple[Expr, Interval]] = []

    def runtime_start(self, max_start: int, description: str) -> Expr:
        self.runtime.append(RuntimeVar(Interval(0, max_start), description))
        return runtime_var(len(self.runtime) - 1)

    def clamped(self, known: Optional[KnownStart], max_start: int, description: str) -> Expr:
        """Gather / dynamic slices: out-of-range starts are clamped."""
        if known is not None:
            expr, lo, hi = known
            if 0 <= lo and hi <= max_start:
                return expr
            if lo == hi:
                return const(min(max(lo, 0), max_start))
            return self._clamped_piece(expr, lo, hi, max_start)
        return self.runtime_start(max_start, description)

    def _clamped_piece(self, expr: Expr, lo: int, hi: int, max_start: int) -> Expr:
        """clamp(expr, 0, max_start) as pieces: expr where it is in range, 0 below, max_start above."""
        pieces = []
        if lo <= max_start and hi >= 0:
            pieces.append((expr, Interval(max(lo, 0), min(hi, max_start))))
        if lo < 0:
            pieces.append((const(0), Interval(lo, min(hi, -1))))
        if hi > max_start:
            pieces.append((const(max_start), Interval(max(lo, max_start + 1), hi)))
        k = len(self.arity)
        self.arity.append(len(pieces))
        value, interval = pieces[self.choice[k] if k < len(self.choice) else 0]
        self.constraints.append((expr, interval))
        return value

    def skipped(self, known: Optional[KnownStart], max_start: int, description: str) -> Expr:
        """Scatter: out-of-range windows are dropped."""
        if known is not None:
            expr, lo, hi = known
            if 0 <= lo and hi <= max_start:
                return expr
            if lo == hi:
                self.never_valid = True
                return const(0)
        return self.runtime_start(max_start, description)


def in_range(expr: Expr, size: int) -> tuple[Expr, Interval]:
    return expr, Interval(0, size - 1)


# ---- dynamic-slice ------------------------------------------------------------------------

def _is_old_form(instr: Instruction, first: int, rank: int) -> bool:
    """XLA's old form: all start indices in one vector operand (``dynamic-slice(x, s32[2] starts)``)."""
    return (len(instr.operands) == first + 1 and instr.operands[first].shape.rank == 1
            and (rank != 1 or instr.operands[first].shape.dims[0] == 1) and not instr.operands[first].shape.is_tuple)


def _slice_starts(instr: Instruction, first: int, operand_dims, sizes) -> Optional[tuple[list[Expr], Starts]]:
    old_form = len(instr.operands) != first + len(operand_dims)
    if old_form and not _is_old_form(instr, first, len(operand_dims)):
        return None
    starts = Starts()
    exprs = []
    for axis, (n, size) in enumerate(zip(operand_dims, sizes)):
        if old_form:
            offset = instr.operands[first]
            known = known_start(offset, 0, axis, ())
            where = f"%{offset.name}[{axis}]"
        else:
            offset = instr.operands[first + axis]
            known = known_start(offset, 0, 0, ()) if offset.shape.rank == 0 else None
            where = f"%{offset.name}"
        exprs.append(starts.clamped(known, n - size, f"{where} (offset of dim {axis}, clamped to [0, {n - size}])"))
    return exprs, starts


def _offsets_to_everything(instr: Instruction, operand_index: int, out_dims) -> IndexingMap:
    """Every offset element (the scalar, or each element of an old-form vector) moves every output."""
    shape = instr.operands[operand_index].shape
    if shape.rank == 1:
        return IndexingMap([full_interval(shape.dims[0])], [full_interval(n) for n in out_dims], (),
                           [range_var(i) for i in range(len(out_dims))])
    return generator_map(out_dims)


def _offsets_map(instr: Instruction, operand_index: int, out_dims) -> IndexingMap:
    """What an output element reads of an offsets operand: the scalar, or the whole old-form vector."""
    shape = instr.operands[operand_index].shape
    if shape.rank == 1:
        return IndexingMap([full_interval(n) for n in out_dims], [full_interval(shape.dims[0])], (), [range_var(0)])
    return zero_result_map(out_dims)


def _old_form(instr: Instruction) -> IndexingMap:
    return IndexingMap.undefined(f"{instr.opcode}: offsets given as one vector operand (old form) are not supported")


@output_to_input_rule("dynamic-slice", reads=INDEXED_READS)
def dynamic_slice_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    out_dims, operand_dims = instr.shape.dims, instr.operands[0].shape.dims
    built = _slice_starts(instr, 1, operand_dims, out_dims)
    if built is None:
        return [OperandMaps(k, (_old_form(instr),)) for k in range(len(instr.operands))]
    starts, alloc = built
    operand = IndexingMap([full_interval(n) for n in out_dims], (), alloc.runtime,
                          [dim(axis) + start for axis, start in enumerate(starts)])
    return [OperandMaps(0, (operand,))] + [OperandMaps(k, (_offsets_map(instr, k, out_dims),))
                                           for k in range(1, len(instr.operands))]


@input_to_output_rule("dynamic-slice", reads=INDEXED_READS)
def dynamic_slice_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    out_dims, operand_dims = instr.shape.dims, instr.operands[0].shape.dims
    if operand_index > 0:
        return [(_offsets_to_everything(instr, operand_index, out_dims),)]
    built = _slice_starts(instr, 1, operand_dims, out_dims)
    if built is None:
        return [(_old_form(instr),)]
    starts, alloc = built
    results = [dim(axis) - start for axis, start in enumerate(starts)]
    # Without this constraint an operand element outside the slice would map to an output.
    constraints = [in_range(r, size) for r, size, n, start in zip(results, out_dims, operand_dims, starts)
                   if size < n or not (start.is_constant and start.constant_value == 0)]
    return [(IndexingMap([full_interval(n) for n in operand_dims], (), alloc.runtime, results, constraints),)]


# ---- dynamic-update-slice -----------------------------------------------------------------

@output_to_input_rule("dynamic-update-slice", reads=INDEXED_READS)
def dynamic_update_slice_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    out_dims, update_dims = instr.shape.dims, instr.operands[1].shape.dims
    built = _slice_starts(instr, 2, out_dims, update_dims)
    if built is None:
        return [OperandMaps(k, (_old_form(instr),)) for k in range(len(instr.operands))]
    starts, alloc = built
    results = [dim(axis) - start for axis, start in enumerate(starts)]
    update = IndexingMap([full_interval(n) for n in out_dims], (), alloc.runtime, results,
                         [in_range(r, size) for r, size in zip(results, update_dims)])
    offsets = zero_result_map(out_dims)
    return ([OperandMaps(0, not_overwritten(out_dims, update_dims, starts, alloc)), OperandMaps(1, (update,))]
            + [OperandMaps(k, (offsets,)) for k in range(2, len(instr.operands))])


def not_overwritten(out_dims, update_dims, starts, alloc: Starts) -> tuple[IndexingMap, ...]:
    """dynamic-update-slice output -> operand 0: the identity where the update does not land.

    One piece per side of the update box along each dim it does not span (the pieces overlap at
    corners; their union is the complement). A static start bounds the dim itself; a runtime start
    (the clamped offset, a runtime variable in ``[0, n - u]``) bounds ``d - rt``, so at every
    offset value the pieces give exactly the elements left in place. Every piece carries all the
    runtime variables, in the same order, so ``rt<k>`` means the same offset in each. An update
    spanning every dim leaves nothing of operand 0 (no maps).
    """
    domain = [full_interval(d) for d in out_dims]
    identity = [dim(a) for a in range(len(out_dims))]
    pieces = []
    for axis, (n, u, start) in enumerate(zip(out_dims, update_dims, starts)):
        if start.is_constant:
            lo = start.constant_value
            sides = [(dim(axis), Interval(0, lo - 1)), (dim(axis), Interval(lo + u, n - 1))]
        elif u >= n:
            continue   # the clamped offset is 0: the update spans the dim
        else:
            offset = dim(axis) - start
            sides = [(offset, Interval(-(n - u), -1)), (offset, Interval(u, n - 1))]
        for constraint in sides:
            if constraint[1].lo <= constraint[1].hi:
                pieces.append(IndexingMap(domain, (), alloc.runtime, identity, [constraint]))
    return tuple(pieces)


@input_to_output_rule("dynamic-update-slice", reads=INDEXED_READS)
def dynamic_update_slice_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    out_dims, update_dims = instr.shape.dims, instr.operands[1].shape.dims
    if operand_index == 0:
        built = _slice_starts(instr, 2, out_dims, update_dims)
        if built is None:
            return [(_old_form(instr),)]
        return [not_overwritten(out_dims, update_dims, *built)]
    if operand_index > 1:
        return [(generator_map(out_dims),)]
    built = _slice_starts(instr, 2, out_dims, update_dims)
    if built is None:
        return [(_old_form(instr),)]
    starts, alloc = built
    return [(IndexingMap([full_interval(n) for n in update_dims], (), alloc.runtime,
                         [dim(axis) + start for axis, start in enumerate(starts)]),)]


# ---- gather -------------------------------------------------------------------------------

def batch_position(indices_dim: int, index_vector_dim: int) -> int:
    return indices_dim if indices_dim < index_vector_dim else indices_dim - 1


def _vector_length(indices: Instruction, index_vector_dim: int) -> int:
    dims = indices.shape.dims
    return 1 if index_vector_dim == len(dims) else dims[index_vector_dim]


def _indices_results(indices: Instruction, index_vector_dim: int, batch_exprs: Sequence[Expr],
                     component: Expr) -> list[Expr]:
    results = list(batch_exprs)
    if index_vector_dim < indices.shape.rank:
        results.insert(index_vector_dim, component)
    return results


def _gather_starts(instr: Instruction, batch_exprs: Sequence[Expr], starts: Starts) -> list[Expr]:
    """Start expression of every operand dim (0 for dims without a start)."""
    operand, indices = instr.operands[0], instr.operands[1]
    ivd = instr.attr("index_vector_dim")
    sizes = instr.attr("slice_sizes")
    result: list[Expr] = [const(0)] * operand.shape.rank
    for k, d in enumerate(instr.attr("start_index_map", ())):
        max_start = operand.shape.dims[d] - sizes[d]
        result[d] = starts.clamped(known_start(indices, ivd, k, batch_exprs), max_start,
                                   f"%{indices.name}[..., {k}] at the batch position (start of operand dim {d}, "
                                   f"clamped to [0, {max_start}])")
    for d, j in zip(instr.attr("operand_batching_dims", ()), instr.attr("start_indices_batching_dims", ())):
        result[d] = batch_exprs[batch_position(j, ivd)]
    return result


def _gather_layout(instr: Instruction):
    offset_dims = tuple(instr.attr("offset_dims", ()))
    batch_out = [d for d in range(instr.shape.rank) if d not in offset_dims]
    skipped = set(instr.attr("collapsed_slice_dims", ())) | set(instr.attr("operand_batching_dims", ()))
    window_dims = [d for d in range(instr.operands[0].shape.rank) if d not in skipped]
    return offset_dims, batch_out, window_dims


def _pieces(build) -> tuple[IndexingMap, ...]:
    """``build(choice)`` for every combination of the clamped pieces its starts have; the distinct
    maps that are not empty (their domains are disjoint: together they are the exact relation)."""
    first, starts = build(())
    if not starts.arity:
        return (first,)
    maps = []
    for choice in itertools.product(*(range(a) for a in starts.arity)):
        m = build(choice)[0].simplified() if choice else first.simplified()
        if not m.is_known_empty and m not in maps:
            maps.append(m)
    return tuple(maps) or (first.simplified(),)


@output_to_input_rule("gather", reads=INDEXED_READS)
def gather_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    out_dims, indices = instr.shape.dims, instr.operands[1]
    ivd = instr.attr("index_vector_dim")
    offset_dims, batch_out, window_dims = _gather_layout(instr)
    domain = [full_interval(n) for n in out_dims]
    batch_exprs = [dim(d) for d in batch_out]

    def build(choice):
        starts = Starts(choice)
        results = _gather_starts(instr, batch_exprs, starts)
        for d, out_dim in zip(window_dims, offset_dims):
            results[d] = results[d] + dim(out_dim)
        return IndexingMap(domain, (), starts.runtime, results, starts.constraints), starts

    operand_maps = _pieces(build)
    ranges = RangeVars()
    component = ranges.new_or_zero(_vector_length(indices, ivd))
    indices_map = IndexingMap(domain, ranges.intervals, (), _indices_results(indices, ivd, batch_exprs, component))
    return [OperandMaps(0, operand_maps), OperandMaps(1, (indices_map,))]


@input_to_output_rule("gather", reads=INDEXED_READS)
def gather_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    out_dims, operand, indices = instr.shape.dims, instr.operands[0], instr.operands[1]
    ivd = instr.attr("index_vector_dim")
    offset_dims, batch_out, window_dims = _gather_layout(instr)
    ranges = RangeVars()
    results: list[Expr] = [const(0)] * len(out_dims)
    if operand_index == 1:
        for j in range(indices.shape.rank):
            if j != ivd:
                results[batch_out[batch_position(j, ivd)]] = dim(j)
        for out_dim in offset_dims:
            results[out_dim] = ranges.new_or_zero(out_dims[out_dim])
        return [(IndexingMap([full_interval(n) for n in indices.shape.dims], ranges.intervals, (), results),)]

    tied = {batch_position(j, ivd): d for d, j in zip(instr.attr("operand_batching_dims", ()),
                                                        instr.attr("start_indices_batching_dims", ()))}
    batch_exprs = [dim(tied[pos]) if pos in tied else ranges.new_or_zero(out_dims[out_dim])
                   for pos, out_dim in enumerate(batch_out)]
    sizes = instr.attr("slice_sizes")

    def build(choice):
        starts = Starts(choice)
        start = _gather_starts(instr, batch_exprs, starts)
        out = list(results)
        constraints = list(starts.constraints)
        for pos, out_dim in enumerate(batch_out):
            out[out_dim] = batch_exprs[pos]
        for d, out_dim in zip(window_dims, offset_dims):
            out[out_dim] = dim(d) - start[d]
            constraints.append(in_range(out[out_dim], sizes[d]))
        for d in instr.attr("collapsed_slice_dims", ()):
            constraints.append(in_range(dim(d) - start[d], 1))
        return IndexingMap([full_interval(n) for n in operand.shape.dims], ranges.intervals, starts.runtime,
                           out, constraints), starts

    return [_pieces(build)]
