"""The reference walk folds chains of elementwise steps into their reader: what it finds, and what
it counts against the budget, are the walk's without the folding, step by step."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_index.hlo import parse_module_text
from hlo_index.reference import linear_of
from hlo_index.verify import walk
from tests.fusion import hlo_samples as s

# a chain (negate -> exponential -> multiply), a diamond (p0 read by two elementwise branches
# that meet again), a clamp with scalar bounds (not a hand-on: its scalars are read whole), a
# transpose and a broadcast between elementwise steps, a reduce of an elementwise chain, and a
# value read by two steps (``shared``, by an elementwise step and a reverse: folded into neither)
FOLDS = s.fusion_module(
    """
  p0 = f32[4,6] parameter(0)
  p1 = f32[6,4] parameter(1)
  p2 = f32[4] parameter(2)
  lo = f32[] parameter(3)
  hi = f32[] parameter(4)
  n = f32[4,6] negate(p0)
  e = f32[4,6] exponential(n)
  t = f32[4,6] transpose(p1), dimensions={1,0}
  shared = f32[4,6] sine(t)
  c = f32[4,6] cosine(shared)
  m = f32[4,6] multiply(e, c)
  left = f32[4,6] abs(p0)
  right = f32[4,6] sqrt(p0)
  d = f32[4,6] add(left, right)
  b = f32[4,6] broadcast(p2), dimensions={0}
  lo_b = f32[4,6] broadcast(lo), dimensions={}
  cl = f32[4,6] clamp(lo, b, hi)
  a1 = f32[4,6] add(m, d)
  a2 = f32[4,6] subtract(a1, cl)
  a3 = f32[4,6] maximum(a2, lo_b)
  rs = f32[4,6] reverse(shared), dimensions={0,1}
  a4 = f32[4,6] add(a3, rs)
  ROOT out = f32[4,6] tanh(a4)""",
    ["f32[4,6]", "f32[6,4]", "f32[4]", "f32[]", "f32[]"],
    "f32[4,6]",
)

REDUCED = """HloModule folds_reduce

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  p0 = f32[4,6] parameter(0)
  zero = f32[] constant(0)
  n = f32[4,6] negate(p0)
  e = f32[4,6] exponential(n)
  r = f32[4] reduce(e, zero), dimensions={1}, to_apply=add_f32
  ROOT o = f32[4] sqrt(r)
}

ENTRY main {
  p0 = f32[4,6] parameter(0)
  ROOT fusion = f32[4] fusion(p0), kind=kLoop, calls=fused
}
"""


def _computation(text: str):
    [fusion] = parse_module_text(text).fusions
    return fusion.called["calls"]


def _walks(comp, points, wanted, fold: bool, monkeypatch) -> tuple[list[dict], int, int]:
    """Every point's walk (as sets of index tuples per parameter), the tally and the steps of
    the first walk's plan, with or without the folding."""
    with monkeypatch.context() as m:
        if not fold:
            m.setattr(walk, "_through_elementwise", lambda steps, root, known: steps)
        walker = walk.Walker(comp, {}, {})
        found = [{k: walk.elements_as_points(*v) for k, v in walker.walk(0, p, wanted).items()} for p in points]
        steps = len(walker._steps_from(wanted, 0))
        # and all the points at once, as the callee walks take them
        dims = comp.root.shape.dims
        together = walker.walk(0, None, wanted, dims, np.sort(linear_of(points, dims)))
        found.append({k: walk.elements_as_points(*v) for k, v in together.items()})
    return found, walker.walked, steps


@pytest.mark.parametrize("wanted", [None, frozenset((0,)), frozenset((1, 3)), frozenset((2,))])
def test_folded_walks_find_and_count_what_unfolded_walks_do(wanted, monkeypatch):
    comp = _computation(FOLDS)
    points = [(i, j) for i in range(4) for j in range(6)]
    folded, folded_tally, folded_steps = _walks(comp, points, wanted, True, monkeypatch)
    plain, plain_tally, plain_steps = _walks(comp, points, wanted, False, monkeypatch)
    assert folded == plain
    assert folded_tally == plain_tally
    assert folded_steps < plain_steps  # the chains were folded: fewer steps to take


def test_what_the_folded_walk_finds_is_each_operands_semantics():
    comp = _computation(FOLDS)
    found = {k: walk.elements_as_points(*v) for k, v in walk.Walker(comp, {}, {}).walk(0, (2, 5)).items()}
    # p0 through the chain and the diamond, p1 transposed (and reversed), p2 broadcast along
    # dim 1, the scalars whole
    assert found == {(0, 0): {(2, 5)}, (1, 0): {(5, 2), (0, 1)}, (2, 0): {(2,)}, (3, 0): {()}, (4, 0): {()}}


def test_a_chain_into_a_reduction_is_counted_alike(monkeypatch):
    comp = _computation(REDUCED)
    points = [(0,), (3,)]
    folded, folded_tally, folded_steps = _walks(comp, points, None, True, monkeypatch)
    plain, plain_tally, plain_steps = _walks(comp, points, None, False, monkeypatch)
    assert folded == plain and folded[0] == {(0, 0): {(0, j) for j in range(6)}}
    assert folded_tally == plain_tally and folded_steps < plain_steps


def test_the_budget_stops_a_folded_chain_at_the_same_instruction(monkeypatch):
    from hlo_index.context import AnalysisContext
    from hlo_index.verify.outcome import Skip

    comp = _computation(REDUCED)
    dims = comp.root.shape.dims
    messages = []
    for fold in (True, False):
        with monkeypatch.context() as m, AnalysisContext(verify_points_per_value=5):
            if not fold:
                m.setattr(walk, "_through_elementwise", lambda steps, root, known: steps)
            with pytest.raises(Skip) as caught:
                walk.Walker(comp, {}, {}).walk(0, None, None, dims, np.arange(4, dtype=np.int64))
            messages.append(str(caught.value))
    assert messages[0] == messages[1] and "'e'" in messages[0]
