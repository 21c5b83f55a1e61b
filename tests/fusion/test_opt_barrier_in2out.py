"""Input-to-output maps through an opt-barrier of a tuple (what a rematerialised training step
does with the values it recomputes): each element of the barrier's operand reaches the same
element of its output only. Checked exhaustively against the reference walk, through the
per-parameter forward walk and through the whole-computation pass, with a full reduction on the
way so that full reads go through the barrier too."""

from __future__ import annotations

import itertools

import pytest

from hlo_index.context import AnalysisContext
from hlo_index.fusion import input_to_output
from hlo_index.hlo import parse_module_text
from hlo_index.verify import backward_read_sets

TEXT = """HloModule barrier

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[3,2] parameter(0)
  w = f32[2] parameter(1)
  v = f32[4] parameter(2)
  zero = f32[] constant(0)
  rx = f32[2,3] transpose(x), dimensions={1,0}
  loss = f32[] reduce(v, zero), dimensions={0}, to_apply=add
  t = (f32[2,3], f32[2], f32[]) tuple(rx, w, loss)
  ob = (f32[2,3], f32[2], f32[]) opt-barrier(t)
  a = f32[2,3] get-tuple-element(ob), index=0
  b = f32[2] get-tuple-element(ob), index=1
  l = f32[] get-tuple-element(ob), index=2
  wb = f32[2,3] broadcast(b), dimensions={0}
  lb = f32[2,3] broadcast(l), dimensions={}
  s = f32[2,3] add(a, wb)
  u = f32[2,3] multiply(s, lb)
  r = f32[2] reverse(b), dimensions={0}
  ROOT out = (f32[2,3], f32[2], f32[]) tuple(u, r, l)
}
"""


def _points(dims):
    return list(itertools.product(*(range(n) for n in dims)))


@pytest.mark.parametrize("endpoints", [1, 128])
def test_each_element_goes_through_the_barrier_to_its_own_element(endpoints):
    comp = parse_module_text(TEXT).entry
    root = comp.root
    with AnalysisContext(endpoints_per_value=endpoints):
        rows = input_to_output(comp)
    seen = set()
    known = set()
    for row in rows:
        seen.add((row.operand, row.output))
        if any(m.is_undefined for m in row.maps):
            # only a budget may leave a row unknown, and then as its only map
            assert endpoints == 1 and len(row.maps) == 1, [str(m) for m in row.maps]
            assert row.maps[0].undefined_reason.startswith("budget endpoints_per_value="), row.maps[0].undefined_reason
            continue
        param = comp.parameters[row.operand]
        given = {(x, y) for x in _points(param.shape.dims) for m in row.maps for y in m.read_set(x)}
        truth = {
            (x, y)
            for y in _points(root.shape.leaf(row.output).dims)
            for x in backward_read_sets(comp, row.output, y).get((row.operand, 0), set())
        }
        assert given == truth, (row.operand, row.output)
        known.add((row.operand, row.output))
    # x through the barrier's element 0; v read whole through the loss in element 2
    assert {(0, 0), (2, 0), (2, 2)} <= known
    if endpoints > 2:
        assert known == seen
    for number in comp.parameters:
        for out in range(root.shape.num_outputs):
            if (number, out) not in seen:  # a row left out reads nothing: the reference agrees
                assert not any(
                    backward_read_sets(comp, out, y).get((number, 0)) for y in _points(root.shape.leaf(out).dims)
                )
