"""custom-call targets whose element semantics are published, read from their attributes.

Each known target is translated into an equivalent standard op (a ``dot`` for cuBLAS gemms and
block-scaled dots, a ``convolution`` for cuDNN forward convolutions, ``topk`` for TopK), built on
the custom-call's own operands, plus the roles of the remaining operands and outputs:

* extra operands of a gemm / fused convolution: a scalar (alpha, scales) is read whole by every
  result element; an operand shaped like the result (cuBLAS ``C`` with beta != 0, cuDNN side
  input) is read elementwise; a bias vector is read at the result's last dim (cuBLASLt) or its
  output feature (cuDNN);
* extra outputs: the trailing ``u8``/``s8`` workspace reads nothing; a GELU/ReLU auxiliary output
  shaped like the result reads what the result reads; a scalar amax output (fp8 gemms with
  ``damax_output``, cuDNN graphs with ``amax``) reads everything any result element reads.

cuDNN backward convolutions (their own relation, not a standard op) are in ``custom_call_conv``,
TransformerEngine's fused attention in ``custom_call_attention``.
Anything that does not match its target's published layout, and every other target, is
UNDEFINED naming the target and what did not match: never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..affine import Expr, IndexingMap, const, dim, range_var
from ..affine.expr import replace_variables
from ..hlo.backend_config import backend_config, int_list
from ..hlo.build import instruction
from ..hlo.model import Instruction, Shape
from . import custom_call_attention, custom_call_conv, custom_call_onednn  # noqa: F401  (custom_call_onednn registers its translators)
from .custom_call_translation import (
    AMAX,
    Equivalent,
    ExtraRole,
    Translation,
    is_workspace,
    result_shapes,
    target_of,
    translate,
    translator,
)
from .registry import (
    InputToOutputRule,
    OperandMaps,
    OutputToInputRule,
    Reads,
    input_to_output_rule,
    output_to_input_rule,
)
from .rules_contraction import (
    convolution_input_to_output,
    convolution_output_to_input,
    dot_input_to_output,
    dot_output_to_input,
)
from .rules_ragged import ragged_dot_input_to_output, ragged_dot_output_to_input, ragged_layout
from .rules_sort import topk_input_to_output, topk_output_to_input
from .shape_maps import full_interval, generator_map, identity_map, zero_result_map

# What the rules below look at (the cache key: hlo_index.fusion.fingerprint): the target and its
# backend_config, the convolution attributes the cuDNN calls carry, and constant operands (cuDNN
# batch norm's feature_index).
_READS = Reads.of(
    "custom_call_target",
    "backend_config",
    "window",
    "dim_labels",
    "feature_group_count",
    "batch_group_count",
    operand_values=True,
)


def _result_and_rest(instr: Instruction) -> tuple[Shape, list[int]]:
    """The main result (output 0) and the other outputs' indices."""
    shapes = result_shapes(instr)
    return shapes[0], list(range(1, len(shapes)))


def _classify_extra(shape: Shape, result: Shape, vector_dim: int | None) -> ExtraRole | None:
    if shape.is_tuple:
        return None
    if shape.rank == 0:
        return ("scalar",)
    if shape.dims == result.dims:
        return ("same",)
    if vector_dim is not None and shape.rank == 1 and shape.dims[0] == result.dims[vector_dim]:
        return ("vector", vector_dim)
    return None


# ---- cuBLAS / cuBLASLt gemm ----------------------------------------------------------------


def _gemm_dnums(instr: Instruction) -> dict[str, Any] | None:
    cfg = backend_config(instr)
    if cfg is None:
        return None
    gemm = cfg.get("gemm_backend_config", cfg)
    return gemm if isinstance(gemm, dict) and isinstance(gemm.get("dot_dimension_numbers"), dict) else None


def _dot_result_dims(
    lhs: Shape, rhs: Shape, lb: tuple[int, ...], rb: tuple[int, ...], lc: tuple[int, ...], rc: tuple[int, ...]
) -> tuple[int, ...] | None:
    if len(lb) != len(rb) or len(lc) != len(rc):
        return None
    if any(not 0 <= d < lhs.rank for d in lb + lc) or any(not 0 <= d < rhs.rank for d in rb + rc):
        return None
    if any(lhs.dims[a] != rhs.dims[b] for a, b in zip(lb + lc, rb + rc)):
        return None
    lfree = [lhs.dims[d] for d in range(lhs.rank) if d not in lb and d not in lc]
    rfree = [rhs.dims[d] for d in range(rhs.rank) if d not in rb and d not in rc]
    return tuple(lhs.dims[d] for d in lb) + tuple(lfree) + tuple(rfree)


@translator("__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8", "__cublas$lt$matmul$mx")
def gemm_equivalent(instr: Instruction) -> Translation:
    gemm = _gemm_dnums(instr)
    if gemm is None:
        return "no gemm_backend_config.dot_dimension_numbers in backend_config"
    d = gemm["dot_dimension_numbers"]
    lb, rb = int_list(d.get("lhs_batch_dimensions")), int_list(d.get("rhs_batch_dimensions"))
    lc, rc = int_list(d.get("lhs_contracting_dimensions")), int_list(d.get("rhs_contracting_dimensions"))
    if lb is None or rb is None or lc is None or rc is None or len(instr.operands) < 2:
        return "malformed dot_dimension_numbers"
    lhs, rhs = instr.operands[0].shape, instr.operands[1].shape
    result, rest = _result_and_rest(instr)
    if _dot_result_dims(lhs, rhs, lb, rb, lc, rc) != result.dims:
        return f"result shape {result} does not match the dot of the operands by dot_dimension_numbers"
    core = instruction(
        "dot",
        result,
        instr.operands[:2],
        name=instr.name,
        lhs_batch_dims=lb,
        rhs_batch_dims=rb,
        lhs_contracting_dims=lc,
        rhs_contracting_dims=rc,
    )
    outputs = {0: 0}
    shapes = result_shapes(instr)
    for j in rest:
        if shapes[j].rank == 0 and gemm.get("damax_output"):
            outputs[j] = AMAX
        elif shapes[j].dims == result.dims and not is_workspace(shapes[j]):
            outputs[j] = 0  # auxiliary output (pre-activation) reads what the result reads
        elif not (j == len(shapes) - 1 and is_workspace(shapes[j])):
            return f"output {j} {shapes[j]} is neither an auxiliary result nor the workspace"
    extras = {}
    for k in range(2, len(instr.operands)):
        role = _classify_extra(instr.operands[k].shape, result, result.rank - 1 if result.rank else None)
        if role is None:
            return f"operand {k} {instr.operands[k].shape} is not a scale, bias vector or matrix of the result's shape"
        extras[k] = role
    return Equivalent(core, dot_output_to_input, dot_input_to_output, (0, 1), outputs, extras)


@translator("__cublas$lt$groupedMatmul")
def grouped_gemm_equivalent(instr: Instruction) -> Translation:
    """cuBLASLt's grouped gemm (and hipBLASLt's: XLA on ROCm emits the same target) computes the
    ``ragged-dot`` its ``grouped_gemm_backend_config.ragged_dot_dimension_numbers`` describe, on
    (lhs, rhs, group_sizes); the group sizes are a runtime operand. The trailing s8/u8 output is
    the workspace."""
    cfg = backend_config(instr) or {}
    ragged = (cfg.get("grouped_gemm_backend_config") or {}).get("ragged_dot_dimension_numbers")
    if not isinstance(ragged, dict) or not isinstance(ragged.get("dot_dimension_numbers"), dict):
        return "no grouped_gemm_backend_config.ragged_dot_dimension_numbers in backend_config"
    d = ragged["dot_dimension_numbers"]
    numbers = {
        "lhs_batch_dims": int_list(d.get("lhs_batch_dimensions")),
        "rhs_batch_dims": int_list(d.get("rhs_batch_dimensions")),
        "lhs_contracting_dims": int_list(d.get("lhs_contracting_dimensions")),
        "rhs_contracting_dims": int_list(d.get("rhs_contracting_dimensions")),
        "lhs_ragged_dims": int_list(ragged.get("lhs_ragged_dimensions")),
        "rhs_group_dims": int_list(ragged.get("rhs_group_dimensions")),
    }
    if any(v is None for v in numbers.values()):
        return "malformed ragged_dot_dimension_numbers"
    if len(instr.operands) != 3:
        return f"expected (lhs, rhs, group_sizes), got {len(instr.operands)} operands"
    shapes = result_shapes(instr)
    if len(shapes) > 1 and not (len(shapes) == 2 and is_workspace(shapes[1])):
        return "outputs are not (result[, workspace])"
    core = instruction("ragged-dot", shapes[0], instr.operands, name=instr.name, **numbers)
    layout = ragged_layout(core)
    if isinstance(layout, str):
        return layout
    return Equivalent(core, ragged_dot_output_to_input, ragged_dot_input_to_output, (0, 1, 2), {0: 0})


@translator("AssumeGatherIndicesInBound")
def assume_in_bounds_equivalent(instr: Instruction) -> Translation:
    """TPU's assertion that a gather's indices are in bounds: its result is its operand."""
    if len(instr.operands) != 1 or instr.shape.is_tuple or instr.operands[0].shape.dims != instr.shape.dims:
        return "expected one array operand of the result's shape"
    return Equivalent(instr, _identity_out2in, _identity_in2out, (), {0: 0}, {0: ("same",)})


def _identity_out2in(core: Instruction, output_index: int) -> list[OperandMaps]:
    return []


def _identity_in2out(core: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    return [()]


@translator("tpu_custom_call")
def pallas_tpu_kernel(instr: Instruction) -> Translation:
    return "a Pallas TPU kernel: its body is compiled (serialized Mosaic in backend_config), its accesses unread"


@translator("__op$block_scaled_dot")
def block_scaled_dot_equivalent(instr: Instruction) -> Translation:
    """(lhs [B?, M, K], rhs [B?, N, K], lhs_scale [B?, M, K/bs], rhs_scale [B?, N, K/bs][, global scale]):
    a dot over the last dims; each scale block covers ``bs`` consecutive contracted elements."""
    ops = instr.operands
    if len(ops) not in (4, 5) or instr.shape.is_tuple:
        return "expected (lhs, rhs, lhs_scale, rhs_scale[, global_scale]) and one result"
    lhs, rhs, ls, rs = (o.shape for o in ops[:4])
    if lhs.rank not in (2, 3) or rhs.rank != lhs.rank or ls.rank != lhs.rank or rs.rank != lhs.rank:
        return "operands are not all rank 2 or all rank 3"
    k = lhs.dims[-1]
    lb = rb = (0,) if lhs.rank == 3 else ()
    lc = rc = (lhs.rank - 1,)
    if _dot_result_dims(lhs, rhs, lb, rb, lc, rc) != instr.shape.dims:
        return "result shape is not the dot over the operands' last dims"
    for operand, scale in ((lhs, ls), (rhs, rs)):
        blocks = scale.dims[-1]
        if scale.dims[:-1] != operand.dims[:-1] or blocks == 0 or k % blocks:
            return f"scale {scale} does not block operand {operand} along its last dim"
    if len(ops) == 5 and ops[4].shape.rank != 0:
        return "global scale is not a scalar"
    core = instruction(
        "dot",
        instr.shape,
        ops[:2],
        name=instr.name,
        lhs_batch_dims=lb,
        rhs_batch_dims=rb,
        lhs_contracting_dims=lc,
        rhs_contracting_dims=rc,
    )
    extras = {4: ("scalar",)} if len(ops) == 5 else {}
    return Equivalent(core, dot_output_to_input, dot_input_to_output, (0, 1), {0: 0}, extras)


def _block_scale_maps(instr: Instruction, operand: int) -> IndexingMap:
    """Result -> scale of operand 0 or 1 (operands 2, 3): the blocks of the contracted row."""
    scale = instr.operands[operand].shape
    out = instr.shape.dims
    batch = 1 if scale.rank == 3 else 0
    lhs_free = instr.operands[0].shape.rank - 1 - batch
    own = dim(batch) if operand == 2 else dim(batch + lhs_free)
    results = ([dim(0)] if batch else []) + [own, range_var(0)]
    return IndexingMap([full_interval(n) for n in out], [full_interval(scale.dims[-1])], (), results)


def _block_scale_in2out(instr: Instruction, operand: int) -> IndexingMap:
    """Scale element -> every result element of its row (all columns of the other operand)."""
    scale = instr.operands[operand].shape
    out = instr.shape.dims
    batch = 1 if scale.rank == 3 else 0
    results = [dim(0)] if batch else []
    free = range_var(0)
    results += [dim(batch), free] if operand == 2 else [free, dim(batch)]
    other = out[-1] if operand == 2 else out[batch]
    return IndexingMap([full_interval(n) for n in scale.dims], [full_interval(other)], (), results)


# ---- cuDNN forward convolutions ------------------------------------------------------------


def _conv_core(instr: Instruction, result: Shape, operands: Sequence[Instruction]) -> Instruction:
    attrs = {
        k: instr.attrs[k]
        for k in ("window", "dim_labels", "feature_group_count", "batch_group_count")
        if k in instr.attrs
    }
    return instruction("convolution", result, operands, name=instr.name, **attrs)


@translator("__cudnn$convForward", "__cudnn$convBiasActivationForward", "__cudnn$convForwardGraph")
def cudnn_forward_equivalent(instr: Instruction) -> Translation:
    labels = instr.attr("dim_labels")
    if labels is None or len(instr.operands) < 2:
        return "no dim_labels, or fewer than two operands"
    shapes = result_shapes(instr)
    result = shapes[0]
    outputs = {0: 0}
    graph = str((backend_config(instr) or {}).get("cudnn_conv_backend_config", {}).get("serialized_graph", ""))
    for j in range(1, len(shapes)):
        if shapes[j].rank == 0 and "amax(" in graph:
            outputs[j] = AMAX
        elif not (j == len(shapes) - 1 and is_workspace(shapes[j])):
            return f"output {j} {shapes[j]} is not the workspace or an amax"
    core = _conv_core(instr, result, instr.operands[:2])
    expected = custom_call_conv.forward_result_dims(core)
    if expected != result.dims:
        return f"result shape {result} is not the convolution of its operands by window / dim_labels"
    target = target_of(instr)
    extras = {}
    for k in range(2, len(instr.operands)):
        shape = instr.operands[k].shape
        vector_dim = labels.output_feature if target == "__cudnn$convBiasActivationForward" and k == 2 else None
        role = _classify_extra(shape, result, vector_dim)
        if role is None or (role[0] == "vector" and k != 2):
            return f"operand {k} {shape} is not a bias, side input or scale of the result"
        extras[k] = role
    return Equivalent(core, convolution_output_to_input, convolution_input_to_output, (0, 1), outputs, extras)


# ---- cuDNN batch normalisation (XLA's older cudnn_batchnorm_rewriter) ------------------------

_CUDNN_BATCH_NORM = {
    "__cudnn$batchNormalizationForwardTraining": ("batch-norm-training", 3),
    "__cudnn$batchNormalizationForwardInference": ("batch-norm-inference", 5),
    "__cudnn$batchNormalizationBackward": ("batch-norm-grad", 5),
}


@translator(*_CUDNN_BATCH_NORM)
def cudnn_batch_norm_equivalent(instr: Instruction) -> Translation:
    """(arrays..., epsilon, feature_index): the batch-norm op on the arrays; the two trailing
    configuration scalars are read by every output element."""
    from .starts import constant_values

    opcode, arrays = _CUDNN_BATCH_NORM[target_of(instr)]
    ops = instr.operands
    if len(ops) != arrays + 2 or any(o.shape.rank != 0 for o in ops[arrays:]):
        return f"expected {arrays} arrays, epsilon and feature_index"
    feature = constant_values(ops[arrays + 1])
    if feature is None:
        return "feature_index is not a constant"
    outputs = result_shapes(instr)
    expected = 1 if opcode == "batch-norm-inference" else 3
    if len(outputs) < expected:
        return f"expected {expected} outputs"
    shape = instr.shape if expected > 1 or not instr.shape.is_tuple else outputs[0]
    if instr.shape.is_tuple and len(outputs) > expected:
        from ..hlo.build import tuple_shape

        shape = tuple_shape(*outputs[:expected]) if expected > 1 else outputs[0]
    core = instruction(opcode, shape, ops[:arrays], name=instr.name, feature_index=str(int(feature.flat[0])))
    from .rules_batch_norm import batch_norm_input_to_output, batch_norm_output_to_input

    extras = {arrays: ("scalar", "every"), arrays + 1: ("scalar", "every")}
    return Equivalent(
        core,
        batch_norm_output_to_input,
        batch_norm_input_to_output,
        tuple(range(arrays)),
        {j: j for j in range(expected)},
        extras,
    )


# ---- TopK, sharding annotations ------------------------------------------------------------


@translator("TopK")
def topk_equivalent(instr: Instruction) -> Translation:
    if len(instr.operands) != 1 or instr.operands[0].shape.rank == 0:
        return "expected one array operand"
    shapes = result_shapes(instr)
    operand = instr.operands[0].shape
    if any(s.dims[:-1] != operand.dims[:-1] for s in shapes):
        return "outputs do not keep the operand's leading dims"
    core = instruction("topk", instr.shape, instr.operands, name=instr.name)
    return Equivalent(core, topk_output_to_input, topk_input_to_output, (0,), {j: j for j in range(len(shapes))})


def _sharding_maps(instr: Instruction) -> tuple[IndexingMap, IndexingMap] | str:
    """(out->in, in->out) of Sharding / SPMDFullToShardShape / SPMDShardToFullShape.

    The value is unchanged, only its partitioning: per shard the identity. A full-to-shard
    output element reads the full element at its shard's offset (the partition's tile index is
    a runtime variable over every tile); a shard-to-full element reads its offset in the shard.
    """
    if len(instr.operands) != 1 or instr.shape.is_tuple or instr.operands[0].shape.is_tuple:
        return "expected one array operand and one array result"
    src, dst = instr.operands[0].shape.dims, instr.shape.dims
    if src == dst:
        return identity_map(dst), identity_map(dst)
    if len(src) != len(dst):
        return f"operand {src} and result {dst} ranks differ"
    target = target_of(instr)
    full, shard = (src, dst) if target == "SPMDFullToShardShape" else (dst, src)
    if target not in ("SPMDFullToShardShape", "SPMDShardToFullShape") or any(
        s == 0 or f % s for f, s in zip(full, shard)
    ):
        return f"shard {shard} does not tile the full shape {full} evenly"
    from ..affine import Interval, RuntimeVar, runtime_var

    tiled = [a for a in range(len(full)) if full[a] != shard[a]]
    if target == "SPMDShardToFullShape":
        out2in = IndexingMap(
            [full_interval(n) for n in full],
            (),
            (),
            [dim(a) % shard[a] if a in tiled else dim(a) for a in range(len(full))],
        )
        in2out = IndexingMap(
            [full_interval(n) for n in shard],
            [full_interval(full[a] // shard[a]) for a in tiled],
            (),
            [dim(a) + range_var(tiled.index(a)) * shard[a] if a in tiled else dim(a) for a in range(len(full))],
        )
        return out2in, in2out
    tiles = [
        RuntimeVar(Interval(0, full[a] // shard[a] - 1), f"tile index of this partition along dim {a}") for a in tiled
    ]
    out2in = IndexingMap(
        [full_interval(n) for n in shard],
        (),
        tiles,
        [dim(a) + runtime_var(tiled.index(a)) * shard[a] if a in tiled else dim(a) for a in range(len(full))],
    )
    # on the partition of tile ``rt``, a full element is read by the shard element at its offset
    # from the tile's start, where that lies in the shard (the elements of other tiles are read
    # on other partitions)
    offsets = {a: dim(a) - runtime_var(tiled.index(a)) * shard[a] for a in tiled}
    in2out = IndexingMap(
        [full_interval(n) for n in full],
        (),
        tiles,
        [offsets.get(a, dim(a)) for a in range(len(full))],
        [(offsets[a], Interval(0, shard[a] - 1)) for a in tiled],
    )
    return out2in, in2out


SHARDING_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


# ---- the rules -------------------------------------------------------------------------------


def _undefined(instr: Instruction, why: str) -> IndexingMap:
    target = target_of(instr)
    return IndexingMap.undefined(f"custom-call to '{target}': {why}")


def _every(role: ExtraRole) -> bool:
    """A configuration scalar read by every output, not only the main result."""
    every: bool = role[0] == "scalar" and role[-1] == "every"
    return every


def _extra_out2in(role: ExtraRole, result_dims: Sequence[int]) -> IndexingMap:
    if role[0] == "scalar":
        return zero_result_map(result_dims)
    if role[0] == "same":
        return identity_map(result_dims)
    if role[0] == "broadcast":
        offset = len(result_dims) - len(role[1])
        return IndexingMap(
            [full_interval(n) for n in result_dims],
            (),
            (),
            [const(0) if n == 1 else dim(offset + i) for i, n in enumerate(role[1])],
        )
    return IndexingMap([full_interval(n) for n in result_dims], (), (), [dim(role[1])])


def _extra_in2out(role: ExtraRole, operand_dims: Sequence[int], result_dims: Sequence[int]) -> IndexingMap:
    if role[0] == "scalar":
        return generator_map(result_dims)
    if role[0] == "same":
        return identity_map(result_dims)
    if role[0] == "broadcast":
        offset = len(result_dims) - len(role[1])
        spread = [j for j, n in enumerate(result_dims) if j < offset or role[1][j - offset] == 1]
        return IndexingMap(
            [full_interval(n) for n in operand_dims],
            [full_interval(result_dims[j]) for j in spread],
            (),
            [range_var(spread.index(j)) if j in spread else dim(j - offset) for j in range(len(result_dims))],
        )
    axis = role[1]
    others = [a for a in range(len(result_dims)) if a != axis]
    results = [dim(0) if a == axis else range_var(others.index(a)) for a in range(len(result_dims))]
    return IndexingMap(
        [full_interval(n) for n in operand_dims], [full_interval(result_dims[a]) for a in others], (), results
    )


# Targets that are no standard op but a relation of their own: target -> (out2in, in2out).
_OWN_RELATIONS: dict[str, tuple[OutputToInputRule, InputToOutputRule]] = {
    **dict.fromkeys(
        custom_call_conv.BACKWARD_TARGETS,
        (custom_call_conv.backward_output_to_input, custom_call_conv.backward_input_to_output),
    ),
    **dict.fromkeys(
        custom_call_attention.TARGETS,
        (custom_call_attention.attention_output_to_input, custom_call_attention.attention_input_to_output),
    ),
}


@output_to_input_rule("custom-call", reads=_READS)
def custom_call_output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    n = len(instr.operands) or len(instr.operand_names)
    if target_of(instr) in SHARDING_TARGETS:
        got = _sharding_maps(instr)
        return [OperandMaps(0, (got[0] if not isinstance(got, str) else _undefined(instr, got),))]
    own = _OWN_RELATIONS.get(target_of(instr))
    if own is not None:
        return own[0](instr, output_index)
    eq = translate(instr)
    if isinstance(eq, str):
        return [OperandMaps(k, (_undefined(instr, eq),)) for k in range(n)]
    if output_index not in eq.outputs:
        return [OperandMaps(k, ()) for k in range(n)]  # the workspace reads nothing
    core_out = eq.outputs[output_index]
    if core_out == AMAX:
        return [
            OperandMaps(om.operand, tuple(_over_whole_result(m) for m in om.maps))
            for om in _result_out2in(instr, eq, 0)
        ]
    return _result_out2in(instr, eq, core_out)


def _result_out2in(instr: Instruction, eq: Equivalent, core_out: int) -> list[OperandMaps]:
    n = len(instr.operands)
    core_maps = eq.out2in(eq.core, core_out)
    result = [OperandMaps(k, ()) for k in range(n)]
    for core_k, k in enumerate(eq.core_operands):
        result[k] = OperandMaps(k, core_maps[core_k].maps)
    result_dims = eq.core.shape.leaf(core_out).dims
    for k, role in eq.extras.items():
        result[k] = OperandMaps(k, (_extra_out2in(role, result_dims),) if core_out == 0 or _every(role) else ())
    if target_of(instr) == "__op$block_scaled_dot":
        for k in (2, 3):
            result[k] = OperandMaps(k, (_block_scale_maps(instr, k),))
    return result


def _over_whole_result(m: IndexingMap) -> IndexingMap:
    """A result -> operand map turned into scalar -> operand: the result's dims become range
    variables, so the read set is the union over every result element."""
    if m.is_undefined or m.is_known_empty:
        return m
    n = m.num_dims
    swap = {dim(i): range_var(i) for i in range(n)}
    swap.update({range_var(i): range_var(n + i) for i in range(m.num_range_vars)})
    memo: dict[Expr, Expr] = {}
    return IndexingMap(
        (),
        tuple(m.dims) + tuple(m.range_vars),
        m.runtime_vars,
        [replace_variables(e, swap.get, memo) for e in m.results],
        [(replace_variables(e, swap.get, memo), iv) for e, iv in m.constraints],
    )


@input_to_output_rule("custom-call", reads=_READS)
def custom_call_input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    outputs = instr.shape.num_outputs
    if target_of(instr) in SHARDING_TARGETS:
        got = _sharding_maps(instr)
        return [(got[1] if not isinstance(got, str) else _undefined(instr, got),)]
    own = _OWN_RELATIONS.get(target_of(instr))
    if own is not None:
        return own[1](instr, operand_index)
    eq = translate(instr)
    if isinstance(eq, str):
        return [(_undefined(instr, eq),) for _ in range(outputs)]
    per_output: list[tuple[IndexingMap, ...]] = []
    for j in range(outputs):
        if j not in eq.outputs:
            per_output.append(())
            continue
        core_out = eq.outputs[j]
        if core_out == AMAX:  # operand element -> the scalar, when some result element reads it
            per_output.append(tuple(_to_scalar(m) for m in _result_in2out(instr, eq, operand_index, 0)))
            continue
        per_output.append(_result_in2out(instr, eq, operand_index, core_out))
    return per_output


def _to_scalar(m: IndexingMap) -> IndexingMap:
    if m.is_undefined or m.is_known_empty:
        return m
    return IndexingMap(m.dims, m.range_vars, m.runtime_vars, (), m.constraints)


def _result_in2out(instr: Instruction, eq: Equivalent, operand_index: int, core_out: int) -> tuple[IndexingMap, ...]:
    operand_dims = instr.operands[operand_index].shape.dims
    result_dims = eq.core.shape.leaf(core_out).dims
    if operand_index in eq.core_operands:
        return eq.in2out(eq.core, eq.core_operands.index(operand_index))[core_out]
    if target_of(instr) == "__op$block_scaled_dot" and operand_index in (2, 3):
        return (_block_scale_in2out(instr, operand_index),)
    if operand_index in eq.extras and (core_out == 0 or _every(eq.extras[operand_index])):
        return (_extra_in2out(eq.extras[operand_index], operand_dims, result_dims),)
    return ()
