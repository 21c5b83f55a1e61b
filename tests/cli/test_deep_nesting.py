"""Computations nested a thousand calls deep (each calls the next; the last negates): every map is
known and exact, and no command fails for want of stack."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from hlo_index.cli import main

DEPTH = 1000


def chain(depth: int) -> str:
    last = f"c{depth - 1} {{\n  p = f32[8] parameter(0)\n  ROOT r = f32[8] negate(p)\n}}\n"
    calls = [
        f"c{i} {{\n  p = f32[8] parameter(0)\n  ROOT r = f32[8] call(p), to_apply=c{i + 1}\n}}\n"
        for i in reversed(range(depth - 1))
    ]
    entry = "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT r = f32[8] call(x), to_apply=c0\n}\n"
    return "HloModule m\n\n" + "\n".join([last, *calls]) + "\n" + entry


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 keeps its own recursion limit")
def test_a_thousand_nested_calls_are_analysed():
    result = CliRunner().invoke(main, ["analyze", "-", "--format", "json", "--direction", "both"], input=chain(DEPTH))
    assert result.exit_code == 0, result.output[-500:]
    (target,) = json.loads(result.stdout)["modules"][0]["targets"]
    (row,) = target["output_to_input"]
    assert row["maps"] == [{"map": "(d0) -> (d0), domain: d0 in [0, 7]"}]  # negate reads its own element
    verified = CliRunner().invoke(main, ["check", "--verify", "-"], input=chain(DEPTH))
    assert verified.exit_code == 0, verified.output[-500:]
