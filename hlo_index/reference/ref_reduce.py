"""Reference read sets of reductions and windowed ops, by direct definition.

reduce: an output element combines every input element whose kept coordinates equal its own.
reduce-window: an output element combines the window over the base-dilated, padded input;
holes (base dilation) and padding hold the init value and read no input element.
select-and-scatter: each source element selects one element of its window of ``operand``
(data-dependent, so every window element is read) and adds itself at that position; an output
element therefore may read every source element whose window covers it and, through the
selection, every operand element of those windows. Init values are scalars, read by every
output element.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..hlo.model import Instruction, WindowDim
from . import NO_ELEMENTS, SCALAR_ELEMENT, distinct, reads, reads_sets

SCALAR_READ = {()}


def window_of(instr: Instruction, rank: int) -> tuple[WindowDim, ...]:
    window = instr.attr("window")
    if not window:
        return tuple(WindowDim(1) for _ in range(rank))
    return tuple(window)


def window_elements(out_coord: int, wd: WindowDim, in_size: int) -> Sequence[int]:
    """Input coordinates under window position ``out_coord`` along one axis (padding and holes skipped)."""
    # Position in the conceptual array: input dilated by base_dilation, then padded.
    start, step = out_coord * wd.stride - wd.pad_low, wd.window_dilation
    if wd.base_dilation == 1:
        # the positions start + k * step (0 <= k < size) inside [0, in_size): k from
        # ceil(-start / step) to floor((in_size - 1 - start) / step)
        first, last = max(0, -(start // step)), min(wd.size - 1, (in_size - 1 - start) // step)
        return range(start + first * step, start + last * step + 1, step) if first <= last else range(0)
    found = []
    for k in range(wd.size):
        unpadded = start + k * step
        if unpadded % wd.base_dilation != 0:
            continue
        source = unpadded // wd.base_dilation
        if 0 <= source < in_size:
            found.append(source)
    return found


def window_read_set(out_point: tuple, window: tuple[WindowDim, ...], in_dims: tuple[int, ...]) -> set:
    per_axis = [list(window_elements(o, wd, n)) for o, wd, n in zip(out_point, window, in_dims)]
    return set(itertools.product(*per_axis))


def _arity(instr: Instruction) -> int:
    return len(instr.operands) // 2


@reads("reduce")
def reduce_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if operand_index >= _arity(instr):
        return set(SCALAR_READ)
    in_dims = instr.operands[operand_index].shape.dims
    reduced = set(instr.attr("dimensions", ()))
    kept_coords = iter(out_point)
    axes = [range(n) if i in reduced else (next(kept_coords),) for i, n in enumerate(in_dims)]
    return set(itertools.product(*axes))


@reads_sets("reduce")
def reduce_set_reads(instr: Instruction, output_index: int, out_linear: np.ndarray, operand_index: int) -> np.ndarray:
    """The union of ``reduce_reads`` over ``out_linear``: per output element, its kept coordinates'
    share of the input's linear index plus every combination of the reduced coordinates'."""
    if operand_index >= _arity(instr):
        return SCALAR_ELEMENT if len(out_linear) else NO_ELEMENTS
    in_dims = instr.operands[operand_index].shape.dims
    reduced = set(instr.attr("dimensions", ()))
    strides = row_major_strides(in_dims)
    kept = [k for k in range(len(in_dims)) if k not in reduced]
    out_dims = instr.shape.leaf(output_index).dims
    coords = np.unravel_index(out_linear, out_dims) if out_dims else ()
    base = sum((c * strides[k] for c, k in zip(coords, kept)), np.zeros(len(out_linear), np.int64))
    offsets = np.zeros(1, np.int64)
    for k in sorted(reduced & set(range(len(in_dims)))):
        offsets = (offsets[:, None] + np.arange(in_dims[k], dtype=np.int64) * strides[k]).reshape(-1)
    return (base[:, None] + offsets[None, :]).reshape(-1)


def row_major_strides(dims) -> list[int]:
    """The step of each axis in a row-major linear index over ``dims``."""
    strides, step = [], 1
    for n in reversed(dims):
        strides.append(step)
        step *= n
    return strides[::-1]


@reads("reduce-window")
def reduce_window_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if operand_index >= _arity(instr):
        return set(SCALAR_READ)
    in_dims = instr.operands[operand_index].shape.dims
    return window_read_set(out_point, window_of(instr, len(in_dims)), in_dims)


@reads_sets("reduce-window")
def reduce_window_set_reads(
    instr: Instruction, output_index: int, out_linear: np.ndarray, operand_index: int
) -> np.ndarray:
    """The union of ``reduce_window_reads`` over ``out_linear``: per axis, each point's window
    positions (as ``window_elements`` walks them, -1 where padding or a hole), then every
    combination of the axes' positions, in chunks of points."""
    if operand_index >= _arity(instr):
        return SCALAR_ELEMENT if len(out_linear) else NO_ELEMENTS
    in_dims = instr.operands[operand_index].shape.dims
    out_dims = instr.shape.leaf(output_index).dims
    if not len(out_linear) or not in_dims:
        return NO_ELEMENTS if not len(out_linear) else SCALAR_ELEMENT
    window = window_of(instr, len(in_dims))
    strides = row_major_strides(in_dims)
    if len(out_linear) == 1 or (np.diff(out_linear) > 0).all():  # distinct points: maybe a grid
        grid = _window_grid_reads(np.unravel_index(out_linear, out_dims), window, in_dims, strides)
        if grid is not None:
            return grid
    chunk = window_chunk(window)
    found = []
    for begin in range(0, len(out_linear), chunk):
        coords = np.unravel_index(out_linear[begin : begin + chunk], out_dims)
        linear = np.zeros((len(coords[0]), 1), np.int64)
        valid = np.ones((len(coords[0]), 1), bool)
        for c, wd, n, stride in zip(coords, window, in_dims, strides):
            linear, valid = add_window_axis(linear, valid, c, wd, n, stride)
        found.append(linear[valid])
    return distinct(np.concatenate(found))


def _window_grid_reads(coords: tuple, window: tuple[WindowDim, ...], in_dims: tuple, strides: list[int]):
    """Where distinct points are every combination of their coordinates on each axis (a block, a
    row: what walks bring), their windows' union is the combination of each axis's union of
    windows, found without a pair per point and tap; None where they are not such a grid."""
    axes = [distinct(c) for c in coords]
    count = 1
    for axis in axes:
        count *= len(axis)
    if count != len(coords[0]):  # as many distinct points as combinations: they are all of them
        return None
    linear = np.zeros(1, np.int64)
    for axis, wd, n, stride in zip(axes, window, in_dims, strides):
        sources, valid = add_window_axis(
            np.zeros((len(axis), 1), np.int64), np.ones((len(axis), 1), bool), axis, wd, n, 1
        )
        taken = distinct(sources[valid])
        linear = (linear[:, None] + taken[None, :] * stride).reshape(-1)
    return linear


# (point, window position) pairs a windowed set read holds at once: its points go in chunks
_WINDOW_PAIRS = 1 << 22


def window_chunk(window: tuple[WindowDim, ...], per_position: int = 1) -> int:
    """How many points a windowed set read takes at a time (``per_position`` elements a tap)."""
    size = per_position
    for wd in window:
        size *= wd.size
    return max(1, _WINDOW_PAIRS // max(size, 1))


def add_window_axis(
    linear: np.ndarray, valid: np.ndarray, out_coords: np.ndarray, wd: WindowDim, in_size: int, stride: int
) -> tuple[np.ndarray, np.ndarray]:
    """``linear`` / ``valid`` (a row per point, a column per position of the axes so far) with one
    more window axis: each point's taps along it, as ``window_elements`` finds them (invalid over
    padding or a base-dilation hole), at ``stride`` in the operand's linear index."""
    unpadded = out_coords[:, None] * wd.stride + np.arange(wd.size)[None, :] * wd.window_dilation - wd.pad_low
    source = unpadded // wd.base_dilation
    ok = (unpadded % wd.base_dilation == 0) & (source >= 0) & (source < in_size)
    rows = len(linear)
    return (
        (linear[:, :, None] + (source * stride)[:, None, :]).reshape(rows, -1),
        (valid[:, :, None] & ok[:, None, :]).reshape(rows, -1),
    )


@reads("select-and-scatter")
def select_and_scatter_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if operand_index == 2:
        return set(SCALAR_READ)
    operand_dims = instr.operands[0].shape.dims
    source_dims = instr.operands[1].shape.dims
    window = window_of(instr, len(operand_dims))
    # A window is a product of per-axis ranges, so "the windows covering x" is a product too.
    covering = [
        [w for w in range(m) if x in window_elements(w, wd, n)]
        for x, m, wd, n in zip(out_point, source_dims, window, operand_dims)
    ]
    if operand_index == 1:
        return set(itertools.product(*covering))
    if any(not axis for axis in covering):
        return set()
    union = [
        sorted({e for w in axis for e in window_elements(w, wd, n)})
        for axis, wd, n in zip(covering, window, operand_dims)
    ]
    return set(itertools.product(*union))
