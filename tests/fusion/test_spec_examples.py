"""The spec's fusion examples, written as HLO text and run through the parser and the composer."""

from __future__ import annotations

import pytest

from hlo_index.affine import parse_map
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.hlo import parse_module_text

from . import hlo_samples as s


def fusion_of(text: str):
    module = parse_module_text(text)
    [fusion] = [f for f in module.fusions if f.computation is module.entry]
    return fusion


def maps_of(rows, operand, output=0):
    [row] = [r for r in rows if r.operand == operand and r.output == output]
    return row


def test_add_of_transpose_reads_the_parameter_through_two_maps():
    row = maps_of(output_to_input(fusion_of(s.TRANSPOSE_ADD)), 0)
    expected = {
        parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 999], d1 in [0, 999]"),
        parse_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 999], d1 in [0, 999]"),
    }
    assert set(row.maps) == expected
    assert not row.deduplicated


def test_chain_of_transposes_deduplicates_to_one_map():
    row = maps_of(output_to_input(fusion_of(s.TRANSPOSE_CHAIN)), 0)
    assert row.maps == (parse_map("(d0, d1, d2) -> (d2, d0, d1), domain: d0 in [0, 9], d1 in [0, 49], d2 in [0, 19]"),)
    assert row.deduplicated


def test_softmax_reads_parameter_0_through_the_row_and_the_element():
    row = maps_of(output_to_input(fusion_of(s.SOFTMAX)), 0)
    domain = "d0 in [0, 1], d1 in [0, 64], d2 in [0, 124]"
    expected = {
        parse_map(f"(d0, d1, d2)[s0] -> (d0, d1, s0), domain: {domain}, s0 in [0, 124]"),
        parse_map(f"(d0, d1, d2) -> (d0, d1, d2), domain: {domain}"),
    }
    assert set(row.maps) == expected


def test_reshape_round_trip_cancels_to_identity():
    row = maps_of(output_to_input(fusion_of(s.RESHAPE_ROUND_TRIP)), 0)
    assert row.maps == (parse_map("(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"),)
    [back] = maps_of(input_to_output(fusion_of(s.RESHAPE_ROUND_TRIP)), 0).maps
    assert back == row.maps[0]


def test_slice_of_concatenate_missing_an_operand_is_known_empty():
    rows = output_to_input(fusion_of(s.slice_of_concat(0, 4)))  # only columns of p0
    assert maps_of(rows, 0).maps == (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 1], d1 in [0, 3]"),)
    [empty] = maps_of(rows, 1).maps
    assert empty.is_known_empty
    rows = output_to_input(fusion_of(s.slice_of_concat(6, 11)))  # only columns of p1
    [empty] = maps_of(rows, 0).maps
    assert empty.is_known_empty
    assert maps_of(rows, 1).maps == (parse_map("(d0, d1) -> (d0, d1 + 1), domain: d0 in [0, 1], d1 in [0, 4]"),)


def test_multi_output_fusion_has_maps_per_output():
    rows = output_to_input(fusion_of(s.MULTI_OUTPUT))
    assert maps_of(rows, 0, 0).maps == (parse_map("(d0, d1) -> (d1, d0), domain: d0 in [0, 5], d1 in [0, 3]"),)
    assert maps_of(rows, 1, 0).maps == ()
    assert maps_of(rows, 1, 1).maps == (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 3]"),)
    assert maps_of(rows, 0, 2).maps == ()
    assert maps_of(rows, 1, 2).maps == (parse_map("(d0) -> (d0 floordiv 4, d0 mod 4), domain: d0 in [0, 23]"),)
    ins = input_to_output(fusion_of(s.MULTI_OUTPUT))
    assert maps_of(ins, 1, 2).maps == (parse_map("(d0, d1) -> (d0 * 4 + d1), domain: d0 in [0, 5], d1 in [0, 3]"),)
    assert maps_of(ins, 0, 1).maps == ()


def test_unreached_parameter_gets_no_maps():
    rows = output_to_input(fusion_of(s.UNREACHED_PARAMETER))
    assert maps_of(rows, 0).deduplicated
    assert maps_of(rows, 1).maps == () and not maps_of(rows, 1).deduplicated
    assert maps_of(input_to_output(fusion_of(s.UNREACHED_PARAMETER)), 1).maps == ()


def test_nested_fusion_and_call_compose_through_their_callees():
    rows = output_to_input(fusion_of(s.NESTED))
    # rev(reshape(transpose(p))): out d0 -> c[23 - d0] -> x[(23-d0) floordiv 6, (23-d0) mod 6] -> p[col, row]
    [m] = maps_of(rows, 0).maps
    for d0 in range(24):
        r = 23 - d0
        assert m.read_set((d0,)) == {(r % 6, r // 6)}
    [back] = maps_of(input_to_output(fusion_of(s.NESTED)), 0).maps
    for i in range(6):
        for j in range(4):
            assert back.read_set((i, j)) == {(23 - (j * 6 + i),)}


@pytest.mark.parametrize("text", [s.TRANSPOSE_ADD, s.SOFTMAX, s.MULTI_OUTPUT])
def test_results_are_deterministic(text):
    from hlo_index.context import AnalysisContext

    first = [(r.operand, r.output, tuple(map(str, r.maps))) for r in output_to_input(fusion_of(text))]
    with AnalysisContext():  # nothing cached: computed again from scratch
        again = [(r.operand, r.output, tuple(map(str, r.maps))) for r in output_to_input(fusion_of(text))]
    assert first == again
