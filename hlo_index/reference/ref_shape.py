"""Reference read sets of data-movement ops, by running the op in numpy on index-tagged arrays.

Each operand element holds its own row-major linear index (``np.arange``); the op is run with
plain numpy (``np.transpose``, slicing, ``np.flip``, ``np.reshape``...) and the tag found at an
output element is unravelled back to the operand index it came from. ``-1`` marks elements that
come from no operand element (padding). Nothing here knows about indexing maps.

The moving ops run on the tagged array held as one addend per axis (:func:`tag_parts`: addend
``k`` is ``i_k * stride_k`` broadcast over the operand, a view of ``dims[k]`` numbers), since a
tag is the sum of its axes' shares and a transpose, flip, slice or broadcast moves every addend
alike: an operand of 10^9 elements costs its rank, not its size. Concatenation runs on the
slab through the output element (slicing the other axes commutes with it); padding runs axis by
axis (each axis is padded on its own).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from ..context import current, register_table
from ..hlo.model import Instruction, Shape
from . import NO_ELEMENTS, SCALAR_ELEMENT, NoReference, linear_of, points_of, reads, reads_sets, within_reference_budget

NOT_FROM_OPERAND = -1
# A walk asks one op for the read sets of many elements, one at a time: the tagged arrays (pure
# functions of dims and attributes) are kept between calls, read-only, up to this many bytes.
# Per analysis context: the arrays, oldest first, and their bytes under the key ``None``.
_KEPT_BYTES = 1 << 26
_KEPT = register_table("reference.ref_shape.tagged_arrays", OrderedDict)
_PARTS = register_table("reference.ref_shape.tag_parts")  # dims -> tag_parts(dims): sum(dims) numbers each


def _kept_array(key: tuple, build: Callable[[], np.ndarray]) -> np.ndarray:
    kept = current().tables[_KEPT]
    hit = kept.get(key)
    if hit is not None:
        kept.move_to_end(key)
        return hit
    value = build()
    value.setflags(write=False)
    if value.nbytes <= _KEPT_BYTES:
        kept[key] = value
        total = kept.pop(None, 0) + value.nbytes
        while total > _KEPT_BYTES:
            _, old = kept.popitem(last=False)
            total -= old.nbytes
        kept[None] = total
        kept.move_to_end(None, last=False)
    return value


def tagged(dims) -> np.ndarray:
    """An array of ``dims`` whose every element is its own row-major linear index (read-only)."""
    dims = tuple(dims)
    return _kept_array(("tagged", dims), lambda: _arange(dims))


def _arange(dims: tuple[int, ...]) -> np.ndarray:
    size = int(np.prod(dims, dtype=np.int64))
    within_reference_budget(size, f"the {size} elements of an operand of {list(dims)}")
    return np.arange(size, dtype=np.int64).reshape(dims)


def tag_parts(dims) -> list[np.ndarray]:
    """``tagged(dims)`` as one read-only addend per axis (their sum is the tagged array): addend
    ``k`` holds ``i_k * stride_k``, a broadcast view of ``dims[k]`` numbers."""
    dims = tuple(int(d) for d in dims)
    kept = current().tables[_PARTS]
    parts = kept.get(dims)
    if parts is None:
        parts = kept[dims] = _tag_parts(dims)
    return parts


def _tag_parts(dims: tuple[int, ...]) -> list[np.ndarray]:
    parts, stride = [], 1
    for k in reversed(range(len(dims))):
        axis = [1] * len(dims)
        axis[k] = dims[k]
        parts.append(np.broadcast_to((np.arange(dims[k], dtype=np.int64) * stride).reshape(axis), dims))
        stride *= dims[k]
    return parts[::-1]


def _tag_at(parts: list[np.ndarray], point) -> int:
    """The tag the moved addends sum to at ``point``."""
    point = tuple(point)
    return sum(int(part[point]) for part in parts)


def _untag(tag: int, dims) -> set[tuple[int, ...]]:
    if tag == NOT_FROM_OPERAND:
        return set()
    return {tuple(int(i) for i in np.unravel_index(int(tag), tuple(dims)))} if dims else {()}


def _operand_dims(instr: Instruction, operand_index: int) -> tuple[int, ...]:
    return instr.operands[operand_index].shape.dims


def _moved_tag(instr: Instruction, move: Callable[[np.ndarray], np.ndarray], out_point) -> set[tuple[int, ...]]:
    """The operand element at ``out_point`` of ``move`` (a transpose, flip, slice, broadcast:
    it moves elements, so it moves each addend of the tags alike) run on operand 0's tags."""
    dims = _operand_dims(instr, 0)
    return _untag(_tag_at([move(part) for part in tag_parts(dims)], out_point), dims)


def _moved_tags(instr: Instruction, move: Callable[[np.ndarray], np.ndarray], out_linear: np.ndarray) -> np.ndarray:
    """:func:`_moved_tag` of every element of ``out_linear`` at once, as operand linear indices
    (a tag is one): the moved addends read at all of them by one fancy index each."""
    dims = _operand_dims(instr, 0)
    if not len(out_linear):
        return NO_ELEMENTS
    out_dims = instr.shape.dims
    if not out_dims:
        return linear_of(_moved_tag(instr, move, ()), dims)
    where = np.unravel_index(out_linear, out_dims)
    if not dims:
        return np.zeros(len(out_linear), np.int64)
    return np.asarray(sum(move(part)[where] for part in tag_parts(dims)))


def _broadcast_move(instr: Instruction) -> Callable[[np.ndarray], np.ndarray]:
    dims = tuple(instr.attr("dimensions", ()))
    out_dims = instr.shape.dims
    # Put operand axes in output order, then insert size-1 axes for the new dims and broadcast.
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    expanded_shape = [1] * len(out_dims)
    for i in order:
        expanded_shape[dims[i]] = out_dims[dims[i]]

    def broadcast(operand: np.ndarray) -> np.ndarray:
        moved = np.transpose(operand, order) if dims else operand
        return np.broadcast_to(moved.reshape(expanded_shape), out_dims)

    return broadcast


def _transpose_move(instr: Instruction) -> Callable[[np.ndarray], np.ndarray]:
    order = tuple(instr.attr("dimensions"))
    return lambda operand: np.transpose(operand, order)


def _reverse_move(instr: Instruction) -> Callable[[np.ndarray], np.ndarray]:
    axes = tuple(instr.attr("dimensions", ()))
    return lambda operand: np.flip(operand, axis=axes)


def _slice_move(instr: Instruction) -> Callable[[np.ndarray], np.ndarray]:
    cut = tuple(slice(s.start, s.limit, s.stride) for s in instr.attr("slice"))
    return lambda operand: operand[cut]


_MOVES = {"broadcast": _broadcast_move, "transpose": _transpose_move, "reverse": _reverse_move, "slice": _slice_move}


@reads(*_MOVES)
def moving_reads(instr, output_index, out_point, operand_index, runtime_values):
    return _moved_tag(instr, _MOVES[instr.opcode](instr), out_point)


@reads_sets("transpose", "reverse", "slice")
def moving_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``moving_reads`` over ``out_linear``."""
    return _moved_tags(instr, _MOVES[instr.opcode](instr), out_linear)


@reads_sets("broadcast")
def broadcast_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``moving_reads`` over ``out_linear`` of a broadcast: operand axis ``i`` is
    output axis ``dimensions[i]``, so each output element reads the operand element whose
    coordinates are its own on those axes (read off its row-major index by each axis's stride),
    one element per output element, in their order. A run of operand axes that are consecutive
    output axes in order is one mixed-radix digit group: read off at once."""
    out_dims, dims = instr.shape.dims, _operand_dims(instr, 0)
    if not len(out_linear) or not out_dims or not dims:
        return _moved_tags(instr, _broadcast_move(instr), out_linear)
    axes = [int(a) for a in instr.attr("dimensions", ())]
    out_strides = [1] * len(out_dims)
    for a in range(len(out_dims) - 2, -1, -1):
        out_strides[a] = out_strides[a + 1] * out_dims[a + 1]
    found = None
    stride = 1  # the operand stride of the group being read
    i = len(axes)
    while i > 0:
        j = i - 1  # the group: operand axes j..i-1, output axes axes[j]..axes[i-1], consecutive
        while j > 0 and axes[j - 1] == axes[j] - 1:
            j -= 1
        low, high = axes[j], axes[i - 1]
        span = 1
        for a in range(low, high + 1):
            span *= out_dims[a]
        digits = out_linear // out_strides[high] if out_strides[high] != 1 else out_linear
        if low:  # below the leading axis the digit group is bounded by its span
            digits = digits % span
        digits = digits * stride if stride != 1 else digits
        found = digits if found is None else found + digits
        stride *= span
        i = j
    return found


def padded_tags(operand_dims, padding) -> np.ndarray:
    """The pad op on a tagged operand: interior holes and edges hold NOT_FROM_OPERAND (read-only)."""
    key = ("pad", tuple(operand_dims), tuple((p.low, p.high, p.interior) for p in padding))
    return _kept_array(key, lambda: _padded(operand_dims, padding))


def _padded(operand_dims, padding) -> np.ndarray:
    result = tagged(operand_dims)
    for axis, (n, p) in enumerate(zip(operand_dims, padding)):
        step = p.interior + 1
        dilated = n + (n - 1) * p.interior if n > 0 else 0
        low, high = max(p.low, 0), max(p.high, 0)
        shape = list(result.shape)
        shape[axis] = low + dilated + high
        grown = np.full(shape, NOT_FROM_OPERAND, dtype=np.int64)
        index = [slice(None)] * len(shape)
        index[axis] = slice(low, low + dilated, step)
        grown[tuple(index)] = result
        # Negative padding removes elements from the edges.
        index[axis] = slice(max(-p.low, 0), shape[axis] - max(-p.high, 0))
        result = grown[tuple(index)]
    return result


@reads("pad")
def pad_reads(instr, output_index, out_point, operand_index, runtime_values):
    # Each axis is padded on its own: the operand coordinate (or a hole) along each axis is the
    # pad op run on that axis's tagged line.
    dims = _operand_dims(instr, 0)
    coords = [int(padded_tags((n,), (p,))[x]) for n, p, x in zip(dims, instr.attr("padding"), out_point)]
    from_operand = NOT_FROM_OPERAND not in coords
    if operand_index == 0:
        return {tuple(coords)} if from_operand else set()
    return set() if from_operand else {()}


@reads_sets("pad")
def pad_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``pad_reads`` over ``out_linear``: each axis's line read at every element."""
    if not len(out_linear):
        return NO_ELEMENTS
    dims = _operand_dims(instr, 0)
    if not dims:
        return linear_of(pad_reads(instr, output_index, (), operand_index, None), ())
    at = np.unravel_index(out_linear, instr.shape.dims)
    coords = [padded_tags((n,), (p,))[at[k]] for k, (n, p) in enumerate(zip(dims, instr.attr("padding")))]
    from_operand = np.logical_and.reduce([c != NOT_FROM_OPERAND for c in coords])
    if operand_index == 0:
        return np.ravel_multi_index(tuple(c[from_operand] for c in coords), dims)
    return NO_ELEMENTS if from_operand.all() else SCALAR_ELEMENT


@reads("concatenate")
def concatenate_reads(instr, output_index, out_point, operand_index, runtime_values):
    axis = instr.attr("dimensions")[0]
    # the slab through out_point along the axis: the other axes sliced first (it commutes)
    cut = tuple(slice(None) if j == axis else slice(x, x + 1) for j, x in enumerate(out_point))
    parts, base = [], 0
    for op in instr.operands:
        parts.append(sum(part[cut] for part in tag_parts(op.shape.dims)) + base)
        base += op.shape.num_elements
    out = np.concatenate(parts, axis=axis)
    tag = int(out[tuple(x if j == axis else 0 for j, x in enumerate(out_point))])
    first = sum(op.shape.num_elements for op in instr.operands[:operand_index])
    if not first <= tag < first + instr.operands[operand_index].shape.num_elements:
        return set()
    return _untag(tag - first, _operand_dims(instr, operand_index))


@reads_sets("concatenate")
def concatenate_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``concatenate_reads`` over ``out_linear``: the elements whose coordinate
    along the axis falls in the operand's stretch of it, shifted to the operand's start."""
    axis = instr.attr("dimensions")[0]
    start = sum(op.shape.dims[axis] for op in instr.operands[:operand_index])
    dims = _operand_dims(instr, operand_index)
    out_dims = instr.shape.dims
    inner = 1
    for n in out_dims[axis + 1 :]:
        inner *= n
    along = (out_linear // inner) % out_dims[axis]  # first the axis alone: most operands hold none
    mine = (along >= start) & (along < start + dims[axis])
    if not mine.any():
        return NO_ELEMENTS
    coords = np.unravel_index(out_linear[mine], out_dims)
    moved = tuple(c - start if k == axis else c for k, c in enumerate(coords))
    return np.ravel_multi_index(moved, dims)


def _union_of(per_element, instr, output_index, out_linear, operand_index) -> np.ndarray:
    """``per_element``'s read sets of every element of ``out_linear``, as one linear array."""
    found = set().union(
        *(per_element(instr, output_index, p, operand_index, None) for p in points_of(out_linear, instr.shape.dims))
    )
    return linear_of(found, _operand_dims(instr, operand_index))


def tags_in_order(dims, order, positions) -> np.ndarray:
    """``np.transpose(tagged(dims), order).reshape(-1)[positions]`` without making the array:
    each position unravelled over the transposed dims, put back in the operand's own axis order
    and raveled row-major (the tag that array holds there). A big operand costs the positions
    asked for, not its size, per element looked up."""
    positions = np.asarray(positions, dtype=np.int64)
    if not len(dims):
        return np.zeros(len(positions), dtype=np.int64)
    coords = np.unravel_index(positions, tuple(dims[d] for d in order))
    logical: list[np.ndarray] = [None] * len(dims)  # type: ignore[list-item]  # every dim is filled below
    for i, d in enumerate(order):
        logical[d] = coords[i]
    return np.ravel_multi_index(tuple(logical), tuple(dims))


@reads("reshape")
def reshape_reads(instr, output_index, out_point, operand_index, runtime_values):
    # np.reshape keeps the row-major order: tagged(operand) reshaped holds at out_point the tag
    # equal to out_point's own row-major position (read there, not on a materialised array)
    out_dims = instr.shape.dims
    tag = int(np.ravel_multi_index(tuple(out_point), out_dims)) if out_dims else 0
    return _untag(tag, _operand_dims(instr, 0))


@reads_sets("reshape")
def reshape_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``reshape_reads`` over ``out_linear``: an element's tag is its own row-major
    position, which is the operand element's linear index."""
    out_dims, dims = instr.shape.dims, _operand_dims(instr, 0)
    if not len(out_linear) or not out_dims:
        return _union_of(reshape_reads, instr, output_index, out_linear, operand_index)
    if instr.operands[0].shape.num_elements != instr.shape.num_elements:
        np.unravel_index(out_linear, dims)  # a tag past the operand fails as it does per element
    return out_linear


def _major_to_minor(shape: Shape) -> tuple[int, ...]:
    if shape.layout is None:
        return tuple(range(shape.rank))
    return tuple(reversed(shape.layout.minor_to_major))


def _tiled(shape: Shape) -> bool:
    return shape.layout is not None and bool(shape.layout.tiles)


def _bitcast_shapes(instr: Instruction) -> tuple[Shape, Shape]:
    """(operand shape, output shape) of a bitcast the reference models, else NoReference."""
    src, dst = instr.operands[0].shape, instr.shape
    src_bits, dst_bits = src.element_bits, dst.element_bits
    if _tiled(src) or _tiled(dst):
        # one buffer with its tile padding: the memory images say which slot holds what
        if not src_bits or src_bits != dst_bits:
            raise NoReference("bitcast of a tiled layout between element types of different sizes")
        return src, dst
    if not src_bits or not dst_bits or src.num_elements * src_bits != dst.num_elements * dst_bits:
        raise NoReference("bitcast between buffers of different bit sizes")
    return src, dst


# A tiled bitcast's memory images are built whole: operands up to this many slots (padding included).
_TILED_BITCAST_SLOTS = 1 << 22


def _tiled_bitcast_tags(src: Shape, dst: Shape, out_linear: np.ndarray) -> np.ndarray:
    """The operand element (row-major number) in the memory slot of each output element, or
    ``NOT_FROM_OPERAND``: both layouts' memory images from ``ref_layout`` (the tiles applied by
    moving arrays, as the layout text says), one buffer read as two shapes of one element size."""
    from .ref_layout import PADDING, physical_memory, reference_offsets

    def image(shape: Shape) -> np.ndarray:
        if shape.num_elements > _TILED_BITCAST_SLOTS:
            raise NoReference(f"tiled bitcast of {shape.num_elements} elements: too large for the reference")
        return _kept_array(("memory", shape), lambda: physical_memory(shape))

    src_memory, dst_memory = image(src), image(dst)
    if len(dst_memory) > _TILED_BITCAST_SLOTS or len(src_memory) > _TILED_BITCAST_SLOTS:
        raise NoReference("tiled bitcast: memory image too large for the reference")

    slot = _kept_array(("slots", dst), lambda: reference_offsets(dst).reshape(-1))[out_linear]
    # a slot on the operand's tile padding, or past its memory, holds no operand element
    inside = slot < len(src_memory)
    tags = np.full(len(slot), NOT_FROM_OPERAND, dtype=np.int64)
    tags[inside] = src_memory[slot[inside]]
    tags[tags == PADDING] = NOT_FROM_OPERAND
    return tags


@reads_sets("bitcast")
def bitcast_set_reads(instr, output_index, out_linear, operand_index):
    """The union of ``bitcast_reads`` over ``out_linear``: every element's memory positions
    looked up at once."""
    src, dst = _bitcast_shapes(instr)
    if not len(out_linear) or not dst.dims:
        return _union_of(bitcast_reads, instr, output_index, out_linear, operand_index)
    if _tiled(src) or _tiled(dst):
        tags = _tiled_bitcast_tags(src, dst, np.asarray(out_linear, dtype=np.int64))
        return tags[tags != NOT_FROM_OPERAND]
    dst_order, src_order = _major_to_minor(dst), _major_to_minor(src)
    if dst_order == tuple(range(len(dst_order))):  # row-major: memory position = linear index
        j = out_linear
    else:
        at = np.unravel_index(out_linear, dst.dims)
        j = np.ravel_multi_index(tuple(at[d] for d in dst_order), tuple(dst.dims[d] for d in dst_order))
    src_bits, dst_bits = src.element_bits, dst.element_bits
    if src_bits == dst_bits:  # one element each, at the same memory position
        positions = j
    else:
        first, last = (j * dst_bits) // src_bits, ((j + 1) * dst_bits - 1) // src_bits
        spread = int((last - first).max())
        positions = np.concatenate([(first + k)[first + k <= last] for k in range(spread + 1)])
    if src_order == tuple(range(len(src_order))):  # row-major memory holds each tag at its own position
        return positions
    return tags_in_order(src.dims, src_order, positions)


@reads("bitcast")
def bitcast_reads(instr, output_index, out_point, operand_index, runtime_values):
    src, dst = _bitcast_shapes(instr)
    if _tiled(src) or _tiled(dst):
        linear = int(np.ravel_multi_index(tuple(out_point), dst.dims)) if dst.dims else 0
        return _untag(int(_tiled_bitcast_tags(src, dst, np.array([linear], dtype=np.int64))[0]), src.dims)
    src_bits, dst_bits = src.element_bits, dst.element_bits
    # Memory holds the operand's tags in its physical (major-to-minor) order. The output element
    # at physical position j covers bits [j * dst_bits, (j + 1) * dst_bits) of that memory.
    # (memory = np.transpose(tagged(src.dims), major-to-minor).reshape(-1), read where needed)
    dst_order = _major_to_minor(dst)
    j = (
        int(np.ravel_multi_index([out_point[d] for d in dst_order], [dst.dims[d] for d in dst_order]))
        if dst.dims
        else 0
    )
    first, last = (j * dst_bits) // src_bits, ((j + 1) * dst_bits - 1) // src_bits
    found = set()
    for tag in tags_in_order(src.dims, _major_to_minor(src), np.arange(first, last + 1)):
        found |= _untag(int(tag), src.dims)
    return found


@reads("bitcast-convert")
def bitcast_convert_reads(instr, output_index, out_point, operand_index, runtime_values):
    src, dst = instr.operands[0].shape, instr.shape
    if src.element_bits == dst.element_bits:
        return {tuple(out_point)}
    if src.element_bits > dst.element_bits:
        # Each wide element splits into a trailing dim of narrow ones.
        return {tuple(out_point[:-1])}
    ratio = dst.element_bits // src.element_bits
    return {tuple(out_point) + (j,) for j in range(ratio)}


@reads("get-tuple-element")
def get_tuple_element_reads(instr, output_index, out_point, operand_index, runtime_values):
    return {tuple(out_point)}


@reads("tuple")
def tuple_reads(instr, output_index, out_point, operand_index, runtime_values):
    return {tuple(out_point)} if operand_index == output_index else set()


@reads("opt-barrier")
def opt_barrier_reads(instr, output_index, out_point, operand_index, runtime_values):
    # The operand (a tuple, or one array) is passed through unchanged; the read set is in the
    # operand's element ``output_index``.
    return {tuple(out_point)}


@reads("copy-start")
def copy_start_reads(instr, output_index, out_point, operand_index, runtime_values):
    # Outputs: (destination, source alias, u32 context); the context carries no operand data.
    return {tuple(out_point)} if output_index in (0, 1) else set()


@reads("copy-done")
def copy_done_reads(instr, output_index, out_point, operand_index, runtime_values):
    return {tuple(out_point)}  # element 0 (the destination) of the copy-start tuple
