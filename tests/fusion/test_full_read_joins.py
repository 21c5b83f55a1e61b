"""A join in the whole-computation passes: a set with a full read in it is that full read, since
every map of a value reads inside its endpoint. Outside fusions every such join is; in a fused
computation, a set at or under the compaction threshold is kept as it is, piece by piece (as XLA
lists them), and one that grows past it (or past ``maps_per_value``) is. Checked by brute force:
the read set of what the join keeps equals the union of the read sets of what it joined, at every
element of the value."""

from __future__ import annotations

import pytest

from hlo_index.affine import parse_map
from hlo_index.affine.evaluate import read_set
from hlo_index.context import AnalysisContext
from hlo_index.fusion.full_read import full_read
from hlo_index.fusion.mapset import compaction_threshold, is_overflow
from hlo_index.fusion.summary_pass import PassBudget, merge_summaries
from hlo_index.hlo import parse_module_text

VALUE, ENDPOINT = (4,), (6,)
KEY = (0, 0)
MODULE = """HloModule m

fused {
  p = f32[6] parameter(0)
  ROOT s = f32[4] slice(p), slice={[0:4]}
}

ENTRY e {
  p = f32[6] parameter(0)
  ROOT f = f32[4] fusion(p), kind=kLoop, calls=fused
}
"""


def _strided(count: int):
    """``count`` distinct maps from the value into the endpoint that no exact merge joins."""
    return tuple(parse_map(f"(d0) -> ((d0 * {k} + {k // 5}) mod 6), domain: d0 in [0, 3]") for k in range(1, count + 1))


def _reads(maps) -> list[set[tuple[int, ...]]]:
    return [set().union(*(read_set(m, (i,)) for m in maps)) for i in range(VALUE[0])]


def _join(a, b, fused: bool = True):
    module = parse_module_text(MODULE)
    comp = module.entry.root.fused_computation if fused else module.entry
    budget = PassBudget(comp, lambda key: ENDPOINT)
    joined, _ = merge_summaries({KEY: a}, False, {KEY: b}, VALUE, budget)
    return joined[KEY]


@pytest.mark.parametrize("full_first", [True, False])
def test_a_full_read_in_a_set_past_the_threshold_is_the_whole_set(full_first):
    with AnalysisContext():
        whole = (full_read(VALUE, ENDPOINT),)
        many = _strided(compaction_threshold() + 1)
        a, b = (whole, many) if full_first else (many, whole)
        kept = _join(a, b)
        assert kept == whole
        assert _reads(kept) == _reads(a + b)


def test_a_full_read_absorbs_a_set_past_maps_per_value():
    with AnalysisContext(maps_per_value=8):
        many = _strided(9)
        alone = _join(many[:5], many[5:])
        assert len(alone) == 1 and is_overflow(alone[0])  # without a full read: unknown, naming the budget
        whole = (full_read(VALUE, ENDPOINT),)
        kept = _join(many[:5], many[5:] + whole)
        assert kept == whole
        assert _reads(kept) == _reads(many + whole)


def test_a_small_set_keeps_its_pieces():
    with AnalysisContext():
        whole = (full_read(VALUE, ENDPOINT),)
        few = _strided(compaction_threshold() - 1)
        kept = _join(few, whole)
        assert len(kept) == compaction_threshold() and whole[0] in kept
        assert _reads(kept) == _reads(few + whole)


def test_a_set_past_the_threshold_without_a_full_read_is_kept():
    with AnalysisContext():
        many = _strided(compaction_threshold() + 1)
        kept = _join(many[:3], many[3:])
        assert kept == many


def test_outside_fusions_any_set_with_a_full_read_is_the_full_read():
    with AnalysisContext():
        whole = (full_read(VALUE, ENDPOINT),)
        few = _strided(2)
        kept = _join(few, whole, fused=False)
        assert kept == whole
        assert _reads(kept) == _reads(few + whole)
        assert _join(few[:1], few[1:], fused=False) == few  # no full read: both pieces
