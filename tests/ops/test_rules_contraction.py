"""dot (any dimension numbers) and convolution (dim_labels, windows, dilations, feature and
batch groups): rules vs the numpy reference on random configurations, plus the spec examples."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import parse_module_text
from hlo_index.hlo.build import array_shape, instruction
from hlo_index.hlo.model import ConvDimLabels, WindowDim
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text
from .test_rules_reduce import window_axis, window_output_size

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)


def f32(*dims):
    return array_shape("f32", dims)


def check_all(instr, sample=300):
    check_out2in(instr, sample=sample)
    for i in range(len(instr.operands)):
        check_in2out(instr, i, sample=sample)


# ---- dot ----------------------------------------------------------------------------------


@SETTINGS
@given(st.data())
def test_dot_matches_reference(data):
    sizes = st.integers(1, 4)
    n_batch, n_contract = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    n_lhs_free, n_rhs_free = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))
    batch = [data.draw(sizes) for _ in range(n_batch)]
    contract = [data.draw(sizes) for _ in range(n_contract)]
    lhs_free = [data.draw(sizes) for _ in range(n_lhs_free)]
    rhs_free = [data.draw(sizes) for _ in range(n_rhs_free)]
    # Random placement of each role inside each operand.
    lhs_perm = data.draw(st.permutations(list(range(n_batch + n_contract + n_lhs_free))))
    rhs_perm = data.draw(st.permutations(list(range(n_batch + n_contract + n_rhs_free))))
    lhs_roles = batch + contract + lhs_free
    rhs_roles = batch + contract + rhs_free
    lhs_dims, rhs_dims = [0] * len(lhs_perm), [0] * len(rhs_perm)
    for role, pos in enumerate(lhs_perm):
        lhs_dims[pos] = lhs_roles[role]
    for role, pos in enumerate(rhs_perm):
        rhs_dims[pos] = rhs_roles[role]
    lhs_batch = tuple(lhs_perm[:n_batch])
    lhs_contract = tuple(lhs_perm[n_batch : n_batch + n_contract])
    rhs_batch = tuple(rhs_perm[:n_batch])
    rhs_contract = tuple(rhs_perm[n_batch : n_batch + n_contract])
    lhs_free_sorted = sorted(lhs_perm[n_batch + n_contract :])
    rhs_free_sorted = sorted(rhs_perm[n_batch + n_contract :])
    out = batch + [lhs_dims[d] for d in lhs_free_sorted] + [rhs_dims[d] for d in rhs_free_sorted]
    instr = instruction(
        "dot",
        f32(*out),
        [f32(*lhs_dims), f32(*rhs_dims)],
        lhs_batch_dims=lhs_batch,
        rhs_batch_dims=rhs_batch,
        lhs_contracting_dims=lhs_contract,
        rhs_contracting_dims=rhs_contract,
    )
    check_all(instr)


def test_dot_spec_example():
    instr = instruction(
        "dot",
        f32(4, 128, 64),
        [f32(4, 128, 256), f32(4, 256, 64)],
        lhs_batch_dims=(0,),
        rhs_batch_dims=(0,),
        lhs_contracting_dims=(2,),
        rhs_contracting_dims=(1,),
    )
    lhs, rhs = output_to_input(instr)
    assert_map_text(
        lhs.maps[0],
        "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]",
    )
    assert_map_text(
        rhs.maps[0],
        "(d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 63], s0 in [0, 255]",
    )
    assert_map_text(
        input_to_output(instr, 0)[0][0],
        "(d0, d1, d2)[s0] -> (d0, d1, s0), domain: d0 in [0, 3], d1 in [0, 127], d2 in [0, 255], s0 in [0, 63]",
    )
    # The spec prints "-> (d0, s0, d1)" for p1 with d1 in [0, 255]: d1 is the contracted dim
    # there and cannot index the output's last dim (size 64); the rhs free dim is d2.
    assert_map_text(
        input_to_output(instr, 1)[0][0],
        "(d0, d1, d2)[s0] -> (d0, s0, d2), domain: d0 in [0, 3], d1 in [0, 255], d2 in [0, 63], s0 in [0, 127]",
    )


# ---- convolution --------------------------------------------------------------------------


def _place(roles: dict, perm) -> dict:
    """Assign each role name a position from the permutation, in role order."""
    return {role: perm[k] for k, role in enumerate(roles)}


@st.composite
def convolution(draw):
    spatial = draw(st.integers(0, 2))
    axes = [draw(window_axis()) for _ in range(spatial)]
    window = tuple(
        WindowDim(
            wd.size, wd.stride, wd.pad_low, wd.pad_high, wd.window_dilation, wd.base_dilation, draw(st.booleans())
        )
        for _, wd in axes
    )
    # XLA's shape inference allows one kind of group at a time; "both" still has a definition.
    group_kind = draw(st.sampled_from(["none", "feature", "batch", "both"]))
    feature_groups = draw(st.integers(2, 3)) if group_kind in ("feature", "both") else 1
    batch_groups = draw(st.integers(2, 3)) if group_kind in ("batch", "both") else 1
    kernel_in = draw(st.integers(1, 3))
    out_features = draw(st.integers(1, 2)) * feature_groups * batch_groups
    out_batch = draw(st.integers(1, 2))
    in_batch = out_batch * batch_groups
    in_features = kernel_in * feature_groups

    rank = spatial + 2
    lhs_perm, kernel_perm, out_perm = (draw(st.permutations(list(range(rank)))) for _ in range(3))
    labels = ConvDimLabels(
        input_batch=lhs_perm[0],
        input_feature=lhs_perm[1],
        input_spatial=tuple(lhs_perm[2:]),
        kernel_input_feature=kernel_perm[0],
        kernel_output_feature=kernel_perm[1],
        kernel_spatial=tuple(kernel_perm[2:]),
        output_batch=out_perm[0],
        output_feature=out_perm[1],
        output_spatial=tuple(out_perm[2:]),
    )
    lhs, kernel, out = [0] * rank, [0] * rank, [0] * rank
    lhs[labels.input_batch], lhs[labels.input_feature] = in_batch, in_features
    kernel[labels.kernel_input_feature], kernel[labels.kernel_output_feature] = kernel_in, out_features
    out[labels.output_batch], out[labels.output_feature] = out_batch, out_features
    for axis, (n, wd) in enumerate(axes):
        lhs[labels.input_spatial[axis]] = n
        kernel[labels.kernel_spatial[axis]] = wd.size
        out[labels.output_spatial[axis]] = window_output_size(n, wd)
    return instruction(
        "convolution",
        f32(*out),
        [f32(*lhs), f32(*kernel)],
        window=window,
        dim_labels=labels,
        feature_group_count=feature_groups,
        batch_group_count=batch_groups,
    )


@SETTINGS
@given(convolution())
def test_convolution_matches_reference(instr):
    check_all(instr)


CONV_MODULE = """HloModule m
ENTRY e {
  x = f32[2,8,8,4]{3,2,1,0} parameter(0)
  w = f32[3,3,2,6]{3,2,1,0} parameter(1)
  ROOT c = f32[2,4,4,6]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x0_1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line


def test_convolution_from_parsed_text():
    module = parse_module_text(CONV_MODULE)
    check_all(module.entry.root, sample=150)


def test_transposed_convolution_from_corpus_shape():
    # conv_transpose_upsample: window={size=4x4 pad=2_2x2_2 lhs_dilate=2x2} (smaller sizes).
    text = (
        CONV_MODULE.replace("f32[2,8,8,4]", "f32[1,4,4,2]")
        .replace("f32[3,3,2,6]", "f32[4,4,2,2]")
        .replace("f32[2,4,4,6]", "f32[1,8,8,2]")
        .replace(
            "window={size=3x3 stride=2x2 pad=0_1x0_1 rhs_dilate=1x1}", "window={size=4x4 pad=2_2x2_2 lhs_dilate=2x2}"
        )
        .replace(", feature_group_count=2", "")
    )
    check_all(parse_module_text(text).entry.root, sample=150)


@SETTINGS
@given(st.data())
def test_scaled_dot_matches_reference(data):
    batch = [data.draw(st.integers(1, 2))] if data.draw(st.booleans()) else []
    m, n = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    blocks, size = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    k = blocks * size
    nb = len(batch)

    def scale(rows):
        kind = data.draw(st.sampled_from(["blocked", "broadcast", "full"]))
        if kind == "broadcast":
            return f32(*([1] * (nb + 2)))
        return f32(*batch, rows, blocks if kind == "blocked" else k)

    instr = instruction(
        "scaled-dot",
        f32(*batch, m, n),
        [f32(*batch, m, k), f32(*batch, n, k), scale(m), scale(n)],
        lhs_batch_dims=tuple(range(nb)),
        rhs_batch_dims=tuple(range(nb)),
        lhs_contracting_dims=(nb + 1,),
        rhs_contracting_dims=(nb + 1,),
    )
    check_all(instr, sample=200)


def test_a_dot_whose_result_is_not_its_free_dimensions_is_undefined_not_an_error():
    """XLA's parser reads ``f32[4] dot(f32[4,2], f32[])`` (no dimension numbers: an outer product,
    [4,2]); jaxlib 0.10.2 fails to compile it ("inferred shape '[4, 2]' is incompatible with return
    type of operation 'tensor<4xf32>'"). No element is read for sure: every map is UNDEFINED,
    saying why, in both directions."""
    text = "HloModule m\n\nENTRY e {\n  a = f32[4,2] parameter(0)\n  c = f32[] constant(0)\n"
    text += "  ROOT r = f32[4] dot(a, c)\n}\n"
    dot = parse_module_text(text).entry.root
    rows = output_to_input(dot, 0)
    assert [om.operand for om in rows] == [0, 1]
    for om in rows:
        (m,) = om.maps
        assert m.is_undefined and "is not the operands' batch and free dimensions [4,2]" in m.undefined_reason
    for k in (0, 1):
        ((m,),) = input_to_output(dot, k)
        assert m.is_undefined and "which XLA's verifier rejects" in m.undefined_reason
