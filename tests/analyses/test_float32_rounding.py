"""``hlo_cost.f32`` rounds as numpy's float32 does, alone and after a double operation on two
float32 values (the way the GPU utilization propagation uses it), checked against numpy."""

import math
import warnings

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hlo_index.analyses.cost.hlo_cost import f32

FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e6, max_value=1e6),
    st.integers(min_value=-(2**60), max_value=2**60).map(float),
    st.sampled_from([0.0, -0.0, 1.0, 2.0**24, 2.0**24 + 1, 2.0**25 + 1, 3.4028235e38, 3.4028236e38, 1e39, 1e-46]),
)


def _same(a: float, b) -> bool:
    b = float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@settings(max_examples=3000, deadline=None)
@given(FLOATS)
def test_rounding_a_double_matches_numpy(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert _same(f32(x), np.float32(x))


@settings(max_examples=3000, deadline=None)
@given(FLOATS, FLOATS, st.sampled_from(["+", "*"]))
def test_a_float32_operation_in_double_rounded_matches_numpy(x, y, op):
    a, b = np.float32(f32(x)), np.float32(f32(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = a + b if op == "+" else a * b
        got = f32(float(a) + float(b)) if op == "+" else f32(float(a) * float(b))
    assert _same(got, expected)


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=1, max_value=2**40), st.floats(min_value=0, max_value=64))
def test_the_rounded_up_share_matches_numpy(n, utilization):
    """``f32(ceil(f32(u * f32(n))) / n)``, the step that spreads a use over a value's elements."""
    u = np.float32(utilization)
    expected = np.float32(math.ceil(np.float32(u * np.float32(n))) / n)
    got = f32(math.ceil(f32(float(u) * f32(float(n)))) / n)
    assert _same(got, expected)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(FLOATS, FLOATS), min_size=1, max_size=40), st.sampled_from([[None, None], [None, 7.0]]))
# zeros of both signs around a -0.0 total (the only total a zero changes), a cancellation to 0.0
@example([(-0.0, -0.0), (-0.0, 0.0), (0.0, -0.0), (1.0, 1e39)], [None, None])
@example([(-0.0, 3.0), (-0.0, -3.0), (-0.0, -0.0), (0.0, 0.0)], [None, None])
def test_sums_in_order_in_python_match_numpys_accumulation(rows, exact):
    # both sides of ``_rounded_in_order``: Python's below its size limit, numpy's above it
    from hlo_index.analyses.cost import hlo_cost

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        in_python = hlo_cost._rounded_in_order(list(exact), rows, 2)
        limit = hlo_cost._ROUNDED_IN_PYTHON
        hlo_cost._ROUNDED_IN_PYTHON = -1
        try:
            in_numpy = hlo_cost._rounded_in_order(list(exact), rows, 2)
        finally:
            hlo_cost._ROUNDED_IN_PYTHON = limit
    assert all(_same(a, b) for a, b in zip(in_python, in_numpy)), (in_python, in_numpy)
    if exact[1] is not None:
        assert in_python[1] == exact[1]
