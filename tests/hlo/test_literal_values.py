"""Typed literal values and typed collective attributes, read once from the graph's text."""

from __future__ import annotations

import numpy as np
import pytest

from hlo_index.hlo import ParseError, parse_module_text
from hlo_index.hlo.build import array_shape, instruction


def entry(body: str):
    return parse_module_text(f"HloModule m\n\nENTRY %main {{\n{body}\n}}\n").entry


def constant(shape_text: str, literal: str):
    return entry(f"  ROOT %c = {shape_text} constant({literal})").root


@pytest.mark.parametrize(
    "shape_text, literal, expected",
    [
        ("s32[2,3]", "{ { 1, -2, 3 }, { 4, 5, 6 } }", np.array([[1, -2, 3], [4, 5, 6]], dtype=np.int64)),
        ("pred[3]", "{true, false, true}", np.array([True, False, True])),
        ("s64[]", "7", np.array(7, dtype=np.int64)),
        ("u64[1]", "{18446744073709551615}", np.array([2**64 - 1], dtype=np.uint64)),
        ("f32[3]", "{1.5, -inf, 2e3}", np.array([1.5, -np.inf, 2000.0])),
        ("c64[2]", "{(1, 2), (0.5, -1)}", np.array([1 + 2j, 0.5 - 1j])),
        ("s32[2,2]", "{ /*i0=0*/ { 1, 2 }, /*i0=1*/ { 3, 4 } }", np.array([[1, 2], [3, 4]], dtype=np.int64)),
    ],
)
def test_values_shaped_and_typed_like_the_constant(shape_text, literal, expected):
    values = constant(shape_text, literal).literal_values()
    assert values.dtype == expected.dtype and values.shape == expected.shape
    assert np.array_equal(values, expected)


def test_nan_is_a_float_value():
    assert np.isnan(constant("f32[2]", "{nan, 1}").literal_values()[0])


def test_unreadable_literals_give_none():
    assert constant("s32[4]", "{1, 2, ...}").literal_values() is None  # elided
    assert constant("(s32[], f32[])", "(1, 2)").literal_values() is None  # a tuple
    assert entry("  ROOT %p = s32[2] parameter(0)").root.literal_values() is None


def test_source_target_pairs_and_replica_groups_typed():
    e = entry(
        "  %p = f32[4] parameter(0)\n"
        "  %cp = f32[4] collective-permute(%p), source_target_pairs={{0,1},{1,2},{2,0}}\n"
        "  ROOT %ag = f32[8] all-gather(%cp), replica_groups=[2,2]<=[4], dimensions={0}"
    )
    assert e.by_name["cp"].source_target_pairs() == ((0, 1), (1, 2), (2, 0))
    assert e.root.replica_groups() == ((0, 1), (2, 3))
    assert e.root.source_target_pairs() == ()
    built = instruction(
        "all-gather",
        array_shape("f32", [8]),
        [array_shape("f32", [4])],
        replica_groups="{{0,2},{1,3}}",
        dimensions=(0,),
    )
    assert built.replica_groups() == ((0, 2), (1, 3))


def test_malformed_source_target_pairs_are_an_error():
    with pytest.raises(ParseError) as info:
        entry("  %p = f32[4] parameter(0)\n  ROOT %cp = f32[4] collective-permute(%p), source_target_pairs={{0,1,2}}")
    assert "source_target_pairs" in info.value.diagnostic.message
