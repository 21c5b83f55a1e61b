"""cuDNN backward convolutions as custom-calls: their exact relation, from the forward window.

XLA writes ``window`` and ``dim_labels`` of the *forward* convolution ``y = conv(x, w)``:
``__cudnn$convBackwardInput(dy, w) -> dx`` and ``__cudnn$convBackwardFilter(x, dy) -> dw``.
``dx[b, i, p]`` sums ``dy[b, o, q] * w[t, i, o]`` over every (q, t) whose forward window tap t of
output q lands on p; ``dw[t, i, o]`` sums ``x[b, i, p(q, t)] * dy[b, o, q]`` over b and q (every
dy element is read, also where the tap lies on padding, as the forward rule reads every kernel
element of a window). Only ungrouped convolutions without window reversal are modelled.
"""

from __future__ import annotations

from ..affine import Expr, IndexingMap, const, dim
from ..hlo.build import instruction
from ..hlo.model import ConvDimLabels, Instruction, Shape, WindowDim
from .registry import OperandMaps
from .rules_contraction import convolution_input_to_output, convolution_output_to_input
from .rules_reduce import RangeVars, window_of, window_tap_to_input, window_tap_to_output
from .shape_maps import full_interval

BACKWARD_TARGETS = ("__cudnn$convBackwardInput", "__cudnn$convBackwardFilter")


def forward_result_dims(conv: Instruction) -> tuple[int, ...] | None:
    """The output dims a convolution's operands, window and dim_labels give (None if inconsistent)."""
    labels = conv.attr("dim_labels")
    lhs, kernel = conv.operands[0].shape, conv.operands[1].shape
    out_rank = len(labels.output_spatial) + 2
    if lhs.rank != out_rank or kernel.rank != out_rank:
        return None
    window = window_of(conv, len(labels.output_spatial))
    if len(window) != len(labels.output_spatial):
        return None
    out = [0] * out_rank
    groups = conv.attr("batch_group_count", 1) or 1
    out[labels.output_batch] = lhs.dims[labels.input_batch] // groups
    out[labels.output_feature] = kernel.dims[labels.kernel_output_feature]
    for axis, wd in enumerate(window):
        size = lhs.dims[labels.input_spatial[axis]]
        if kernel.dims[labels.kernel_spatial[axis]] != wd.size:
            return None
        padded = (size - 1) * wd.base_dilation + 1 + wd.pad_low + wd.pad_high if size else 0
        span = (wd.size - 1) * wd.window_dilation + 1
        out[labels.output_spatial[axis]] = max(0, (padded - span) // wd.stride + 1) if padded >= span else 0
    return tuple(out)


Window = tuple[WindowDim, ...]


def _setup(instr: Instruction) -> str | tuple[Instruction, ConvDimLabels, Window, str]:
    """(forward conv, labels, window, role) or the reason it cannot be modelled."""
    labels = instr.attr("dim_labels")
    if labels is None or len(instr.operands) != 2:
        return "no dim_labels, or not exactly two operands"
    if (instr.attr("feature_group_count", 1) or 1) != 1 or (instr.attr("batch_group_count", 1) or 1) != 1:
        return "grouped backward convolutions are not modelled"
    window = window_of(instr, len(labels.output_spatial))
    if any(wd.reversal for wd in window):
        return "window reversal is not modelled"
    shapes = [instr.shape.leaf(j) for j in range(instr.shape.num_outputs)]
    for j in range(1, len(shapes)):
        if not (j == len(shapes) - 1 and shapes[j].rank == 1 and shapes[j].element_type in ("u8", "s8")):
            return f"output {j} {shapes[j]} is not the workspace"
    result = shapes[0]
    attrs = {k: instr.attrs[k] for k in ("window", "dim_labels") if k in instr.attrs}
    a, b = instr.operands
    if instr.attr("custom_call_target") == "__cudnn$convBackwardInput":
        forward = instruction("convolution", a.shape, [_stub(result), b], **attrs)
        role = "input"
    else:
        forward = instruction("convolution", b.shape, [a, _stub(result)], **attrs)
        role = "filter"
    if forward_result_dims(forward) != forward.shape.dims:
        return "operand and result shapes do not fit the forward window / dim_labels"
    return forward, labels, window, role


def _stub(shape: Shape) -> Instruction:
    return instruction("parameter", shape, (), name="result")


def _undefined(instr: Instruction, why: str) -> IndexingMap:
    return IndexingMap.undefined(f"custom-call to '{instr.attr('custom_call_target')}': {why}")


def _input_element_to_kernel_taps(forward: Instruction, labels: ConvDimLabels, window: Window) -> IndexingMap:
    """An element of the forward input (dx of a backward-input conv, x of a backward-filter conv)
    -> the kernel elements (w, or dw) whose taps land on it from some output position, every
    output feature."""
    x_dims, k_dims, y_dims = forward.operands[0].shape.dims, forward.operands[1].shape.dims, forward.shape.dims
    ranges, constraints = RangeVars(), []
    kernel: list[Expr] = [None] * len(k_dims)  # type: ignore[list-item]
    for axis, wd in enumerate(window):
        tap = ranges.new(wd.size)
        in_axis, out_axis = labels.input_spatial[axis], labels.output_spatial[axis]
        _, cons = window_tap_to_output(dim(in_axis), x_dims[in_axis], wd, y_dims[out_axis], tap)
        constraints += cons
        kernel[labels.kernel_spatial[axis]] = tap if tap is not None else const(0)
    kernel[labels.kernel_input_feature] = dim(labels.input_feature)
    kernel[labels.kernel_output_feature] = ranges.new_or_zero(k_dims[labels.kernel_output_feature])
    return IndexingMap([full_interval(n) for n in x_dims], ranges.intervals, (), kernel, constraints)


def _filter_to_input_grad(forward: Instruction, labels: ConvDimLabels, window: Window) -> IndexingMap:
    """kernel element -> the dx elements its taps land on (every batch, every dy position)."""
    x_dims, k_dims, y_dims = forward.operands[0].shape.dims, forward.operands[1].shape.dims, forward.shape.dims
    ranges, constraints = RangeVars(), []
    x: list[Expr] = [None] * len(x_dims)  # type: ignore[list-item]
    x[labels.input_batch] = ranges.new_or_zero(x_dims[labels.input_batch])
    x[labels.input_feature] = dim(labels.kernel_input_feature)
    for axis, wd in enumerate(window):
        out_axis, in_axis = labels.output_spatial[axis], labels.input_spatial[axis]
        q = ranges.new_or_zero(y_dims[out_axis])
        tap = dim(labels.kernel_spatial[axis]) if wd.size > 1 else None
        x[in_axis], cons = window_tap_to_input(q, y_dims[out_axis], wd, x_dims[in_axis], tap)
        constraints += cons
    return IndexingMap([full_interval(n) for n in k_dims], ranges.intervals, (), x, constraints)


def _filter_grad_maps(forward: Instruction, labels: ConvDimLabels, window: Window) -> tuple[IndexingMap, IndexingMap]:
    """dw element -> (x elements, dy elements) it reads."""
    x_dims, k_dims, y_dims = forward.operands[0].shape.dims, forward.operands[1].shape.dims, forward.shape.dims
    domain = [full_interval(n) for n in k_dims]
    ranges, constraints = RangeVars(), []
    batch = ranges.new_or_zero(x_dims[labels.input_batch])
    x: list[Expr] = [None] * len(x_dims)  # type: ignore[list-item]
    y: list[Expr] = [None] * len(y_dims)  # type: ignore[list-item]
    x[labels.input_batch], y[labels.output_batch] = batch, batch
    x[labels.input_feature] = dim(labels.kernel_input_feature)
    y[labels.output_feature] = dim(labels.kernel_output_feature)
    for axis, wd in enumerate(window):
        out_axis, in_axis = labels.output_spatial[axis], labels.input_spatial[axis]
        q = ranges.new_or_zero(y_dims[out_axis])
        tap = dim(labels.kernel_spatial[axis]) if wd.size > 1 else None
        x[in_axis], cons = window_tap_to_input(q, y_dims[out_axis], wd, x_dims[in_axis], tap)
        constraints += cons
        y[out_axis] = q
    return (IndexingMap(domain, ranges.intervals, (), x, constraints), IndexingMap(domain, ranges.intervals, (), y))


def _output_grad_to_filter_grad(forward: Instruction, labels: ConvDimLabels, window: Window) -> IndexingMap:
    """dy element -> every dw element of its output feature."""
    k_dims, y_dims = forward.operands[1].shape.dims, forward.shape.dims
    ranges = RangeVars()
    k: list[Expr] = [None] * len(k_dims)  # type: ignore[list-item]
    for axis in labels.kernel_spatial:
        k[axis] = ranges.new_or_zero(k_dims[axis])
    k[labels.kernel_input_feature] = ranges.new_or_zero(k_dims[labels.kernel_input_feature])
    k[labels.kernel_output_feature] = dim(labels.output_feature)
    return IndexingMap([full_interval(n) for n in y_dims], ranges.intervals, (), k)


def backward_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    setup = _setup(instr)
    if isinstance(setup, str):
        return [OperandMaps(k, (_undefined(instr, setup),)) for k in range(len(instr.operands))]
    if output_index > 0:
        return [OperandMaps(k, ()) for k in range(2)]  # the workspace reads nothing
    forward, labels, window, role = setup
    if role == "input":
        (dy_maps,) = convolution_input_to_output(forward, 0)
        return [OperandMaps(0, dy_maps), OperandMaps(1, (_input_element_to_kernel_taps(forward, labels, window),))]
    x, dy = _filter_grad_maps(forward, labels, window)
    return [OperandMaps(0, (x,)), OperandMaps(1, (dy,))]


def backward_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    setup = _setup(instr)
    outputs = instr.shape.num_outputs
    if isinstance(setup, str):
        return [(_undefined(instr, setup),) for _ in range(outputs)]
    forward, labels, window, role = setup
    if role == "input":
        m = (
            convolution_output_to_input(forward, 0)[0].maps
            if operand_index == 0
            else (_filter_to_input_grad(forward, labels, window),)
        )
    else:
        m = (
            (_input_element_to_kernel_taps(forward, labels, window),)
            if operand_index == 0
            else (_output_grad_to_filter_grad(forward, labels, window),)
        )
    return [m] + [() for _ in range(1, outputs)]
