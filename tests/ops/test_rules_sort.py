"""sort (variadic, any dimension) and topk: rules vs the numpy reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import parse_module_text
from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import output_to_input

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text
from .strategies import dims_strategy

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)


def f32(*dims):
    return array_shape("f32", dims)


def check_all(instr):
    for j in range(instr.shape.num_outputs):
        check_out2in(instr, j, sample=300)
    for i in range(len(instr.operands)):
        check_in2out(instr, i, sample=300)


@SETTINGS
@given(st.data())
def test_sort_matches_reference(data):
    dims = data.draw(dims_strategy(1, 3))
    axis = data.draw(st.integers(0, len(dims) - 1))
    count = data.draw(st.integers(1, 3))
    shape = f32(*dims) if count == 1 else tuple_shape(*[f32(*dims)] * count)
    instr = instruction("sort", shape, [f32(*dims)] * count, dimensions=(axis,), is_stable=True)
    check_all(instr)


@SETTINGS
@given(dims_strategy(1, 3), st.data())
def test_topk_matches_reference(dims, data):
    k = data.draw(st.integers(1, dims[-1]))
    out = dims[:-1] + (k,)
    instr = instruction("topk", tuple_shape(f32(*out), array_shape("s32", out)), [f32(*dims)], k=k, largest=True)
    check_all(instr)


SORT_TEXT = """HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  keys = f32[4,16]{1,0} parameter(0)
  vals = s32[4,16]{1,0} parameter(1)
  ROOT s = (f32[4,16]{1,0}, s32[4,16]{1,0}) sort(keys, vals), dimensions={1}, is_stable=true, to_apply=cmp
}
"""


def test_sort_from_parsed_text():
    instr = parse_module_text(SORT_TEXT).entry.root
    for om in output_to_input(instr, 1):
        assert_map_text(om.maps[0], "(d0, d1)[s0] -> (d0, s0), domain: d0 in [0, 3], d1 in [0, 15], s0 in [0, 15]")
    check_all(instr)


ARGSORT_TEXT = SORT_TEXT.replace("s32[4,16]{1,0} parameter(1)", "s32[4,16]{1,0} iota(), iota_dimension=1")


def test_argsort_keys_do_not_read_the_payload():
    # The comparator only looks at parameters 0/1 (operand 0): the sorted keys never read the
    # iota payload, the permuted payload reads both.
    instr = parse_module_text(ARGSORT_TEXT).entry.root
    keys_out = output_to_input(instr, 0)
    assert keys_out[0].maps and keys_out[1].maps == ()
    assert all(om.maps for om in output_to_input(instr, 1))
    check_all(instr)


def test_comparator_on_the_payload_makes_it_a_key():
    text = SORT_TEXT.replace(
        "ROOT lt = pred[] compare(a, b), direction=LT", "ROOT lt = pred[] compare(c, d), direction=LT"
    )
    instr = parse_module_text(text).entry.root
    assert output_to_input(instr, 0)[0].maps and output_to_input(instr, 0)[1].maps
    assert output_to_input(instr, 1)[0].maps == ()
    check_all(instr)
