"""Reference read sets of custom-calls with published semantics, by direct definition.

* cuBLAS / cuBLASLt gemm: ``D = alpha * dot(A, B) + beta * C (+ bias)``, dot dimension numbers
  from ``backend_config``; a scalar extra operand (alpha, fp8 scales) is read whole, an operand of
  the result's shape elementwise, a vector bias at the result's last coordinate; an auxiliary
  output of the result's shape reads what the result reads; the u8/s8 workspace reads nothing.
* ``__op$block_scaled_dot(lhs, rhs, lhs_scale, rhs_scale)``: a dot over the last dims where
  contracted element k is multiplied by scale block ``k // (K / blocks)``.
* cuDNN forward convolutions: the convolution of operands 0 and 1 (its reference), a bias
  vector at the output feature, a side input elementwise, scalars whole.
* cuDNN backward input / filter: loops over the forward window (see ``ops.custom_call_conv``'s
  docstring for the definition; written here again from it).
* XLA:CPU oneDNN: ``__onednn$matmul`` a batched matrix product over the last two dims (operands
  transposed there by ``transpose_a`` / ``transpose_b``), extra operands broadcast aligned at the
  last dim; ``__onednn$convolution`` the convolution its ``onednn_conv_config`` describes (dims
  and window numbers as written or written plus one: the reading that makes every operand's dims
  a permutation and gives the result shape), a bias at the output feature, an addend elementwise;
  the scratchpad output reads nothing.
* ``__cublas$lt$groupedMatmul`` (cuBLASLt, and hipBLASLt under the same name on ROCm): the ragged
  dot of (lhs, rhs, group_sizes) that ``grouped_gemm_backend_config.ragged_dot_dimension_numbers``
  names (its reference); the workspace output reads nothing.
* ``AssumeGatherIndicesInBound`` (TPU): its operand, element for element.
* TransformerEngine's fused attention (``te_fused_attn_forward_ffi`` / ``..._backward_ffi``):
  ``ref_attention``.
* TopK: the operand's row; Sharding: identity; SPMD full<->shard: the shard's tile (tile 0
  unless ``runtime_values["tile"]`` gives the partition's tile coordinates).
"""

from __future__ import annotations

import itertools

from ..hlo.backend_config import backend_config
from ..hlo.build import instruction, tuple_shape
from ..hlo.model import ConvDimLabels, Instruction, WindowDim
from . import NoReference, reads
from .ref_attention import attention_reads
from .ref_batch_norm import batch_norm_reads
from .ref_contraction import convolution_reads, dot_reads
from .ref_ragged import ragged_dot_reads
from .ref_reduce import window_of

CUDNN_BATCH_NORM = {
    "__cudnn$batchNormalizationForwardTraining": ("batch-norm-training", 3),
    "__cudnn$batchNormalizationForwardInference": ("batch-norm-inference", 5),
    "__cudnn$batchNormalizationBackward": ("batch-norm-grad", 5),
}
GEMMS = ("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8", "__cublas$lt$matmul$mx")
FORWARD_CONVS = ("__cudnn$convForward", "__cudnn$convBiasActivationForward", "__cudnn$convForwardGraph")


def _ints(values) -> tuple[int, ...]:
    return tuple(int(v) for v in (values or ()))


def _is_workspace(shape) -> bool:
    return shape.rank == 1 and shape.element_type in ("u8", "s8")


def _extra_operand(shape, result_dims, point, vector_dim) -> set:
    if shape.rank == 0:
        return {()}
    if shape.dims == tuple(result_dims):
        return {tuple(point)}
    if vector_dim is not None and shape.rank == 1:
        return {(point[vector_dim],)}
    raise ValueError(f"extra operand {shape} has no published role")


def _gemm_reads(instr: Instruction, output_index: int, point: tuple, operand_index: int) -> set:
    cfg = backend_config(instr)
    assert cfg is not None  # the rule translated this call from its backend_config
    gemm = cfg.get("gemm_backend_config", cfg)
    d = gemm["dot_dimension_numbers"]
    result = instr.shape.leaf(0)
    out = instr.shape.leaf(output_index)
    if output_index > 0 and (_is_workspace(out) or out.dims != result.dims):
        return set()
    if operand_index >= 2:
        return _extra_operand(instr.operands[operand_index].shape, result.dims, point, result.rank - 1)
    dot = instruction(
        "dot",
        result,
        instr.operands[:2],
        lhs_batch_dims=_ints(d.get("lhs_batch_dimensions")),
        rhs_batch_dims=_ints(d.get("rhs_batch_dimensions")),
        lhs_contracting_dims=_ints(d.get("lhs_contracting_dimensions")),
        rhs_contracting_dims=_ints(d.get("rhs_contracting_dimensions")),
    )
    return dot_reads(dot, 0, point, operand_index, None)


def _block_scaled_reads(instr: Instruction, point: tuple, operand_index: int) -> set:
    lhs = instr.operands[0].shape
    batched = lhs.rank == 3
    b = point[:1] if batched else ()
    m, n = point[len(b)], point[len(b) + 1]
    k = lhs.dims[-1]
    if operand_index == 4:
        return {()}
    if operand_index in (0, 1):
        row = m if operand_index == 0 else n
        return {b + (row, c) for c in range(k)}
    blocks = instr.operands[operand_index].shape.dims[-1]
    size = k // blocks
    row = m if operand_index == 2 else n
    return {b + (row, c // size) for c in range(k)}


def _forward_conv_reads(instr: Instruction, output_index: int, point: tuple, operand_index: int) -> set:
    if output_index > 0:
        return set()
    result = instr.shape.leaf(0)
    labels = instr.attr("dim_labels")
    if operand_index >= 2:
        bias = operand_index == 2 and instr.attr("custom_call_target") == "__cudnn$convBiasActivationForward"
        return _extra_operand(
            instr.operands[operand_index].shape, result.dims, point, labels.output_feature if bias else None
        )
    conv = instruction(
        "convolution",
        result,
        instr.operands[:2],
        **{
            k: instr.attrs[k]
            for k in ("window", "dim_labels", "feature_group_count", "batch_group_count")
            if k in instr.attrs
        },
    )
    return convolution_reads(conv, 0, point, operand_index, None)


def _tap_input(q: int, t: int, wd) -> int | None:
    """Forward input coordinate under tap t of output q, None on padding / dilation holes."""
    padded = q * wd.stride + t * wd.window_dilation - wd.pad_low
    if padded % wd.base_dilation:
        return None
    return padded // wd.base_dilation


def _backward_reads(instr: Instruction, output_index: int, point: tuple, operand_index: int) -> set:
    if output_index > 0:
        return set()
    labels = instr.attr("dim_labels")
    window = window_of(instr, len(labels.output_spatial))
    result = instr.shape.leaf(0).dims
    found = set()
    if instr.attr("custom_call_target") == "__cudnn$convBackwardInput":
        dy, w = instr.operands[0].shape.dims, instr.operands[1].shape.dims
        b, i = point[labels.input_batch], point[labels.input_feature]
        spatial = [point[a] for a in labels.input_spatial]
        for q in itertools.product(*(range(dy[a]) for a in labels.output_spatial)):
            for t in itertools.product(*(range(wd.size) for wd in window)):
                if [_tap_input(qq, tt, wd) for qq, tt, wd in zip(q, t, window)] != spatial:
                    continue
                for o in range(w[labels.kernel_output_feature]):
                    if operand_index == 0:
                        idx = [0] * len(dy)
                        idx[labels.output_batch], idx[labels.output_feature] = b, o
                        for a, qq in zip(labels.output_spatial, q):
                            idx[a] = qq
                    else:
                        idx = [0] * len(w)
                        idx[labels.kernel_input_feature], idx[labels.kernel_output_feature] = i, o
                        for a, tt in zip(labels.kernel_spatial, t):
                            idx[a] = tt
                    found.add(tuple(idx))
        return found
    x, dy = instr.operands[0].shape.dims, instr.operands[1].shape.dims
    taps = [point[a] for a in labels.kernel_spatial]
    i, o = point[labels.kernel_input_feature], point[labels.kernel_output_feature]
    for b in range(x[labels.input_batch]):
        for q in itertools.product(*(range(dy[a]) for a in labels.output_spatial)):
            if operand_index == 1:
                idx = [0] * len(dy)
                idx[labels.output_batch], idx[labels.output_feature] = b, o
                for a, qq in zip(labels.output_spatial, q):
                    idx[a] = qq
                found.add(tuple(idx))
                continue
            coords = [_tap_input(qq, tt, wd) for qq, tt, wd in zip(q, taps, window)]
            if any(c is None or not 0 <= c < x[a] for c, a in zip(coords, labels.input_spatial)):
                continue
            idx = [0] * len(x)
            idx[labels.input_batch], idx[labels.input_feature] = b, i
            for a, c in zip(labels.input_spatial, coords):
                idx[a] = c  # type: ignore[assignment]  # None was skipped above
            found.add(tuple(idx))
    del result
    return found


def _onednn_matmul_reads(instr: Instruction, output_index: int, point: tuple, operand_index: int) -> set:
    if output_index > 0:
        return set()  # the scratchpad
    config = backend_config(instr)
    assert config is not None  # the rule translated this call from its backend_config
    cfg = config["onednn_matmul_config"]
    rank = len(point)
    batch, m, n = tuple(point[: rank - 2]), point[rank - 2], point[rank - 1]
    shape = instr.operands[operand_index].shape
    if operand_index == 0:
        if cfg.get("transpose_a"):
            return {batch + (k, m) for k in range(shape.dims[rank - 2])}
        return {batch + (m, k) for k in range(shape.dims[rank - 1])}
    if operand_index == 1:
        if cfg.get("transpose_b"):
            return {batch + (n, k) for k in range(shape.dims[rank - 1])}
        return {batch + (k, n) for k in range(shape.dims[rank - 2])}
    skip = rank - shape.rank
    return {tuple(0 if size == 1 else point[skip + i] for i, size in enumerate(shape.dims))}


def _onednn_convolution(instr: Instruction) -> Instruction:
    """The plain convolution an ``onednn_conv_config`` describes (see the module docstring)."""
    config = backend_config(instr)
    assert config is not None  # the rule translated this call from its backend_config
    cfg = config["onednn_conv_config"]
    result = instr.shape.leaf(0)
    lhs, kernel = instr.operands[0].shape, instr.operands[1].shape
    groups = int(cfg.get("feature_groups", 1) or 1)
    found = []
    for plus in (0, 1):
        parts = []
        for role, keys in (
            ("input", ("data", "batch_dim", "feature_dim")),
            ("kernel", ("filter", "input_feature_dim", "output_feature_dim")),
            ("output", ("data", "batch_dim", "feature_dim")),
        ):
            layout = cfg[role][keys[0]]
            spatial = tuple(int(s) - plus for s in layout.get("spatial_dims", []))
            parts.append((int(layout.get(keys[1], 0)), int(layout.get(keys[2], 0)), spatial))
        if any(sorted((a, b) + s) != list(range(result.rank)) for a, b, s in parts):
            continue
        labels = ConvDimLabels(*parts[0], *parts[1], *parts[2])
        win = cfg.get("window", {})
        count = len(labels.output_spatial)

        def field(name, default):
            values = [int(v) - plus for v in win.get(name, [])]  # noqa: B023  called within this iteration only
            return values or [default] * count  # noqa: B023  called within this iteration only

        window = tuple(
            WindowDim(
                kernel.dims[labels.kernel_spatial[a]],
                field("strides", 1)[a],
                field("pad_left", 0)[a],
                field("pad_right", 0)[a],
                field("window_dilations", 1)[a],
            )
            for a in range(count)
        )
        out = [0] * result.rank
        out[labels.output_batch] = lhs.dims[labels.input_batch]
        out[labels.output_feature] = kernel.dims[labels.kernel_output_feature]
        for a, wd in enumerate(window):
            span = (wd.size - 1) * wd.window_dilation + 1
            padded = lhs.dims[labels.input_spatial[a]] + wd.pad_low + wd.pad_high
            out[labels.output_spatial[a]] = (padded - span) // wd.stride + 1 if padded >= span else 0
        if tuple(out) == result.dims:
            found.append(
                instruction(
                    "convolution",
                    result,
                    instr.operands[:2],
                    window=window,
                    dim_labels=labels,
                    feature_group_count=groups,
                    batch_group_count=1,
                )
            )
    if len(found) != 1:
        raise ValueError("onednn_conv_config does not describe one convolution giving the result shape")
    return found[0]


def _onednn_convolution_reads(instr: Instruction, output_index: int, point: tuple, operand_index: int) -> set:
    if output_index > 0:
        return set()  # the scratchpad
    conv = _onednn_convolution(instr)
    if operand_index < 2:
        return convolution_reads(conv, 0, point, operand_index, None)
    shape = instr.operands[operand_index].shape
    if shape.dims == instr.shape.leaf(0).dims:
        return {tuple(point)}
    return {(point[conv.attr("dim_labels").output_feature],)}


def _sharding_reads(instr: Instruction, point: tuple, runtime_values: dict | None) -> set:
    src, dst = instr.operands[0].shape.dims, instr.shape.dims
    target = instr.attr("custom_call_target")
    if src == dst:
        return {tuple(point)}
    if target == "SPMDShardToFullShape":
        return {tuple(p % s for p, s in zip(point, src))}
    tile = tuple((runtime_values or {}).get("tile", (0,) * len(dst)))
    return {tuple(p + t * s for p, t, s in zip(point, tile, dst))}


def _grouped_gemm_reads(
    instr: Instruction, output_index: int, point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if output_index != 0:
        return set()  # the workspace
    numbers = (backend_config(instr) or {})["grouped_gemm_backend_config"]["ragged_dot_dimension_numbers"]
    dnums = numbers["dot_dimension_numbers"]
    ragged = instruction(
        "ragged-dot",
        instr.shape.leaf(0),
        instr.operands,
        lhs_batch_dims=_ints(dnums.get("lhs_batch_dimensions")),
        rhs_batch_dims=_ints(dnums.get("rhs_batch_dimensions")),
        lhs_contracting_dims=_ints(dnums.get("lhs_contracting_dimensions")),
        rhs_contracting_dims=_ints(dnums.get("rhs_contracting_dimensions")),
        lhs_ragged_dims=_ints(numbers.get("lhs_ragged_dimensions")),
        rhs_group_dims=_ints(numbers.get("rhs_group_dimensions")),
    )
    return ragged_dot_reads(ragged, 0, point, operand_index, runtime_values)


def _is_amax(instr: Instruction, output_index: int) -> bool:
    """A scalar output that is the max |x| over the whole result (fp8 gemm / cuDNN graph)."""
    if output_index == 0 or instr.shape.leaf(output_index).rank != 0:
        return False
    cfg = backend_config(instr) or {}
    gemm = cfg.get("gemm_backend_config", cfg)
    graph = str(cfg.get("cudnn_conv_backend_config", {}).get("serialized_graph", ""))
    return bool(gemm.get("damax_output")) or "amax(" in graph


@reads("custom-call")
def custom_call_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if _is_amax(instr, output_index):
        found: set = set()
        for point in itertools.product(*(range(n) for n in instr.shape.leaf(0).dims)):
            found |= custom_call_reads(instr, 0, point, operand_index, runtime_values)
        return found
    target = instr.attr("custom_call_target", "")
    if target in GEMMS:
        return _gemm_reads(instr, output_index, out_point, operand_index)
    if target == "__op$block_scaled_dot":
        return _block_scaled_reads(instr, out_point, operand_index)
    if target in FORWARD_CONVS:
        return _forward_conv_reads(instr, output_index, out_point, operand_index)
    if target in ("__cudnn$convBackwardInput", "__cudnn$convBackwardFilter"):
        return _backward_reads(instr, output_index, out_point, operand_index)
    if target in CUDNN_BATCH_NORM:
        opcode, arrays = CUDNN_BATCH_NORM[target]
        if operand_index >= arrays:
            return {()}  # epsilon, feature_index: configuration read by every element
        feature_index = instr.operands[arrays + 1].literal_values()
        assert feature_index is not None  # the rule read it as a constant
        outputs = 1 if opcode == "batch-norm-inference" else 3
        shapes = [instr.shape.leaf(j) for j in range(outputs)]
        shape = tuple_shape(*shapes) if outputs > 1 else shapes[0]
        bn = instruction(opcode, shape, instr.operands[:arrays], feature_index=int(feature_index.flat[0]))
        return batch_norm_reads(bn, output_index, out_point, operand_index, None)
    if target == "__onednn$matmul":
        return _onednn_matmul_reads(instr, output_index, out_point, operand_index)
    if target == "__onednn$convolution":
        return _onednn_convolution_reads(instr, output_index, out_point, operand_index)
    if target == "TopK":
        return {tuple(out_point[:-1]) + (k,) for k in range(instr.operands[0].shape.dims[-1])}
    if target == "__cublas$lt$groupedMatmul":
        return _grouped_gemm_reads(instr, output_index, out_point, operand_index, runtime_values)
    if target == "AssumeGatherIndicesInBound":
        return {tuple(out_point)}
    if target in ("te_fused_attn_forward_ffi", "te_fused_attn_backward_ffi"):
        return attention_reads(instr, output_index, out_point, operand_index, runtime_values)
    if target in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"):
        return _sharding_reads(instr, out_point, runtime_values)
    raise NoReference(f"no reference semantics for custom-call target '{target}'")
