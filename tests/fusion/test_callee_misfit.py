"""A fusion or call whose computation does not fit it: XLA's parser reads it, its verifier rejects it
(jaxlib 0.10.2 fails to compile each module below). Every map of the instruction is UNDEFINED,
saying why, in both directions, and the analysis (cost included) ends without an internal error."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.fusion import input_to_output_table, output_to_input_table
from hlo_index.hlo import parse_module_text

FUSION = """HloModule m

fc {{
  p = f32[2] parameter(0)
  ROOT t = ({root}) tuple(p, p)
}}

ENTRY e {{
  a = f32[2] parameter(0)
  ROOT c = ({declared}) fusion(a), kind=kLoop, calls=fc
}}
"""

CALL = """HloModule m

g {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  ROOT s = f32[2] add(p, q)
}

ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] negate(a)
  ROOT c = f32[2] call(b), to_apply=g
}
"""

SCALAR_PARAMETER = """HloModule m

fc {
  a = s32[4] parameter(0)
  b = s32[] parameter(1)
  d = s32[4] broadcast(b), dimensions={}
  ROOT m = s32[4] multiply(a, d)
}

ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  ROOT f = s32[4] fusion(a, b), kind=kLoop, calls=fc
}
"""

CASES = {
    # jaxlib 0.10.2: GetTupleElement() index (2) out of range for tuple shape (f32[2], f32[2])
    "three outputs declared, two given": (FUSION.format(root="f32[2], f32[2]", declared="f32[2], f32[2], f32[2]"), "c"),
    # jaxlib 0.10.2: 'func.call' op incorrect number of operands for callee
    "one parameter given for two": (CALL, "c"),
    # jaxlib 0.10.2: Shape mismatch between parameter number 1 and its operand ... (s32[] != s32[4]{0})
    "a scalar parameter given an array": (SCALAR_PARAMETER, "f"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_map_is_undefined_saying_why(name):
    text, target = CASES[name]
    module = parse_module_text(text)
    instr = next(i for i in module.entry.instructions if i.name == target)
    for table in (output_to_input_table(instr), input_to_output_table(instr)):
        maps = [m for row in table.rows() for m in row.maps]
        assert maps and all(m.is_undefined and "XLA's verifier rejects" in m.undefined_reason for m in maps)
    result = CliRunner().invoke(main, ["analyze", "-", "--direction", "both", "--format", "json"], input=text)
    assert "internal" not in result.output, result.output


def test_the_same_fusion_fitting_its_computation_is_read():
    text = FUSION.format(root="f32[2], f32[2]", declared="f32[2], f32[2]")
    fusion = parse_module_text(text).entry.root
    maps = [m for row in output_to_input_table(fusion).rows() for m in row.maps]
    assert maps and not any(m.is_undefined for m in maps)
