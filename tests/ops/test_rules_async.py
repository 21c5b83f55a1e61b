"""async-update / -done forward the elements of the async tuple (async-start, which runs the wrapped
computation, is tested with the fusion layer that registers it: tests/fusion/test_rules_async.py)."""

from __future__ import annotations

from hlo_index.hlo import parse_module_text
from hlo_index.ops import output_to_input

FUSED = """%fused (p0: f32[4,6]) -> f32[6,4] {
  %p0 = f32[4,6]{1,0} parameter(0)
  ROOT %t = f32[6,4]{1,0} transpose(%p0), dimensions={1,0}
}
"""

TEXT = (
    "HloModule m\n\n" + FUSED + "\nENTRY %main (p: f32[4,6]) -> f32[6,4] {\n"
    "  %p = f32[4,6]{1,0} parameter(0)\n"
    "  %s = ((f32[4,6]{1,0}), f32[6,4]{1,0}, u32[]) fusion-start(%p), kind=kLoop, calls=%fused\n"
    "  %u = ((f32[4,6]{1,0}), f32[6,4]{1,0}, u32[]) fusion-update(%s)\n"
    "  ROOT %d = f32[6,4]{1,0} fusion-done(%u)\n}\n"
)


def _module():
    return parse_module_text(TEXT)


def test_async_done_reads_result_element():
    done = _module().entry.by_name["d"]
    [maps] = output_to_input(done, 0)
    assert maps.operand_output == 1 and str(maps.maps[0]).startswith("(d0, d1) -> (d0, d1)")


def test_async_update_forwards_each_element_of_the_async_tuple():
    update = _module().entry.by_name["u"]
    [maps] = output_to_input(update, 1)
    assert maps.operand_output == 1 and maps.maps[0].read_set((5, 3)) == {(5, 3)}
