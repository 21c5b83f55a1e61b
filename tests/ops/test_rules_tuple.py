"""get-tuple-element, tuple, opt-barrier, copy-start/copy-done vs the reference."""

from __future__ import annotations

from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text


def f32(*dims):
    return array_shape("f32", dims)


def test_get_tuple_element():
    gte = instruction("get-tuple-element", f32(3, 4), [tuple_shape(f32(2), f32(3, 4))], index=1)
    (om,) = output_to_input(gte)
    assert om.operand_output == 1
    assert_map_text(om.maps[0], "(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 3]")
    check_out2in(gte)
    check_in2out(gte, 0)


def test_tuple():
    t = instruction("tuple", tuple_shape(f32(2), f32(3, 4), f32()), [f32(2), f32(3, 4), f32()])
    for j in range(3):
        check_out2in(t, j)
        check_in2out(t, j)
    assert [len(om.maps) for om in output_to_input(t, 1)] == [0, 1, 0]


def test_opt_barrier_and_copy_start_done():
    shape = tuple_shape(f32(2, 2), f32(5))
    barrier = instruction("opt-barrier", shape, [shape])
    for j in range(2):
        assert output_to_input(barrier, j)[0].operand_output == j
        check_out2in(barrier, j)
    check_in2out(barrier, 0)
    start = instruction("copy-start", tuple_shape(f32(3), f32(3), array_shape("u32", ())), [f32(3)])
    for j in range(3):
        check_out2in(start, j)
    check_in2out(start, 0)
    done = instruction("copy-done", f32(3), [start])
    check_out2in(done)
    assert input_to_output(done, 0)[0][0].num_dims == 1
