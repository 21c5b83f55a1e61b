"""Maps that differ only by conditions on runtime variables of their own (two calls of one
attention kernel, each bringing the sequence lengths again): the longer map adds nothing to a set
holding the shorter one, which the brute-force read sets confirm; and through a whole module
of a forward and a backward attention call every map stays one per row."""

from __future__ import annotations

import itertools
from pathlib import Path

from hlo_index.affine import parse_map
from hlo_index.fusion.mapset import union
from hlo_index.fusion.subsume import adds_conditions

SHORT = parse_map("(d0)[s0]{rt0} -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 2], rt0 in [0, 4], d0 - rt0 in [-4, -1]")
LONG = parse_map(
    "(d0)[s0]{rt0, rt1} -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 2], rt0 in [0, 4], rt1 in [0, 4], "
    "d0 - rt1 in [-4, -1], d0 - rt0 in [-4, -1], s0 - rt1 in [-4, -1]"
)
WIDER = parse_map("(d0)[s0]{rt0, rt1} -> (d0, s0), domain: d0 in [0, 3], s0 in [0, 2], rt0 in [0, 4], rt1 in [0, 4]")


def _union_reads(m, point):
    """Every element ``m`` reads at ``point`` for some value of its runtime variables."""
    got = set()
    for values in itertools.product(*(range(v.interval.lo, v.interval.hi + 1) for v in m.runtime_vars)):
        got |= m.read_set(point, values or None)
    return got


def test_a_map_with_more_runtime_conditions_lies_inside():
    assert adds_conditions(LONG, SHORT)
    assert not adds_conditions(SHORT, LONG)
    assert not adds_conditions(WIDER, SHORT)  # it drops SHORT's condition: not inside
    for d0 in range(4):
        assert _union_reads(LONG, (d0,)) <= _union_reads(SHORT, (d0,))
    assert union((SHORT,), (LONG,)) == (SHORT,)
    assert union((LONG,), (SHORT,)) == (SHORT,)
    assert len(union((SHORT,), (WIDER,))) == 2


def test_forward_and_backward_attention_give_one_map_per_query_row():
    from hlo_index.context import AnalysisContext
    from hlo_index.fusion import output_to_input
    from hlo_index.hlo import load

    module = Path(__file__).resolve().parents[1] / "data" / "te_attention_step.hlo"
    (result,) = list(load(str(module)))
    with AnalysisContext(runtime_vars_per_map=4):  # a path through both calls carries four
        rows = output_to_input(result.module.entry)
    dq_reads = {row.operand: row.maps for row in rows if row.output == 1}
    # dq reads q through the backward call and again through the forward's out: one map
    assert len(dq_reads[0]) == 1 and not dq_reads[0][0].is_undefined
