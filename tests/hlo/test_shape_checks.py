"""Instructions XLA's parser reads but XLA's verifier rejects: each case below fails to compile with
jaxlib 0.10.2 (the message XLA gives is in the comment); hlo-index rejects it at the instruction,
naming the ShapeInference rule, and exits 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo import ParseError, parse_module_text

CASES = {
    # edge_padding_low length (1) must match operand rank (2)
    "pad_rank": ("ROOT r = f32[4,8] pad(p, z), padding=1_1", "InferPadShape", "padding has 1 dimensions"),
    # inferred type tensor<4x8xf32> incompatible with tensor<4x9xf32>
    "pad_dims": ("ROOT r = f32[4,9] pad(p, z), padding=0_0x1_1", "InferPadShape", "[4,8]"),
    # the number of elements in start_indices (1) does not match the rank of the operand (2)
    "slice_rank": ("ROOT r = f32[2] slice(p), slice={[0:2]}", "InferSliceShape", "1 ranges"),
    # limit index 8 is larger than dimension size 6 in dimension 1
    "slice_bounds": ("ROOT r = f32[2,8] slice(p), slice={[0:2], [0:8]}", "InferSliceShape", "[0:8:1]"),
    # inferred type tensor<2x3xf32> incompatible with tensor<2x5xf32>
    "slice_dims": ("ROOT r = f32[2,5] slice(p), slice={[0:2], [0:6:2]}", "InferSliceShape", "[2,3]"),
    # attribute permutation must be a permutation of [0, 1] but got 1, 1
    "transpose_perm": ("ROOT r = f32[6,4] transpose(p), dimensions={1,1}", "InferTransposeShape", "permutation"),
    # inferred type tensor<6x4xf32> incompatible with tensor<4x6xf32>
    "transpose_dims": ("ROOT r = f32[4,6] transpose(p), dimensions={1,0}", "InferTransposeShape", "[6,4]"),
    # all dimensions should be between [0, 2). Got dimension: 2.
    "reverse_dim": ("ROOT r = f32[4,6] reverse(p), dimensions={2}", "InferReverseShape", "[2]"),
    # broadcast_dimensions size (1) does not match operand rank (2)
    "broadcast_count": ("ROOT r = f32[4,6,3] broadcast(p), dimensions={0}", "InferBroadcastShape", "rank 2"),
    # size of operand dimension 1 (6) is not equal to 1 or size of result dimension 1 (5)
    "broadcast_size": ("ROOT r = f32[4,5,3] broadcast(p), dimensions={0,1}", "InferBroadcastShape", "size 6"),
    # dimension 2 is out-of-bounds for input rank 2
    "concat_dim": ("ROOT r = f32[4,12] concatenate(p, p), dimensions={2}", "InferConcatOpShape", "dimension 2"),
    # lhs_contracting_dimensions value: 7 is out of range: [0, 2)
    "dot_dim": (
        "ROOT r = f32[4,4] dot(p, p), lhs_contracting_dims={7}, rhs_contracting_dims={1}",
        "InferDotOpShape",
        "value: 7 is out of range: [0, 2)",
    ),
    # rejected (StableHLO: "expected both lhs/rhs ranks to be either 1 or 2"): contracting sizes 6 and 4
    "dot_sizes": (
        "ROOT r = f32[4,4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "InferDotOpShape",
        "contracting dimension sizes must match",
    ),
    # lhs and rhs should have the same number of contracting dimensions
    "dot_counts": (
        "ROOT r = f32[4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0,1}",
        "InferDotOpShape",
        "same number of contracting dimensions",
    ),
}


def module(body: str, fused: str = "") -> str:
    return f"HloModule m\n\n{fused}ENTRY e {{\n  p = f32[4,6] parameter(0)\n  z = f32[] constant(0)\n  {body}\n}}\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejected_as_xlas_verifier_rejects(name):
    body, rule, fragment = CASES[name]
    with pytest.raises(ParseError) as info:
        parse_module_text(module(body))
    d = info.value.diagnostic
    assert (d.line, d.column) == (6, 8), d
    assert f"ShapeInference::{rule}" in d.message and fragment in d.message, d.message


def test_the_same_ops_well_formed_are_read():
    # compiles with jaxlib 0.10.2
    body = (
        "a = f32[4,8] pad(p, z), padding=0_0x1_1\n  b = f32[2,3] slice(p), slice={[0:2], [0:6:2]}\n"
        "  c = f32[6,4] transpose(p), dimensions={1,0}\n  d = f32[4,6] reverse(p), dimensions={1}\n"
        "  e = f32[4,6,3] broadcast(p), dimensions={0,1}\n"
        "  f = f32[4,4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
        "  ROOT r = f32[8,6] concatenate(p, p), dimensions={0}"
    )
    assert parse_module_text(module(body)).entry.root.opcode == "concatenate"


def test_a_fused_pad_short_of_padding_exits_2_at_the_pad(tmp_path):
    # the pad of a fusion's body, whose padding config misses a dimension: exit 2, not an internal error
    fused = (
        "fp {\n  a = f32[4,6] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = f32[4,8] pad(a, b), padding=1_1\n}\n\n"
    )
    path = tmp_path / "pad.hlo"
    path.write_text(module("ROOT r = f32[4,8] fusion(p, z), kind=kLoop, calls=fp", fused))
    result = CliRunner().invoke(main, ["analyze", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:6:8: error:" in result.output and "InferPadShape" in result.output
    assert "internal" not in result.output


ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"


@pytest.mark.parametrize(
    "window, accepted",
    [
        # jaxlib 0.10.2: "expects window-dimensions size == input rank, but got window-dimensions size: 0"
        ("", False),
        ("window={size=1}", False),
        # compiles with jaxlib 0.10.2
        ("window={size=1x2}", True),
    ],
)
def test_a_reduce_window_has_one_window_dimension_per_operand_dimension(window, accepted):
    attrs = f", {window}" if window else ""
    text = module(f"ROOT r = f32[4,5] reduce-window(p, z){attrs}, to_apply=add", ADD)
    if accepted:
        assert parse_module_text(text).entry.root.opcode == "reduce-window"
        return
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    d = info.value.diagnostic
    assert (d.line, d.column) == (12, 8), d
    assert "ShapeInference::InferReduceWindowShape" in d.message and "operand 2" in d.message, d.message


ADD = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"


@pytest.mark.parametrize(
    "body, rule, fragment",
    [
        # jaxlib 0.10.2: scatter dim should be less than operand/result rank
        (
            "ROOT r = f32[4,6] reduce-scatter(p), dimensions={2}, to_apply=add",
            "InferReduceScatterShape",
            "outside the operand's 2 dimensions",
        ),
        # jaxlib 0.10.2: all_gather_dim must be a valid index of operand
        (
            "ROOT r = f32[4,6] all-gather(p), dimensions={3}",
            "InferAllGatherShape",
            "outside the operand's 2 dimensions",
        ),
        # jaxlib 0.10.2, compiling through StableHLO: "operand and result must have the same rank"
        ("ROOT r = f32[16,6,1] all-gather(p), dimensions={0}", "InferAllGatherShape", "differ outside dimension 0"),
        # "operand and result should have the same shape except for the dimension size at ..."
        ("ROOT r = f32[16,5] all-gather(p), dimensions={0}", "InferAllGatherShape", "differ outside dimension 0"),
        # "non scatter dimensions should be same for operand (6) and result (5)"
        (
            "ROOT r = f32[2,5] reduce-scatter(p), dimensions={0}, to_apply=add",
            "InferReduceScatterShape",
            "differ outside dimension 0",
        ),
    ],
)
def test_a_collective_that_does_not_fit_its_operand_is_rejected(body, rule, fragment):
    with pytest.raises(ParseError) as info:
        parse_module_text(module(body, ADD))
    d = info.value.diagnostic
    assert (d.line, d.column) == (12, 8), d
    assert f"ShapeInference::{rule}" in d.message and fragment in d.message


def test_a_collective_dimension_inside_the_operand_is_read():
    # compiles with jaxlib 0.10.2 (one device: the group is one replica)
    text = module("ROOT r = f32[4,6] reduce-scatter(p), dimensions={1}, to_apply=add", ADD)
    assert parse_module_text(text).entry.root.opcode == "reduce-scatter"


def test_a_sort_along_a_dimension_its_operand_lacks_is_rejected():
    # jaxlib 0.10.2: "dimension attribute value must be in range [-2, 2), but found 2"
    less = (
        "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n\n"
    )
    with pytest.raises(ParseError) as info:
        parse_module_text(module("ROOT r = f32[4,6] sort(p), dimensions={2}, to_apply=lt", less))
    d = info.value.diagnostic
    assert "ShapeVerifier::HandleSort" in d.message and "outside the operand's 2 dimensions" in d.message, d
    assert (
        parse_module_text(module("ROOT r = f32[4,6] sort(p), dimensions={1}, to_apply=lt", less)).entry.root.name == "r"
    )


ADD_F32 = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\n"
GATHER = (
    "ROOT r = f32[2,6] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
    "index_vector_dim=1, slice_sizes={1,6}"
)
SCATTER = (
    "ROOT r = f32[4,6] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
    "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add"
)


def indexed(body: str) -> str:
    return (
        f"HloModule m\n\n{ADD_F32}ENTRY e {{\n  p = f32[4,6] parameter(0)\n  i = s32[2] parameter(1)\n"
        f"  u = f32[2,6] parameter(2)\n  {body}\n}}\n"
    )


@pytest.mark.parametrize(
    "edit, fragment",
    [
        # each rejected by jaxlib 0.10.2 (its message in the comment); XLA's parser reads the text
        # "Expects each element of collapsed_slice_dims to be in range [0, rank-of('operand')) i.e. [0, 2). got: 64."
        ((GATHER, "collapsed_slice_dims={0}", "collapsed_slice_dims={64}"), "dimension 64 is outside the operand's 2"),
        # "Expects each element of start_index_map to be in range [0, rank-of('operand')) ... got: 7."
        ((GATHER, "start_index_map={0}", "start_index_map={7}"), "dimension 7 is outside the operand's 2"),
        # "Expects each element of offset_dims to be in range [0, implied-result-rank) i.e. [0, 2). got: 5."
        ((GATHER, "offset_dims={1}", "offset_dims={5}"), "dimension 5 is outside the result's 2"),
        # "slice size (7) is out of bounds for operand dimension (6) at index 1"
        ((GATHER, "slice_sizes={1,6}", "slice_sizes={1,7}"), "slice size 7 of dimension 1 is outside [0, 6]"),
        # "Expects that for each dim in collapsed_slice_dims, slice_sizes[dim] should be <= 1, but got 2"
        ((GATHER, "slice_sizes={1,6}", "slice_sizes={2,6}"), "must be 0 or 1, not 2"),
        # "start_index_map size (2) is not equal to size of index dimension (1) of start_indices (1)"
        ((GATHER, "start_index_map={0}", "start_index_map={0,1}"), "start_index_map has 2 entries, the index vector 1"),
        # "Expects index_vector_dim to be in range [0, rank-of('start_indices')] i.e. [0, 1]. got: 3."
        ((GATHER, "index_vector_dim=1", "index_vector_dim=3"), "index_vector_dim 3 is outside [0, 1]"),
        # "offset_dims size (1) plus collapse_slice_dims size (0) plus operand_batching_dims size (0) is not
        # equal to operand rank (2)"
        ((GATHER, "collapsed_slice_dims={0}", "collapsed_slice_dims={}"), "must make up the operand's 2 dimensions"),
        # "Expects each element of inserted_window_dims to be in range [0, rank-of('operand')) ... got: 64."
        ((SCATTER, "inserted_window_dims={0}", "inserted_window_dims={64}"), "dimension 64 is outside the operand's 2"),
        # "Expects each element of scatter_dims_to_operand_dims to be in range [0, rank-of('operand')) ... got: 9."
        (
            (SCATTER, "scatter_dims_to_operand_dims={0}", "scatter_dims_to_operand_dims={9}"),
            "dimension 9 is outside the operand's 2",
        ),
        # "Expects each element of update_window_dims to be in range [0, rank-of('updates')) i.e. [0, 2). got: 5."
        ((SCATTER, "update_window_dims={1}", "update_window_dims={5}"), "dimension 5 is outside the updates' 2"),
        # "Expects rank-of operand to match size-of('update_window_dims') + size-of('inserted_window_dims') +
        # size-of('input_batching_dims') i.e. 1 but got 2."
        ((SCATTER, "inserted_window_dims={0}", "inserted_window_dims={}"), "must make up the operand's 2 dimensions"),
        # "Scatter op has 2 elements in scatter_dims_to_operand_dims and the bound of dimension index_vector_dim=1
        # of scatter_indices is 1. These two numbers must be equal."
        (
            (SCATTER, "scatter_dims_to_operand_dims={0}", "scatter_dims_to_operand_dims={0,1}"),
            "scatter_dims_to_operand_dims has 2 entries, the index vector 1",
        ),
    ],
)
def test_a_gather_or_scatter_whose_dimension_numbers_do_not_fit_is_rejected(edit, fragment):
    """Dimension numbers naming dimensions that do not exist ended in an internal IndexError (or, for
    a gather's collapsed dimension, in maps of an op XLA cannot run); now XLA's verdict at the op."""
    body, old, new = edit
    with pytest.raises(ParseError) as info:
        parse_module_text(indexed(body.replace(old, new)))
    d = info.value.diagnostic
    rule = "InferGatherShape" if "gather" in body else "InferScatterShape"
    assert (d.line, d.column) == (13, 8), d
    assert f"ShapeInference::{rule}" in d.message and fragment in d.message, d.message


def test_a_well_formed_gather_and_scatter_are_read():
    # both compile with jaxlib 0.10.2
    assert parse_module_text(indexed(GATHER)).entry.root.opcode == "gather"
    assert parse_module_text(indexed(SCATTER)).entry.root.opcode == "scatter"
