"""Reference read sets of collectives, by simulating every replica of one group in numpy.

Per-replica view: ``out_point`` is an element of the output on ONE replica, whose position in
its replica group is ``runtime_values["replica"]`` (default 0) — for collective-permute the
replica id itself. The returned indices are operand indices; the operands of all replicas share
one index space, so an element of *some* replica's operand is reported by its index alone
(which replica it lives on is part of each op's documented semantics).
Replica ``p``'s operand is tagged ``p * size + linear index`` so one run tells both apart.
"""

from __future__ import annotations

import numpy as np

from . import NoReference, reads, within_reference_budget

REPLICA_KEY = "replica"


def group_size(instr) -> int | None:
    """Size of one replica group, from the instruction's typed replica groups (the first that
    lists any replica); ``{}`` means all of the module's ``replica_count`` replicas, when known."""
    for group in instr.replica_groups() or ():
        if group:
            return len(group)
    module = instr.computation.module if instr.computation is not None else None
    count = module.attrs.get("replica_count") if module is not None else None
    return int(count) if count else None


def _replica(runtime_values) -> int:
    return int((runtime_values or {}).get(REPLICA_KEY, 0))


def _replicas_tags(dims, n) -> list[np.ndarray]:
    size = int(np.prod(dims, dtype=np.int64))
    within_reference_budget(size * n, f"{n} replicas of {size} elements")
    base = np.arange(size, dtype=np.int64).reshape(dims)
    return [base + p * size for p in range(n)]


def _indices(tags, dims) -> set[tuple[int, ...]]:
    size = int(np.prod(dims, dtype=np.int64))
    return {tuple(int(i) for i in np.unravel_index(int(t) % size, tuple(dims))) for t in tags}


@reads("all-reduce", "all-reduce-start")
def all_reduce_reads(instr, output_index, out_point, operand_index, runtime_values):
    # Output i is the sum over replicas of operand i: the same element of every replica's operand.
    return {tuple(out_point)} if operand_index == output_index else set()


def _gathered(dims, out_dims, axis, out_point) -> set[tuple[int, ...]]:
    n = out_dims[axis] // dims[axis]
    gathered = np.concatenate(_replicas_tags(dims, n), axis=axis)
    return _indices([gathered[tuple(out_point)]], dims)


@reads("all-gather")
def all_gather_reads(instr, output_index, out_point, operand_index, runtime_values):
    if operand_index != output_index:
        return set()
    return _gathered(
        instr.operands[operand_index].shape.dims,
        instr.shape.leaf(output_index).dims,
        instr.attr("dimensions")[0],
        out_point,
    )


@reads("all-gather-start", "collective-permute-start")
def async_start_reads(instr, output_index, out_point, operand_index, runtime_values):
    # Outputs: (operand alias, result, u32 context...).
    if output_index == 0:
        return {tuple(out_point)}
    if output_index >= 2:
        return set()
    if instr.opcode == "all-gather-start":
        return _gathered(instr.operands[0].shape.dims, instr.shape.leaf(1).dims, instr.attr("dimensions")[0], out_point)
    return _permuted(instr, out_point, runtime_values)


@reads("all-gather-done", "collective-permute-done", "collective-broadcast", "all-reduce-done")
def forwarding_reads(instr, output_index, out_point, operand_index, runtime_values):
    # done: the start's result unchanged (element 1 of the start tuple for all-gather and
    # collective-permute); collective-broadcast: the root replica's operand i.
    if instr.opcode == "collective-broadcast" and operand_index != output_index:
        return set()
    return {tuple(out_point)}


@reads("reduce-scatter")
def reduce_scatter_reads(instr, output_index, out_point, operand_index, runtime_values):
    if operand_index != output_index:
        return set()
    axis = instr.attr("dimensions")[0]
    dims = instr.operands[operand_index].shape.dims
    local = instr.shape.leaf(output_index).dims[axis]
    r = _replica(runtime_values)
    # Every replica's operand is cut into group-size blocks along axis; replica r keeps block r
    # of the elementwise sum, i.e. reads block r of every replica's operand.
    tags = [
        np.take(t, range(r * local, (r + 1) * local), axis=axis)[tuple(out_point)]
        for t in _replicas_tags(dims, dims[axis] // local)
    ]
    return _indices(tags, dims)


@reads("all-to-all")
def all_to_all_reads(instr, output_index, out_point, operand_index, runtime_values):
    split = instr.attr("dimensions")
    if not split:
        # Tuple form: replica p sends its operand r to replica r, which returns it as output p.
        return {tuple(out_point)} if operand_index == _replica(runtime_values) else set()
    axis = split[0]
    n = group_size(instr)
    if n is None:
        raise NoReference("all-to-all without replica_groups or replica_count")
    dims = instr.operands[0].shape.dims
    chunk = dims[axis] // n
    r = _replica(runtime_values)
    # Replica p sends its chunk r to replica r, which concatenates the received chunks by p.
    received = [np.take(t, range(r * chunk, (r + 1) * chunk), axis=axis) for t in _replicas_tags(dims, n)]
    out = np.concatenate(received, axis=axis)
    return _indices([out[tuple(out_point)]], dims)


@reads("collective-permute")
def collective_permute_reads(instr, output_index, out_point, operand_index, runtime_values):
    # Replica t receives replica s's operand for (s, t) in the pairs, and zeros if no pair targets it.
    source = output_index if len(instr.operands) == instr.shape.num_outputs else 0
    if operand_index != source:
        return set()
    return _permuted(instr, out_point, runtime_values)


def _permuted(instr, out_point, runtime_values) -> set[tuple[int, ...]]:
    r = _replica(runtime_values)
    targets = {t for _, t in instr.source_target_pairs()}
    return {tuple(out_point)} if r in targets else set()
