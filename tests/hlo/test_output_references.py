"""XLA writes a use of output k of a tuple-shaped instruction as the operand ``%x#k`` (current XLA
prints no get-tuple-element for it). The reader turns each reference into the get-tuple-element it
stands for; the printer writes it back as XLA does; a reference past the outputs is a positioned
error."""

from __future__ import annotations

import pytest

from hlo_index.hlo import ParseError, format_module, parse_module_text
from tests.spec.helpers import analyze, run_cli

TWO_OUTPUTS = """HloModule m

ENTRY %e (a: f32[4], b: f32[8]) -> f32[8] {
  %a = f32[4]{0} parameter(0)
  %b = f32[8]{0} parameter(1)
  %t = (f32[4]{0}, f32[8]{0}) tuple(%a, %b)
  ROOT %r = f32[8]{0} negate(%t#1)
}
"""


def test_a_reference_is_the_element_it_names():
    m = parse_module_text(TWO_OUTPUTS)
    r = m.entry.root
    (element,) = r.operands
    assert element.opcode == "get-tuple-element"
    assert element.attrs["index"] == 1
    assert element.operands == (m.entry.by_name["t"],)
    assert (element.shape.element_type, element.shape.dims) == ("f32", (8,))
    # it comes right after the tuple it reads, so a walk in text order meets it before its user
    names = [i.name for i in m.entry.instructions]
    assert names.index("t#1") == names.index("t") + 1


def test_the_printer_writes_the_reference_back():
    text = format_module(parse_module_text(TWO_OUTPUTS))
    assert "%t#1" in text
    assert "get-tuple-element" not in text
    again = parse_module_text(text)
    assert [i.opcode for i in again.entry.instructions] == [
        i.opcode for i in parse_module_text(TWO_OUTPUTS).entry.instructions
    ]


def test_the_map_reads_the_named_output_only(tmp_path):
    target = analyze(tmp_path, TWO_OUTPUTS, computation="e", direction="out2in")
    maps = {o["operand_name"]: [m["map"] for m in o["maps"]] for o in target["output_to_input"]}
    # r(i) = -b(i): b is read elementwise, a not at all (hand-derived from the semantics)
    assert maps == {"a": [], "b": ["(d0) -> (d0), domain: d0 in [0, 7]"]}


def test_a_reference_past_the_outputs_is_a_positioned_error():
    with pytest.raises(ParseError) as e:
        parse_module_text(TWO_OUTPUTS.replace("%t#1", "%t#2"), "x.hlo")
    d = e.value.diagnostic
    assert (d.path, d.line) == ("x.hlo", 7)
    assert "%t#2" in d.message and "2 output(s)" in d.message


def test_a_reference_into_an_array_is_an_error(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(TWO_OUTPUTS.replace("negate(%t#1)", "negate(%b#0)"))
    code, _ = run_cli(["analyze", str(path)])
    assert code == 2


def test_verify_agrees_through_the_reference(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(TWO_OUTPUTS)
    code, out = run_cli(["check", str(path), "--verify", "--format", "json"])
    assert code == 0
    assert "HI900" not in out
