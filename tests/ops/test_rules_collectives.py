"""Collectives in the per-replica view: rules vs a numpy simulation of every replica of a group,
for every replica position (the runtime variable rt0)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import input_to_output, output_to_input

from .oracle_check import Runtime, check_in2out, check_out2in
from .strategies import dims_strategy

SETTINGS = settings(deadline=None, derandomize=True, max_examples=20)


def f32(*dims):
    return array_shape("f32", dims)


def groups_text(n: int) -> str:
    return "{{" + ",".join(str(i) for i in range(n)) + "}}"


def check_every_replica(instr, replicas, operands=None):
    outputs = instr.shape.num_outputs
    for r in replicas:
        runtime = Runtime((r,), {"replica": r})
        for j in range(outputs):
            check_out2in(instr, j, runtime)
        for i in operands if operands is not None else range(len(instr.operands)):
            check_in2out(instr, i, runtime)


@SETTINGS
@given(dims_strategy(1, 3), st.integers(1, 4), st.data())
def test_all_gather(dims, group, data):
    axis = data.draw(st.integers(0, len(dims) - 1))
    out = [n * group if k == axis else n for k, n in enumerate(dims)]
    instr = instruction("all-gather", f32(*out), [f32(*dims)], dimensions=(axis,), replica_groups=groups_text(group))
    check_every_replica(instr, [0])  # no runtime variable: the same map on every replica
    assert not output_to_input(instr)[0].maps[0].runtime_vars


@SETTINGS
@given(dims_strategy(1, 3), st.integers(1, 4), st.data())
def test_reduce_scatter(dims, group, data):
    axis = data.draw(st.integers(0, len(dims) - 1))
    operand = [n * group if k == axis else n for k, n in enumerate(dims)]
    instr = instruction(
        "reduce-scatter", f32(*dims), [f32(*operand)], dimensions=(axis,), replica_groups=groups_text(group)
    )
    check_every_replica(instr, range(group))


@SETTINGS
@given(dims_strategy(1, 3), st.integers(1, 4), st.data())
def test_all_to_all(dims, group, data):
    axis = data.draw(st.integers(0, len(dims) - 1))
    shape = [n * group if k == axis else n for k, n in enumerate(dims)]
    instr = instruction(
        "all-to-all", f32(*shape), [f32(*shape)], dimensions=(axis,), replica_groups=f"[1,{group}]<=[{group}]"
    )
    check_every_replica(instr, range(group))


def test_all_to_all_tuple_form():
    parts = [f32(2, 3)] * 3
    instr = instruction("all-to-all", tuple_shape(*parts), parts, replica_groups="{{0,1,2}}")
    check_every_replica(instr, range(3))


def test_all_reduce_variadic():
    instr = instruction("all-reduce", tuple_shape(f32(2, 3), f32(4)), [f32(2, 3), f32(4)], replica_groups="{}")
    check_every_replica(instr, [0])
    assert output_to_input(instr, 1)[0].maps == ()


def test_collective_permute():
    pairs = "{{0,1},{1,2},{3,0},{2,5}}"  # replica 3 and 4 receive nothing
    instr = instruction("collective-permute", f32(3, 2), [f32(3, 2)], source_target_pairs=pairs)
    check_every_replica(instr, range(6))
    assert len(output_to_input(instr)[0].maps) == 2  # target runs [0, 2] and [5, 5]


def test_all_to_all_unknown_group_is_undefined():
    instr = instruction("all-to-all", f32(4, 2), [f32(4, 2)], dimensions=(0,), replica_groups="{}")
    m = output_to_input(instr)[0].maps[0]
    assert m.is_undefined and "group size" in m.undefined_reason
    assert input_to_output(instr, 0)[0][0].is_undefined


def test_async_all_gather_and_permute():
    start = instruction(
        "all-gather-start",
        tuple_shape(f32(2, 3), f32(2, 9)),
        [f32(2, 3)],
        dimensions=(1,),
        replica_groups=groups_text(3),
    )
    check_every_replica(start, [0])
    done = instruction("all-gather-done", f32(2, 9), [start])
    check_every_replica(done, [0])
    assert output_to_input(done)[0].operand_output == 1
    u32 = array_shape("u32", ())
    pstart = instruction(
        "collective-permute-start",
        tuple_shape(f32(4), f32(4), u32, u32),
        [f32(4)],
        source_target_pairs="{{0,1},{1,0},{2,3}}",
    )
    check_every_replica(pstart, range(4))
    check_every_replica(instruction("collective-permute-done", f32(4), [pstart]), [0])


def test_collective_broadcast():
    instr = instruction("collective-broadcast", f32(3, 2), [f32(3, 2)], replica_groups="{{0,1}}")
    check_every_replica(instr, [0, 1])


def test_async_all_reduce():
    start = instruction("all-reduce-start", f32(3, 2), [f32(3, 2)], replica_groups="{}")
    done = instruction("all-reduce-done", f32(3, 2), [start])
    for instr in (start, done):
        check_every_replica(instr, [0])
