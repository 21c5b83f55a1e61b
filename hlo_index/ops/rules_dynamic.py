"""dynamic-slice, dynamic-update-slice, gather: addresses read from other operands (scatter, which
places its windows as gather does, ``windows.py``, is in ``rules_scatter.py``).

Where starts come from and how an out-of-range one is handled: ``starts.py``. Gather and scatter
starts depend on the batch position: the runtime variable stands for the start at the batch
position of the element being mapped.

dynamic-update-slice output -> operand 0 is exact: the complement of the update box, piecewise,
with constraints on the runtime offsets when they are not static.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from ..affine import Expr, IndexingMap, Interval, const, dim, range_var
from ..hlo.model import Instruction
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .rules_reduce import RangeVars
from .shape_maps import full_interval, generator_map, zero_result_map
from .starts import Starts, in_range, known_start

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint).
INDEXED_READS = Reads.of(
    "collapsed_slice_dims",
    "index_vector_dim",
    "input_batching_dims",
    "inserted_window_dims",
    "offset_dims",
    "operand_batching_dims",
    "scatter_dims_to_operand_dims",
    "scatter_indices_batching_dims",
    "slice_sizes",
    "dynamic_slice_sizes",
    "start_index_map",
    "start_indices_batching_dims",
    "update_window_dims",
    "to_apply",
    operand_values=True,
)

# ---- dynamic-slice ------------------------------------------------------------------------


def _is_old_form(instr: Instruction, first: int, rank: int) -> bool:
    """XLA's old form: all start indices in one vector operand (``dynamic-slice(x, s32[2] starts)``)."""
    return (
        len(instr.operands) == first + 1
        and instr.operands[first].shape.rank == 1
        and (rank != 1 or instr.operands[first].shape.dims[0] == 1)
        and not instr.operands[first].shape.is_tuple
    )


def _slice_starts(
    instr: Instruction, first: int, operand_dims: Sequence[int], sizes: Sequence[int]
) -> tuple[list[Expr], Starts] | None:
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


def _offsets_to_everything(instr: Instruction, operand_index: int, out_dims: Sequence[int]) -> IndexingMap:
    """Every offset element (the scalar, or each element of an old-form vector) moves every output."""
    shape = instr.operands[operand_index].shape
    if shape.rank == 1:
        return IndexingMap(
            [full_interval(shape.dims[0])],
            [full_interval(n) for n in out_dims],
            (),
            [range_var(i) for i in range(len(out_dims))],
        )
    return generator_map(out_dims)


def _offsets_map(instr: Instruction, operand_index: int, out_dims: Sequence[int]) -> IndexingMap:
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
    operand = IndexingMap(
        [full_interval(n) for n in out_dims],
        (),
        alloc.runtime,
        [dim(axis) + start for axis, start in enumerate(starts)],
    )
    return [OperandMaps(0, (operand,))] + [
        OperandMaps(k, (_offsets_map(instr, k, out_dims),)) for k in range(1, len(instr.operands))
    ]


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
    constraints = [
        in_range(r, size)
        for r, size, n, start in zip(results, out_dims, operand_dims, starts)
        if size < n or not (start.is_constant and start.constant_value == 0)
    ]
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
    update = IndexingMap(
        [full_interval(n) for n in out_dims],
        (),
        alloc.runtime,
        results,
        [in_range(r, size) for r, size in zip(results, update_dims)],
    )
    offsets = zero_result_map(out_dims)
    return [OperandMaps(0, not_overwritten(out_dims, update_dims, starts, alloc)), OperandMaps(1, (update,))] + [
        OperandMaps(k, (offsets,)) for k in range(2, len(instr.operands))
    ]


def not_overwritten(
    out_dims: Sequence[int], update_dims: Sequence[int], starts: Sequence[Expr], alloc: Starts
) -> tuple[IndexingMap, ...]:
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
    pieces: list[IndexingMap] = []
    for axis, (n, u, start) in enumerate(zip(out_dims, update_dims, starts)):
        if start.is_constant:
            lo = start.constant_value
            sides = [(dim(axis), Interval(0, lo - 1)), (dim(axis), Interval(lo + u, n - 1))]
        elif u >= n:
            continue  # the clamped offset is 0: the update spans the dim
        else:
            offset = dim(axis) - start
            sides = [(offset, Interval(-(n - u), -1)), (offset, Interval(u, n - 1))]
        pieces.extend(
            IndexingMap(domain, (), alloc.runtime, identity, [constraint])
            for constraint in sides
            if constraint[1].lo <= constraint[1].hi
        )
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
    return [
        (
            IndexingMap(
                [full_interval(n) for n in update_dims],
                (),
                alloc.runtime,
                [dim(axis) + start for axis, start in enumerate(starts)],
            ),
        )
    ]


# ---- gather -------------------------------------------------------------------------------


def _vector_length(indices: Instruction, index_vector_dim: int) -> int:
    dims = indices.shape.dims
    return 1 if index_vector_dim == len(dims) else dims[index_vector_dim]


def _indices_results(
    indices: Instruction, index_vector_dim: int, batch_exprs: Sequence[Expr], component: Expr
) -> list[Expr]:
    results = list(batch_exprs)
    if index_vector_dim < indices.shape.rank:
        results.insert(index_vector_dim, component)
    return results


# The map for one combination of clamped pieces (one choice per start), with the starts it made.
PieceBuilder = Callable[[tuple[int, ...]], tuple[IndexingMap, Starts]]


def _pieces(build: PieceBuilder) -> tuple[IndexingMap, ...]:
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
    from .windows import WindowPlacement  # gather and scatter only: not every run's import

    placement = WindowPlacement.of_gather(instr)
    domain = [full_interval(n) for n in out_dims]

    def build(choice: tuple[int, ...]) -> tuple[IndexingMap, Starts]:
        starts = Starts(choice)
        results = placement.windowed_to_operand(starts)
        return IndexingMap(domain, (), starts.runtime, results, starts.constraints), starts

    operand_maps = _pieces(build)
    ranges = RangeVars()
    component = ranges.new_or_zero(_vector_length(indices, ivd))
    batch_exprs = [dim(d) for d in placement.batch_dims]
    indices_map = IndexingMap(domain, ranges.intervals, (), _indices_results(indices, ivd, batch_exprs, component))
    return [OperandMaps(0, operand_maps), OperandMaps(1, (indices_map,))]


@input_to_output_rule("gather", reads=INDEXED_READS)
def gather_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    out_dims, operand, indices = instr.shape.dims, instr.operands[0], instr.operands[1]
    ivd = instr.attr("index_vector_dim")
    from .windows import WindowPlacement, batch_position

    placement = WindowPlacement.of_gather(instr)
    ranges = RangeVars()
    if operand_index == 1:
        results: list[Expr] = [const(0)] * len(out_dims)
        for j in range(indices.shape.rank):
            if j != ivd:
                results[placement.batch_dims[batch_position(j, ivd)]] = dim(j)
        for out_dim in placement.offset_dims:
            results[out_dim] = ranges.new_or_zero(out_dims[out_dim])
        return [(IndexingMap([full_interval(n) for n in indices.shape.dims], ranges.intervals, (), results),)]

    batch_exprs = placement.operand_batch_exprs(ranges)

    def build(choice: tuple[int, ...]) -> tuple[IndexingMap, Starts]:
        starts = Starts(choice)
        results, constraints = placement.operand_to_windowed(batch_exprs, starts)
        return IndexingMap(
            [full_interval(n) for n in operand.shape.dims], ranges.intervals, starts.runtime, results, constraints
        ), starts

    return [_pieces(build)]
