"""XLA:CPU's oneDNN custom-calls: ``__onednn$matmul`` and ``__onednn$convolution``.

Read from ``backend_config`` as XLA:CPU's contraction rewriter writes it (``backend_config.proto``
/ ``onednn_config.proto``):

* ``onednn_matmul_config``: ``transpose_a`` / ``transpose_b`` over the last two dims of operands
  0 and 1, the leading dims batch dims: ``out[..., m, n] = sum_k a[..., m, k] * b[..., k, n]``
  (a read ``[..., k, m]`` when ``transpose_a``, b ``[..., n, k]`` when ``transpose_b``).
* ``onednn_conv_config``: batch / feature / spatial dims of input, kernel and output and the
  window (pads, strides, dilations; the window size is the kernel's), ``feature_groups``. XLA
  versions write the spatial dims and window numbers either as they are or plus one ("natural
  numbers"); only one reading makes the dims of each operand a permutation, and that reading
  must reproduce the result shape, else the call stays UNDEFINED.
* ``fusions.ops``: post-ops; ``BIAS`` and ``BINARY_ADD`` each take the next operand (in order),
  activations and ``LINEAR`` none. A matmul's extra operand broadcasts into the result aligned at
  the last dim (a dim of size 1 is read at 0); a convolution's bias is a vector over the output
  feature, its addend has the result's shape. Any other post-op or operand shape: UNDEFINED.

A trailing ``u8`` / ``s8`` vector output is the scratchpad and reads nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..hlo.backend_config import backend_config
from ..hlo.build import instruction
from ..hlo.model import ConvDimLabels, Instruction, Shape, WindowDim
from .custom_call_conv import forward_result_dims
from .custom_call_translation import Equivalent, ExtraRole, Translation, is_workspace, result_shapes, translator
from .registry import InputToOutputRule, OutputToInputRule
from .rules_contraction import (
    convolution_input_to_output,
    convolution_output_to_input,
    dot_input_to_output,
    dot_output_to_input,
)

# OneDnnFusionConfig.FusionKind: name -> operands it takes (the enum's numbers as JSON may write them)
_POST_OPS = {"BIAS": 1, "RELU": 0, "TANH": 0, "GELU_ERF": 0, "GELU_TANH": 0, "BINARY_ADD": 1, "LINEAR": 0}
_POST_OP_NUMBERS = {1: "BIAS", 2: "RELU", 3: "TANH", 4: "GELU_ERF", 5: "GELU_TANH", 6: "BINARY_ADD", 7: "LINEAR"}


# A oneDNN configuration: a JSON object from backend_config.
Config = dict[str, Any]


def _config(instr: Instruction, key: str) -> Config | None:
    cfg = backend_config(instr) or {}
    value = cfg.get(key)
    return value if isinstance(value, dict) else None


def _post_ops(config: Config) -> list[str] | None:
    """The post-op names in order, or None when one is not known."""
    fusions = config.get("fusions") or {}
    ops = fusions.get("ops", []) if isinstance(fusions, dict) else None
    if not isinstance(ops, list):
        return None
    names = []
    for op in ops:
        name = _POST_OP_NUMBERS.get(op) if isinstance(op, int) else op
        if name not in _POST_OPS:
            return None
        names.append(name)
    return names


def _outputs(instr: Instruction) -> dict[int, int] | None:
    """Custom-call output -> core output: the result, and nothing for a trailing scratchpad."""
    shapes = result_shapes(instr)
    if len(shapes) > 2 or (len(shapes) == 2 and not is_workspace(shapes[1])):
        return None
    return {0: 0}


def _extra_operands(instr: Instruction, config: Config) -> list[str] | None:
    """The post-op that takes each operand after the first two, or None when they do not match."""
    names = _post_ops(config)
    if names is None:
        return None
    takers = [n for n in names if _POST_OPS[n]]
    return takers if len(takers) == len(instr.operands) - 2 else None


def _broadcast_role(shape: Shape, result: Shape) -> ExtraRole | None:
    """An operand broadcast into the result aligned at the last dim (size-1 dims read at 0)."""
    if shape.is_tuple or shape.rank > result.rank:
        return None
    offset = result.rank - shape.rank
    if any(n not in (1, result.dims[offset + i]) for i, n in enumerate(shape.dims)):
        return None
    if shape.dims == result.dims:
        return ("same",)
    return ("broadcast", tuple(shape.dims))


# ---- the two calls: one preamble, one post-op reading --------------------------------------


def _post_op_call(
    instr: Instruction,
    config_key: str,
    operand_names: str,
    core_of: Callable[[Instruction, Config, Shape], Instruction | str],
    extra_role: Callable[[int, str, Shape, Shape, Instruction], ExtraRole | str],
    output_to_input: OutputToInputRule,
    input_to_output: InputToOutputRule,
) -> Translation:
    """A oneDNN call as its core op (``core_of(instr, config, result)``: the instruction, or why
    not) followed by post-ops, each extra operand read as ``extra_role(k, post-op, shape, result,
    core)`` says (a role, or why not)."""
    config = _config(instr, config_key)
    if config is None:
        return f"no {config_key} in backend_config"
    outputs = _outputs(instr)
    if outputs is None or len(instr.operands) < 2:
        return f"expected ({operand_names}, post-op operands...) and a result with an optional scratchpad"
    result = result_shapes(instr)[0]
    core = core_of(instr, config, result)
    if isinstance(core, str):
        return core
    takers = _extra_operands(instr, config)
    if takers is None:
        return "post-ops (fusions.ops) not known, or not matching the extra operands"
    extras: dict[int, ExtraRole] = {}
    for k, name in zip(range(2, len(instr.operands)), takers):
        role = extra_role(k, name, instr.operands[k].shape, result, core)
        if isinstance(role, str):
            return role
        extras[k] = role
    return Equivalent(core, output_to_input, input_to_output, (0, 1), outputs, extras)


# ---- matmul --------------------------------------------------------------------------------


@translator("__onednn$matmul")
def onednn_matmul_equivalent(instr: Instruction) -> Translation:
    return _post_op_call(
        instr, "onednn_matmul_config", "lhs, rhs", _matmul_core, _matmul_extra, dot_output_to_input, dot_input_to_output
    )


def _matmul_core(instr: Instruction, config: Config, result: Shape) -> Instruction | str:
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    rank = result.rank
    if lhs.rank != rank or rhs.rank != rank or rank < 2:
        return f"operands {lhs} and {rhs} and result {result} are not batched matrices of one rank"
    batch = tuple(range(rank - 2))
    lhs_k = rank - 2 if config.get("transpose_a") else rank - 1
    rhs_k = rank - 1 if config.get("transpose_b") else rank - 2
    core = instruction(
        "dot",
        result,
        instr.operands[:2],
        name=instr.name,
        lhs_batch_dims=batch,
        rhs_batch_dims=batch,
        lhs_contracting_dims=(lhs_k,),
        rhs_contracting_dims=(rhs_k,),
    )
    lfree = [d for d in range(rank) if d not in batch and d != lhs_k]
    rfree = [d for d in range(rank) if d not in batch and d != rhs_k]
    expected = tuple(lhs.dims[d] for d in batch) + tuple(lhs.dims[d] for d in lfree) + tuple(rhs.dims[d] for d in rfree)
    if lhs.dims[: rank - 2] != rhs.dims[: rank - 2] or lhs.dims[lhs_k] != rhs.dims[rhs_k] or expected != result.dims:
        return f"result {result} is not the product of {lhs} and {rhs} with these transposes"
    return core


def _matmul_extra(k: int, name: str, shape: Shape, result: Shape, core: Instruction) -> ExtraRole | str:
    """Every post-op operand broadcasts into the result alike (BIAS and BINARY_ADD)."""
    role = _broadcast_role(shape, result)
    return role if role is not None else f"operand {k} {shape} does not broadcast into the result {result}"


# ---- convolution ---------------------------------------------------------------------------


def _ints(values: Any) -> tuple[int, ...] | None:  # a JSON value: a list of numbers when well formed
    try:
        return tuple(int(v) for v in (values or ()))
    except (TypeError, ValueError):
        return None


def _layout(config: Config, role: str, shift: int) -> tuple[int, int, tuple[int, ...]] | None:
    """(batch or input feature, feature or output feature, spatial dims) of one operand."""
    entry = config.get(role) or {}
    part = entry.get("filter" if role == "kernel" else "data") or {}
    spatial = _ints(part.get("spatial_dims"))
    if spatial is None:
        return None
    first, second = ("input_feature_dim", "output_feature_dim") if role == "kernel" else ("batch_dim", "feature_dim")
    try:
        a, b = int(part.get(first, 0)), int(part.get(second, 0))
    except (TypeError, ValueError):
        return None
    return a, b, tuple(s - shift for s in spatial)


def _labels(config: Config, rank: int, shift: int) -> ConvDimLabels | None:
    parts = [p for p in (_layout(config, role, shift) for role in ("input", "kernel", "output")) if p is not None]
    if len(parts) != 3:
        return None
    for a, b, spatial in parts:
        if sorted((a, b) + spatial) != list(range(rank)):
            return None
    (ib, if_, isp), (kif, kof, ksp), (ob, of, osp) = parts
    return ConvDimLabels(ib, if_, isp, kif, kof, ksp, ob, of, osp)


def _window(config: Config, kernel: Shape, labels: ConvDimLabels, shift: int) -> tuple[WindowDim, ...] | None:
    window = config.get("window") or {}
    spatial = len(labels.kernel_spatial)

    def numbers(name: str, default: int) -> tuple[int, ...] | None:
        values = _ints(window.get(name))
        if values is None or (values and len(values) != spatial):
            return None
        return tuple(v - shift for v in values) if values else (default,) * spatial

    low, high = numbers("pad_left", 0), numbers("pad_right", 0)
    strides, dilations = numbers("strides", 1), numbers("window_dilations", 1)
    if low is None or high is None or strides is None or dilations is None:
        return None
    if min(low + high, default=0) < 0 or min(strides + dilations, default=1) < 1:
        return None
    return tuple(
        WindowDim(kernel.dims[labels.kernel_spatial[a]], strides[a], low[a], high[a], dilations[a])
        for a in range(spatial)
    )


@translator("__onednn$convolution")
def onednn_convolution_equivalent(instr: Instruction) -> Translation:
    return _post_op_call(
        instr,
        "onednn_conv_config",
        "input, kernel",
        _convolution_core,
        _convolution_extra,
        convolution_output_to_input,
        convolution_input_to_output,
    )


def _convolution_core(instr: Instruction, config: Config, result: Shape) -> Instruction | str:
    kernel = instr.operands[1].shape
    try:
        groups = int(config.get("feature_groups", 1) or 1)
    except (TypeError, ValueError):
        return "feature_groups is not an integer"
    readings = []
    for shift in (0, 1):  # the dims as written, or written plus one (natural numbers)
        labels = _labels(config, result.rank, shift)
        if labels is None:
            continue
        window = _window(config, kernel, labels, shift)
        if window is None:
            continue
        core = instruction(
            "convolution",
            result,
            instr.operands[:2],
            name=instr.name,
            window=window,
            dim_labels=labels,
            feature_group_count=groups,
            batch_group_count=1,
        )
        if (
            forward_result_dims(core) == result.dims
            and instr.operands[0].shape.dims[labels.input_feature] == kernel.dims[labels.kernel_input_feature] * groups
        ):
            readings.append(core)
    if len(readings) != 1:
        return "onednn_conv_config does not describe a convolution giving the result shape"
    return readings[0]


def _convolution_extra(k: int, name: str, shape: Shape, result: Shape, core: Instruction) -> ExtraRole | str:
    """A bias is a vector over the output feature; any other post-op operand has the result's shape."""
    feature = core.attr("dim_labels").output_feature
    if name == "BIAS" and shape.rank == 1 and shape.dims[0] == result.dims[feature]:
        return ("vector", feature)
    if shape.dims == result.dims and not shape.is_tuple:
        return ("same",)
    return f"operand {k} {shape} is neither a bias over the output feature nor of the result's shape"
