"""batch-norm-training / -inference / -grad: rules vs the numpy reference on random shapes and
feature indices, plus the shape of the maps on an example."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import output_to_input

from .oracle_check import check_in2out, check_out2in

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)


def f32(*dims):
    return array_shape("f32", dims)


def batch_norm(opcode: str, dims, f: int):
    vec = f32(dims[f])
    x = f32(*dims)
    if opcode == "batch-norm-training":
        return instruction(opcode, tuple_shape(x, vec, vec), [x, vec, vec], epsilon="0.001", feature_index=str(f))
    if opcode == "batch-norm-inference":
        return instruction(opcode, x, [x, vec, vec, vec, vec], epsilon="0.001", feature_index=str(f))
    return instruction(opcode, tuple_shape(x, vec, vec), [x, vec, vec, vec, x], epsilon="0.001", feature_index=str(f))


@SETTINGS
@given(st.data())
def test_batch_norm_matches_reference(data):
    dims = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    f = data.draw(st.integers(0, len(dims) - 1))
    opcode = data.draw(st.sampled_from(["batch-norm-training", "batch-norm-inference", "batch-norm-grad"]))
    instr = batch_norm(opcode, dims, f)
    for j in range(instr.shape.num_outputs):
        check_out2in(instr, j, sample=200)
    for k in range(len(instr.operands)):
        check_in2out(instr, k, sample=200)


def test_training_output_reads_the_feature_slice_and_its_scale():
    instr = batch_norm("batch-norm-training", (2, 3, 4), 1)
    x, scale, _ = output_to_input(instr, 0)
    assert str(x.maps[0]) == (
        "(d0, d1, d2)[s0, s1] -> (s0, d1, s1), domain: d0 in [0, 1], d1 in [0, 2], "
        "d2 in [0, 3], s0 in [0, 1], s1 in [0, 3]"
    )
    assert str(scale.maps[0]) == "(d0, d1, d2) -> (d1), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3]"
    mean_x, mean_scale, _ = output_to_input(instr, 1)
    assert mean_scale.maps == () and mean_x.maps[0].num_range_vars == 2


def test_missing_feature_index_is_undefined():
    instr = instruction("batch-norm-inference", f32(2, 3), [f32(2, 3)] + [f32(3)] * 4)
    assert output_to_input(instr)[0].maps[0].is_undefined
