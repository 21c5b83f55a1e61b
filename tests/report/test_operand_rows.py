"""A target's operand entries stored by kind (``OperandRows``): one entry per row, entries made on
demand are independent objects, and the JSON follows the entries once they are made."""

from __future__ import annotations

import json

from hlo_index.hlo import parse_module_text
from hlo_index.render.json_out import encode_module
from hlo_index.report.build import module_report
from hlo_index.report.model import OperandRows

WHOLE = """HloModule whole
ENTRY e {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  p2 = f32[16] parameter(2)
  a = f32[8,16] add(p0, p1)
  b = f32[8,16] broadcast(p2), dimensions={1}
  c = f32[8,16] multiply(a, b)
  ROOT t = (f32[8,16], f32[8,16], f32[8,16]) tuple(c, a, a)
}
"""


def _report():
    module = parse_module_text(WHOLE)
    return module_report(module, "both", computation="e", options={"analyses": True})


def test_one_entry_per_output_and_operand():
    target = _report().targets[0]
    rows = target.output_to_input
    assert isinstance(rows, OperandRows)
    # 3 outputs x 3 parameters, in (output, operand) order
    assert [(e.output, e.operand) for e in rows] == [(o, p) for o in range(3) for p in range(3)]
    # outputs 1 and 2 are the same value: their entries are of one kind each per operand
    assert len(rows.templates) < len(rows)
    assert [e.operand_name for e in rows[:3]] == ["p0", "p1", "p2"]
    assert [bool(e.maps) for e in rows] == [True, True, True, True, True, False, True, True, False]


def test_made_entries_are_independent_and_shown():
    report = _report()
    rows = report.targets[0].output_to_input
    before = json.loads(encode_module(report))["targets"][0]["output_to_input"]
    assert [e.to_json() for e in rows] == before
    rows[4].extra["mark"] = 1  # output 1, operand p1; output 2 reads p1 through the same kind
    assert "mark" not in rows[7].extra
    assert all("mark" not in t.extra for t in rows.templates)
    after = json.loads(encode_module(report))["targets"][0]["output_to_input"]
    assert [i for i, e in enumerate(after) if "mark" in e] == [4]


def test_entries_concatenate_like_lists():
    target = _report().targets[0]
    both = target.output_to_input + target.input_to_output
    assert len(both) == len(target.output_to_input) + len(target.input_to_output)
    assert [*target.input_to_output] + target.output_to_input == [*target.input_to_output, *target.output_to_input]
    assert both[0] is target.output_to_input[0]


def _text(report, color: bool) -> str:
    from io import StringIO

    from hlo_index.render.text import render_text

    out = StringIO()
    render_text([report], out, color=color)
    return out.getvalue()


def test_text_from_kinds_is_the_text_of_the_entries():
    # a block is written from the kinds without making the entries; once made (and so possibly
    # changed), the entries themselves are written: both texts must be the same
    for color in (False, True):
        report = _report()
        rows = [report.targets[0].output_to_input, report.targets[0].input_to_output]
        from_kinds = _text(report, color)
        assert all(r.entries is None for r in rows)
        for r in rows:
            r.made()
        assert _text(report, color) == from_kinds
    # every (output, operand) entry has its own line: output 2's rows are there, not only its kinds'
    assert "output 2 → operand 2" in from_kinds and "operand 2 → output 2" in from_kinds


def test_figures_leave_the_entries_unmade():
    from hlo_index.report.triage import figures_of

    report = _report()
    target = report.targets[0]
    figures = figures_of(target, report)
    assert target.output_to_input.entries is None and target.input_to_output.entries is None
    target.output_to_input.made()
    target.input_to_output.made()
    assert figures_of(target, report) == figures
    assert figures.operands == 3
