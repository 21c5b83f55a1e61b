"""Runs of common instructions are lexed as one INSTRS token: same model, same positions, and an
error inside a run still points at its own instruction."""

from __future__ import annotations

import pytest

from hlo_index.hlo import ParseError, parse_module_text
from hlo_index.hlo.lexer import InstrRun, InstrToken, Source, tokenize

BODY = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[8]) -> f32[] {
  %p = f32[8]{0} parameter(0)
  %n = f32[8]{0} negate(%p), metadata={op_name="jit(f)/neg"}
  %c = f32[8]{0} custom-call(%n), custom_call_target="x", backend_config={"k": {"v": 1}}
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%c, %z), dimensions={0}, to_apply=%add
}
"""


def test_consecutive_common_instructions_are_one_token_and_attributes_stay_with_theirs():
    tokens = list(tokenize(Source(BODY)))
    runs = [t for t in tokens if type(t) is InstrRun]
    singles = [t for t in tokens if type(t) is InstrToken]
    # the custom-call's nested braces make an ATTR token of its own: it ends the run before it
    assert [len(r.entries) for r in runs] == [3, 2, 2]
    assert [s.match.group("iname") for s in singles] == ["%c"]
    module = parse_module_text(BODY)
    main = module.entry
    assert [i.name for i in main.instructions] == ["p", "n", "c", "z", "r"]
    assert main.by_name["c"].attrs["backend_config"] == '{"k": {"v": 1}}'
    assert main.by_name["n"].metadata.op_name == "jit(f)/neg"
    assert main.by_name["r"].attrs["dimensions"] == (0,)
    assert [(i.line, i.column) for i in main.instructions] == [(10, 3), (11, 3), (12, 3), (13, 3), (14, 8)]


@pytest.mark.parametrize(
    "line, bad, good, column",
    [
        (13, "f32[] constant(0)", "f32[] constant(0), dimensions={x}", 27),  # at the attribute's name
        (11, "f32[8]{0} negate(%p)", "f99[8]{0} negate(%p)", 8),  # an unknown element type
    ],
)
def test_an_error_inside_a_run_points_at_its_instruction(line, bad, good, column):
    text = BODY.replace(bad, good)
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    d = info.value.diagnostic
    assert d.line == line and d.column == column, (d.line, d.column, d.message)
