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


def rejected_at(build, body: str, rule: str, fragment: str, line: int) -> None:
    """``build(body)`` is rejected at column 8 of ``line``, naming ``rule``, its message holding ``fragment``."""
    with pytest.raises(ParseError) as info:
        parse_module_text(build(body))
    d = info.value.diagnostic
    assert (d.line, d.column) == (line, 8), d
    assert f"ShapeInference::{rule}" in d.message and fragment in d.message, d.message


def diagnostic_of(text: str):
    """The error reading ``text`` gives (it must give one)."""
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    return info.value.diagnostic


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejected_as_xlas_verifier_rejects(name):
    rejected_at(module, *CASES[name], line=6)


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


# The computations that the ops below apply; the entry's operands: p f32[4,6], i s32[4,6], z f32[], k s32[].
APPLIED = (
    "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n\n"
    "add3 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  x = f32[] parameter(2)\n"
    "  ROOT c = f32[] add(a, b)\n}\n\n"
    "widen {\n  a = bf16[] parameter(0)\n  b = f32[] parameter(1)\n  x = f32[] convert(a)\n"
    "  ROOT c = f32[] add(x, b)\n}\n\n"
    "pair {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n"
    "  x = f32[] add(a, c)\n  y = s32[] add(b, d)\n  ROOT t = (f32[], s32[]) tuple(x, y)\n}\n\n"
    "first {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n"
    "  ROOT x = f32[] add(a, c)\n}\n\n"
    "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n\n"
    "lt_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=LT\n}\n\n"
    "neg {\n  a = f32[] parameter(0)\n  ROOT c = f32[] negate(a)\n}\n\n"
)


def scatter(operand: str, updates: str) -> str:
    """Two rows of ``updates`` (element type) scattered into ``operand`` (p or i) by the combiner add."""
    shape = "f32[4,6]" if operand == "p" else "s32[4,6]"
    dims = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"
    return (
        f"x = s32[2] parameter(2)\n  u = {updates}[2,6] parameter(3)\n"
        f"  ROOT r = {shape} scatter({operand}, x, u), {dims}, to_apply=add"
    )


def select_and_scatter(source: str, select: str) -> str:
    """A source of element type ``source`` scattered over p's 2x2 windows by ``select`` and add."""
    return (
        f"s = {source}[2,3] parameter(2)\n"
        f"  ROOT r = f32[4,6] select-and-scatter(p, s, z), window={{size=2x2 stride=2x2}}, select={select}, scatter=add"
    )


def applying(body: str) -> str:
    return (
        f"HloModule m\n\n{APPLIED}ENTRY e {{\n  p = f32[4,6] parameter(0)\n  i = s32[4,6] parameter(1)\n"
        f"  z = f32[] constant(0)\n  k = s32[] constant(0)\n  {body}\n}}\n"
    )


@pytest.mark.parametrize(
    "body, rule, fragment",
    [
        # Each fails to compile with jaxlib 0.10.2 (its message, from the StableHLO verifier the text
        # passes through, in the comment); XLA's parser reads the text.
        # "The element-type of reduction-region's argument at index 1 is expected to be promotable from
        # 'i32', but got 'f32'"
        (
            "ROOT r = f32[4] reduce(i, z), dimensions={1}, to_apply=add",
            "InferReduceShape",
            "the combiner add takes f32[] as parameter 1, operand 0's elements are s32",
        ),
        # "... result type at index 0 is expected to be promotable from the op's corresponding init-value
        # element-type: 'tensor<f32>' vs 'tensor<i32>'"
        (
            "ROOT r = f32[4] reduce(p, k), dimensions={1}, to_apply=add",
            "InferReduceShape",
            "the combiner add returns f32[] as value 0, initial value 0 is s32[]",
        ),
        # "Reduction-region must take 2 parameters, but takes 3 parameter(s)"
        (
            "ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add3",
            "InferReduceShape",
            "the combiner add3 takes 3 parameter(s); 1 operand(s) need 2",
        ),
        # "The type of reduction-region's parameter at index 0 is different than the corresponding result
        # type: 'tensor<bf16>' vs 'tensor<f32>'": the accumulator's type is exact, precision included
        (
            "ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=widen",
            "InferReduceShape",
            "the combiner widen takes bf16[] as parameter 0, returns f32[] as value 0: they must be of one type",
        ),
        # "Reduction-region here must produce 2 tensors, but produces 1 instead"
        (
            "ROOT r = (f32[4], s32[4]) reduce(p, i, z, k), dimensions={1}, to_apply=first",
            "InferReduceShape",
            "the combiner first returns f32[]; 2 operands need a tuple of 2 scalars",
        ),
        # the operands in the other order: "... init-value element-type: 'tensor<f32>' vs 'tensor<i32>'"
        (
            "ROOT r = (s32[4], f32[4]) reduce(i, p, k, z), dimensions={1}, to_apply=pair",
            "InferReduceShape",
            "the combiner pair returns f32[] as value 0, initial value 0 is s32[]",
        ),
        # "... argument at index 1 is expected to be promotable from 'i32', but got 'f32'"
        (
            "ROOT r = f32[4,5] reduce-window(i, z), window={size=1x2}, to_apply=add",
            "InferReduceWindowShape",
            "the combiner add takes f32[] as parameter 1, operand 0's elements are s32",
        ),
        # "... argument at index 1 is expected to be promotable from 'i32', but got 'f32'"
        (
            select_and_scatter("s32", "lt"),
            "InferSelectAndScatterShape",
            "the combiner add takes f32[] as parameter 1, the source's elements are s32",
        ),
        # "expects the return-type of select-region to be tensor<i1>, but got: 'tensor<f32>'"
        (
            select_and_scatter("f32", "add"),
            "InferSelectAndScatterShape",
            "the select add returns f32[], not pred[]",
        ),
        # "... argument at index 1 is expected to be promotable from 'i32', but got 'f32'" (the operand's
        # elements start the combining)
        (
            scatter("i", "f32"),
            "InferScatterShape",
            "the combiner add returns f32[] as value 0, operand 0's elements are s32",
        ),
        # "... init-value element-type: 'tensor<f32>' vs 'tensor<i32>'"
        (
            scatter("p", "s32"),
            "InferScatterShape",
            "the combiner add takes f32[] as parameter 1, updates 0's elements are s32",
        ),
        # "comparator block argument #0 should be of type 'tensor<f32>' but got 'tensor<i32>'"
        (
            "ROOT r = f32[4,6] sort(p), dimensions={1}, to_apply=lt_s32",
            "ShapeVerifier::HandleSort",
            "the comparator lt_s32 takes s32[] as parameter 0, operand 0's elements are f32",
        ),
        # "comparator must return tensor<i1> but got 'tensor<f32>'"
        ("ROOT r = f32[4,6] sort(p), dimensions={1}, to_apply=add", "HandleSort", "the comparator add returns f32[]"),
        # "comparator block should have 4 arguments"
        (
            "ROOT r = (f32[4,6], s32[4,6]) sort(p, i), dimensions={1}, to_apply=lt",
            "HandleSort",
            "the comparator lt takes 2 parameter(s); 2 operand(s) need 4",
        ),
        # "expects number of operands to match the arity of map computation, but got: 2 and 1"
        (
            "ROOT r = f32[4,6] map(p, p), dimensions={0,1}, to_apply=neg",
            "InferMapShape",
            "the function neg takes 1 parameter(s); the map has 2 operand(s)",
        ),
        # "element type of operands and computation arguments must match, but got: 'i32' and 'f32'"
        (
            "ROOT r = f32[4,6] map(i), dimensions={0,1}, to_apply=neg",
            "InferMapShape",
            "the function neg takes f32[] as parameter 0, operand 0's elements are s32",
        ),
    ],
)
def test_a_computation_that_does_not_fit_the_operands_it_is_applied_to_is_rejected(body, rule, fragment):
    text = applying(body)
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    d = info.value.diagnostic
    root_line = next(n for n, line in enumerate(text.splitlines(), 1) if "ROOT r =" in line)
    assert (d.line, d.column) == (root_line, 8), d
    assert "%r is invalid (" in d.message and rule in d.message and fragment in d.message, d.message


@pytest.mark.parametrize(
    "body",
    [
        # each compiles with jaxlib 0.10.2
        "ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add",
        "ROOT r = (f32[4], s32[4]) reduce(p, i, z, k), dimensions={1}, to_apply=pair",
        "ROOT r = f32[4,5] reduce-window(p, z), window={size=1x2}, to_apply=add",
        select_and_scatter("f32", "lt"),
        scatter("p", "f32"),
        "ROOT r = (f32[4,6], s32[4,6]) sort(p, i), dimensions={1}, to_apply=pair_lt",
        "ROOT r = f32[4,6] map(p), dimensions={0,1}, to_apply=neg",
        # tuples in a signature: jaxlib compiles through MLIR, whose import flattens them (XLA's
        # verifier refuses these as written; XLA's own test of that import has such a map)
        "ROOT r = f32[4,6] sort(p), dimensions={1}, to_apply=lt_in_tuple",
        "ROOT r = f32[4,6] map(p, p), dimensions={0,1}, to_apply=add_in_tuple",
        "ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add_of_tuple",
    ],
)
def test_a_computation_that_fits_its_operands_is_read(body):
    more = (
        "pair_lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = s32[] parameter(2)\n"
        "  d = s32[] parameter(3)\n  ROOT x = pred[] compare(a, b), direction=LT\n}\n\n"
        "lt_in_tuple {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = pred[] compare(a, b), direction=LT\n"
        "  ROOT t = (pred[]) tuple(c)\n}\n\n"
        "add_in_tuple {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  c = f32[] add(a, b)\n"
        "  ROOT t = (f32[]) tuple(c)\n}\n\n"
        "add_of_tuple {\n  a = (f32[]) parameter(0)\n  b = f32[] parameter(1)\n"
        "  x = f32[] get-tuple-element(a), index=0\n  ROOT c = f32[] add(x, b)\n}\n\n"
    )
    text = applying(body).replace("ENTRY e", more + "ENTRY e")
    assert parse_module_text(text).entry.root.name == "r"


def test_a_combiner_may_differ_from_its_operands_in_floating_point_precision_alone():
    """VerifyReducerShape compares a combiner's elements and initial values with the operands
    ignoring floating-point precision. (XLA's verifier refuses mixed precision by a rule of its own,
    on by default: jaxlib 0.10.2 fails to compile this module with "mixed precision is disallowed".
    That rule is not one of these checks.)"""
    body = "b = bf16[4,6] convert(p)\n  ROOT r = f32[4] reduce(b, z), dimensions={1}, to_apply=add"
    assert parse_module_text(applying(body)).entry.root.opcode == "reduce"
    # but the accumulator that a combiner takes is the type it returns, exactly
    with pytest.raises(ParseError) as info:
        parse_module_text(applying(body.replace("to_apply=add", "to_apply=widen")))
    assert "takes bf16[] as parameter 0, returns f32[] as value 0" in info.value.diagnostic.message


def test_only_a_computation_that_the_entry_reaches_is_held_to_its_operands():
    """jaxlib 0.10.2 compiles the first module (its combiner adds rows, which StableHLO allows, in a
    computation nothing calls) and refuses the second, where a fusion calls it: "Reduction function
    must return a scalar or tuple of scalars but returns shape: f32[4]"."""
    unused = (
        "add_rows {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  ROOT c = f32[4] add(a, b)\n}\n\n"
        "unused {\n  q = f32[4,6] parameter(0)\n  y = f32[4] parameter(1)\n"
        "  ROOT r = f32[4] reduce(q, y), dimensions={1}, to_apply=add_rows\n}\n\n"
    )
    entry_reduce = "ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add"
    text = applying(entry_reduce).replace("ENTRY e", unused + "ENTRY e")
    assert parse_module_text(text).entry.root.name == "r"
    fused = text.replace(
        entry_reduce, "y = f32[4] parameter(2)\n  ROOT r = f32[4] fusion(p, y), kind=kLoop, calls=unused"
    )
    with pytest.raises(ParseError) as info:
        parse_module_text(fused)
    d = info.value.diagnostic
    reduce_line = next(n for n, line in enumerate(fused.splitlines(), 1) if "reduce(q, y)" in line)
    assert (d.line, d.column) == (reduce_line, 8), d
    assert "the combiner add_rows returns f32[4], not a scalar or a tuple of scalars" in d.message


def test_an_op_let_pass_where_the_entry_does_not_reach_it_does_not_let_its_twin_pass_in_the_entry():
    # the same reduce, of the same shapes by the same combiner, in a computation nothing calls and in
    # the entry: jaxlib 0.10.2 refuses the module ("... argument at index 1 is expected to be promotable
    # from 'i32', but got 'f32'"), and so must this check at the entry's reduce
    unused = (
        "unused {\n  q = s32[4,6] parameter(0)\n  y = f32[] parameter(1)\n"
        "  ROOT u = f32[4] reduce(q, y), dimensions={1}, to_apply=add\n}\n\n"
    )
    entry_reduce = "ROOT r = f32[4] reduce(i, z), dimensions={1}, to_apply=add"
    text = applying(entry_reduce).replace("ENTRY e", unused + "ENTRY e")
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    d = info.value.diagnostic
    assert d.line == next(n for n, line in enumerate(text.splitlines(), 1) if "ROOT r =" in line), d
    assert "%r is invalid" in d.message and "operand 0's elements are s32" in d.message


def convolution(attrs: str, result: str = "f32[1,1,2,2]") -> str:
    # batch 4 split into 2 groups over 2 output features: XLA's convolution_group_converter test
    return (
        "HloModule m\n\nENTRY e {\n  input = f32[1,1,1,4] parameter(0)\n  filter = f32[1,1,1,2] parameter(1)\n"
        f"  ROOT r = {result} convolution(input, filter), window={{size=1x1}}, dim_labels=f01b_i01o->01fb{attrs}\n}}\n"
    )


@pytest.mark.parametrize(
    "attrs, fragment",
    [
        # jaxlib 0.10.2: inferred shape '[1, 1, 2, 4]' is incompatible with return type 'tensor<1x1x2x2xf32>'
        (", batch_group_count=0", "batch_group_count must be a positive number, got 0"),
        ("", "the operands give dimensions [1,1,2,4]"),
        # jaxlib 0.10.2: inferred shape '[1, 1, 2, 4]' is incompatible (no group count may be 0)
        (", feature_group_count=0", "feature_group_count must be a positive number, got 0"),
        # jaxlib 0.10.2: expects input batch dimension (4) to be divisible by batch_group_count; XLA's
        # InferConvolveShape first finds the output features (2) no multiple of 3
        (", batch_group_count=3", "not a multiple of batch_group_count 3"),
    ],
)
def test_a_convolution_that_does_not_fit_its_operands_is_rejected(attrs, fragment):
    with pytest.raises(ParseError) as info:
        parse_module_text(convolution(attrs))
    d = info.value.diagnostic
    assert (d.line, d.column) == (6, 8), d
    assert "ShapeInference::InferConvolveShape" in d.message and fragment in d.message, d.message


def test_well_formed_grouped_convolutions_are_read():
    # both compile with jaxlib 0.10.2
    assert parse_module_text(convolution(", batch_group_count=2")).entry.root.opcode == "convolution"
    features = (
        "HloModule m\n\nENTRY e {\n  input = f32[2,5,5,6] parameter(0)\n  filter = f32[3,3,2,9] parameter(1)\n"
        "  ROOT r = f32[2,3,3,9] convolution(input, filter), window={size=3x3}, dim_labels=b01f_01io->b01f, "
        "feature_group_count=3\n}\n"
    )
    assert parse_module_text(features).entry.root.opcode == "convolution"


def test_a_convolution_with_no_batch_groups_exits_2_without_a_verify_mismatch(tmp_path):
    path = tmp_path / "conv.hlo"
    path.write_text(convolution(", batch_group_count=0"))
    result = CliRunner().invoke(main, ["analyze", str(path), "--verify"])
    assert result.exit_code == 2, result.output
    assert f"{path}:6:8: error:" in result.output and "verify" not in result.output


@pytest.mark.parametrize(
    "window, fragment",
    [
        # jaxlib 0.10.2: expects window to have positive stride for 0-th window dimension, but got 0
        ("size=1x1 stride=0x1", "dimension 0 has a non-positive stride (0)"),
        # ... positive value for 0-th window dimension, but got 0
        ("size=0x1", "dimension 0 has a non-positive size (0)"),
        # ... positive base dilation factor for 0-th window dimension, but got 0
        ("size=1x1 lhs_dilate=0x1", "dimension 0 has a non-positive base dilation (0)"),
        # ... positive window dilation factor for 1-th window dimension, but got 0
        ("size=1x1 rhs_dilate=1x0", "dimension 1 has a non-positive window dilation (0)"),
    ],
)
def test_a_reduce_window_with_a_non_positive_window_figure_is_rejected(window, fragment):
    text = module(f"ROOT r = f32[4,6] reduce-window(p, z), window={{{window}}}, to_apply=add", ADD)
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    d = info.value.diagnostic
    assert (d.line, d.column) == (12, 8), d
    assert "ShapeInference::InferReduceWindowShape" in d.message and fragment in d.message, d.message


def test_a_reduce_window_with_stride_0_exits_2_rather_than_failing_inside_verify(tmp_path):
    path = tmp_path / "rw.hlo"
    path.write_text(module("ROOT r = f32[4,6] reduce-window(p, z), window={size=1x1 stride=0x1}, to_apply=add", ADD))
    result = CliRunner().invoke(main, ["analyze", str(path), "--verify"])
    assert result.exit_code == 2, result.output
    assert f"{path}:12:8: error:" in result.output and "internal" not in result.output
    # compiles with jaxlib 0.10.2: stride 2 over 4 rows gives 2
    assert (
        parse_module_text(
            module("ROOT r = f32[2,6] reduce-window(p, z), window={size=1x1 stride=2x1}, to_apply=add", ADD)
        ).entry.root.opcode
        == "reduce-window"
    )


def elementwise(body: str) -> str:
    return (
        "HloModule m\n\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
        "  s = f32[] parameter(2)\n  q = pred[2,3] parameter(3)\n  t = pred[] parameter(4)\n"
        f"  {body}\n}}\n"
    )


# XLA's parser reads each; jaxlib 0.10.2 fails to compile each, with the message in the comment.
ELEMENTWISE_CASES = {
    # 'stablehlo.add' op requires the same shape for all operands and results
    "add_result": ("ROOT r = f32[3,2] add(a, a)", "InferBinaryOpShape", "the operands give dimensions [2,3]"),
    "add_operands": ("ROOT r = f32[2,3] add(a, b)", "InferBinaryOpShape", "operand 1 f32[3,2] must have"),
    # (the same: HLO broadcasts no scalar implicitly)
    "add_scalar": ("ROOT r = f32[2,3] add(a, s)", "InferBinaryOpShape", "operand 1 f32[] must have"),
    # 'stablehlo.negate' op requires compatible types for all operands and results
    "negate_rank": ("ROOT r = f32[6] negate(a)", "InferUnaryOpShape", "the written shape is f32[6]"),
    # 'stablehlo.convert' op requires the same shape for all operands and results
    "convert": ("ROOT r = s32[3,2] convert(a)", "InferConvertShape", "the written shape is s32[3,2]"),
    # 'stablehlo.compare' op all non-scalar operands/results must have the same shape and base type
    "compare_scalar": ("ROOT r = pred[2,3] compare(a, s), direction=LT", "InferBinaryOpShape", "operand 1 f32[]"),
    # requires the same shape for all operands
    "select_pred": ("ROOT r = f32[3,2] select(q, b, b)", "InferSelectShape", "operand 0 pred[2,3] must have"),
    # requires compatible types for non-predicate operands
    "select_scalar_branch": ("ROOT r = f32[2,3] select(q, a, s)", "InferSelectShape", "operand 2 f32[] must"),
    # 'stablehlo.select' op inferred type(s) 'tensor<2x3xf32>' are incompatible with ... 'tensor<3x2xf32>'
    "select_result": ("ROOT r = f32[3,2] select(t, a, a)", "InferSelectShape", "the operands give dimensions [2,3]"),
    # min shape [3, 2] is not scalar and is not compatible to operand shape [2, 3]
    "clamp_bound": ("ROOT r = f32[2,3] clamp(b, a, s)", "InferClampShape", "operand 0 f32[3,2] must have"),
    # min shape [2, 3] is not scalar and is not compatible to operand shape []
    "clamp_scalar_operand": ("ROOT r = f32[2,3] clamp(a, s, a)", "InferClampShape", "operand 0 f32[2,3] must"),
    # 'stablehlo.clamp' op inferred type(s) 'tensor<f32>' are incompatible with ... 'tensor<2x3xf32>'
    "clamp_result": ("ROOT r = f32[2,3] clamp(s, s, s)", "InferClampShape", "the operands give dimensions []"),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE_CASES))
def test_an_elementwise_op_of_other_dimensions_is_rejected(name):
    rejected_at(elementwise, *ELEMENTWISE_CASES[name], line=9)


def test_the_scalar_forms_of_select_and_clamp_are_read():
    # each compiles with jaxlib 0.10.2: a scalar predicate, scalar bounds (either or both)
    body = (
        "c = f32[2,3] select(t, a, a)\n  d = f32[2,3] clamp(s, c, s)\n  e = f32[2,3] clamp(s, d, a)\n"
        "  f = pred[2,3] compare(e, a), direction=LT\n  g = f32[2,3] select(f, e, a)\n"
        "  ROOT r = s32[2,3] convert(g)"
    )
    assert parse_module_text(elementwise(body)).entry.root.opcode == "convert"


def test_an_elementwise_op_of_other_dimensions_exits_2_at_the_op(tmp_path):
    path = tmp_path / "add.hlo"
    path.write_text(elementwise("ROOT r = f32[3,2] add(a, a)"))
    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 2, result.output
    assert f"{path}:9:8: error: %r is invalid (ShapeInference::InferBinaryOpShape)" in result.output
    assert "ROOT r = f32[3,2] add(a, a)" in result.output and "Traceback" not in result.output


def test_the_elementwise_check_runs_once_per_distinct_shapes(monkeypatch):
    from hlo_index.hlo import shape_checks

    calls = []
    check = shape_checks._CHECKS["add"]
    monkeypatch.setitem(shape_checks._CHECKS, "add", lambda instr: calls.append(instr.name) or check(instr))
    chain = "".join(f'  x{k} = f32[2,3] add(a, a), metadata={{op_name="n{k}"}}\n' for k in range(50))
    parse_module_text(elementwise(f"{chain.strip()}\n  ROOT r = f32[3,2] add(b, b)"))
    assert calls == ["x0", "r"]


def test_a_convolution_whose_window_is_not_its_kernels_is_rejected():
    # XLA's InferConvolveShape: "Window dimensions do not match RHS shape". (jaxlib 0.10.2 compiles the
    # module all the same: its translation to StableHLO drops the window's sizes.)
    text = (
        "HloModule m\n\nENTRY e {\n  x = f32[1,8,8,4] parameter(0)\n  k = f32[3,3,4,8] parameter(1)\n"
        "  ROOT r = f32[1,6,6,8] convolution(x, k), window={size=%s}, dim_labels=b01f_01io->b01f\n}\n"
    )
    for window, sizes in (("2x2", "2x2"), ("3x2", "3x2")):
        with pytest.raises(ParseError) as info:
            parse_module_text(text % window)
        d = info.value.diagnostic
        assert (d.line, d.column) == (6, 8), d
        assert "ShapeInference::InferConvolveShape" in d.message, d.message
        assert f"the window's sizes {sizes} are not the kernel's spatial dimensions 3x3" in d.message, d.message
    assert parse_module_text(text % "3x3").entry.root.opcode == "convolution"


def with_a_tuple(body: str) -> str:
    return f"HloModule m\nENTRY e {{\n  a = f32[4] parameter(0)\n  t = (f32[4], f32[4]) tuple(a, a)\n  {body}\n}}\n"


@pytest.mark.parametrize(
    "body, rule, message",
    [
        (
            "ROOT r = (f32[4], f32[4]) add(t, t)",
            "InferBinaryOpShape",
            "operand 0 is the tuple (f32[4], f32[4]): add takes arrays",
        ),
        (
            "ROOT r = (f32[4], f32[4]) negate(a)",
            "InferUnaryOpShape",
            "the written shape is the tuple (f32[4], f32[4]): negate gives an array",
        ),
    ],
)
def test_an_elementwise_op_takes_and_gives_arrays(body, rule, message):
    """XLA's shape inference takes arrays for every elementwise op but copy ("Expected array argument")."""
    rejected_at(with_a_tuple, body, rule, message, line=5)


def test_a_copy_of_a_tuple_is_valid():
    assert parse_module_text(with_a_tuple("ROOT c = (f32[4], f32[4]) copy(t)")).entry.root.opcode == "copy"


ADD = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
# (body, rule, fragment): each read by XLA's parser (jaxlib 0.10.2), rejected by its verifier
MORE_CASES = {
    "reduce_dim": (
        "ROOT r = f32[4] reduce(p, z), dimensions={2}, to_apply=add",
        "InferReduceShape",
        "out-of-bounds dimension 2",
    ),
    "reduce_dims": ("ROOT r = f32[6] reduce(p, z), dimensions={1}, to_apply=add", "InferReduceShape", "[4]"),
    "tuple_element": ("ROOT r = (f32[4,6], f32[2]) tuple(p, p)", "InferVariadicOpShape", "element 1"),
    "ragged_dot_dim": (
        "ROOT r = f32[4,6] ragged-dot(p, p, z), lhs_contracting_dims={8}, rhs_contracting_dims={1}, "
        "lhs_ragged_dims={0}, rhs_group_dims={0}",
        "InferRaggedDotOpShape",
        "value: 8 is out of range",
    ),
    "bitcast_convert_dims": ("ROOT r = s32[6,4] bitcast-convert(p)", "InferBitcastConvertShape", "[4,6]"),
    "bitcast_convert_narrower": ("ROOT r = f16[4,6] bitcast-convert(p)", "InferBitcastConvertShape", "minor"),
    "convolution_ranks": (
        "ROOT r = f32[4,6] convolution(p, z), window={size=1}, dim_labels=bf_io->bf",
        "InferConvolveShape",
        "same number of dimensions",
    ),
    "convolution_window_rank": (
        "ROOT r = f32[4,6,3,3] convolution(f32[4,6,3,3] parameter(1), f32[6,6,1,1] parameter(2)), window={}, "
        "dim_labels=bf01_io01->bf01",
        "InferConvolveShape",
        "the window has 0, the dim_labels 2 spatial dimensions",
    ),
    "convolution_tuple": (
        "ROOT r = (f32[4,6], u8[0]) convolution(p, p), dim_labels=bf_io->bf",
        "InferConvolveShape",
        "tuple",
    ),
    "all_gather_operands": (
        "ROOT r = f32[8,6] all-gather(p, p), dimensions={0}, replica_groups={{0,1}}",
        "InferAllGatherShape",
        "2 operands give a tuple",
    ),
    "all_gather_pieces": (
        "ROOT r = f32[6,6] all-gather(p), dimensions={0}, replica_groups={{0,1}}",
        "InferAllGatherShape",
        "no whole number of pieces of 4",
    ),
    "reduce_scatter_pieces": (
        "ROOT r = f32[0,6] reduce-scatter(p), dimensions={0}, replica_groups={{0,1}}, to_apply=add",
        "InferReduceScatterShape",
        "no whole number of pieces of 0",
    ),
}


@pytest.mark.parametrize("name", sorted(MORE_CASES))
def test_more_of_what_xlas_verifier_rejects_is_rejected(name):
    rejected_at(lambda body: module(body, ADD), *MORE_CASES[name], line=12)


def test_those_ops_well_formed_are_read():
    body = (
        "a = f32[4] reduce(p, z), dimensions={1}, to_apply=add\n  b = (f32[4,6], f32[]) tuple(p, z)\n"
        "  c = s32[4,6] bitcast-convert(p)\n  d = f16[4,6,2] bitcast-convert(p)\n"
        "  e = f32[8,6] all-gather(p), dimensions={0}, replica_groups={{0,1}}\n"
        "  ROOT r = f32[2,6] reduce-scatter(p), dimensions={0}, replica_groups={{0,1}}, to_apply=add"
    )
    assert parse_module_text(module(body, ADD)).entry.root.opcode == "reduce-scatter"


def test_an_all_gather_start_holds_its_operand():
    # XLA's InferAllGatherStartShape: (the operand, the result). jaxlib 0.10.2 compiles this one: its
    # translation to StableHLO reads the operand and drops the start's first element
    body = (
        "s = (f32[2,6], f32[8,6]) all-gather-start(p), dimensions={0}, replica_groups={{0,1}}\n"
        "  ROOT r = f32[8,6] all-gather-done(s)"
    )
    with pytest.raises(ParseError) as info:
        parse_module_text(module(body, ADD))
    d = info.value.diagnostic
    assert (d.line, d.column) == (12, 3) and "InferAllGatherStartShape" in d.message, d
    assert "holds its operand f32[4,6]" in d.message
    well_formed = body.replace("(f32[2,6], f32[8,6])", "(f32[4,6], f32[8,6])")
    assert parse_module_text(module(well_formed, ADD)).entry.root.opcode == "all-gather-done"


@pytest.mark.parametrize(
    "root, rule",
    [
        ("ROOT r = f32[4,6] dynamic-update-slice(p, p, i, i)", "InferDynamicUpdateSliceShape"),
        ("ROOT r = f32[2,6] dynamic-slice(p, i, i), dynamic_slice_sizes={2,6}", "InferDynamicSliceShape"),
    ],
)
def test_start_indices_of_a_float_type_are_rejected(root, rule):
    # jaxlib 0.10.2: "operand #2 must be variadic of 0D tensor of ... integer values, but got
    # 'tensor<f16>'". Read as offsets, an f16 index once made a loop's analysis take a minute.
    with pytest.raises(ParseError) as info:
        parse_module_text(module(f"i = f16[] constant(1)\n  {root}", ADD))
    d = info.value.diagnostic
    assert (d.line, d.column) == (13, 8) and rule in d.message and "integral type" in d.message, d
    assert parse_module_text(module(f"i = s32[] constant(1)\n  {root}", ADD)).entry.root.opcode.startswith("dynamic")


def test_a_reduce_window_of_no_operands_is_rejected_and_a_variadic_one_read():
    # jaxlib's parser reads reduce-window() (XLA's InferReduceWindowShape refuses it)
    text = "HloModule m\n\nENTRY e {\n  ROOT a = () reduce-window(), to_apply=%c\n}\n\nc {\n  ROOT t = () tuple()\n}\n"
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    assert "InferReduceWindowShape" in info.value.diagnostic.message and "has 0" in info.value.diagnostic.message
    pair = (
        "mx {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n"
        "  m = f32[] maximum(a, c)\n  n = s32[] maximum(b, d)\n  ROOT t = (f32[], s32[]) tuple(m, n)\n}\n\n"
    )
    body = (
        "q = s32[4,6] parameter(1)\n  y = s32[] constant(0)\n"
        "  ROOT r = (f32[4,3], s32[4,3]) reduce-window(p, q, z, y), window={size=1x2 stride=1x2}, to_apply=mx"
    )
    assert parse_module_text(module(body, pair)).entry.root.opcode == "reduce-window"


def test_group_counts_are_checked_whatever_the_labels_rank():
    # labels of two dimensions over operands of four (a mutant of an XLA test): its batch groups
    # (64 over an output feature of 2) were read by the rule, which divided by zero
    text = (
        "HloModule m\n\nENTRY e {\n  p0 = f32[16,3,3,64] parameter(0)\n  p1 = f32[16,2,3,64] parameter(1)\n"
        "  ROOT c = convolution(p0, p1), window={}, dim_labels=bf_io->bf, batch_group_count=64\n}\n"
    )
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    d = info.value.diagnostic
    assert d.line == 6 and "InferConvolveShape" in d.message and "batch_group_count 64" in d.message, d


BATCH_NORM = (
    "HloModule m\n\nENTRY e {{\n  p = f32[4,6] parameter(0)\n  v = f32[6] parameter(1)\n  w = f32[4] parameter(2)\n"
    "  s = f32[] parameter(3)\n  ROOT r = {root}, epsilon=0.001, feature_index={index}\n}}\n"
)
TRAINING = "(f32[4,6], f32[6], f32[6]) batch-norm-training"
GRAD = "(f32[4,6], f32[6], f32[6]) batch-norm-grad"


@pytest.mark.parametrize(
    "root, index, rule, fragment",
    [
        (f"{TRAINING}(p, w, v)", 1, "InferBatchNormTrainingShape", "the scale %w is f32[4], not a vector of the 6"),
        (f"{TRAINING}(p, v, v)", 2, "InferBatchNormTrainingShape", "feature_index 2 is not a dimension"),
        ("(f32[4,6], f32[4], f32[6]) batch-norm-training(p, v, v)", 1, "InferBatchNormTrainingShape", "gives ("),
        ("f32[4,6] batch-norm-inference(p, v, v, v, s)", 1, "InferBatchNormInferenceShape", "the variance %s"),
        (f"{GRAD}(p, s, v, v, p)", 1, "InferBatchNormGradShape", "the scale %s is f32[]"),
        (f"{GRAD}(p, v, v, v, v)", 1, "InferBatchNormGradShape", "the gradient %v is f32[6]"),
    ],
)
def test_a_batch_norm_whose_per_feature_operands_do_not_fit_is_rejected(root, index, rule, fragment):
    # each fails to compile with jaxlib 0.10.2 (StableHLO's batch_norm verifiers: "must be 1D
    # tensor", "featureIndex to be smaller than the rank", "compatible shapes"); a scalar scale
    # of a batch-norm-grad was an internal failure of its map
    d = diagnostic_of(BATCH_NORM.format(root=root, index=index))
    assert (d.line, d.column) == (8, 8) and f"ShapeInference::{rule}" in d.message and fragment in d.message, d


@pytest.mark.parametrize(
    "root",
    [f"{TRAINING}(p, v, v)", "f32[4,6] batch-norm-inference(p, v, v, v, v)", f"{GRAD}(p, v, v, v, p)"],
)
def test_a_batch_norm_that_fits_is_read(root):
    # each compiles with jaxlib 0.10.2
    assert parse_module_text(BATCH_NORM.format(root=root, index=1)).entry.root.opcode.startswith("batch-norm")


NO_OPERANDS = (
    "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\n"
    "ENTRY e {{\n  p = f32[10,20] parameter(0)\n  ROOT z = {root}\n}}\n"
)


@pytest.mark.parametrize(
    "root, rule, fragment",
    [
        ("f32[10,20] all-reduce(), replica_groups={}, to_apply=add", "InferAllReduceShape", "at least 1"),
        ("f32[10,20] all-reduce-start(), replica_groups={}, to_apply=add", "InferAllReduceStartShape", "at least 1"),
        ("f32[10,20] collective-permute(), source_target_pairs={{0,1}}", "InferCollectivePermuteShape", "at least 1"),
        ("f32[10,20] collective-broadcast(), replica_groups={}", "InferCollectiveBroadcastShape", "at least 1"),
        ("f32[10,20] map(), dimensions={0,1}, to_apply=add", "InferMapShape", "at least 1"),
        ("f32[10,20] ragged-all-to-all(p, p)", "InferRaggedAllToAllShape", "takes 6 operands, has 2"),
        ("f32[10,20] rng(), distribution=rng_uniform", "HandleRng", "takes at least 2 operands, has 0"),
        ("f32[10,80] all-gather(), replica_groups={}, dimensions={1}", "InferAllGatherShape", "at least 1"),
        (
            "() reduce-scatter(), replica_groups={}, dimensions={0}, to_apply=add",
            "InferReduceScatterShape",
            "at least 1",
        ),
        ("() all-to-all(), replica_groups={}", "InferAllToAllShape", "at least 1 operand, has 0"),
    ],
)
def test_an_op_without_the_operands_xla_requires_is_rejected(root, rule, fragment):
    # XLA's parser reads each; jaxlib 0.10.2 fails to compile each ("requires a single operand",
    # "expected 1 or more operands", "should have 6 operands") or aborts (rng). Their maps read
    # nothing: an all-gather() was an internal failure, the others were printed as maps.
    d = diagnostic_of(NO_OPERANDS.format(root=root))
    assert d.line == 11 and rule in d.message and fragment in d.message, d


@pytest.mark.parametrize(
    "root, fragment",
    [
        ("f32[10,20] get-dimension-size(), dimensions={0}", "expects 1 operands, but has 0"),
        ("f32[10,20] set-dimension-size(p), dimensions={0}", "expects 2 operands, but has 1"),
        ("(f32[10,2], s32[10,2]) topk(), k=2", "expects 1 operands, but has 0"),
        ("f32[10,20] dynamic-reshape()", "DynamicReshape requires at least one operand"),
    ],
)
def test_an_op_of_another_operand_count_than_xlas_parser_takes_is_a_syntax_error(root, fragment):
    # XLA's parser (jaxlib 0.10.2) rejects each with the same words
    with pytest.raises(ParseError) as info:
        parse_module_text(NO_OPERANDS.format(root=root))
    assert fragment in info.value.diagnostic.message, info.value.diagnostic


WRITTEN_RESULT = (
    "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\n"
    "ENTRY e {{\n  p = f32[8,6] parameter(0)\n  i = s32[] parameter(1)\n  u = f32[2,6] parameter(2)\n"
    "  ix = s32[2,1] parameter(3)\n  ROOT r = {root}\n}}\n"
)
SCATTER_DIMS = "update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1"


@pytest.mark.parametrize(
    "root, rule, fragment",
    [
        ("f32[3,6] dynamic-slice(p, i, i), dynamic_slice_sizes={2,6}", "InferDynamicSliceShape", "[2,6]"),
        ("f32[8,7] dynamic-update-slice(p, u, i, i)", "InferDynamicUpdateSliceShape", "[8,6]"),
        (f"f32[8,5] scatter(p, ix, u), {SCATTER_DIMS}, to_apply=add", "InferScatterShape", "[8,6]"),
        (
            "f32[8,6] reduce-window(p, f32[] constant(0)), window={size=2x1}, to_apply=add",
            "InferReduceWindowShape",
            "[7,6]",
        ),
        (
            "f32[2,6] gather(p, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
            "index_vector_dim=1, slice_sizes={0,0}",
            "InferGatherShape",
            "[2,0]",
        ),
        ("f32[8,6] iota(), iota_dimension=2", "HandleIota", "iota_dimension 2 is not a dimension of f32[8,6]"),
    ],
)
def test_a_written_result_other_than_the_op_gives_is_rejected(root, rule, fragment):
    # jaxlib 0.10.2 fails to compile each ("inferred type(s) ... are incompatible with return
    # type(s)", "iota dimension cannot go beyond the output rank"); their maps were printed as
    # exact, a dynamic-update-slice's reading past its operand
    d = diagnostic_of(WRITTEN_RESULT.format(root=root))
    assert d.line == 14 and rule in d.message and fragment in d.message, d
    if "iota" not in root:
        fixed = root.replace("f32[3,6] dynamic", "f32[2,6] dynamic").replace("f32[8,7]", "f32[8,6]")
        fixed = fixed.replace("f32[8,5]", "f32[8,6]").replace("f32[8,6] reduce-window", "f32[7,6] reduce-window")
        fixed = fixed.replace("slice_sizes={0,0}", "slice_sizes={1,6}")
        assert parse_module_text(WRITTEN_RESULT.format(root=fixed)).entry.root.opcode == root.split("(")[0].split()[-1]


MORE_RESULTS = (
    "HloModule m\n\nadd {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}}\n\n"
    "cmp {{\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = pred[] compare(a, b), direction=GT\n}}\n\n"
    "ENTRY e {{\n  p = f32[8,6] parameter(0)\n  t = (f32[8,6], s32[]) parameter(1)\n  c = c64[8,6] parameter(2)\n"
    "  ROOT r = {root}\n}}\n"
)


@pytest.mark.parametrize(
    "root, rule",
    [
        ("f32[8,5] sort(p), dimensions={0}, to_apply=cmp", "HandleSort"),
        ("f32[8,5] select-and-scatter(p, p, f32[] constant(0)), window={size=1x1}, select=cmp, scatter=add", "Scatter"),
        ("f32[8,5] map(p, p), dimensions={0,1}, to_apply=add", "InferMapShape"),
        ("s32[2] get-tuple-element(t), index=1", "InferGetTupleElementShape"),
        ("f32[8,5] all-reduce(p), replica_groups={}, to_apply=add", "InferAllReduceShape"),
        ("f32[8,5] collective-permute(p), source_target_pairs={{0,1}}", "InferCollectivePermuteShape"),
        ("c64[8,5] fft(c), fft_type=FFT, fft_length={6}", "InferFftShape"),
        ("(f32[8,3], s32[8,2]) topk(p), k=2", "InferTopKShape"),
        ("f32[8,5] opt-barrier(p)", "HandleOptimizationBarrier"),
    ],
)
def test_other_written_results_are_compared_with_the_inferred_one(root, rule):
    # XLA's parser reads each; jaxlib 0.10.2 fails to compile each ("requires the same shape for
    # all operands and results", "inferred type(s) ... are incompatible", "doesn't match function
    # result type"); their maps were printed for a result of other dimensions
    d = diagnostic_of(MORE_RESULTS.format(root=root))
    assert d.line == 19 and rule in d.message and "the written shape is" in d.message, d
