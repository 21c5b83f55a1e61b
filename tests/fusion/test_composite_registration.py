"""The rules of the ops that compose their called computations (``ops.registry.COMPOSITE``) are
registered by the fusion layer, into the one op registry; without it, asking for one raises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hlo_index.fusion  # noqa: F401  (registers the composite op rules)
from hlo_index import ops

REPO = Path(__file__).resolve().parents[2]


def test_the_fusion_layer_registers_exactly_the_composite_ops_in_both_directions():
    from_fusion = {
        op
        for table in (ops.OUTPUT_TO_INPUT, ops.INPUT_TO_OUTPUT)
        for op, rule in table.items()
        if rule.__module__.startswith("hlo_index.fusion.")
    }
    assert from_fusion == set(ops.COMPOSITE)
    assert all(op in ops.OUTPUT_TO_INPUT and op in ops.INPUT_TO_OUTPUT for op in ops.COMPOSITE)


WITHOUT_FUSION = """
import sys
from hlo_index.hlo import parse_module_text
from hlo_index.ops import CompositeRuleMissing, input_to_output, output_to_input
module = parse_module_text('''HloModule m
callee {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
ENTRY main {
  a = f32[4] parameter(0)
  ROOT c = f32[4] call(a), to_apply=callee
}
''')
call = module.entry.root
assert "hlo_index.fusion" not in sys.modules
for ask in (lambda: output_to_input(call, 0), lambda: input_to_output(call, 0)):
    try:
        ask()
    except CompositeRuleMissing as e:
        print("raised:", e)
    else:
        print("answered")
print("negate:", output_to_input(module.by_name["callee"].root, 0)[0].maps[0].read_set((2,)))
"""


def test_a_composite_op_asked_for_without_the_fusion_layer_raises_instead_of_answering():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_FUSION], capture_output=True, text=True, env=env, cwd=str(REPO), check=True
    ).stdout.splitlines()
    assert (
        out[:2]
        == [
            "raised: the rules of 'call' compose its called computations and are registered by "
            "hlo_index.fusion: import hlo_index.fusion before asking for them"
        ]
        * 2
    )
    assert out[2] == "negate: {(2,)}"  # the other ops answer as ever
