"""The CPU innermost-loop figure where an equality constraint cuts the sampled box to a diagonal.

A scatter's update operand is read at ``d0 - rt0`` with ``d0 - rt0 in [0, 0]``: sampled output
rows almost never equal the runtime row, so without solving the equality no sample reads and the
figure is "reads nothing". The expected strides are the operand's row-major steps along the loop
variable, written out by hand from the shape.
"""

import itertools

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


# Row-major offsets of digits: linear in the loop variable only once simplified over its range.
# The expected strides are the offset's steps, written out by hand from the shape.
DIGIT_CASES = [
    # (d0 floordiv 128) * 128 + d0 mod 128 is d0: consecutive
    ("(d0, d1) -> (d0 floordiv 128, d0 mod 128), domain: d0 in [0, 511], d1 in [0, 0]", "s32[4,128]{1,0}", 0),
    # digits of the output's minor dim d1 in the operand's two major dims: 256 elements a step
    (
        "(d0, d1) -> (d1 floordiv 128, d1 mod 128, d0), domain: d0 in [0, 255], d1 in [0, 511]",
        "f32[4,128,256]{2,1,0}",
        1,
    ),
]


@pytest.mark.parametrize("text, operand, loop_dim", DIGIT_CASES)
def test_digits_of_one_index_step_as_the_index(text, operand, loop_dim):
    """Along output dim ``loop_dim`` the offset steps by the row-major stride of that index in the
    operand: 1 for the first case; 256 (the operand's minor dim) for the second."""
    m = parse_map(text)
    # the output's row-major shape from the domain: the loop runs over its minor non-trivial dim
    dims = ",".join(str(d.hi + 1) for d in m.dims)
    minor_to_major = ",".join(str(i) for i in reversed(range(m.num_dims)))
    output = f"f32[{dims}]{{{minor_to_major}}}"
    figure = innermost_access([m], parse_array_shape(operand), parse_array_shape(output))
    (per_map,) = figure["maps"]
    assert per_map["innermost_loop"] == f"over output dim {loop_dim}"
    assert (per_map["pattern"], per_map["stride"]) == (("contiguous", 1) if loop_dim == 0 else ("strided", 256))


def test_a_loop_of_one_iteration_has_no_step():
    """The loop's dim (the output's minor one, of size 2) confined to one point by the domain (a
    slice's piece of it): no two consecutive iterations, whatever is sampled."""
    m = parse_map("(d0, d1) -> (d0 floordiv 127, d0 mod 127 + 1), domain: d0 in [0, 507], d1 in [1, 1]")
    figure = innermost_access([m], parse_array_shape("s32[4,128]{1,0}"), parse_array_shape("s32[508,2]{1,0}"))
    (per_map,) = figure["maps"]
    assert per_map["innermost_loop"] == "over output dim 1"
    assert (per_map["pattern"], per_map["stride"]) == ("none", None)


def test_draws_are_in_range_and_the_same_for_a_seed():
    from hlo_index.analyses.cpu_access import _draws

    first, again, other = _draws(0), _draws(0), _draws(1)
    values = [first(-3, 5) for _ in range(500)]
    assert values == [again(-3, 5) for _ in range(500)]
    assert values != [other(-3, 5) for _ in range(500)]
    assert set(values) == set(range(-3, 6))  # every value of the interval comes up
    with pytest.raises(ValueError, match="no integer"):
        first(2, 1)


def test_a_sampled_step_is_one_the_loop_takes():
    """Two halves swapped (a roll): along s1 the offset steps by 1, and by -511 once, where the
    halves meet. Whatever the samples see, the figure names only steps the loop takes (brute
    force over every iteration of s1 at every row)."""
    m = parse_map(
        "(d0)[s0, s1] -> (s0, s1 - (s1 floordiv 256) * 512 + 256), domain: d0 in [0, 3], s0 in [0, 7], s1 in [0, 511]"
    )
    figure = innermost_access([m], parse_array_shape("f32[8,512]{1,0}"), parse_array_shape("f32[4]{0}"))
    (per_map,) = figure["maps"]
    steps = set()
    for s0 in range(8):
        offsets = [s0 * 512 + s1 - (s1 // 256) * 512 + 256 for s1 in range(512)]
        steps |= {b - a for a, b in itertools.pairwise(offsets)}
    assert steps == {1, -511}
    assert per_map["innermost_loop"] == "over s1"
    assert (per_map["pattern"], per_map["stride"]) in {("contiguous", 1), ("strided", -511), ("irregular", None)}


@pytest.mark.parametrize(
    "text, words",
    [
        ("(d0) -> (d0 * 2), domain: d0 in [0, 63]", "reads every 2nd element — not contiguous"),
        ("(d0) -> (d0 * 3), domain: d0 in [0, 40]", "reads every 3rd element — not contiguous"),
        ("(d0) -> (d0 * 11), domain: d0 in [0, 10]", "reads every 11th element — not contiguous"),
        ("(d0) -> (d0 * 21), domain: d0 in [0, 5]", "reads every 21st element — not contiguous"),
        # a reverse: the operand's elements one after another, last first
        ("(d0) -> (127 - d0), domain: d0 in [0, 127]", "steps back one element at a time (stride -1) — not contiguous"),
        ("(d0) -> (126 - d0 * 2), domain: d0 in [0, 63]", "reads every 2nd element in reverse — not contiguous"),
    ],
)
def test_a_strided_read_is_said_in_words(text, words):
    figure = innermost_access([parse_map(text)], parse_array_shape("f32[128]{0}"), parse_array_shape("f32[64]{0}"))
    assert figure["summary"].endswith(words), figure["summary"]
