"""ragged-dot (ragged non-contracting lhs dim): rules vs the numpy reference for random shapes,
dimension numbers and group sizes (the runtime variables set to the row's group and the rows the
groups cover)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import parse_module_text
from hlo_index.hlo.build import array_shape, instruction
from hlo_index.ops import output_to_input
from hlo_index.reference import read_set

SETTINGS = settings(deadline=None, derandomize=True, max_examples=30)


def f32(*dims):
    return array_shape("f32", dims)


@st.composite
def ragged_dot(draw):
    batch = draw(st.lists(st.integers(1, 2), max_size=1))
    lead = draw(st.lists(st.integers(1, 2), max_size=1))
    rows, k, n, groups = (draw(st.integers(1, 4)) for _ in range(4))
    nb = len(batch)
    lhs = batch + lead + [rows, k]
    rhs = batch + [groups, k, n]
    sizes = batch + lead + [groups]
    out = batch + lead + [rows, n]
    instr = instruction(
        "ragged-dot",
        f32(*out),
        [f32(*lhs), f32(*rhs), array_shape("s64", sizes)],
        lhs_batch_dims=tuple(range(nb)),
        rhs_batch_dims=tuple(range(nb)),
        lhs_contracting_dims=(len(lhs) - 1,),
        rhs_contracting_dims=(nb + 1,),
        lhs_ragged_dims=(len(lhs) - 2,),
        rhs_group_dims=(nb,),
    )
    values = np.asarray(
        draw(st.lists(st.integers(0, rows), min_size=int(np.prod(sizes)), max_size=int(np.prod(sizes))))
    ).reshape(sizes)
    return instr, values


@SETTINGS
@given(ragged_dot())
def test_ragged_dot_matches_reference(case):
    instr, values = case
    maps = output_to_input(instr)
    rows_axis = instr.shape.rank - 2
    lead = rows_axis
    for y in itertools.product(*(range(d) for d in instr.shape.dims)):
        vector = values[tuple(y[:lead])]
        ends = np.cumsum(vector)
        group = int(np.searchsorted(ends, y[rows_axis], side="right"))
        covered = int(min(ends[-1], instr.operands[0].shape.dims[-2]))
        rt = (min(group, len(vector) - 1), covered)
        for om in maps:
            got = set()
            for m in om.maps:
                assert not m.is_undefined, m.undefined_reason
                got |= {tuple(int(v) for v in r) for r in m.read_set(y, rt if m.runtime_vars else None)}
            assert got == read_set(instr, 0, y, om.operand, {2: values}), (y, om.operand)


def test_ragged_dot_from_xla_text():
    text = """HloModule m
ENTRY main {
  p0 = f32[6,4]{1,0} parameter(0)
  p1 = f32[3,4,5]{2,1,0} parameter(1)
  p2 = s64[3]{0} parameter(2)
  ROOT ragged-dot = f32[6,5]{1,0} ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}
"""  # noqa: E501  HLO as XLA prints it, one instruction per line
    _, rhs, sizes = output_to_input(parse_module_text(text).entry.root)
    assert str(rhs.maps[0]).startswith("(d0, d1)[s0]{rt0, rt1} -> (rt0, s0, d1)")
    assert str(sizes.maps[0]).startswith("(d0, d1)[s0] -> (s0)")
