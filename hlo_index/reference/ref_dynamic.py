"""Reference read sets of data-dependent addressing: dynamic slices, gather, scatter.

Offsets and indices come from ``runtime_values[operand]``; an operand that is a ``constant``
(literal) or an ``iota`` supplies its own values. XLA semantics: dynamic-slice,
dynamic-update-slice and gather clamp each start index into ``[0, dim - size]``; scatter skips
an update window whose start lies outside that range (ScatterExpander's validity check).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..hlo.model import Instruction
from . import reads

SCALAR_READ = {()}


def operand_values(instr: Instruction, operand_index: int, runtime_values: dict | None) -> np.ndarray:
    """Concrete values of an offsets / indices operand."""
    op = instr.operands[operand_index]
    if runtime_values and operand_index in runtime_values:
        return np.asarray(runtime_values[operand_index], dtype=np.int64).reshape(op.shape.dims)
    values = op.literal_values()
    if values is not None and values.dtype.kind in "biu":
        return values.astype(np.int64)
    if op.opcode == "iota":
        axis = op.attr("iota_dimension", 0)
        return np.indices(op.shape.dims, dtype=np.int64)[axis]
    raise ValueError(f"operand {operand_index} of {instr.name} needs a runtime value")


def _clamp(value: int, hi: int) -> int:
    return int(min(max(value, 0), hi))


def _dynamic_offsets(instr: Instruction, first: int, operand_dims, sizes, runtime_values) -> list[int]:
    return [
        _clamp(operand_values(instr, first + i, runtime_values).item(), operand_dims[i] - sizes[i])
        for i in range(len(operand_dims))
    ]


@reads("dynamic-slice")
def dynamic_slice_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if operand_index > 0:
        return set(SCALAR_READ)
    operand_dims = instr.operands[0].shape.dims
    offsets = _dynamic_offsets(instr, 1, operand_dims, instr.shape.dims, runtime_values)
    return {tuple(o + off for o, off in zip(out_point, offsets))}


@reads("dynamic-update-slice")
def dynamic_update_slice_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if operand_index > 1:
        return set(SCALAR_READ)
    update_dims = instr.operands[1].shape.dims
    offsets = _dynamic_offsets(instr, 2, instr.shape.dims, update_dims, runtime_values)
    inside = tuple(o - off for o, off in zip(out_point, offsets))
    overwritten = all(0 <= c < n for c, n in zip(inside, update_dims))
    if operand_index == 0:
        return set() if overwritten else {tuple(out_point)}
    return {inside} if overwritten else set()


def _index_vectors(
    instr: Instruction, indices_operand: int, index_vector_dim: int, runtime_values: dict | None
) -> np.ndarray:
    """Indices with the index vector moved last (a trailing length-1 vector when it is implicit)."""
    values = operand_values(instr, indices_operand, runtime_values)
    if index_vector_dim == values.ndim:
        return values[..., None]
    return np.moveaxis(values, index_vector_dim, -1)


def _indices_element(batch: tuple, component: int, index_vector_dim: int, indices_rank: int) -> tuple:
    if index_vector_dim == indices_rank:
        return tuple(batch)
    return tuple(batch[:index_vector_dim]) + (component,) + tuple(batch[index_vector_dim:])


def _batch_position(indices_dim: int, index_vector_dim: int) -> int:
    return indices_dim if indices_dim < index_vector_dim else indices_dim - 1


@reads("gather")
def gather_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    offset_dims = instr.attr("offset_dims", ())
    index_vector_dim = instr.attr("index_vector_dim")
    indices_dims = instr.operands[1].shape.dims
    batch = tuple(c for d, c in enumerate(out_point) if d not in offset_dims)
    if operand_index == 1:
        vector_length = 1 if index_vector_dim == len(indices_dims) else indices_dims[index_vector_dim]
        return {_indices_element(batch, k, index_vector_dim, len(indices_dims)) for k in range(vector_length)}

    operand_dims = instr.operands[0].shape.dims
    slice_sizes = instr.attr("slice_sizes")
    collapsed = instr.attr("collapsed_slice_dims", ())
    operand_batching = instr.attr("operand_batching_dims", ())
    indices_batching = instr.attr("start_indices_batching_dims", ())
    vector = _index_vectors(instr, 1, index_vector_dim, runtime_values)[batch]
    start = [0] * len(operand_dims)
    for k, d in enumerate(instr.attr("start_index_map", ())):
        start[d] = _clamp(vector[k], operand_dims[d] - slice_sizes[d])
    for d, j in zip(operand_batching, indices_batching):
        start[d] = batch[_batch_position(j, index_vector_dim)]
    window_dims = [d for d in range(len(operand_dims)) if d not in collapsed and d not in operand_batching]
    index = list(start)
    for d, out_dim in zip(window_dims, offset_dims):
        index[d] += out_point[out_dim]
    return {tuple(index)}


def scatter_landings_at(instr: Instruction, runtime_values: dict | None, out_point: tuple) -> list[tuple]:
    """The update elements that land on operand element ``out_point``, in row-major order. Each
    scatter (an index vector and its window) lands at most one element on a point, so the windows
    are placed, as arrays, not the update elements: a scatter of 8,192 rows of 768 is 8,192 starts."""
    count = (len(instr.operands) - 1) // 2
    operand_dims = instr.operands[0].shape.dims
    update_dims = instr.operands[count + 1].shape.dims
    window_update_dims = instr.attr("update_window_dims", ())
    inserted = instr.attr("inserted_window_dims", ())
    operand_batching = instr.attr("input_batching_dims", ())
    indices_batching = instr.attr("scatter_indices_batching_dims", ())
    index_vector_dim = instr.attr("index_vector_dim")
    to_operand = instr.attr("scatter_dims_to_operand_dims", ())
    vectors = _index_vectors(instr, count, index_vector_dim, runtime_values)

    window_operand_dims = [d for d in range(len(operand_dims)) if d not in inserted and d not in operand_batching]
    window_size = [1] * len(operand_dims)
    for d, u in zip(window_operand_dims, window_update_dims):
        window_size[d] = update_dims[u]
    # every scatter (one index vector, one window) at once: its batch coordinates, index vector, start
    batch_dims = [d for d in range(len(update_dims)) if d not in window_update_dims]
    batch_shape = [update_dims[d] for d in batch_dims]
    if batch_shape:
        batches = np.indices(batch_shape, dtype=np.int64).reshape(len(batch_shape), -1).T
        vector = vectors[tuple(batches.T)].reshape(len(batches), -1)
    else:  # one scatter: one index vector
        batches = np.zeros((1, 0), dtype=np.int64)
        vector = vectors.reshape(1, -1)
    start = np.zeros((len(batches), len(operand_dims)), dtype=np.int64)
    for k, d in enumerate(to_operand):
        start[:, d] = vector[:, k]
    for d, j in zip(operand_batching, indices_batching):
        start[:, d] = batches[:, _batch_position(j, index_vector_dim)]
    dims = np.array(operand_dims, dtype=np.int64)
    size = np.array(window_size, dtype=np.int64)
    point = np.array(out_point, dtype=np.int64)
    # out-of-bounds windows are skipped whole; a window in bounds lands one element on the point
    # when it covers it (a dimension outside the window has size 1: the start is the point's)
    inside = ((start >= 0) & (start <= dims - size)).all(axis=1)
    covers = ((start <= point) & (point < start + size)).all(axis=1)
    landed = []
    for batch, at in zip(batches[inside & covers].tolist(), start[inside & covers].tolist()):
        update = [0] * len(update_dims)
        for u, c in zip(batch_dims, batch):
            update[u] = c
        for d, u in zip(window_operand_dims, window_update_dims):
            update[u] = out_point[d] - at[d]
        landed.append(tuple(update))
    return sorted(landed)


def _current_values_used(instr: Instruction, count: int) -> list[set]:
    """Per combiner output j: the "current value" parameters (< count) it depends on, by a walk
    from the root element back through operands. No combiner (a hand-built instruction): all."""
    comp = instr.called.get("to_apply")
    if comp is None:
        return [set(range(count)) for _ in range(count)]
    root = comp.root
    assert root is not None  # a linked computation has a root
    if count > 1 and root.opcode == "tuple" and len(root.operands) == count:
        heads = list(root.operands)
    else:
        heads = [root] * count
    used = []
    for head in heads:
        found, seen, todo = set(), set(), [head]
        while todo:
            node = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.opcode == "parameter" and node.parameter_number is not None and node.parameter_number < count:
                found.add(node.parameter_number)
            todo.extend(node.operands)
        used.append(found)
    return used


@reads("scatter")
def scatter_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    count = (len(instr.operands) - 1) // 2
    if operand_index == count:
        # Whether any update lands here depends on every index vector.
        return set(itertools.product(*(range(n) for n in instr.operands[count].shape.dims)))
    landed = scatter_landings_at(instr, runtime_values, tuple(out_point))
    if operand_index < count:
        if not landed:
            return {tuple(out_point)} if operand_index == output_index else set()
        # The combiner runs once per landing update, each time on the values the previous run
        # left: the old values reached are the dependencies followed len(landed) times.
        used = _current_values_used(instr, count)
        reached = {output_index}
        for _ in range(len(landed)):
            step = set().union(*(used[k] for k in reached))
            if step == reached:
                break
            reached = step
        return {tuple(out_point)} if operand_index in reached else set()
    return set(landed)
