"""Input to output through a while loop, per element of the initial loop state, against the
reference: the expected pairs are the reference's read sets (output element -> initial-state
elements it reads) read the other way, compared point by point with the maps' read sets."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hlo_index.fusion  # noqa: F401  (registers the while rule)
from hlo_index.affine import IndexingMap, Interval, dim, range_var
from hlo_index.fusion import input_to_output
from hlo_index.fusion.loops.inverse import inverse
from hlo_index.fusion.rules_control_flow import while_element_input_to_output
from hlo_index.hlo import parse_module_text
from hlo_index.reference.ref_control_flow import element_reads
from hlo_index.verify import runtime_as_range
from tests.fusion.loops.test_scan import scan_module
from tests.fusion.test_rules_control_flow import STEPS, causal_attention_loop, while_module


def _points(dims):
    return itertools.product(*(range(n) for n in dims))


def expected_writes(loop) -> dict[int, dict[tuple, set]]:
    """Initial-state element e -> point x -> the (output element, point) pairs that read it."""
    writes: dict[int, dict[tuple, set]] = {}
    for j in range(loop.shape.num_outputs):
        for y in _points(loop.shape.leaf(j).dims):
            for e, xs in element_reads(loop, j, y, 0).items():
                for x in xs:
                    writes.setdefault(e, {}).setdefault(tuple(x), set()).add((j, y))
    return writes


def given_writes(per_output) -> tuple[dict[tuple, set], bool]:
    """Point -> (output element, point) pairs, from one element's maps to each output; and whether
    a map has runtime variables (then the maps give the union over their values)."""
    got: dict[tuple, set] = {}
    runtime = False
    for j, maps in enumerate(per_output):
        for m in maps:
            assert not m.is_undefined, m.undefined_reason
            runtime |= bool(m.runtime_vars)
            m = runtime_as_range(m)
            for x in _points([iv.hi + 1 for iv in m.dims]):
                if all(iv.lo <= v <= iv.hi for iv, v in zip(m.dims, x)):
                    for y in m.read_set(x):
                        got.setdefault(x, set()).add((j, tuple(y)))
    return got, runtime


def check_input_to_output(loop) -> int:
    """Every element of the initial state, point by point; the number of points compared."""
    want = expected_writes(loop)
    compared = 0
    for e in range(loop.shape.num_outputs):
        got, runtime = given_writes(while_element_input_to_output(loop, 0, e))
        for x in _points(loop.shape.leaf(e).dims):
            expected, given_here = want.get(e, {}).get(x, set()), got.get(x, set())
            if runtime:
                assert expected <= given_here, (loop.name, e, x, expected - given_here)
            else:
                assert expected == given_here, (loop.name, e, x, expected ^ given_here)
            compared += 1
    return compared


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n, w", [(2, 1), (4, 2), (6, 1)])
def test_scan_input_to_output_matches_reference(n, w, reverse):
    loop = parse_module_text(scan_module(n, w, reverse)).entry.root
    assert check_input_to_output(loop) > 0


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_input_row_reaches_the_outputs_scanned_after_it(reverse):
    n, w = 5, 2
    loop = parse_module_text(scan_module(n, w, reverse)).entry.root
    to_ys = while_element_input_to_output(loop, 0, 2)[3]  # xs -> ys
    for u, col in itertools.product(range(n), range(w)):
        later = range(u + 1) if reverse else range(u, n)
        assert set().union(*(m.read_set((u, col)) for m in to_ys)) == {(t, col) for t in later}


def test_computation_input_to_output_goes_through_the_loop():
    """The ENTRY computation's parameters reach the loop's outputs through the init tuple."""
    n, w = 4, 2
    module = parse_module_text(scan_module(n, w, False))
    loop = module.entry.root
    rows = {(r.operand, r.output): r.maps for r in input_to_output(module.entry)}
    want = expected_writes(loop)
    for parameter, element in ((0, 1), (1, 2), (2, 3)):
        got, _ = given_writes([rows.get((parameter, j), ()) for j in range(loop.shape.num_outputs)])
        for x in _points(loop.shape.leaf(element).dims):
            assert got.get(x, set()) == want.get(element, {}).get(x, set())


def test_value_carried_unchanged_reaches_itself_and_what_the_condition_decides():
    # x (element 2) is carried through the loop as it is; nothing but the count depends on the rest
    loop = parse_module_text(while_module(2, 3, "accumulate", 0, 4, False)).entry.root
    assert check_input_to_output(loop) > 0
    x = while_element_input_to_output(loop, 0, 2)
    assert IndexingMap.identity((2, 3)) in [m.simplified() for m in x[2]]
    assert x[0] == ()  # the counter does not read x


@pytest.mark.parametrize("step", sorted(STEPS))
@pytest.mark.parametrize("dependent", [False, True])
def test_while_input_to_output_matches_reference(step, dependent):
    if dependent and step == "overwrite":
        pytest.skip("the data-dependent condition never ends with an overwriting body")
    loop = parse_module_text(while_module(2, 3, step, 0, 3, dependent)).entry.root
    assert check_input_to_output(loop) > 0


def test_loop_whose_maps_are_not_known_stays_undefined_with_the_reason():
    """A shift repeated 100 times on 30 columns: the loop's maps do not stabilise within the budget,
    so neither direction is given, and input to output says why."""
    loop = parse_module_text(while_module(1, 30, "shift", 0, 100, False)).entry.root
    (to_acc,) = while_element_input_to_output(loop, 0, 1)[1]
    assert to_acc.is_undefined and "do not stabilise" in to_acc.undefined_reason
    # x reaches itself, unchanged, whatever the rotating acc does
    to_x = while_element_input_to_output(loop, 0, 2)
    assert [m.simplified() for m in to_x[2]] == [IndexingMap.identity((1, 30))]
    assert not any(m.is_undefined for maps in to_x for m in maps)
    module = parse_module_text(while_module(1, 30, "shift", 0, 100, False))
    rows = {(r.operand, r.output): r.maps for r in input_to_output(module.entry)}
    assert any(m.is_undefined and "do not stabilise" in m.undefined_reason for m in rows[(0, 1)])


@pytest.mark.parametrize("trips", [3, 30])
def test_causal_attention_loop_input_to_output_matches_reference(trips):
    # row r of the first state reaches rows r.. of every later one (a suffix), past the budget too
    loop = parse_module_text(causal_attention_loop(4, trips)).entry.root
    assert check_input_to_output(loop) > 0


# ---- the inverse itself, against brute force -----------------------------------------------------


def _pairs(m: IndexingMap, dims) -> set:
    return {(tuple(x), tuple(y)) for x in _points(dims) for y in m.read_set(x)}


@st.composite
def affine_maps(draw):
    """Small maps with range variables, results linear in dims and range variables (unit and
    larger coefficients, constants) and an occasional constraint."""
    n_dims, n_range, n_results = draw(st.integers(1, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 2))
    dims = [draw(st.integers(1, 4)) for _ in range(n_dims)]
    ranges = [Interval(lo, lo + draw(st.integers(0, 3))) for lo in [draw(st.integers(0, 2)) for _ in range(n_range)]]
    variables = [dim(i) for i in range(n_dims)] + [range_var(i) for i in range(n_range)]
    results = []
    for _ in range(n_results):
        e = 0
        for v in variables:
            e = v * draw(st.sampled_from([0, 0, 1, -1, 2, 4])) + e
        results.append(e + draw(st.integers(-2, 2)))
    constraints = []
    if variables and draw(st.booleans()):
        a, b = draw(st.sampled_from(variables)), draw(st.sampled_from(variables))
        lo = draw(st.integers(-3, 3))
        constraints.append((a - b, Interval(lo, lo + draw(st.integers(0, 3)))))
    m = IndexingMap([Interval(0, n - 1) for n in dims], ranges, (), results, constraints)
    return m, dims


@settings(deadline=None, derandomize=True, max_examples=200)
@given(affine_maps())
def test_inverse_is_the_same_relation_read_the_other_way(case):
    m, dims = case
    images = [y for x in _points(dims) for y in m.read_set(x)]
    # the box the inverse is over: every result's values shifted to start at 0 (a box a map reads)
    lows = [min((y[i] for y in images), default=0) for i in range(m.num_results)]
    highs = [max((y[i] for y in images), default=0) for i in range(m.num_results)]
    shifted = IndexingMap(m.dims, m.range_vars, (), [r - lo for r, lo in zip(m.results, lows)], m.constraints)
    source = tuple(hi - lo + 1 for lo, hi in zip(lows, highs))
    back = inverse(shifted, source)
    assert not back.is_undefined
    want = {(y, x) for x, y in _pairs(shifted, dims)}
    assert _pairs(back, source) == want


def test_while_instruction_rows_are_per_element_of_the_initial_state():
    loop = parse_module_text(scan_module(3, 2, True)).entry.root
    rows = input_to_output(loop)
    assert {(r.operand, r.operand_element) for r in rows} == {(0, e) for e in range(4)}
    for r in rows:
        assert r.maps == while_element_input_to_output(loop, 0, r.operand_element)[r.output]
