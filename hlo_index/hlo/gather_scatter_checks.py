"""What XLA's shape inference checks of a gather's and a scatter's dimension numbers
(``ShapeInference::InferGatherShape``, ``InferScatterShape``): every dimension list names dimensions
of the array it indexes, the sorted ones in order, none twice; the index vector has one entry per
start-index dimension; the window's dimensions and the ones collapsed or batched make up the
operand. XLA's parser reads text that breaks them; its verifier rejects it, and the ops' maps would
index dimensions that do not exist.

Each check returns the first problem it finds, said, or None (XLA's messages differ in wording).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import Instruction, Shape
from .shape_inference import is_unknown


def gather_dimension_numbers(instr: Instruction) -> str | None:
    if len(instr.operands) != 2:
        return None
    operand, indices = (o.shape for o in instr.operands)
    result = instr.shape
    if not _arrays(operand, indices, result):
        return None
    attrs = instr.attrs
    offset = tuple(attrs.get("offset_dims", ()))
    collapsed = tuple(attrs.get("collapsed_slice_dims", ()))
    batching = tuple(attrs.get("operand_batching_dims", ()))
    starts = tuple(attrs.get("start_index_map", ()))
    sizes = tuple(attrs.get("slice_sizes", ()))
    problem = _index_vector(attrs, indices)
    if problem:
        return problem
    problem = (
        _dims("offset_dims", offset, result.rank, "result's", ordered=True)
        or _dims("collapsed_slice_dims", collapsed, operand.rank, "operand's", ordered=True)
        or _dims("operand_batching_dims", batching, operand.rank, "operand's", ordered=True)
        or _dims("start_index_map", starts, operand.rank, "operand's")
        or _dims("start_indices_batching_dims", attrs.get("start_indices_batching_dims", ()), indices.rank, "indices'")
        or _vector_entries("start_index_map", starts, attrs, indices)
    )
    if problem:
        return problem
    if len(sizes) != operand.rank:
        return f"slice_sizes has {len(sizes)} entries, the operand {operand.rank} dimensions"
    for d, (size, bound) in enumerate(zip(sizes, operand.dims)):
        if not 0 <= size <= bound:
            return f"slice size {size} of dimension {d} is outside [0, {bound}]"
    for d in (*collapsed, *batching):
        if sizes[d] > 1:
            return f"dimension {d} is collapsed or batched, so its slice size must be 0 or 1, not {sizes[d]}"
    if len(offset) + len(collapsed) + len(batching) != operand.rank:
        return (
            f"offset_dims ({len(offset)}), collapsed_slice_dims ({len(collapsed)}) and operand_batching_dims "
            f"({len(batching)}) must make up the operand's {operand.rank} dimensions"
        )
    return None


def scatter_dimension_numbers(instr: Instruction) -> str | None:
    count = (len(instr.operands) - 1) // 2
    if count < 1 or len(instr.operands) != 2 * count + 1:
        return None
    operand, indices, updates = (instr.operands[k].shape for k in (0, count, count + 1))
    if not _arrays(operand, indices, updates):
        return None
    attrs = instr.attrs
    window = tuple(attrs.get("update_window_dims", ()))
    inserted = tuple(attrs.get("inserted_window_dims", ()))
    batching = tuple(attrs.get("input_batching_dims", ()))
    to_operand = tuple(attrs.get("scatter_dims_to_operand_dims", ()))
    indices_batching = tuple(attrs.get("scatter_indices_batching_dims", ()))
    problem = _index_vector(attrs, indices)
    if problem:
        return problem
    problem = (
        _dims("update_window_dims", window, updates.rank, "updates'", ordered=True)
        or _dims("inserted_window_dims", inserted, operand.rank, "operand's", ordered=True)
        or _dims("input_batching_dims", batching, operand.rank, "operand's", ordered=True)
        or _dims("scatter_dims_to_operand_dims", to_operand, operand.rank, "operand's")
        or _dims("scatter_indices_batching_dims", indices_batching, indices.rank, "indices'")
        or _vector_entries("scatter_dims_to_operand_dims", to_operand, attrs, indices)
    )
    if problem:
        return problem
    if len(window) + len(inserted) + len(batching) != operand.rank:
        return (
            f"update_window_dims ({len(window)}), inserted_window_dims ({len(inserted)}) and input_batching_dims "
            f"({len(batching)}) must make up the operand's {operand.rank} dimensions"
        )
    vector_dim = attrs.get("index_vector_dim", indices.rank)
    scatter_rank = indices.rank - (1 if vector_dim < indices.rank else 0)
    if updates.rank != len(window) + scatter_rank:
        return (
            f"the updates have {updates.rank} dimensions where {len(window)} window and {scatter_rank} scatter "
            "dimensions make them"
        )
    return None


def _arrays(*shapes: Shape) -> bool:
    return not any(s.is_tuple or is_unknown(s) for s in shapes)


def _index_vector(attrs: dict[str, Any], indices: Shape) -> str | None:
    vector_dim = attrs.get("index_vector_dim", indices.rank)
    if isinstance(vector_dim, int) and 0 <= vector_dim <= indices.rank:
        return None
    return f"index_vector_dim {vector_dim} is outside [0, {indices.rank}], the indices' dimensions and one past them"


def _dims(name: str, dims: Sequence[int], rank: int, whose: str, ordered: bool = False) -> str | None:
    """Each of ``dims`` one of the ``rank`` dimensions (of ``whose``: "operand's"), none twice, in
    order if ``ordered``."""
    for d in dims:
        if not 0 <= d < rank:
            return f"{name} {{{','.join(map(str, dims))}}}: dimension {d} is outside the {whose} {rank} dimensions"
    if len(set(dims)) != len(dims):
        return f"{name} {{{','.join(map(str, dims))}}} names a dimension twice"
    if ordered and list(dims) != sorted(dims):
        return f"{name} {{{','.join(map(str, dims))}}} must be sorted"
    return None


def _vector_entries(name: str, dims: Sequence[int], attrs: dict[str, Any], indices: Shape) -> str | None:
    """One entry of ``dims`` per entry of the index vector (and the batching dims not the vector's)."""
    vector_dim = attrs.get("index_vector_dim", indices.rank)
    for key in ("start_indices_batching_dims", "scatter_indices_batching_dims"):
        if vector_dim in attrs.get(key, ()):
            return f"{key} names index_vector_dim {vector_dim}"
    size = indices.dims[vector_dim] if vector_dim < indices.rank else 1
    if len(dims) != size:
        return f"{name} has {len(dims)} entries, the index vector {size}"
    return None
