"""``--verify`` on both directions: correct maps pass, and a wrong input-to-output map is caught
from each side (an element it misses, an element it invents)."""
from __future__ import annotations

from hlo_index import verify
from hlo_index.affine import parse_map
from hlo_index.api import SelectedTarget
from hlo_index.fusion import OperandIndexing
from hlo_index.hlo import parse_module_text

from . import hlo_samples as s

SMALL_TRANSPOSE_ADD = s.fusion_module("""
  p0 = f32[6, 6] parameter(0)
  t = f32[6, 6] transpose(p0), dimensions={1, 0}
  ROOT a0 = f32[6, 6] add(p0, t)""", ["f32[6,6]"], "f32[6,6]")


def _selected() -> SelectedTarget:
    module = parse_module_text(SMALL_TRANSPOSE_ADD)
    [fusion] = module.fusions
    return SelectedTarget("fusion", fusion)


def test_correct_maps_verify_in_both_directions():
    outcome = verify.verify_target(_selected(), samples=6, seed=3)
    assert not outcome.errors and not outcome.notes
    assert outcome.checked_points >= 6 and outcome.checked_input_points >= 3


def _with_input_to_output(monkeypatch, maps):
    monkeypatch.setattr(verify, "input_to_output", lambda target: [OperandIndexing(0, 0, maps)])
    return verify.verify_target(_selected(), samples=6, seed=3)


def test_an_input_to_output_map_that_misses_the_transpose_is_caught(monkeypatch):
    only_identity = (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 5]"),)
    outcome = _with_input_to_output(monkeypatch, only_identity)
    assert any("which no input-to-output map gives" in e for e in outcome.errors)


def test_an_input_to_output_map_that_invents_readers_is_caught(monkeypatch):
    everything = (parse_map("(d0, d1)[s0, s1] -> (s0, s1), domain: d0 in [0, 5], d1 in [0, 5], "
                            "s0 in [0, 5], s1 in [0, 5]"),)
    outcome = _with_input_to_output(monkeypatch, everything)
    assert any("which does not read it" in e for e in outcome.errors)
    assert not any("which no input-to-output map gives" in e for e in outcome.errors)


OPT_BARRIER_COMPUTATION = """HloModule m

ENTRY %main (p: f32[3,4], q: f32[4,3]) -> (f32[3,4], f32[4,3]) {
  %p = f32[3,4]{1,0} parameter(0)
  %q = f32[4,3]{1,0} parameter(1)
  %t = (f32[3,4]{1,0}, f32[4,3]{1,0}) tuple(%p, %q)
  %b = (f32[3,4]{1,0}, f32[4,3]{1,0}) opt-barrier(%t)
  %g0 = f32[3,4]{1,0} get-tuple-element(%b), index=0
  %g1 = f32[4,3]{1,0} get-tuple-element(%b), index=1
  ROOT %r = (f32[3,4]{1,0}, f32[4,3]{1,0}) tuple(%g0, %g1)
}
"""


def test_opt_barrier_passes_each_tuple_element_through():
    """The reference walk follows element i of opt-barrier's tuple operand to output i (a walk that
    always followed element 0 reported false mismatches on remat dumps)."""
    module = parse_module_text(OPT_BARRIER_COMPUTATION)
    outcome = verify.verify_target(SelectedTarget("computation", module.entry), samples=8, seed=1)
    assert not outcome.errors and outcome.checked_points >= 8
