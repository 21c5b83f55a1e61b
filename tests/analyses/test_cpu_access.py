"""The CPU innermost-loop figure where an equality constraint cuts the sampled box to a diagonal.

A scatter's update operand is read at ``d0 - rt0`` with ``d0 - rt0 in [0, 0]``: sampled output
rows almost never equal the runtime row, so without solving the equality no sample reads and the
figure is "reads nothing". The expected strides are the operand's row-major steps along the loop
variable, written out by hand from the shape.
"""

import pytest

from hlo_index.affine import parse_map
from hlo_index.analyses.cpu_access import innermost_access
from hlo_index.hlo.shapes import parse_array_shape

CASES = [
    # update rows read along s0: one row of 256 elements apart
    (
        "(d0, d1)[s0]{rt0} -> (s0, d0 - rt0, d1), domain: d0 in [0, 31999], d1 in [0, 255], s0 in [0, 511],"
        " rt0 in [0, 31999], d0 - rt0 in [0, 0]",
        "f32[512,1,256]{2,1,0}",
        "f32[32000,256]{1,0}",
        ("strided", 256),
    ),
    # the same read with the minor dimension innermost (no range variable): consecutive
    (
        "(d0, d1){rt0} -> (0, d0 - rt0, d1), domain: d0 in [0, 31999], d1 in [0, 255], rt0 in [0, 31999],"
        " d0 - rt0 in [0, 0]",
        "f32[1,1,256]{2,1,0}",
        "f32[32000,256]{1,0}",
        ("contiguous", 1),
    ),
    # a range variable tied to an output index: solved for it, the loop over s1 stays free
    (
        "(d0)[s0, s1] -> (s0, s1), domain: d0 in [0, 9999], s0 in [0, 9999], s1 in [0, 63], d0 - s0 in [0, 0]",
        "f32[10000,64]{1,0}",
        "f32[10000]{0}",
        ("contiguous", 1),
    ),
]


@pytest.mark.parametrize("text, operand, output, expected", CASES)
def test_a_diagonal_is_read_not_missed(text, operand, output, expected):
    figure = innermost_access([parse_map(text)], parse_array_shape(operand), parse_array_shape(output))
    (per_map,) = figure["maps"]
    assert (per_map["pattern"], per_map["stride"]) == expected
