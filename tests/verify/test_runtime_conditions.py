"""Maps whose reads depend on a runtime index keep that index as a runtime variable, even where only
one of its values leads to the read: the map then holds only when the index takes that value.

Both cases were reported by ``check --verify`` as reads that do not happen (HI900) while the
variable was dropped: a gather of a one-row piece of a concatenate (the piece's row was "read" by
every output row), and a scatter whose update window spans the whole operand dim (the update was
"read" even when its index is out of bounds, where XLA skips it)."""

from __future__ import annotations

import numpy as np

from hlo_index import verify
from hlo_index.api import SelectedTarget
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text
from hlo_index.reference import read_set

GATHER_NUMBERS = "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"
SCATTER_NUMBERS = (
    "update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
    "to_apply=add"
)

GATHER_FROM_CONCATENATE = """HloModule m

fused {
  a = f32[3,4] parameter(0)
  b = f32[1,4] parameter(1)
  i = s32[6] parameter(2)
  c = f32[4,4] concatenate(a, b), dimensions={0}
  ROOT g = f32[6,4] gather(c, i), {GATHER_NUMBERS}
}

ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[1,4] parameter(1)
  i = s32[6] parameter(2)
  ROOT f = f32[6,4] fusion(a, b, i), kind=kLoop, calls=fused
}
""".replace("{GATHER_NUMBERS}", GATHER_NUMBERS)

SCATTER_WHOLE_WINDOW = """HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  o = f32[8,4] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,8,4] parameter(2)
  ROOT s = f32[8,4] scatter(o, i, u), {SCATTER_NUMBERS}
}

ENTRY e {
  o = f32[8,4] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3,8,4] parameter(2)
  ROOT f = f32[8,4] fusion(o, i, u), kind=kLoop, calls=fused
}
""".replace("{SCATTER_NUMBERS}", SCATTER_NUMBERS)


def _outcome(text):
    module = parse_module_text(text)
    (fusion,) = module.fusions
    return module, verify.verify_target(SelectedTarget("fusion", fusion), module)


def _maps(module, operand):
    (fusion,) = module.fusions
    (row,) = [r for r in output_to_input(fusion) if r.operand == operand and r.output == 0]
    return row.maps


def test_gather_of_a_one_row_piece_keeps_the_index_condition():
    module, outcome = _outcome(GATHER_FROM_CONCATENATE)
    assert not outcome.errors, outcome.errors
    (m,) = _maps(module, 1)
    assert [v.interval for v in m.runtime_vars] == [(3, 3)]  # the row of b is row 3 of the concatenate
    # the reference: with indices (0, 3, 3, 1, 2, 3) rows 1, 2 and 4 read b, rows 0, 3, 5 do not
    gather = module.computations[0].root
    values = {1: np.array([0, 3, 3, 1, 2, 3])}
    concatenate = gather.operands[0]
    rows = [bool(read_set(gather, 0, (r, 0), 0, values) & {(3, 0)}) for r in range(6)]
    assert rows == [False, True, True, False, False, True]
    assert read_set(concatenate, 0, (3, 0), 1, None) == {(0, 0)}


def test_scatter_window_over_the_whole_dim_lands_only_at_start_0():
    module, outcome = _outcome(SCATTER_WHOLE_WINDOW)
    assert not outcome.errors, outcome.errors
    (m,) = _maps(module, 2)
    assert [v.interval for v in m.runtime_vars] == [(0, 0)]
    scatter = module.computations[1].root
    # indices 5 and 9 are out of bounds for a window of 8 rows in 8: only update 1 (index 0) lands
    values = {1: np.array([[5], [0], [9]])}
    assert read_set(scatter, 0, (0, 0), 2, values) == {(1, 0, 0)}


PERMUTE_AFTER_NEGATE = """HloModule m

ENTRY e {
  a = f32[16] parameter(0)
  n = f32[16] negate(a)
  ROOT r = f32[16] collective-permute(n), source_target_pairs={{0,1},{1,2},{4,5},{5,6}}, channel_id=1
}
"""


def test_a_collective_permute_reads_only_on_the_replicas_it_targets_through_a_whole_computation():
    module = parse_module_text(PERMUTE_AFTER_NEGATE)
    outcome = verify.verify_target(SelectedTarget("computation", module.entry), module)
    assert not outcome.errors, outcome.errors
    (row,) = [r for r in output_to_input(module.entry) if r.operand == 0]
    # the pairs target replicas 1, 2, 5 and 6; replicas 0, 3 and 4 receive zeros and read nothing
    assert sorted(tuple(v.interval) for m in row.maps for v in m.runtime_vars) == [(1, 2), (5, 6)]
    permute = module.entry.root
    assert read_set(permute, 0, (3,), 0, {"replica": 0}) == set()
    assert read_set(permute, 0, (3,), 0, {"replica": 5}) == {(3,)}
