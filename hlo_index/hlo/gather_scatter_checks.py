"""What XLA's shape inference checks of a gather's and a scatter's dimension numbers
(``ShapeInference::InferGatherShape``, ``InferScatterShape``): every dimension list names dimensions
of the array it indexes, the sorted ones in order, none twice; the index vector has one entry per
start-index dimension; the window's dimensions and the ones collapsed or batched make up the
operand. XLA's parser reads text that breaks them; its verifier rejects it, and the ops' maps would
index dimensions that do not exist.

The two ops have the same five lists under other names (``_GATHER``, ``_SCATTER``), checked by one
function. Each check returns the first problem it finds, said, or None (XLA's messages differ in
wording).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .model import Instruction, Shape
from .shape_inference import is_unknown
from .written_shapes import written_shape_differs


class _List(NamedTuple):
    attribute: str
    indexes: str  # the array whose dimensions it names: operand, indices, result or updates
    ordered: bool


# In each: the window's dimensions, the ones left out of it (collapsed / inserted), the operand's
# batching dimensions (these three make up the operand), the start-index dimensions (one per entry
# of the index vector), the indices' batching dimensions.
_GATHER = (
    _List("offset_dims", "result", True),
    _List("collapsed_slice_dims", "operand", True),
    _List("operand_batching_dims", "operand", True),
    _List("start_index_map", "operand", False),
    _List("start_indices_batching_dims", "indices", False),
)
_SCATTER = (
    _List("update_window_dims", "updates", True),
    _List("inserted_window_dims", "operand", True),
    _List("input_batching_dims", "operand", True),
    _List("scatter_dims_to_operand_dims", "operand", False),
    _List("scatter_indices_batching_dims", "indices", False),
)
_WHOSE = {"operand": "operand's", "indices": "indices'", "result": "result's", "updates": "updates'"}


def gather_dimension_numbers(instr: Instruction) -> str | None:
    if len(instr.operands) != 2:
        return None
    operand, indices = (o.shape for o in instr.operands)
    arrays = {"operand": operand, "indices": indices, "result": instr.shape}
    lists = _lists(instr.attrs, _GATHER)
    problem = _dimension_lists(instr.attrs, _GATHER, lists, arrays)
    if problem:
        return problem
    sizes = tuple(instr.attrs.get("slice_sizes", ()))
    if len(sizes) != operand.rank:
        return f"slice_sizes has {len(sizes)} entries, the operand {operand.rank} dimensions"
    for d, (size, bound) in enumerate(zip(sizes, operand.dims)):
        if not 0 <= size <= bound:
            return f"slice size {size} of dimension {d} is outside [0, {bound}]"
    for d in (*lists[1], *lists[2]):
        if sizes[d] > 1:
            return f"dimension {d} is collapsed or batched, so its slice size must be 0 or 1, not {sizes[d]}"
    # the written result: its batch dimensions and its slices' sizes (slice_sizes={0,0} once
    # gave an f32[32,64] maps that read nothing)
    return _make_up_operand(_GATHER, lists, operand) or written_shape_differs(instr)


def scatter_dimension_numbers(instr: Instruction) -> str | None:
    count = (len(instr.operands) - 1) // 2
    if count < 1 or len(instr.operands) != 2 * count + 1:
        return None
    operand, indices, updates = (instr.operands[k].shape for k in (0, count, count + 1))
    arrays = {"operand": operand, "indices": indices, "updates": updates}
    lists = _lists(instr.attrs, _SCATTER)
    problem = _dimension_lists(instr.attrs, _SCATTER, lists, arrays) or _make_up_operand(_SCATTER, lists, operand)
    if problem:
        return problem
    vector_dim = instr.attrs.get("index_vector_dim", indices.rank)
    scatter_rank = indices.rank - (1 if vector_dim < indices.rank else 0)
    if updates.rank != len(lists[0]) + scatter_rank:
        return (
            f"the updates have {updates.rank} dimensions where {len(lists[0])} window and {scatter_rank} scatter "
            "dimensions make them"
        )
    return written_shape_differs(instr)  # the operands' shapes


def _lists(attrs: dict[str, Any], spec: tuple[_List, ...]) -> list[tuple[int, ...]]:
    return [tuple(attrs.get(entry.attribute, ())) for entry in spec]


def _dimension_lists(
    attrs: dict[str, Any], spec: tuple[_List, ...], lists: list[tuple[int, ...]], arrays: dict[str, Shape]
) -> str | None:
    """The index vector dimension, then each list against the array it indexes, then the start-index
    list against the index vector; None also where an array is a tuple or of unknown shape."""
    if any(s.is_tuple or is_unknown(s) for s in arrays.values()):
        return None
    indices = arrays["indices"]
    vector_dim = attrs.get("index_vector_dim", indices.rank)
    if not (isinstance(vector_dim, int) and 0 <= vector_dim <= indices.rank):
        past = "the indices' dimensions and one past them"
        return f"index_vector_dim {vector_dim} is outside [0, {indices.rank}], {past}"
    for entry, dims in zip(spec, lists):
        problem = _dims(entry.attribute, dims, arrays[entry.indexes].rank, _WHOSE[entry.indexes], entry.ordered)
        if problem:
            return problem
    if vector_dim in lists[4]:
        return f"{spec[4].attribute} names index_vector_dim {vector_dim}"
    size = indices.dims[vector_dim] if vector_dim < indices.rank else 1
    if len(lists[3]) != size:
        return f"{spec[3].attribute} has {len(lists[3])} entries, the index vector {size}"
    return None


def _make_up_operand(spec: tuple[_List, ...], lists: list[tuple[int, ...]], operand: Shape) -> str | None:
    """The window's, the left-out and the batching dimensions make up the operand."""
    if sum(map(len, lists[:3])) == operand.rank:
        return None
    counts = [f"{entry.attribute} ({len(dims)})" for entry, dims in zip(spec[:3], lists[:3])]
    return f"{counts[0]}, {counts[1]} and {counts[2]} must make up the operand's {operand.rank} dimensions"


def _dims(name: str, dims: tuple[int, ...], rank: int, whose: str, ordered: bool) -> str | None:
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
