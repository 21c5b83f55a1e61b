"""XLA's async sugar (``X-start`` / ``X-update`` / ``X-done``) is desugared as XLA's parser does:
an ``async_wrapped`` computation per start, opcodes ``async-start/update/done``."""

from __future__ import annotations

from collections import Counter

import pytest

from hlo_index.hlo import ParseError, format_module, parse_module_text
from hlo_index.hlo.asyncwrap import async_sugar

from .graph import graph_signature

FUSED = """%fused (p0: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p0)
}
"""


def module(entry_body: str, extra: str = "") -> str:
    return f"HloModule m\n\n{extra}\nENTRY %main (p: f32[4], q: s32[2]) -> f32[4] {{\n{entry_body}\n}}\n"


def counts(m) -> tuple[int, int, Counter]:
    return (
        len(m.computations),
        sum(len(c.instructions) for c in m.computations),
        Counter(i.opcode for i in m.instructions),
    )


def test_which_opcodes_are_sugar():
    assert async_sugar("custom-call-start") == ("async-start", "custom-call")
    assert async_sugar("fusion-update") == ("async-update", "fusion")
    assert async_sugar("reduce-scatter-done") == ("async-done", "reduce-scatter")
    for own_opcode in (
        "all-reduce-start",
        "all-gather-done",
        "collective-permute-start",
        "copy-start",
        "copy-done",
        "send-done",
        "recv-done",
        "async-start",
        "async-done",
    ):
        assert async_sugar(own_opcode) is None, own_opcode
    assert async_sugar("brand-new-start") is None  # unknown prefix: stays a raw unknown opcode
    assert async_sugar("fusion") is None


def test_fusion_start_update_done_builds_the_wrapped_computation():
    text = module(
        "  %p = f32[4]{0} parameter(0)\n  %q = s32[2]{0} parameter(1)\n"
        "  %s = ((f32[4]{0}, s32[2]{0}), f32[4]{0}, u32[]) fusion-start(%p, %q), kind=kLoop, calls=%fused,"
        ' backend_config={"x":1}, metadata={op_name="f"}\n'
        "  %u = ((f32[4]{0}, s32[2]{0}), f32[4]{0}, u32[]) fusion-update(%s)\n"
        "  ROOT %d = f32[4]{0} fusion-done(%u)",
        FUSED,
    )
    m = parse_module_text(text)
    # XLA: 3 computations (fused, async_wrapped, main); 2 + 3 + 5 instructions
    assert [c.name for c in m.computations] == ["fused", "async_wrapped", "main"]
    n_comps, n_instr, opcodes = counts(m)
    assert (n_comps, n_instr) == (3, 10)
    assert opcodes == Counter(
        {"parameter": 5, "negate": 1, "fusion": 1, "async-start": 1, "async-update": 1, "async-done": 1}
    )
    wrapped = m.by_name["async_wrapped"]
    p0, p1 = wrapped.parameters[0], wrapped.parameters[1]
    assert (p0.name, str(p0.shape), p1.name, str(p1.shape)) == (
        "async_param",
        "f32[4]{0}",
        "async_param.1",
        "s32[2]{0}",
    )
    root = wrapped.root
    assert (root.name, root.opcode, str(root.shape)) == ("async_op", "fusion", "f32[4]{0}")
    assert root.operands == (p0, p1)
    assert root.attrs["kind"] == "kLoop" and root.called["calls"] is m.by_name["fused"]
    assert m.by_name["fused"].is_fused
    e = m.entry
    start = e.by_name["s"]
    assert start.opcode == "async-start" and start.called["calls"] is wrapped
    assert "kind" not in start.attrs and start.attrs["backend_config"] == '{"x":1}'
    assert start.metadata.op_name == "f"
    assert e.by_name["u"].called["calls"] is wrapped and e.by_name["d"].called["calls"] is wrapped
    assert e.by_name["d"].operands == (e.by_name["u"],)


def test_two_starts_get_unique_computation_names_and_print_reparse_to_the_same_graph():
    body = (
        "  %p = f32[4]{0} parameter(0)\n  %q = s32[2]{0} parameter(1)\n"
        '  %a = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(%p), custom_call_target="foo"\n'
        '  %b = ((s32[2]{0}), s32[2]{0}, u32[]) custom-call-start(%q), custom_call_target="bar"\n'
        "  %bd = s32[2]{0} custom-call-done(%b)\n"
        "  ROOT %ad = f32[4]{0} custom-call-done(%a)"
    )
    m = parse_module_text(module(body))
    assert [c.name for c in m.computations] == ["async_wrapped", "async_wrapped.1", "main"]
    targets = [m.by_name[n].root.attrs["custom_call_target"] for n in ("async_wrapped", "async_wrapped.1")]
    assert targets == ["foo", "bar"]
    again = parse_module_text(format_module(m))
    assert graph_signature(again) == graph_signature(m)
    assert counts(again) == counts(m)


def test_a_computation_already_named_async_wrapped_is_not_clobbered():
    extra = "%async_wrapped (x: f32[4]) -> f32[4] {\n  ROOT %x = f32[4]{0} parameter(0)\n}\n"
    body = (
        "  %p = f32[4]{0} parameter(0)\n"
        "  %a = ((f32[4]{0}), f32[4]{0}, u32[]) call-start(%p), to_apply=%async_wrapped\n"
        "  ROOT %d = f32[4]{0} call-done(%a)"
    )
    m = parse_module_text(module(body, extra))
    assert [c.name for c in m.computations] == ["async_wrapped", "async_wrapped.1", "main"]
    assert m.entry.by_name["a"].called["calls"].root.called["to_apply"] is m.by_name["async_wrapped"]


@pytest.mark.parametrize(
    "body, fragment",
    [
        ("  %p = f32[4]{0} parameter(0)\n  ROOT %s = f32[4]{0} custom-call-start(%p)", "needs a result shape"),
        ("  %p = f32[4]{0} parameter(0)\n  ROOT %d = f32[4]{0} custom-call-done(%p)", "is not an async op"),
        (
            "  %p = f32[4]{0} parameter(0)\n  %s = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(%p)\n"
            "  ROOT %d = f32[4]{0} fusion-done(%s)",
            "follows an async custom-call, not fusion",
        ),
        (
            "  %p = f32[4]{0} parameter(0)\n  %s = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(%p)\n"
            "  ROOT %d = f32[4]{0} custom-call-done(%s, %p)",
            "exactly one operand",
        ),
        ("  %p = f32[4]{0} parameter(0)\n  ROOT %s = ((f32[4]{0}), f32[4]{0}, u32[]) custom-call-start(%zz)", "%zz"),
    ],
)
def test_malformed_async_sugar_is_a_positioned_error(body, fragment):
    with pytest.raises(ParseError) as info:
        parse_module_text(module(body))
    d = info.value.diagnostic
    assert fragment in d.message
    assert d.line >= 6 and d.column == d.source_line.index("%") + 1  # at the instruction's name


def test_unknown_prefix_start_stays_an_unknown_opcode():
    m = parse_module_text(module("  %p = f32[4]{0} parameter(0)\n  ROOT %s = f32[4]{0} brand-new-start(%p)"))
    assert m.entry.root.opcode == "brand-new-start" and len(m.computations) == 1
