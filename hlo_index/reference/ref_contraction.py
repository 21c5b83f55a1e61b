"""Reference read sets of dot and convolution, by direct definition of the sums they compute.

dot: output = (batch..., lhs free..., rhs free...); each element sums over the contracting
coordinates.
convolution (StableHLO definition): with ``feature_group_count`` G the lhs features and the
kernel output features are split into G groups and the group results are concatenated along
the output features; ``batch_group_count`` B splits the lhs batch and the kernel output features
likewise. Each output element sums over the kernel window and the kernel's input features; an
lhs element is read where the window lands on a real (not padding, not base-dilation hole)
element, every kernel element of the window is read (it multiplies the padding value there).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..hlo.model import Instruction
from . import distinct, reads, reads_sets
from .ref_reduce import add_window_axis, row_major_strides, window_chunk, window_of


def _free_dims(rank: int, *used: tuple[int, ...]) -> list[int]:
    taken = set(itertools.chain(*used))
    return [d for d in range(rank) if d not in taken]


def _dot_operand(instr: Instruction, operand_index: int, out_coords) -> tuple:
    """One dot operand's dims and its batch, contracting and free dimensions, the output's
    coordinates (points or arrays) that fix its batch and free ones, and the contracted sizes."""
    lhs_dims, rhs_dims = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    lhs_batch, rhs_batch = instr.attr("lhs_batch_dims", ()), instr.attr("rhs_batch_dims", ())
    lhs_contract, rhs_contract = instr.attr("lhs_contracting_dims", ()), instr.attr("rhs_contracting_dims", ())
    lhs_free = _free_dims(len(lhs_dims), lhs_batch, lhs_contract)
    rhs_free = _free_dims(len(rhs_dims), rhs_batch, rhs_contract)
    batch_coords = out_coords[: len(lhs_batch)]
    contracted = tuple(lhs_dims[d] for d in lhs_contract)
    if operand_index == 0:
        free_coords = out_coords[len(lhs_batch) : len(lhs_batch) + len(lhs_free)]
        return lhs_dims, lhs_batch, lhs_contract, lhs_free, batch_coords, free_coords, contracted
    free_coords = out_coords[len(lhs_batch) + len(lhs_free) :]
    return rhs_dims, rhs_batch, rhs_contract, rhs_free, batch_coords, free_coords, contracted


@reads("dot")
def dot_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    dims, batch, contract, free, batch_coords, free_coords, contracted = _dot_operand(instr, operand_index, out_point)
    # each dimension of the operand: the output's coordinate (batch, free) or every value (contracted)
    per_dim: list = [(0,)] * len(dims)
    for d, c in zip(batch, batch_coords):
        per_dim[d] = (c,)
    for d, c in zip(free, free_coords):
        per_dim[d] = (c,)
    for d, size in zip(contract, contracted):
        per_dim[d] = range(size)
    return set(itertools.product(*per_dim))


@reads_sets("dot")
def dot_set_reads(instr: Instruction, output_index: int, out_linear: np.ndarray, operand_index: int) -> np.ndarray:
    """The union of ``dot_reads`` over ``out_linear``: per output element, the share of the
    operand's linear index its batch and free coordinates fix, plus every contracted combination."""
    coords = np.unravel_index(out_linear, instr.shape.dims) if instr.shape.dims else ()
    dims, batch, contract, free, batch_coords, free_coords, contracted = _dot_operand(instr, operand_index, coords)
    strides = row_major_strides(dims)
    base = np.zeros(len(out_linear), np.int64)
    for d, c in itertools.chain(zip(batch, batch_coords), zip(free, free_coords)):
        base = base + c * strides[d]
    offsets = np.zeros(1, np.int64)
    for d, size in zip(contract, contracted):
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * strides[d]).reshape(-1)
    return (base[:, None] + offsets[None, :]).reshape(-1)


def _convolution(instr: Instruction) -> tuple:
    """(dim labels, lhs dims, kernel dims, output dims, feature groups, batch groups, window)."""
    labels = instr.attr("dim_labels")
    return (
        labels,
        instr.operands[0].shape.dims,
        instr.operands[1].shape.dims,
        instr.shape.dims,
        instr.attr("feature_group_count", 1) or 1,
        instr.attr("batch_group_count", 1) or 1,
        window_of(instr, len(labels.output_spatial)),
    )


@reads("convolution")
def convolution_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    labels, lhs_dims, kernel_dims, out_dims, feature_groups, batch_groups, window = _convolution(instr)

    out_batch, out_feature = out_point[labels.output_batch], out_point[labels.output_feature]
    out_features = out_dims[labels.output_feature]
    kernel_in_features = kernel_dims[labels.kernel_input_feature]
    lhs_batch = out_batch
    if batch_groups > 1:
        group = out_feature // (out_features // batch_groups)
        lhs_batch = group * (lhs_dims[labels.input_batch] // batch_groups) + out_batch
    feature_base = 0
    if feature_groups > 1:
        feature_base = (out_feature // (out_features // feature_groups)) * kernel_in_features

    result = set()
    for in_feature in range(kernel_in_features):
        for taps in itertools.product(*(range(wd.size) for wd in window)):
            if operand_index == 1:
                index = [0] * len(kernel_dims)
                index[labels.kernel_input_feature] = in_feature
                index[labels.kernel_output_feature] = out_feature
                for axis, tap in enumerate(taps):
                    index[labels.kernel_spatial[axis]] = tap
                result.add(tuple(index))
                continue
            coords = [
                _tap_source(out_point[labels.output_spatial[axis]], tap, wd, lhs_dims[labels.input_spatial[axis]])
                for axis, (tap, wd) in enumerate(zip(taps, window))
            ]
            if any(c is None for c in coords):
                continue  # the tap lands on padding or a base-dilation hole
            index = [0] * len(lhs_dims)
            index[labels.input_batch] = lhs_batch
            index[labels.input_feature] = feature_base + in_feature
            for axis, c in enumerate(coords):
                index[labels.input_spatial[axis]] = c  # type: ignore[assignment]  # None was skipped above
            result.add(tuple(index))
    return result


@reads_sets("convolution")
def convolution_set_reads(
    instr: Instruction, output_index: int, out_linear: np.ndarray, operand_index: int
) -> np.ndarray:
    """The union of ``convolution_reads`` over ``out_linear``, as ``convolution_reads`` finds each
    point's: the kernel's every input feature and tap for each output feature present; the lhs's
    batch and feature group of each point, every input feature of the group, and per spatial axis
    each tap's source (none over padding or a base-dilation hole), in chunks of points."""
    labels, lhs_dims, kernel_dims, out_dims, feature_groups, batch_groups, window = _convolution(instr)
    kernel_in_features = kernel_dims[labels.kernel_input_feature]
    out_features = out_dims[labels.output_feature]
    if not len(out_linear):
        return np.zeros(0, np.int64)
    coords = np.unravel_index(out_linear, out_dims)
    out_feature = coords[labels.output_feature]
    if operand_index == 1:
        strides = row_major_strides(kernel_dims)
        # every (input feature, taps) of the kernel, then each output feature present
        offsets = np.arange(kernel_in_features, dtype=np.int64) * strides[labels.kernel_input_feature]
        for axis, wd in enumerate(window):
            step = strides[labels.kernel_spatial[axis]]
            offsets = (offsets[:, None] + np.arange(wd.size, dtype=np.int64) * step).reshape(-1)
        present = distinct(out_feature) * strides[labels.kernel_output_feature]
        return distinct((present[:, None] + offsets[None, :]).reshape(-1))
    strides = row_major_strides(lhs_dims)
    batch = coords[labels.output_batch]
    if batch_groups > 1:
        batch = (out_feature // (out_features // batch_groups)) * (lhs_dims[labels.input_batch] // batch_groups) + batch
    feature_base = np.zeros(len(out_linear), np.int64)
    if feature_groups > 1:
        feature_base = (out_feature // (out_features // feature_groups)) * kernel_in_features
    chunk = window_chunk(window, kernel_in_features)
    features = np.arange(kernel_in_features, dtype=np.int64) * strides[labels.input_feature]
    found = []
    for begin in range(0, len(out_linear), chunk):
        part = slice(begin, begin + chunk)
        base = batch[part] * strides[labels.input_batch] + feature_base[part] * strides[labels.input_feature]
        linear = (base[:, None] + features[None, :]).astype(np.int64)
        valid = np.ones(linear.shape, bool)
        for axis, wd in enumerate(window):
            spatial = labels.input_spatial[axis]
            c = coords[labels.output_spatial[axis]][part]
            linear, valid = add_window_axis(linear, valid, c, wd, lhs_dims[spatial], strides[spatial])
        found.append(linear[valid])
    return distinct(np.concatenate(found))


def _tap_source(out_coord: int, tap: int, wd, in_size: int) -> int | None:
    """The lhs coordinate under window tap ``tap`` of output ``out_coord``, None over padding/holes."""
    unpadded = out_coord * wd.stride + tap * wd.window_dilation - wd.pad_low
    if unpadded % wd.base_dilation != 0:
        return None
    source = unpadded // wd.base_dilation
    return source if 0 <= source < in_size else None


@reads("scaled-dot")
def scaled_dot_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    """The dot's read set for lhs / rhs; a scale element is read where it scales an element the
    dot reads: per dim, the same coordinate (equal sizes), 0 (size 1) or the block index."""
    if operand_index < 2:
        return dot_reads(instr, output_index, out_point, operand_index, runtime_values)
    operand_dims = instr.operands[operand_index - 2].shape.dims
    scale_dims = instr.operands[operand_index].shape.dims
    found = set()
    for element in dot_reads(instr, output_index, out_point, operand_index - 2, runtime_values):
        found.add(
            tuple(c if s == n else 0 if s == 1 else c // (n // s) for c, n, s in zip(element, operand_dims, scale_dims))
        )
    return found
