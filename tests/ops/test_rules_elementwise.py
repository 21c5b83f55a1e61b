"""Elementwise rules vs the reference, and the spec's Elementwise example."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo.build import array_shape, instruction
from hlo_index.ops import INPUT_TO_OUTPUT, OUTPUT_TO_INPUT, input_to_output, output_to_input
from hlo_index.ops.rules_elementwise import ELEMENTWISE_OPCODES

from .oracle_check import check_in2out, check_out2in
from .spec_text import assert_map_text
from .strategies import dims_strategy

ARITY = {"select": 3, "clamp": 3, "map": 2, "stochastic-convert": 2}
BINARY = {
    "add",
    "and",
    "atan2",
    "compare",
    "complex",
    "divide",
    "maximum",
    "minimum",
    "multiply",
    "or",
    "power",
    "remainder",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "subtract",
    "xor",
}
# Operands that HLO allows to be a scalar next to a ranked output.
SCALAR_OK = {"select": {0}, "clamp": {0, 2}}


def arity(opcode: str) -> int:
    return ARITY.get(opcode, 2 if opcode in BINARY else 1)


@settings(deadline=None, derandomize=True, max_examples=60)
@given(st.sampled_from(ELEMENTWISE_OPCODES), dims_strategy(0, 4), st.data())
def test_elementwise_matches_reference(opcode, dims, data):
    operands = []
    for i in range(arity(opcode)):
        scalar = i in SCALAR_OK.get(opcode, ()) and data.draw(st.booleans())
        operands.append(array_shape("f32", () if scalar else dims))
    instr = instruction(opcode, array_shape("f32", dims), operands)
    check_out2in(instr)
    for i in range(len(operands)):
        check_in2out(instr, i)


def test_every_elementwise_opcode_has_both_directions():
    for opcode in ELEMENTWISE_OPCODES:
        assert opcode in OUTPUT_TO_INPUT and opcode in INPUT_TO_OUTPUT, opcode


def test_scalar_operand_maps():
    sel = instruction(
        "select",
        array_shape("f32", (3, 5)),
        [array_shape("pred", ()), array_shape("f32", (3, 5)), array_shape("f32", (3, 5))],
    )
    pred = output_to_input(sel)[0].maps[0]
    assert pred.num_results == 0
    assert_map_text(pred, "(d0, d1) -> (), domain: d0 in [0, 2], d1 in [0, 4]")
    assert_map_text(input_to_output(sel, 0)[0][0], "()[s0, s1] -> (s0, s1), domain: s0 in [0, 2], s1 in [0, 4]")


def test_spec_elementwise():
    add = instruction("add", array_shape("f32", (10, 20)), [array_shape("f32", (10, 20))] * 2)
    text = "(d0, d1) -> (d0, d1), domain: d0 in [0, 9], d1 in [0, 19]"
    assert_map_text(output_to_input(add)[0].maps[0], text)
    assert_map_text(input_to_output(add, 0)[0][0], text)


def test_operands_whose_dimensions_are_not_the_results_are_undefined_not_an_error():
    """XLA's parser reads ``f32[64,1,32] add(f32[64,32], s32[64,1])``; jaxlib 0.10.2 fails to compile
    it ('stablehlo.add' op requires the same shape for all operands and results). The loader rejects
    it at the op; read without the loader's checks, no element is read for sure: both operands' maps
    are UNDEFINED, saying why, in both directions."""
    from hlo_index.hlo import ParseError, link, parse_module_text
    from hlo_index.hlo.parser import parse_syntax

    text = "HloModule m\n\nENTRY e {\n  a = f32[64,32] parameter(0)\n  b = s32[64,1] parameter(1)\n"
    text += "  ROOT r = f32[64,1,32] add(a, b)\n}\n"
    with pytest.raises(ParseError, match="InferBinaryOpShape"):
        parse_module_text(text)
    (module,) = parse_syntax(text)
    assert not link(module)
    add = module.entry.root
    for om in output_to_input(add, 0):
        (m,) = om.maps
        assert m.is_undefined and "which XLA's verifier rejects" in m.undefined_reason
    for k in range(2):
        ((m,),) = input_to_output(add, k)
        assert m.is_undefined and f"operand {k} is" in m.undefined_reason
