"""async-start sees through the wrapped computation and the async tuple; the composed maps of a
whole async chain agree with the numpy reference walk of the unwrapped op."""

from __future__ import annotations

from ops.test_rules_async import TEXT

from hlo_index.fusion import computation_output_to_input
from hlo_index.hlo import parse_module_text
from hlo_index.ops import input_to_output, output_to_input
from hlo_index.reference import read_set


def _module():
    return parse_module_text(TEXT)


def test_async_chain_composes_to_the_wrapped_transpose():
    module = _module()
    maps = computation_output_to_input(module.entry, 0)
    [(key, found)] = list(maps.items())
    assert key == (0, 0) and len(found) == 1
    transpose = module.by_name["fused"].root
    for i in range(6):
        for j in range(4):
            assert found[0].read_set((i, j)) == read_set(transpose, 0, (i, j), 0)


def test_async_start_elements():
    start = _module().entry.by_name["s"]
    assert output_to_input(start, 2)[0].maps == ()  # the context reads nothing
    assert output_to_input(start, 0)[0].maps[0].is_undefined  # nested operand tuple
    [result] = output_to_input(start, 1)
    assert str(result.maps[0]).startswith("(d0, d1) -> (d1, d0)")
    in2out = input_to_output(start, 0)
    assert in2out[2] == () and str(in2out[1][0]).startswith("(d0, d1) -> (d1, d0)")
