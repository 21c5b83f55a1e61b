"""Unbounded dynamic dimensions (``f32[?,784]``, StableHLO's import of a dynamic batch): no domain
bounds them, so every map through one is UNDEFINED, saying why, in both directions and for a fusion
or an op alike, and neither the figures nor ``--verify`` end in an internal error."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.fusion import input_to_output_table, output_to_input_table
from hlo_index.hlo import parse_module_text
from hlo_index.ops import input_to_output, output_to_input

MODULE = """HloModule m

fused {
  p = f32[?,784] parameter(0)
  ROOT n = f32[?,784] negate(p)
}

ENTRY main {
  a = f32[?,784] parameter(0)
  b = f32[?,784] abs(a)
  ROOT f = f32[?,784] fusion(b), kind=kLoop, calls=fused
}
"""


def _all_undefined(table) -> bool:
    maps = [m for row in table.rows() for m in row.maps]
    return bool(maps) and all(m.is_undefined and "unbounded dynamic dimension" in m.undefined_reason for m in maps)


def test_every_map_through_an_unbounded_dim_is_undefined_saying_why():
    module = parse_module_text(MODULE)
    by_name = {i.name: i for i in module.entry.instructions}
    for target in (module.entry, by_name["f"]):
        assert _all_undefined(output_to_input_table(target))
        assert _all_undefined(input_to_output_table(target))
    op = by_name["b"]
    assert all(m.is_undefined for om in output_to_input(op) for m in om.maps)
    assert all(m.is_undefined for maps in input_to_output(op, 0) for m in maps)


def test_the_command_reports_them_without_an_internal_error():
    result = CliRunner().invoke(
        main, ["analyze", "-", "--direction", "both", "--verify", "--format", "json"], input=MODULE
    )
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    messages = [d["message"] for m in doc["modules"] for d in m["diagnostics"]]
    assert not any(text.startswith(("internal", "verify:")) for text in messages), messages
    rows = [row for m in doc["modules"] for t in m["targets"] for row in t["output_to_input"]]
    assert rows and all(row["utilization"]["method"] == "undefined" for row in rows)
