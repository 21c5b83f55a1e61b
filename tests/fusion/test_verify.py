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
