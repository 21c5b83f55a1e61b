"""The exact float32 sums of the cost analysis against numpy's float32 accumulation: where
``exact_float32_sums`` gives a figure, adding the rows one after the other in float32 (as
XLA's cost analysis does), in their order or any other, gives that figure."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.analyses.cost.hlo_cost import exact_float32_sums


def _float32_sum(column: list[float]) -> float:
    return float(np.add.accumulate(np.array(column, dtype=np.float32))[-1])


# figures as the cost analysis has them: element and byte counts (powers of two times small
# factors, some odd), -1 for unknown, a few non-integers (utilization-weighted flops)
values = st.one_of(
    st.integers(0, 2**12).map(float),
    st.builds(lambda m, e: float(m << e), st.integers(1, 2**10), st.integers(0, 40)),
    st.integers(2**24 - 8, 2**24 + 8).map(float),
    st.just(-1.0),
    st.floats(0, 1e6, allow_nan=False).filter(lambda x: not x.is_integer()),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(values, values), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_exact_sums_equal_float32_accumulation_in_any_order(rows, random):
    sums = exact_float32_sums(rows, 2)
    shuffled = list(rows)
    random.shuffle(shuffled)
    for k, s in enumerate(sums):
        if s is None:
            continue
        assert s == _float32_sum([r[k] for r in rows])
        assert s == _float32_sum([r[k] for r in shuffled])


def test_rounding_sums_are_left_to_the_visiting_order():
    # 2**24 + 1 is no float32: the order of the additions decides the figure
    rows = [(2.0**24,), (1.0,), (1.0,)]
    assert exact_float32_sums(rows, 1) == [None]
    assert _float32_sum([2.0**24, 1.0, 1.0]) != _float32_sum([1.0, 1.0, 2.0**24])


def test_exact_cases():
    assert exact_float32_sums([], 2) == [0.0, 0.0]
    assert exact_float32_sums([(3.0, 0.0), (5.0, 0.0)], 2) == [8.0, 0.0]
    assert exact_float32_sums([(-0.0,), (-0.0,)], 1) == [None]  # the sign of a zero sum: left to float32
    assert exact_float32_sums([(float("inf"),), (1.0,)], 1) == [None]
    assert exact_float32_sums([(-1.0,), (2.0,)], 1) == [None]  # unknown (-1) figures: not exact


def test_the_totals_leave_out_every_all_zero_row_whoever_made_it(monkeypatch):
    """Parameters, tuple elements and bitcasts add nothing: the sums leave their rows out (by
    identity: one zero row per number of costs), whether the totals made the rows or a process
    that costed the module's targets gave them."""
    from hlo_index.analyses.cost import hlo_cost
    from hlo_index.analyses.cost.flops import CostOptions
    from hlo_index.context import AnalysisContext
    from hlo_index.hlo import parse_module_text

    module = parse_module_text(
        """HloModule m
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  b = f32[8,8] bitcast(p)
  a = f32[64] add(p, q)
  ROOT t = (f32[8,8], f32[64]) tuple(b, a)
}"""
    )
    summed: list[int] = []
    sums = hlo_cost.exact_float32_sums
    monkeypatch.setattr(
        hlo_cost, "exact_float32_sums", lambda rows, width: summed.append(len(rows)) or sums(rows, width)
    )
    with AnalysisContext():
        costs = (hlo_cost.HloCost(), hlo_cost.HloCost(CostOptions(gpu=True)))
        rows = hlo_cost.figure_rows(costs)
        given = {id(i): (i, rows(i)) for i in module.entry.instructions}
        for known in (None, given):
            hlo_cost.computation_totals_under(costs, module.entry, rows, known)
    assert summed == [2, 2]  # the add and the tuple (its index table)
