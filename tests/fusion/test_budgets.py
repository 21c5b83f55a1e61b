"""Budgets of whole-computation analysis degrade one value, never the module, and never soundness.

Small synthetic ENTRY computations with tiny ``Budgets`` overrides: a value past
``endpoints_per_value`` distinct map sets (or analysed after ``compositions_per_pass`` is spent) reads the parameters
it does not read whole through one UNDEFINED map whose reason names the budget and its value (up to
``endpoints_per_value`` of them joined in later stay exact);
parameters it does not reach stay "not read" (checked against an independent reachability walk);
values under the budget keep their exact maps; ``--verify`` stays clean; a target past
``figure_points_per_target`` gets an unknown utilization naming the budget.
"""

from __future__ import annotations

import pytest

from hlo_index.api import SelectedTarget
from hlo_index.context import AnalysisContext
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.fusion.output_summaries import all_inputs_to_output
from hlo_index.fusion.summaries import bottom_up_output_to_input
from hlo_index.fusion.walk import walk_of
from hlo_index.hlo import parse_module_text
from hlo_index.report.build import module_report
from hlo_index.verify import verify_target

# wide = p0 + p1ᵀ + p2 + reverse(p3) reaches four parameters through four distinct maps; narrow =
# p4ᵀ * 2 reaches one; p0 reaches three outputs, two through one map (wide, both), one reversed
MODULE = """HloModule budgets
ENTRY e {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  p2 = f32[8] parameter(2)
  p3 = f32[4,8] parameter(3)
  p4 = f32[8,4] parameter(4)
  t1 = f32[4,8] transpose(p1), dimensions={1,0}
  a = f32[4,8] add(p0, t1)
  b = f32[4,8] broadcast(p2), dimensions={1}
  r3 = f32[4,8] reverse(p3), dimensions={1}
  c = f32[4,8] add(b, r3)
  wide = f32[4,8] add(a, c)
  t4 = f32[4,8] transpose(p4), dimensions={1,0}
  two = f32[] constant(2)
  twos = f32[4,8] broadcast(two), dimensions={}
  narrow = f32[4,8] multiply(t4, twos)
  both = f32[4,8] subtract(wide, narrow)
  ra = f32[4,8] reverse(a), dimensions={0}
  ROOT out = (f32[4,8], f32[4,8], f32[4,8], f32[4,8]) tuple(wide, narrow, both, ra)
}
"""


def _entry():
    return parse_module_text(MODULE).entry


def _reach(comp) -> dict[str, set[int]]:
    """Independent reachability: instruction name -> parameter numbers it depends on."""
    reach: dict[str, set[int]] = {}
    for instr in comp.instructions:
        if instr.opcode == "parameter":
            reach[instr.name] = {instr.parameter_number}
        else:
            reach[instr.name] = set().union(*(reach[o.name] for o in instr.operands)) if instr.operands else set()
    return reach


def _budget_reason(maps) -> str:
    assert len(maps) == 1 and maps[0].is_undefined, [str(m) for m in maps]
    return maps[0].undefined_reason


def test_a_value_past_endpoints_per_value_is_undefined_naming_the_budget():
    comp = _entry()
    reach = _reach(comp)
    with AnalysisContext():
        unbudgeted = bottom_up_output_to_input(comp, walk_of(comp).order)
    with AnalysisContext(endpoints_per_value=3):
        every = bottom_up_output_to_input(comp, walk_of(comp).order)
    for out, value in enumerate(comp.root.operands):
        got = {p for (p, _), maps in every[out].items() if maps}
        assert got == reach[value.name], value.name  # the reach stays exact
        for key, maps in every[out].items():
            if len(reach[value.name]) > 3 and key[0] != 4:
                reason = _budget_reason(maps)
                assert reason.startswith("budget endpoints_per_value=3 exceeded:"), reason
            else:  # under the budget, or (p4 joining 'both' through 'narrow') few enough to keep composing
                assert [str(m) for m in maps] == [str(m) for m in unbudgeted[out][key]], (value.name, key)


def test_in2out_past_endpoints_per_value():
    comp = _entry()
    walk = walk_of(comp)
    with AnalysisContext(endpoints_per_value=1):
        every = all_inputs_to_output(comp, walk.order, walk.users)
    # p0 feeds wide, both and ra through two distinct maps: past the budget; p4 feeds narrow and
    # both (two outputs, past the budget's count) through one map: exact
    assert [bool(maps) for maps in every[0]] == [True, False, True, True]
    for maps in every[0]:
        if maps:
            assert _budget_reason(maps).startswith("budget endpoints_per_value=1 exceeded:")
    assert [bool(maps) for maps in every[4]] == [False, True, True, False]
    assert all(not m.is_undefined for maps in every[4] for m in maps)


def test_compositions_per_pass_collapses_what_is_left():
    comp = _entry()
    reach = _reach(comp)
    with AnalysisContext(compositions_per_pass=1):
        every = bottom_up_output_to_input(comp, walk_of(comp).order)
    reasons = set()
    for out, value in enumerate(comp.root.operands):
        assert {p for (p, _), maps in every[out].items() if maps} == reach[value.name]
        reasons |= {m.undefined_reason for maps in every[out].values() for m in maps if m.is_undefined}
    assert reasons and all(r.startswith("budget compositions_per_pass=1 exceeded:") for r in reasons)


@pytest.mark.parametrize("budget", [{"endpoints_per_value": 2}, {"compositions_per_pass": 1}, {}])
def test_rows_stay_sound_and_verify_clean(budget):
    comp = _entry()
    reach = _reach(comp)
    with AnalysisContext(**budget):
        rows = output_to_input(comp)
        backward = input_to_output(comp)
        outcome = verify_target(SelectedTarget("computation", comp))
    assert not outcome.errors, outcome.errors
    assert outcome.checked_points > 0 or "map unknown: budget" in " ".join(outcome.notes)
    for row in rows:
        value = comp.root.operands[row.output]
        assert bool(row.maps) == (row.operand in reach[value.name]), (row.output, row.operand)
    for row in backward:
        value = comp.root.operands[row.output]
        assert bool(row.maps) == (row.operand in reach[value.name]), (row.operand, row.output)


def test_figure_points_per_target_leaves_utilization_unknown_naming_it():
    module = parse_module_text(MODULE)
    with AnalysisContext(figure_points_per_target=0):
        report = module_report(module, "out2in", options={"analyses": True}, own_context=False)
    [target] = report.targets
    read = [r for r in target.output_to_input if r.maps]
    assert read
    for r in read:
        u = r.extra["utilization"]
        assert u["distinct_elements"] is None
        assert u["summary"].startswith("unknown (budget figure_points_per_target=0 exceeded:"), u["summary"]
    with AnalysisContext():
        full = module_report(module, "out2in", options={"analyses": True}, own_context=False)
    assert all(r.extra["utilization"]["distinct_elements"] is not None for r in full.targets[0].output_to_input)


def test_walks_stop_composing_past_compositions_per_pass():
    comp = parse_module_text("""HloModule w
ENTRY e {
  p0 = f32[4,8] parameter(0)
  p1 = f32[8,4] parameter(1)
  t = f32[4,8] transpose(p1), dimensions={1,0}
  a = f32[4,8] add(p0, t)
  r = f32[8,4] transpose(a), dimensions={1,0}
  ROOT n = f32[8,4] negate(r)
}
""").entry
    from hlo_index.fusion.walk import forward_input_to_output, top_down_output_to_input

    with AnalysisContext():
        exact = top_down_output_to_input(comp, 0)
    assert not any(m.is_undefined for maps in exact.values() for m in maps)
    with AnalysisContext(compositions_per_pass=1):
        walked = top_down_output_to_input(comp, 0)
        forward = forward_input_to_output(comp, 1)
    assert set(walked) == set(exact) == {(0, 0), (1, 0)}  # still reaches both parameters
    reasons = [m.undefined_reason for maps in (*walked.values(), *forward) for m in maps if m.is_undefined]
    assert reasons and all(r.startswith("budget compositions_per_pass=1 exceeded:") for r in reasons)
