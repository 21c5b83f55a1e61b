"""Ops written without an attribute XLA's parser requires, or with another number of operands than
it expects: rejected at the instruction with XLA's message, exit 2, never an internal error. Each
message below is what jaxlib 0.10.2's ``hlo_module_from_text`` says for the same text ("attribute
... is expected but not seen", "expects N operands, but has M operands", "expects an even number of
operands ...", a dynamic slice's "Expected at least one operand." and "Wrong number of operands.")."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from hlo_index.hlo import ParseError, parse_module_text

MODULE = """HloModule m

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ge {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = pred[] compare(a, b), direction=GE
}}

cond {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = s32[] constant(4)
  ROOT lt = pred[] compare(i, c), direction=LT
}}

body {{
  p = (s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  n = s32[] add(i, one)
  ROOT t = (s32[]) tuple(n)
}}

fused {{
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
}}

ENTRY e {{
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  i0 = s32[] constant(0)
  t0 = (s32[]) tuple(i0)
  idx = s32[2,1] parameter(1)
  upd = f32[2] parameter(2)
  v = s32[1] parameter(3)
  ROOT r = {root}
}}
"""
ROOT_LINE = MODULE.splitlines().index("  ROOT r = {root}") + 1

CASES = {
    "reduce without to_apply": ("f32[] reduce(x, z), dimensions={0}", "attribute to_apply is expected but not seen"),
    "reduce without dimensions": ("f32[] reduce(x, z), to_apply=add", "attribute dimensions is expected but not seen"),
    "reduce with an odd operand count": (
        "f32[] reduce(x, z, z), dimensions={0}, to_apply=add",
        "expects an even number of operands, but has 3 operands",
    ),
    "reduce-window": ("f32[8] reduce-window(x, z), window={size=1}", "attribute to_apply is expected but not seen"),
    "map": ("f32[8] map(x, x), dimensions={0}", "attribute to_apply is expected but not seen"),
    "scatter": (
        "f32[8] scatter(x, idx, upd), update_window_dims={}, inserted_window_dims={0}, "
        "scatter_dims_to_operand_dims={0}, index_vector_dim=1",
        "attribute to_apply is expected but not seen",
    ),
    "select-and-scatter": (
        "f32[8] select-and-scatter(x, x, z), window={size=1}, scatter=add",
        "attribute select is expected but not seen",
    ),
    "sort": ("f32[8] sort(x), dimensions={0}", "attribute to_apply is expected but not seen"),
    "call": ("f32[8] call(x)", "attribute to_apply is expected but not seen"),
    "while": ("(s32[]) while(t0), body=body", "attribute condition is expected but not seen"),
    "fusion": ("f32[8] fusion(x), kind=kLoop", "attribute calls is expected but not seen"),
    "all-reduce": ("f32[8] all-reduce(x), replica_groups={}", "attribute to_apply is expected but not seen"),
    "a unary op with two operands": ("f32[8] negate(x, x)", "expects 1 operands, but has 2 operands"),
    "a binary op with one": ("f32[8] add(x)", "expects 2 operands, but has 1 operands"),
    "select with two": ("f32[8] select(x, x)", "expects 3 operands, but has 2 operands"),
    "a gather without its indices": (
        "f32[8] gather(x), offset_dims={0}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, "
        "slice_sizes={8}",
        "expects 2 operands, but has 1 operands",
    ),
    "a dynamic-slice without its sizes": ("f32[2] dynamic-slice(x, i0)", "attribute dynamic_slice_sizes is expected"),
    # jaxlib 0.10.2: a check fails (a tuple has no dimensions) and the process aborts
    "a dynamic-slice of a tuple": ("s32[] dynamic-slice(t0), dynamic_slice_sizes={}", "slices an array"),
    "a dynamic-slice without operands": (
        "f32[2] dynamic-slice(), dynamic_slice_sizes={2}",
        "Expected at least one operand.",
    ),
    "a dynamic-update-slice without its update": ("f32[8] dynamic-update-slice(x)", "Expected at least two operands."),
    "a dynamic-slice with an index too many": (
        "f32[2] dynamic-slice(x, i0, i0), dynamic_slice_sizes={2}",
        "Wrong number of operands.",
    ),
    "a dynamic-update-slice without its index": ("f32[8] dynamic-update-slice(x, upd)", "Wrong number of operands."),
    # jaxlib 0.10.2: a range check fails on the empty list (its parser reads the first entry)
    "an all-gather with an empty dimension list": ("f32[8] all-gather(x), dimensions={}", "which is empty"),
    "a reduce-scatter with an empty dimension list": (
        "f32[8] reduce-scatter(x), dimensions={}, to_apply=add",
        "which is empty",
    ),
    # jaxlib 0.10.2: a syntax error without a message
    "an all-to-all with two split dimensions": ("f32[8] all-to-all(x), dimensions={0,0}", "one split dimension"),
    "a dynamic-update-slice with an index too many": (
        "f32[8] dynamic-update-slice(x, upd, i0, i0)",
        "Wrong number of operands.",
    ),
    # jaxlib 0.10.2: a syntax error without a message
    "a sort along two dimensions": ("f32[8] sort(x), dimensions={0,0}, to_apply=ge", "sort takes one dimension"),
    "a slice without its ranges": ("f32[4] slice(x)", "attribute slice is expected but not seen"),
    "a slice of a tuple without its ranges": ("s32[] slice(t0)", "attribute slice is expected but not seen"),
    "a transpose without its dimensions": ("f32[8] transpose(x)", "attribute dimensions is expected but not seen"),
    "a broadcast of an array without its dimensions": (
        "f32[8,2] broadcast(x)",
        "attribute dimensions is expected but not seen",
    ),
    "a compare without its direction": ("pred[8] compare(x, x)", "attribute direction is expected but not seen"),
    "a custom-call without its target": ("f32[8] custom-call(x)", "attribute custom_call_target is expected"),
    "a get-tuple-element without its index": ("s32[] get-tuple-element(t0)", "attribute index is expected"),
    # XLA names the first missing attribute in name order
    "a while without its computations": ("(s32[]) while(t0)", "attribute body is expected but not seen"),
    "a gather with its slice sizes alone": (
        "f32[2,1] gather(x, idx), slice_sizes={1}",
        "attribute collapsed_slice_dims is expected but not seen",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rejected_with_xlas_message_at_the_instruction(name):
    root, message = CASES[name]
    with pytest.raises(ParseError) as info:
        parse_module_text(MODULE.format(root=root))
    d = info.value.diagnostic
    assert d.line == ROOT_LINE and message in d.message, d


def test_the_same_ops_with_their_attributes_are_read():
    # each accepted by jaxlib 0.10.2's parser
    roots = [
        "f32[] reduce(x, z), dimensions={0}, to_apply=add",
        "f32[8] map(x, x), dimensions={0}, to_apply=add",
        "f32[8] sort(x), dimensions={0}, to_apply=ge",
        "(s32[]) while(t0), condition=cond, body=body",
        "f32[8] fusion(x), kind=kLoop, calls=fused",
        "f32[8] call(x), to_apply=fused",
        "f32[2] dynamic-slice(x, i0), dynamic_slice_sizes={2}",
        "f32[2] dynamic-slice(x, v), dynamic_slice_sizes={2}",  # the older form: one vector of indices
        "f32[8] dynamic-update-slice(x, upd, i0)",
        "f32[8] all-to-all(x), dimensions={0}",
        "f32[16] all-gather(x), dimensions={0,0}",  # the parser reads the first entry
        "f32[8] broadcast(z)",  # a scalar's dimensions may be left unsaid
    ]
    for root in roots:
        assert parse_module_text(MODULE.format(root=root)).entry.root.name == "r"


def test_a_fused_reduce_without_its_computation_exits_2_not_internal(tmp_path):
    # the parser's check comes first: no analysis reaches a reduce without its computation
    text = MODULE.format(root="f32[8] fusion(x), kind=kLoop, calls=fused").replace(
        "ROOT n = f32[8] negate(x)", "s = f32[] reduce(x, x), dimensions={0}\n  ROOT n = f32[8] negate(x)"
    )
    path = tmp_path / "m.hlo"
    path.write_text(text)
    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 2, result.output
    assert "attribute to_apply is expected but not seen" in result.output and "internal" not in result.output
