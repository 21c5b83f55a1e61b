"""Collectives, in the per-replica view.

Every map describes ONE replica's output; the operands of the replicas in its group share one
index space (a map result is an index into the operand of whichever replica(s) the op's
semantics name, as documented per op below). Where the map depends on which replica's output
is described, that replica's position in its replica group (collective-permute: its replica id)
is the runtime variable ``rt0``, known only on the device. A range variable stands for "any
replica of the group" where the map is a union over replicas.

* all-reduce (-start): output i element d = sum over the group of operand i element d: identity.
* all-gather, dim k, operand size L, group size N: output d reads element ``d_k mod L`` of the
  operand of the replica at position ``d_k floordiv L``. In to out: operand element x (of the
  replica at any position s0) lands at ``x_k + s0 * L`` of every replica's output.
* reduce-scatter, dim k, output size L: replica rt0's output d sums element ``d_k + rt0 * L`` of
  every replica's operand; in to out: operand element x reaches ``x_k - rt0 * L`` when in range.
* all-to-all (array form, dimension k, chunk C = size / N): replica rt0's output d reads, from
  the replica at position ``d_k floordiv C``, element ``d_k mod C + rt0 * C``; in to out:
  operand element x of any replica (position s0) reaches ``x_k - rt0 * C + s0 * C`` when
  ``x_k - rt0 * C in [0, C - 1]``. The tuple form reads operand rt0: a constraint on rt0.
* async forms (all-gather-start, collective-permute-start): output 0 aliases the operand
  (identity), output 1 is the collective's result, further outputs are u32 context (read
  nothing); X-done forwards element 1 of the start's tuple. Variadic (nested-tuple) async forms
  are UNDEFINED. collective-broadcast: identity (from the group's root replica).
* collective-permute: output on replica rt0 is the operand of its source when some pair targets
  rt0, and zeros otherwise: identity under ``rt0 in`` (each run of target ids).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..affine import Expr, IndexingMap, Interval, RuntimeVar, dim, range_var, runtime_var
from ..hlo.model import Instruction
from .registry import OperandMaps, Reads, input_to_output_rule, output_to_input_rule
from .shape_maps import full_interval, identity_map

# What every collective rule here looks at (the cache key: hlo_index.fusion.fingerprint).
_READS = Reads.of(
    "dimensions",
    "replica_groups",
    "replica_groups_typed",
    "source_target_pairs",
    "replica_count",
    module_attributes=("replica_count",),
)

POSITION = "position of this replica in its replica group"


def replica_group_size(instr: Instruction) -> int | None:
    """Size of one replica group (the first that lists any replica); ``{}`` means all replicas
    (the module's ``replica_count``, when known)."""
    for group in instr.replica_groups() or ():
        if group:
            return len(group)
    module = instr.computation.module if instr.computation is not None else None
    count = module.attrs.get("replica_count") if module is not None else None
    return int(count) if count else None


def _per_output(instr: Instruction, output_index: int, maps: tuple[IndexingMap, ...]) -> list[OperandMaps]:
    """Variadic collectives: output i reads only operand i."""
    return [OperandMaps(i, maps if i == output_index else ()) for i in range(len(instr.operands))]


def _per_operand(
    instr: Instruction, operand_index: int, maps: tuple[IndexingMap, ...]
) -> list[tuple[IndexingMap, ...]]:
    return [maps if j == operand_index else () for j in range(instr.shape.num_outputs)]


def _replaced(dims: Sequence[int], axis: int, expr: Expr) -> list[Expr]:
    return [expr if k == axis else dim(k) for k in range(len(dims))]


# ---- all-reduce -----------------------------------------------------------------------------


@output_to_input_rule("all-reduce", "all-reduce-start", "all-reduce-done", reads=_READS)
def all_reduce_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    m = identity_map(instr.shape.leaf(output_index).dims)
    if instr.opcode == "all-reduce-done":  # one (possibly tuple) operand passed through
        return [OperandMaps(0, (m,), operand_output=output_index)]
    return _per_output(instr, output_index, (m,))


@input_to_output_rule("all-reduce", "all-reduce-start", "all-reduce-done", reads=_READS)
def all_reduce_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if instr.opcode == "all-reduce-done":
        return [(identity_map(instr.shape.leaf(j).dims),) for j in range(instr.shape.num_outputs)]
    return _per_operand(instr, operand_index, (identity_map(instr.operands[operand_index].shape.dims),))


# ---- all-gather -----------------------------------------------------------------------------


def _all_gather_out2in(out_dims: Sequence[int], operand_dims: Sequence[int], axis: int) -> IndexingMap:
    local = operand_dims[axis]
    expr = dim(axis) % local if local != out_dims[axis] else dim(axis)
    return IndexingMap.from_shape_dims(out_dims, _replaced(out_dims, axis, expr))


def _all_gather_in2out(operand_dims: Sequence[int], out_dims: Sequence[int], axis: int) -> IndexingMap:
    group = out_dims[axis] // operand_dims[axis]
    return IndexingMap.from_shape_dims(
        operand_dims,
        _replaced(operand_dims, axis, dim(axis) + range_var(0) * operand_dims[axis]),
        range_vars=[full_interval(group)],
    )


@output_to_input_rule("all-gather", reads=_READS)
def all_gather_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    m = _all_gather_out2in(
        instr.shape.leaf(output_index).dims, instr.operands[output_index].shape.dims, instr.attr("dimensions")[0]
    )
    return _per_output(instr, output_index, (m,))


@input_to_output_rule("all-gather", reads=_READS)
def all_gather_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    m = _all_gather_in2out(
        instr.operands[operand_index].shape.dims, instr.shape.leaf(operand_index).dims, instr.attr("dimensions")[0]
    )
    return _per_operand(instr, operand_index, (m,))


# ---- async forms: X-start returns (operand alias, result[, context...]); X-done returns the result

ASYNC_NESTED = "variadic async collective: its outputs are nested tuples; address them through get-tuple-element"


def _async_single(instr: Instruction) -> bool:
    """One operand and a flat (operand, result, ...) tuple result: the form the rules below read."""
    parts = instr.shape.tuple_shapes
    return len(instr.operands) == 1 and parts is not None and len(parts) >= 2 and not any(s.is_tuple for s in parts)


@output_to_input_rule("all-gather-start", "collective-permute-start", reads=_READS)
def async_start_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    if instr.opcode == "all-gather-start" and len(instr.operands) == 1 and not instr.shape.is_tuple:
        # XLA also reads all-gather-start with the gathered array itself as the result
        return [
            OperandMaps(
                0, (_all_gather_out2in(instr.shape.dims, instr.operands[0].shape.dims, instr.attr("dimensions")[0]),)
            )
        ]
    if not _async_single(instr):
        return [OperandMaps(i, (IndexingMap.undefined(ASYNC_NESTED),)) for i in range(len(instr.operands))]
    out_dims = instr.shape.leaf(output_index).dims
    if output_index == 0:
        return [OperandMaps(0, (identity_map(out_dims),))]
    if output_index >= 2:  # u32 context words
        return [OperandMaps(0, ())]
    if instr.opcode == "all-gather-start":
        return [
            OperandMaps(0, (_all_gather_out2in(out_dims, instr.operands[0].shape.dims, instr.attr("dimensions")[0]),))
        ]
    return [OperandMaps(0, _permute_maps(instr, out_dims))]


@input_to_output_rule("all-gather-start", "collective-permute-start", reads=_READS)
def async_start_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if instr.opcode == "all-gather-start" and len(instr.operands) == 1 and not instr.shape.is_tuple:
        return [(_all_gather_in2out(instr.operands[0].shape.dims, instr.shape.dims, instr.attr("dimensions")[0]),)]
    if not _async_single(instr):
        return [(IndexingMap.undefined(ASYNC_NESTED),) for _ in range(instr.shape.num_outputs)]
    dims = instr.operands[0].shape.dims
    result: tuple[IndexingMap, ...]
    if instr.opcode == "all-gather-start":
        result = (_all_gather_in2out(dims, instr.shape.leaf(1).dims, instr.attr("dimensions")[0]),)
    else:
        result = _permute_maps(instr, dims)
    return [(identity_map(dims),), result] + [() for _ in range(instr.shape.num_outputs - 2)]


@output_to_input_rule("all-gather-done", "collective-permute-done", reads=_READS)
def async_done_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    if instr.shape.is_tuple:
        return [OperandMaps(0, (IndexingMap.undefined(ASYNC_NESTED),))]
    return [OperandMaps(0, (identity_map(instr.shape.dims),), operand_output=1)]


@input_to_output_rule("all-gather-done", "collective-permute-done", reads=_READS)
def async_done_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    if instr.shape.is_tuple:
        return [(IndexingMap.undefined(ASYNC_NESTED),) for _ in range(instr.shape.num_outputs)]
    return [(identity_map(instr.shape.dims),)]


@output_to_input_rule("collective-broadcast", reads=_READS)
def collective_broadcast_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    return _per_output(instr, output_index, (identity_map(instr.shape.leaf(output_index).dims),))


@input_to_output_rule("collective-broadcast", reads=_READS)
def collective_broadcast_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return _per_operand(instr, operand_index, (identity_map(instr.operands[operand_index].shape.dims),))


# ---- reduce-scatter -------------------------------------------------------------------------


@output_to_input_rule("reduce-scatter", reads=_READS)
def reduce_scatter_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    axis = instr.attr("dimensions")[0]
    out_dims = instr.shape.leaf(output_index).dims
    local = out_dims[axis]
    group = instr.operands[output_index].shape.dims[axis] // local
    m = IndexingMap.from_shape_dims(
        out_dims,
        _replaced(out_dims, axis, dim(axis) + runtime_var(0) * local),
        runtime_vars=[RuntimeVar(full_interval(group), POSITION)],
    )
    return _per_output(instr, output_index, (m,))


@input_to_output_rule("reduce-scatter", reads=_READS)
def reduce_scatter_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    axis = instr.attr("dimensions")[0]
    dims = instr.operands[operand_index].shape.dims
    local = instr.shape.leaf(operand_index).dims[axis]
    position = dim(axis) - runtime_var(0) * local
    m = IndexingMap.from_shape_dims(
        dims,
        _replaced(dims, axis, position),
        runtime_vars=[RuntimeVar(full_interval(dims[axis] // local), POSITION)],
        constraints=[(position, Interval(0, local - 1))],
    )
    return _per_operand(instr, operand_index, (m,))


# ---- all-to-all -----------------------------------------------------------------------------


def _all_to_all_undefined(instr: Instruction) -> str | None:
    if not instr.attr("dimensions"):
        return None
    if replica_group_size(instr) is None:
        return "all-to-all with empty replica_groups and no replica_count: group size unknown"
    return None


@output_to_input_rule("all-to-all", reads=_READS)
def all_to_all_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    reason = _all_to_all_undefined(instr)
    if reason:
        return [OperandMaps(i, (IndexingMap.undefined(reason),)) for i in range(len(instr.operands))]
    split = instr.attr("dimensions")
    out_dims = instr.shape.leaf(output_index).dims
    # _all_to_all_undefined checked that the group size is known
    group: int = replica_group_size(instr) if split else len(instr.operands)  # type: ignore[assignment]
    rt = [RuntimeVar(full_interval(group), POSITION)]
    if not split:
        # Tuple form: output j on replica rt0 is operand rt0 of the replica at position j.
        return [
            OperandMaps(
                i,
                (
                    IndexingMap.from_shape_dims(
                        out_dims,
                        [dim(k) for k in range(len(out_dims))],
                        runtime_vars=rt,
                        constraints=[(runtime_var(0), Interval(i, i))],
                    ),
                ),
            )
            for i in range(len(instr.operands))
        ]
    axis = split[0]
    chunk = out_dims[axis] // group
    m = IndexingMap.from_shape_dims(
        out_dims, _replaced(out_dims, axis, dim(axis) % chunk + runtime_var(0) * chunk), runtime_vars=rt
    )
    return [OperandMaps(0, (m,))]


@input_to_output_rule("all-to-all", reads=_READS)
def all_to_all_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    reason = _all_to_all_undefined(instr)
    if reason:
        return [(IndexingMap.undefined(reason),) for _ in range(instr.shape.num_outputs)]
    split = instr.attr("dimensions")
    dims = instr.operands[operand_index].shape.dims
    # _all_to_all_undefined checked that the group size is known
    group: int = replica_group_size(instr) if split else len(instr.operands)  # type: ignore[assignment]
    rt = [RuntimeVar(full_interval(group), POSITION)]
    if not split:
        # Operand i of the replica at position j becomes output j of replica i.
        return [
            (
                IndexingMap.from_shape_dims(
                    dims,
                    [dim(k) for k in range(len(dims))],
                    runtime_vars=rt,
                    constraints=[(runtime_var(0), Interval(operand_index, operand_index))],
                ),
            )
            for _ in range(instr.shape.num_outputs)
        ]
    axis = split[0]
    chunk = dims[axis] // group
    offset = dim(axis) - runtime_var(0) * chunk
    m = IndexingMap.from_shape_dims(
        dims,
        _replaced(dims, axis, offset + range_var(0) * chunk),
        range_vars=[full_interval(group)],
        runtime_vars=rt,
        constraints=[(offset, Interval(0, chunk - 1))],
    )
    return [(m,)]


# ---- collective-permute ---------------------------------------------------------------------


def _target_runs(instr: Instruction) -> list[Interval]:
    """Maximal runs of consecutive replica ids that some source_target pair targets."""
    targets = sorted({t for _, t in instr.source_target_pairs()})
    runs: list[list[int]] = []
    for t in targets:
        if runs and runs[-1][1] == t - 1:
            runs[-1][1] = t
        else:
            runs.append([t, t])
    return [Interval(a, b) for a, b in runs]


def _permute_maps(instr: Instruction, dims: Sequence[int]) -> tuple[IndexingMap, ...]:
    runs = _target_runs(instr)
    if not runs:
        return ()
    ids = Interval(0, runs[-1].hi)
    rt = [RuntimeVar(ids, "replica id of this replica")]
    return tuple(
        IndexingMap.from_shape_dims(
            dims, [dim(k) for k in range(len(dims))], runtime_vars=rt, constraints=[(runtime_var(0), run)]
        )
        for run in runs
    )


def _permute_source(instr: Instruction, output_index: int) -> int:
    """Combined form (one output per operand): output i sends operand i. Otherwise operand 0
    (the in-place form's output buffer and offsets carry no data that is read)."""
    return output_index if len(instr.operands) == instr.shape.num_outputs else 0


@output_to_input_rule("collective-permute", reads=_READS)
def collective_permute_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    maps = _permute_maps(instr, instr.shape.leaf(output_index).dims)
    return [
        OperandMaps(i, maps if i == _permute_source(instr, output_index) else ()) for i in range(len(instr.operands))
    ]


@input_to_output_rule("collective-permute", reads=_READS)
def collective_permute_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [
        _permute_maps(instr, instr.operands[operand_index].shape.dims)
        if operand_index == _permute_source(instr, j)
        else ()
        for j in range(instr.shape.num_outputs)
    ]
