"""XLA:CPU's oneDNN custom-calls (``__onednn$matmul``, ``__onednn$convolution``): rules vs the
numpy reference on random shapes, transposes, windows, dim orders, both spellings of the
convolution config (as written, and XLA's "plus one"), post-op operands and scratchpads; configs
that do not describe the call stay UNDEFINED naming the target."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import parse_module_text
from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.hlo.model import ConvDimLabels
from hlo_index.ops import input_to_output, output_to_input

from .test_rules_custom_call import check_all
from .test_rules_reduce import window_axis, window_output_size

SETTINGS = settings(deadline=None, derandomize=True, max_examples=40)
ACTIVATIONS = ["RELU", "TANH", "GELU_ERF", "GELU_TANH", "LINEAR"]


def f32(*dims):
    return array_shape("f32", dims)


def scratch():
    return array_shape("u8", (64,))


@st.composite
def post_ops(draw, extra_shape):
    """(fusions.ops, extra operand shapes): activations take no operand, BIAS / BINARY_ADD one."""
    ops, shapes = [], []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(ACTIVATIONS + ["BIAS", "BINARY_ADD"]))
        if name in ("BIAS", "BINARY_ADD"):
            shapes.append(draw(extra_shape(name)))
        ops.append(name)
    return ops, shapes


@st.composite
def onednn_matmul(draw):
    rank = draw(st.integers(2, 4))
    batch = [draw(st.integers(1, 2)) for _ in range(rank - 2)]
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    ta, tb = draw(st.booleans()), draw(st.booleans())
    lhs = batch + ([k, m] if ta else [m, k])
    rhs = batch + ([n, k] if tb else [k, n])
    result = batch + [m, n]

    @st.composite
    def broadcastable(draw, name):
        # aligned at the last dim: a suffix of the result's dims, each kept or 1
        length = draw(st.integers(0, rank))
        return f32(*[d if draw(st.booleans()) else 1 for d in result[rank - length :]])

    ops, extras = draw(post_ops(broadcastable))
    config = {"transpose_a": ta, "transpose_b": tb, "fusions": {"ops": ops}}
    if draw(st.booleans()):  # proto3 JSON leaves out false flags and empty lists
        config = {key: value for key, value in config.items() if value and value != {"ops": []}}
    shape = tuple_shape(f32(*result), scratch()) if draw(st.booleans()) else f32(*result)
    return instruction(
        "custom-call",
        shape,
        [f32(*lhs), f32(*rhs)] + extras,
        custom_call_target="__onednn$matmul",
        backend_config=json.dumps({"outer_dimension_partitions": [], "onednn_matmul_config": config}),
    )


@SETTINGS
@given(onednn_matmul())
def test_onednn_matmul_matches_reference(instr):
    assert not any(m.is_undefined for om in output_to_input(instr) for m in om.maps), instr.attr("backend_config")
    check_all(instr, sample=150)


@st.composite
def onednn_convolution(draw):
    spatial = draw(st.integers(1, 2))
    axes = [
        draw(window_axis(allow_base_dilation=False).filter(lambda a: a[1].pad_low >= 0 and a[1].pad_high >= 0))
        for _ in range(spatial)
    ]
    groups = draw(st.integers(1, 2))
    kernel_in, out_features, batch = draw(st.integers(1, 2)), draw(st.integers(1, 2)) * groups, draw(st.integers(1, 2))
    rank = spatial + 2
    lhs_perm, kernel_perm, out_perm = (draw(st.permutations(list(range(rank)))) for _ in range(3))
    labels = ConvDimLabels(
        lhs_perm[0],
        lhs_perm[1],
        tuple(lhs_perm[2:]),
        kernel_perm[0],
        kernel_perm[1],
        tuple(kernel_perm[2:]),
        out_perm[0],
        out_perm[1],
        tuple(out_perm[2:]),
    )
    lhs, kernel, out = [0] * rank, [0] * rank, [0] * rank
    lhs[labels.input_batch], lhs[labels.input_feature] = batch, kernel_in * groups
    kernel[labels.kernel_input_feature], kernel[labels.kernel_output_feature] = kernel_in, out_features
    out[labels.output_batch], out[labels.output_feature] = batch, out_features
    for a, (n, wd) in enumerate(axes):
        lhs[labels.input_spatial[a]], kernel[labels.kernel_spatial[a]] = n, wd.size
        out[labels.output_spatial[a]] = window_output_size(n, wd)
    plus = draw(st.integers(0, 1))  # XLA versions write dims and window numbers as is, or plus one

    def numbers(values):
        return [str(v + plus) for v in values]

    def extra(name):
        return st.just(f32(out_features) if name == "BIAS" else f32(*out))

    ops, extras = draw(post_ops(extra))
    config = {
        "dims": str(rank),
        "input": {
            "dims": str(rank),
            "data": {
                "batch_dim": str(labels.input_batch),
                "feature_dim": str(labels.input_feature),
                "spatial_dims": numbers(labels.input_spatial),
            },
        },
        "kernel": {
            "dims": str(rank),
            "filter": {
                "input_feature_dim": str(labels.kernel_input_feature),
                "output_feature_dim": str(labels.kernel_output_feature),
                "spatial_dims": numbers(labels.kernel_spatial),
                "shape": [],
            },
        },
        "output": {
            "dims": str(rank),
            "data": {
                "batch_dim": str(labels.output_batch),
                "feature_dim": str(labels.output_feature),
                "spatial_dims": numbers(labels.output_spatial),
            },
        },
        "window": {
            "size": [],
            "pad_left": numbers(wd.pad_low for _, wd in axes),
            "pad_right": numbers(wd.pad_high for _, wd in axes),
            "strides": numbers(wd.stride for _, wd in axes),
            "window_dilations": numbers(wd.window_dilation for _, wd in axes),
        },
        "feature_groups": str(groups),
        "fusions": {"ops": ops},
    }
    shape = tuple_shape(f32(*out), scratch()) if draw(st.booleans()) else f32(*out)
    return instruction(
        "custom-call",
        shape,
        [f32(*lhs), f32(*kernel)] + extras,
        custom_call_target="__onednn$convolution",
        backend_config=json.dumps({"outer_dimension_partitions": [], "onednn_conv_config": config}),
    )


@SETTINGS
@given(onednn_convolution())
def test_onednn_convolution_matches_reference(instr):
    assert not any(m.is_undefined for om in output_to_input(instr) for m in om.maps), instr.attr("backend_config")
    check_all(instr, sample=150)


# XLA's own test (onednn_convolution_test.cc, ConvInsufficientScratchTest) with f32 for $dtype:
# written plus one, the layout reads b0f (spatial 1) with a 0io kernel.
XLA_CONV = """HloModule convolution.test.insufficient.scratch
ENTRY convolution.test.insufficient.scratch {
  p0 = f32[1,1024,1] parameter(0)
  p1 = f32[3,1,3] parameter(1)
  ROOT conv = (f32[1,1022,3], u8[128]) custom-call(p0, p1), custom_call_target="__onednn$convolution",
    backend_config={"outer_dimension_partitions":[],"onednn_conv_config":{"dims":"3","input":{"dims":"3",
    "data":{"batch_dim":"0","feature_dim":"2","spatial_dims":["2"]}},"kernel":{"dims":"3","filter":{
    "input_feature_dim":"1","output_feature_dim":"2","spatial_dims":["1"],"shape":[]}},"output":{"dims":"3",
    "data":{"batch_dim":"0","feature_dim":"2","spatial_dims":["2"]}},"window":{"size":[],"pad_left":["1"],
    "pad_right":["1"],"strides":["2"],"window_dilations":["2"]},"feature_groups":"1",
    "optimization_config":{"user_scratchpad":true}}}
}
"""


def test_xla_onednn_convolution_test_module():
    instr = parse_module_text(XLA_CONV).entry.root
    out2in = output_to_input(instr, 0)
    # output (0, q, o) reads input (0, q .. q + 2, 0) and kernel (0..2, 0, o)
    assert out2in[0].maps[0].read_set((0, 5, 1)) == {(0, q, 0) for q in (5, 6, 7)}
    assert out2in[1].maps[0].read_set((0, 5, 1)) == {(t, 0, 1) for t in range(3)}
    assert all(om.maps == () for om in output_to_input(instr, 1))  # the scratchpad
    check_all(instr, sample=100)


def test_configs_that_do_not_describe_the_call_stay_undefined():
    good = parse_module_text(XLA_CONV).entry.root
    for broken in ('"strides":["2"]', '"feature_dim":"2","spatial_dims":["2"]}},"kernel"'):
        replacement = '"strides":["3"]' if "strides" in broken else '"feature_dim":"1","spatial_dims":["2"]}},"kernel"'
        instr = parse_module_text(XLA_CONV.replace(broken, replacement, 1)).entry.root
        (m,) = output_to_input(instr)[0].maps
        assert m.is_undefined and "__onednn$convolution" in m.undefined_reason
    assert not output_to_input(good)[0].maps[0].is_undefined
    matmul = instruction(
        "custom-call",
        f32(2, 3),
        [f32(2, 4), f32(4, 3), f32(3)],
        custom_call_target="__onednn$matmul",
        backend_config=json.dumps({"onednn_matmul_config": {"fusions": {"ops": ["SWISH_MAYBE"]}}}),
    )
    for maps in [om.maps for om in output_to_input(matmul)] + input_to_output(matmul, 2):
        assert maps[0].is_undefined and "post-ops" in maps[0].undefined_reason
