"""Operands written with their shapes (``negate(f32[2]{0} %a)``, every operand of a GPU dump) are
checked against the instruction each names, as XLA's parser checks them. A list written exactly
as its operands were defined is found so while it is read; these cases are the ones where that
text looks right and is not, or where the definitions are not what the text before it says."""

from __future__ import annotations

import pytest

from hlo_index.hlo import ParseError, parse_module_text


def rejected_as(text: str) -> str:
    with pytest.raises(ParseError) as info:
        parse_module_text(text)
    return info.value.diagnostic.message


def test_an_operand_named_as_an_instruction_of_another_computation_is_checked_against_its_own():
    # %f defines s32[2] %a; the ENTRY's %a is f32[2]: "s32[2]{0} %a" is %f's text, not the ENTRY's
    message = rejected_as(
        "HloModule m\n\n%f {\n  %a = s32[2]{0} parameter(0)\n  ROOT %n = s32[2]{0} negate(s32[2]{0} %a)\n}\n\n"
        "ENTRY %e {\n  %a = f32[2]{0} parameter(0)\n  ROOT %b = f32[2]{0} negate(s32[2]{0} %a)\n}\n"
    )
    assert "declared operand shape s32[2]{0} of %b" in message
    assert "%a, f32[2]{0}" in message


def test_a_name_defined_twice_is_checked_against_the_definition_link_takes():
    message = rejected_as(
        "HloModule m\n\nENTRY %e {\n  %a = f32[2]{0} parameter(0)\n  %b = f32[2]{0} negate(f32[2]{0} %a)\n"
        "  %a = s32[3]{0} parameter(1)\n  ROOT %t = (f32[2]{0}, s32[3]{0}) tuple(f32[2]{0} %b, s32[3]{0} %a)\n}\n"
    )
    # the text of %b's operand list is the first %a's, but %a names the second
    assert "declared operand shape f32[2]{0} of %b" in message
    assert "%a, s32[3]{0}" in message


def test_a_long_operand_list_with_index_comments_is_checked_to_its_last_operand():
    good = ", ".join(("/*index=5*/" if k == 5 else "") + "f32[2]{0} %a" for k in range(7))
    bad = good[: -len("f32[2]{0} %a")] + "f32[3]{0} %a"
    shapes = ", ".join(("/*index=5*/" if k == 5 else "") + "f32[2]{0}" for k in range(7))

    def text(ops: str) -> str:
        return f"HloModule m\n\nENTRY %e {{\n  %a = f32[2]{{0}} parameter(0)\n  ROOT %t = ({shapes}) tuple({ops})\n}}\n"

    module = parse_module_text(text(good))
    assert [o.name for o in module.entry.root.operands] == ["a"] * 7
    assert "declared operand shape f32[3]{0} of %t" in rejected_as(text(bad))


def test_an_operand_written_without_percent_beside_shaped_ones_is_still_an_operand():
    module = parse_module_text(
        "HloModule m\n\nENTRY %e {\n  %a = f32[2]{0} parameter(0)\n  b = f32[2]{0} parameter(1)\n"
        "  ROOT %t = (f32[2]{0}, f32[2]{0}) tuple(f32[2]{0} %a, f32[2]{0} b)\n}\n"
    )
    assert [o.name for o in module.entry.root.operands] == ["a", "b"]
