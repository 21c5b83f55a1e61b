"""custom-calls with published semantics (cuBLAS gemm, block-scaled dot, cuDNN convolutions,
TopK, sharding annotations): rules vs the numpy reference on random configurations, real dumps
from ../shared/conformance/xla_hlo, and unknown targets staying UNDEFINED with the target."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import load, parse_module_text
from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.hlo.model import WindowDim
from hlo_index.ops import input_to_output, output_to_input
from hlo_index.reference import read_set

from .oracle_check import Runtime, check_in2out, check_out2in
from .test_rules_contraction import convolution

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)
XLA_HLO = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "xla_hlo"


def f32(*dims):
    return array_shape("f32", dims)


def workspace(n=0):
    return array_shape("s8", (n,))


def check_all(instr, sample=300, runtime=None):
    for j in range(instr.shape.num_outputs):
        check_out2in(instr, j, sample=sample, runtime=runtime)
    for i in range(len(instr.operands)):
        check_in2out(instr, i, sample=sample, runtime=runtime)


def gemm_config(lb, rb, lc, rc, wrapped=True, **extra):
    dnums = {
        "lhs_batch_dimensions": [str(d) for d in lb],
        "rhs_batch_dimensions": [str(d) for d in rb],
        "lhs_contracting_dimensions": [str(d) for d in lc],
        "rhs_contracting_dimensions": [str(d) for d in rc],
    }
    gemm = {"alpha_real": 1, "beta": 0, "dot_dimension_numbers": dnums, "epilogue": "DEFAULT", **extra}
    return json.dumps({"operation_queue_id": "0", "gemm_backend_config": gemm} if wrapped else gemm)


@st.composite
def gemm(draw):
    sizes = st.integers(1, 3)
    nb, nc = draw(st.integers(0, 1)), draw(st.integers(1, 2))
    nlf, nrf = draw(st.integers(0, 1)), draw(st.integers(1, 1))
    batch, contract = [draw(sizes) for _ in range(nb)], [draw(sizes) for _ in range(nc)]
    lfree, rfree = [draw(sizes) for _ in range(nlf)], [draw(sizes) for _ in range(nrf)]
    lperm = draw(st.permutations(list(range(nb + nc + nlf))))
    rperm = draw(st.permutations(list(range(nb + nc + nrf))))
    ldims, rdims = [0] * len(lperm), [0] * len(rperm)
    for role, pos in enumerate(lperm):
        ldims[pos] = (batch + contract + lfree)[role]
    for role, pos in enumerate(rperm):
        rdims[pos] = (batch + contract + rfree)[role]
    lb, lc = lperm[:nb], lperm[nb : nb + nc]
    rb, rc = rperm[:nb], rperm[nb : nb + nc]
    out = batch + [ldims[d] for d in sorted(lperm[nb + nc :])] + [rdims[d] for d in sorted(rperm[nb + nc :])]
    operands = [f32(*ldims), f32(*rdims)]
    extras = draw(st.lists(st.sampled_from(["matrix", "bias", "scalar"]), max_size=3))
    operands.extend(f32(*out) if e == "matrix" else f32(out[-1]) if e == "bias" else f32() for e in extras)
    outputs = [f32(*out)]
    if draw(st.booleans()):
        outputs.append(f32(*out))  # GELU_AUX / RELU_AUX
    amax = draw(st.booleans())
    if amax:
        outputs.append(f32())  # fp8 gemm with damax_output
    if draw(st.booleans()):
        outputs.append(workspace(draw(st.integers(0, 4))))
    shape = tuple_shape(*outputs) if len(outputs) > 1 or draw(st.booleans()) else outputs[0]
    target = draw(st.sampled_from(["__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"]))
    return instruction(
        "custom-call",
        shape,
        operands,
        custom_call_target=target,
        backend_config=gemm_config(lb, rb, lc, rc, wrapped=draw(st.booleans()), damax_output=amax),
    )


@SETTINGS
@given(gemm())
def test_gemm_matches_reference(instr):
    check_all(instr)


def test_gemm_with_bias_maps_read_the_last_output_dim():
    instr = instruction(
        "custom-call",
        tuple_shape(f32(2, 4), workspace(8)),
        [f32(2, 3), f32(3, 4), f32(4)],
        custom_call_target="__cublas$lt$matmul",
        backend_config=gemm_config((), (), (1,), (0,)),
    )
    lhs, _, bias = output_to_input(instr, 0)
    assert str(bias.maps[0]) == "(d0, d1) -> (d1), domain: d0 in [0, 1], d1 in [0, 3]"
    assert str(lhs.maps[0]).startswith("(d0, d1)[s0] -> (d0, s0)")
    assert all(om.maps == () for om in output_to_input(instr, 1))  # the workspace reads nothing


def test_gemm_whose_shape_contradicts_its_dimension_numbers_is_undefined():
    instr = instruction(
        "custom-call",
        f32(2, 5),
        [f32(2, 3), f32(3, 4)],
        custom_call_target="__cublas$gemm",
        backend_config=gemm_config((), (), (1,), (0,)),
    )
    maps = output_to_input(instr)[0].maps
    assert maps[0].is_undefined and "__cublas$gemm" in maps[0].undefined_reason


@pytest.mark.parametrize("lhs_contracting", [(-5,), (2,)])
def test_gemm_whose_dimension_numbers_name_no_dimension_is_undefined(lhs_contracting):
    instr = instruction(
        "custom-call",
        f32(2, 4),
        [f32(2, 3), f32(3, 4)],
        custom_call_target="__cublas$gemm",
        backend_config=gemm_config((), (), lhs_contracting, (0,)),
    )
    for om in output_to_input(instr):
        assert all(m.is_undefined for m in om.maps)


@SETTINGS
@given(st.data())
def test_block_scaled_dot_matches_reference(data):
    batch = [data.draw(st.integers(1, 2))] if data.draw(st.booleans()) else []
    m, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    blocks, size = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    k = blocks * size
    operands = [f32(*batch, m, k), f32(*batch, n, k), f32(*batch, m, blocks), f32(*batch, n, blocks)]
    if data.draw(st.booleans()):
        operands.append(f32())
    instr = instruction("custom-call", f32(*batch, m, n), operands, custom_call_target="__op$block_scaled_dot")
    check_all(instr)


@st.composite
def cudnn_forward(draw):
    conv = draw(convolution())
    labels = conv.attr("dim_labels")
    result = conv.shape
    operands = [o.shape for o in conv.operands]
    target = draw(
        st.sampled_from(["__cudnn$convForward", "__cudnn$convBiasActivationForward", "__cudnn$convForwardGraph"])
    )
    outputs = [result]
    if target == "__cudnn$convBiasActivationForward":
        operands.append(f32(result.dims[labels.output_feature]))
        if draw(st.booleans()):
            operands.append(f32(*result.dims))
    if target == "__cudnn$convForwardGraph":
        operands += [f32()] * draw(st.integers(0, 2))
        outputs.append(f32())
    attrs = {k: conv.attrs[k] for k in ("window", "dim_labels", "feature_group_count", "batch_group_count")}
    graph = json.dumps({"cudnn_conv_backend_config": {"serialized_graph": "1:[f32]conv();2:[f32]amax(1);"}})
    return instruction(
        "custom-call",
        tuple_shape(*outputs, array_shape("u8", (0,))),
        operands,
        custom_call_target=target,
        backend_config=graph,
        **attrs,
    )


@SETTINGS
@given(cudnn_forward())
def test_cudnn_forward_convolutions_match_reference(instr):
    check_all(instr, sample=150)


@st.composite
def cudnn_backward(draw):
    conv = draw(convolution())
    window = tuple(
        WindowDim(w.size, w.stride, w.pad_low, w.pad_high, w.window_dilation, w.base_dilation)
        for w in conv.attr("window")
    )
    if (conv.attr("feature_group_count") or 1) > 1 or (conv.attr("batch_group_count") or 1) > 1:
        conv = draw(
            convolution().filter(lambda c: c.attr("feature_group_count") == 1 and c.attr("batch_group_count") == 1)
        )
        window = tuple(
            WindowDim(w.size, w.stride, w.pad_low, w.pad_high, w.window_dilation, w.base_dilation)
            for w in conv.attr("window")
        )
    x, w = (o.shape for o in conv.operands)
    y = conv.shape
    scratch = array_shape("u8", (0,))
    if draw(st.booleans()):
        return instruction(
            "custom-call",
            tuple_shape(x, scratch),
            [y, w],
            custom_call_target="__cudnn$convBackwardInput",
            window=window,
            dim_labels=conv.attr("dim_labels"),
        )
    return instruction(
        "custom-call",
        tuple_shape(w, scratch),
        [x, y],
        custom_call_target="__cudnn$convBackwardFilter",
        window=window,
        dim_labels=conv.attr("dim_labels"),
    )


@SETTINGS
@given(cudnn_backward())
def test_cudnn_backward_convolutions_match_reference(instr):
    check_all(instr, sample=150)


@SETTINGS
@given(st.data())
def test_topk_custom_call_matches_reference(data):
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    n = data.draw(st.integers(1, 6))
    k = data.draw(st.integers(1, n))
    shape = tuple_shape(f32(*lead, k), array_shape("s32", (*lead, k)))
    check_all(instruction("custom-call", shape, [f32(*lead, n)], custom_call_target="TopK"))


@SETTINGS
@given(st.data())
def test_sharding_custom_calls_match_reference(data):
    shard = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    tiles = [data.draw(st.integers(1, 3)) for _ in shard]
    full = [s * t for s, t in zip(shard, tiles)]
    tile = tuple(data.draw(st.integers(0, t - 1)) for t in tiles)
    check_all(instruction("custom-call", f32(*full), [f32(*full)], custom_call_target="Sharding"))
    check_all(instruction("custom-call", f32(*full), [f32(*shard)], custom_call_target="SPMDShardToFullShape"))
    to_shard = instruction("custom-call", f32(*shard), [f32(*full)], custom_call_target="SPMDFullToShardShape")
    runtime_vars = [t for s, f, t in zip(shard, full, tile) if s != f]
    check_out2in(to_shard, runtime=Runtime(tuple(runtime_vars), {"tile": tile}))
    # a full element is read on its own tile's partition only
    check_in2out(to_shard, 0, runtime=Runtime(tuple(runtime_vars), {"tile": tile}))


def test_unknown_target_stays_undefined_naming_it():
    instr = instruction("custom-call", f32(4), [f32(4)], custom_call_target="my_kernel")
    (om,) = output_to_input(instr)
    assert om.maps[0].is_undefined and "'my_kernel'" in om.maps[0].undefined_reason
    assert input_to_output(instr, 0)[0][0].is_undefined


def _custom_calls(path: Path):
    for result in load(str(path)):
        if result.module is None:
            continue
        for comp in result.module.computations:
            for instr in comp.instructions:
                if instr.opcode == "custom-call":
                    yield instr


REAL = [
    "xla-cc-gpu/dynamic_slice_fusion_test__L00260_CublasGemmWithWorkspace.hlo",
    "xla-cc-gpu/block_scaling_rewriter_test__L00085_ExpandBlockScaledDotCustomCall.hlo",
    "xla-cc-gpu/conv_layout_normalization_test__L00125_GraphConvF8.hlo",
]


@pytest.mark.parametrize("name", REAL)
def test_real_dumps_are_known_and_match_reference(name):
    path = XLA_HLO / name
    if not path.exists():
        pytest.skip("conformance dumps not present")
    calls = list(_custom_calls(path))
    assert calls, f"no custom-call parsed in {name}"
    for instr in calls:
        for om in output_to_input(instr, 0):
            assert om.maps and not any(m.is_undefined for m in om.maps), (instr.name, om)
        check_out2in(instr, 0, sample=40)


def test_backward_input_text_form():
    text = """HloModule m
ENTRY e {
  dy = f32[1,20,257]{2,1,0} parameter(0)
  w = f32[31,257,136]{2,1,0} parameter(1)
  ROOT c = (f32[1,23,136]{2,1,0}, u8[0]{0}) custom-call(dy, w), window={size=31 stride=2 pad=23_23}, dim_labels=b0f_0oi->b0f, custom_call_target="__cudnn$convBackwardInput", backend_config={"cudnn_conv_backend_config":{conv_result_scale:1}}
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line
    instr = parse_module_text(text).entry.root
    check_out2in(instr, 0, sample=30)


def constant(shape, literal: str, name: str):
    c = instruction("constant", shape, name=name)
    c.literal = literal
    return c


@SETTINGS
@given(st.data())
def test_cudnn_batch_norm_custom_calls_match_reference(data):
    dims = data.draw(st.lists(st.integers(1, 3), min_size=2, max_size=3))
    f = data.draw(st.integers(0, len(dims) - 1))
    x, vec = f32(*dims), f32(dims[f])
    target = data.draw(
        st.sampled_from(
            [
                "__cudnn$batchNormalizationForwardTraining",
                "__cudnn$batchNormalizationForwardInference",
                "__cudnn$batchNormalizationBackward",
            ]
        )
    )
    arrays = {
        "__cudnn$batchNormalizationForwardTraining": [x, vec, vec],
        "__cudnn$batchNormalizationForwardInference": [x, vec, vec, vec, vec],
        "__cudnn$batchNormalizationBackward": [x, vec, vec, vec, x],
    }[target]
    shape = x if target.endswith("Inference") else tuple_shape(x, vec, vec)
    from hlo_index.hlo.build import parameter

    operands = [parameter(k, s) for k, s in enumerate(arrays)]
    operands += [constant(f32(), "0.001", name="eps"), constant(array_shape("s64", ()), str(f), name="fi")]
    check_all(instruction("custom-call", shape, operands, custom_call_target=target), sample=100)


def _grouped_gemm(rows, k, n, groups):
    numbers = {"lhs_contracting_dimensions": ["1"], "rhs_contracting_dimensions": ["1"]}
    numbers.update(lhs_batch_dimensions=[], rhs_batch_dimensions=[])
    config = {
        "grouped_gemm_backend_config": {
            "gemm_backend_config": {"alpha_real": 1, "beta": 0, "dot_dimension_numbers": numbers},
            "ragged_dot_dimension_numbers": {
                "dot_dimension_numbers": numbers,
                "lhs_ragged_dimensions": ["0"],
                "rhs_group_dimensions": ["0"],
            },
        }
    }
    return instruction(
        "custom-call",
        tuple_shape(f32(rows, n), array_shape("s8", (784,))),
        [f32(rows, k), f32(groups, k, n), array_shape("s32", (groups,))],
        custom_call_target="__cublas$lt$groupedMatmul",
        backend_config=json.dumps(config),
    )


@SETTINGS
@given(st.data())
def test_grouped_gemm_is_the_ragged_dot_of_its_config(data):
    rows, k, n, groups = (data.draw(st.integers(1, 4)) for _ in range(4))
    instr = _grouped_gemm(rows, k, n, groups)
    values = data.draw(st.lists(st.integers(0, rows), min_size=groups, max_size=groups))
    ends = list(itertools.accumulate(values))
    maps = output_to_input(instr, 0)
    for y in itertools.product(range(rows), range(n)):
        group = sum(e <= y[0] for e in ends)
        rt = (min(group, groups - 1), min(ends[-1], rows))
        for om in maps:
            got = set()
            for m in om.maps:
                assert not m.is_undefined, m.undefined_reason
                got |= {tuple(int(v) for v in r) for r in m.read_set(y, rt if m.runtime_vars else None)}
            assert got == read_set(instr, 0, y, om.operand, {2: values}), (y, om.operand, values)
    assert all(not om.maps for om in output_to_input(instr, 1))  # the workspace


def test_a_grouped_gemm_whose_config_names_dimensions_it_lacks_is_unknown():
    instr = _grouped_gemm(4, 3, 2, 2)
    config = json.loads(instr.attrs["backend_config"])
    config["grouped_gemm_backend_config"]["ragged_dot_dimension_numbers"]["dot_dimension_numbers"][
        "lhs_contracting_dimensions"
    ] = ["8"]  # the lhs has two dimensions
    instr.attrs["backend_config"] = json.dumps(config)
    for om in output_to_input(instr, 0):
        (m,) = om.maps
        assert m.is_undefined and "dimensions its operands do not have" in m.undefined_reason


def test_assume_gather_indices_in_bound_is_its_operand():
    instr = instruction(
        "custom-call",
        array_shape("s32", (6, 2)),
        [array_shape("s32", (6, 2))],
        custom_call_target="AssumeGatherIndicesInBound",
    )
    check_all(instr)


def test_pallas_kernel_stays_unknown_saying_why():
    instr = instruction("custom-call", f32(8, 128), [f32(8, 128)], custom_call_target="tpu_custom_call")
    (om,) = output_to_input(instr, 0)
    assert om.maps[0].is_undefined and "Pallas" in om.maps[0].undefined_reason
