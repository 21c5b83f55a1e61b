"""Cache keys are the structure a rule reads, never names: answers depend only on the module.

A reproduction: two modules whose sort comparators (both named ``cmp``) read
different parameters, each sorted inside a kLoop fusion with the same names. Analysed in one
process (one analysis context), b must get b's maps, not a's.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from hlo_index.context import AnalysisContext
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.fusion.fingerprint import fingerprint_id, instruction_key
from hlo_index.hlo import parse_module_text

SORTED_BY = {"a": "p0, p1", "b": "p2, p3"}  # a sorts by x (operand 0), b by y (operand 1)


def sort_module(which: str) -> str:
    return f"""HloModule m_{which}

cmp {{
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  ROOT lt = pred[] compare({SORTED_BY[which]}), direction=LT
}}

fused_computation {{
  x = f32[4,6] parameter(0)
  y = s32[4,6] parameter(1)
  ROOT s = (f32[4,6], s32[4,6]) sort(x, y), dimensions={{1}}, to_apply=cmp
}}

ENTRY main {{
  a = f32[4,6] parameter(0)
  b = s32[4,6] parameter(1)
  ROOT f = (f32[4,6], s32[4,6]) fusion(a, b), kind=kLoop, calls=fused_computation
}}
"""


def _rows(module) -> list:
    fusion = module.fusions[0]
    out = [("out2in", r.operand, r.output, tuple(map(str, r.maps))) for r in output_to_input(fusion)]
    out += [("in2out", r.operand, r.output, tuple(map(str, r.maps))) for r in input_to_output(fusion)]
    return out


def _alone(which: str) -> list:
    with AnalysisContext():
        return _rows(parse_module_text(sort_module(which)))


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_one_context_gives_each_module_its_own_answer(order):
    alone = {w: _alone(w) for w in order}
    with AnalysisContext():
        together = {w: _rows(parse_module_text(sort_module(w))) for w in order}
    assert together == alone
    assert alone["a"] != alone["b"]


def test_the_sorted_keys_do_not_read_the_other_operand():
    """Output 1 of b (sorted y, the key) reads only y; output 0 of a (sorted x, the key) only x."""
    rows = {w: {(r[1], r[2]): r[3] for r in _alone(w) if r[0] == "out2in"} for w in "ab"}
    assert rows["a"][(1, 0)] == ()  # sorted x reads no y
    assert rows["a"][(1, 1)] != ()  # y is permuted by x
    assert rows["b"][(0, 1)] == ()  # sorted y reads no x
    assert rows["b"][(0, 0)] != ()


def test_instruction_keys_hold_callee_bodies_not_names():
    with AnalysisContext():
        a, b = (parse_module_text(sort_module(w)) for w in "ab")
        sort_a = a.by_name["fused_computation"].root
        sort_b = b.by_name["fused_computation"].root
        assert sort_a.attrs["to_apply"] == sort_b.attrs["to_apply"] == "cmp"
        assert instruction_key(sort_a) != instruction_key(sort_b)
        assert fingerprint_id(a.by_name["fused_computation"]) != fingerprint_id(b.by_name["fused_computation"])
        # renaming everything changes nothing
        renamed = parse_module_text(
            sort_module("a").replace("cmp", "compare-less-than.7").replace("fused_computation", "fused_computation.3")
        )
        assert fingerprint_id(renamed.by_name["fused_computation.3"]) == fingerprint_id(a.by_name["fused_computation"])


def test_cli_analyses_each_file_as_if_alone(tmp_path):
    from hlo_index.cli import main

    paths = []
    for w in "ab":
        p = tmp_path / f"{w}.hlo"
        p.write_text(sort_module(w))
        paths.append(str(p))
    runner = CliRunner()

    def modules(*args):
        result = runner.invoke(main, ["analyze", *args, "--format", "json", "--direction", "both"])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["modules"]

    alone = [modules(p)[0] for p in paths]
    assert modules(*paths) == alone
    assert modules(*reversed(paths)) == alone[::-1]
    verified = runner.invoke(main, ["analyze", *paths, "--verify", "--format", "json"])
    assert verified.exit_code == 0, verified.output


# The ENTRY and its conditional's true branch: five instructions each, a root tuple (f32[4]) each.
BRANCH_LIKE_ITS_CALLER = """HloModule branch_like_its_caller

on_true {
  t = (f32[4]) parameter(0)
  g = f32[4] get-tuple-element(t), index=0
  n = f32[4] negate(g)
  m = f32[4] multiply(n, n)
  ROOT r = (f32[4]) tuple(m)
}

on_false {
  t = (f32[4]) parameter(0)
  g = f32[4] get-tuple-element(t), index=0
  ROOT r = (f32[4]) tuple(g)
}

ENTRY main {
  p = pred[] parameter(0)
  x = (f32[4]) parameter(1)
  c = (f32[4]) conditional(p, x, x), true_computation=on_true, false_computation=on_false
  e = f32[4] get-tuple-element(c), index=0
  ROOT r = (f32[4]) tuple(e)
}
"""


def test_a_callee_shaped_like_its_caller_gets_its_own_identity():
    """Identities of computations alike in size and root (a caller and its callee) are still told
    apart by their bodies, whichever is asked first, and a renamed copy shares its original's."""
    with AnalysisContext():
        module = parse_module_text(BRANCH_LIKE_ITS_CALLER)
        main = module.by_name["main"]
        fingerprint_id(main)  # the caller first: its identity is then needed inside its own key
        rows = output_to_input(main)
        assert [r.operand for r in rows if r.maps] == [0, 1]  # the predicate picks, the tuple is read
        copy = parse_module_text(BRANCH_LIKE_ITS_CALLER.replace("on_true", "then_branch"))
        assert fingerprint_id(copy.by_name["then_branch"]) == fingerprint_id(module.by_name["on_true"])
        assert fingerprint_id(copy.by_name["main"]) == fingerprint_id(main)
        assert fingerprint_id(module.by_name["on_true"]) != fingerprint_id(main)
        assert fingerprint_id(module.by_name["on_false"]) != fingerprint_id(module.by_name["on_true"])
