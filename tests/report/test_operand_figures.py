"""Per-operand figures depend only on the map (as a key), not on how an equal map is spelled:
a constraint on a dimension and the same bound folded into the domain give the same figures, in
either order of first use (the cache once kept whichever spelling came first)."""

from __future__ import annotations

from hlo_index.affine import parse_map
from hlo_index.hlo.build import array_shape
from hlo_index.report import operand_figures

CONSTRAINED = "(d0, d1) -> (d0, d1 - 40), domain: d0 in [0, 23], d1 in [0, 84], d1 in [40, 79]"
FOLDED = "(d0, d1) -> (d0, d1 - 40), domain: d0 in [0, 23], d1 in [40, 79]"


def _figures(first: str, second: str):
    operand_figures.clear_cache()
    operand, output = array_shape("f32", (24, 40)), array_shape("f32", (24, 85))
    a = operand_figures.operand_figures((parse_map(first),), operand, output)
    b = operand_figures.operand_figures((parse_map(second),), operand, output)
    return a, b


def test_equal_maps_get_equal_figures_whatever_the_order():
    assert parse_map(CONSTRAINED) == parse_map(FOLDED)
    a1, b1 = _figures(CONSTRAINED, FOLDED)
    a2, b2 = _figures(FOLDED, CONSTRAINED)
    assert a1 == b1 == a2 == b2
    assert a1["utilization"]["distinct_elements"] == 24 * 40
    # coalescing is the target's figure (analyses.target_figures), filled after these
    assert set(a1) == {"utilization"}
