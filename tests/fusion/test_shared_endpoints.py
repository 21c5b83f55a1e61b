"""Endpoints reached through one shared map set count once against ``endpoints_per_value``.

An optimizer's flag, broadcast to a weight's shape, is read elementwise by every update it
selects: one value reaches every output through the same identity map, and composing that map
is done once however many outputs share it. Such a value stays exact under a budget smaller
than its endpoint count; a value that reaches as many endpoints through distinct maps (a
concatenate of its parameters, a parameter sliced at every offset) is still cut at the budget,
with the budget's reason. Every known map is checked point by point against the reference walk
(``backward_read_sets``: each op's numpy oracle, composed element by element).
"""

from __future__ import annotations

import itertools

import pytest

from hlo_index.context import AnalysisContext, Budgets
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.fusion.output_summaries import all_inputs_to_output
from hlo_index.fusion.summaries import bottom_up_output_to_input
from hlo_index.fusion.walk import walk_of
from hlo_index.hlo import parse_module_text
from hlo_index.verify import backward_read_sets

UPDATES = 6

# flag reaches u0..u5 through one identity map; total reads w0..w5 through one identity map
SHARED = (
    "HloModule shared\nENTRY e {\n  flag = pred[8] parameter(0)\n"
    + "".join(f"  w{k} = f32[8] parameter({k + 1})\n" for k in range(UPDATES))
    + "  zero = f32[] constant(0)\n  zeros = f32[8] broadcast(zero), dimensions={}\n"
    + "".join(f"  u{k} = f32[8] select(flag, w{k}, zeros)\n" for k in range(UPDATES))
    + "  s1 = f32[8] add(w0, w1)\n"
    + "".join(f"  s{k} = f32[8] add(s{k - 1}, w{k})\n" for k in range(2, UPDATES))
    + f"  ROOT out = ({', '.join(['f32[8]'] * (UPDATES + 1))}) tuple("
    + ", ".join(f"u{k}" for k in range(UPDATES))
    + f", s{UPDATES - 1})\n}}\n"
)

# cat reads w0..w5 each at its own offset; x reaches six outputs each through its own slice
IRREGULAR = (
    "HloModule irregular\nENTRY e {\n  x = f32[8] parameter(0)\n"
    + "".join(f"  w{k} = f32[2] parameter({k + 1})\n" for k in range(UPDATES))
    + f"  cat = f32[{2 * UPDATES}] concatenate({', '.join(f'w{k}' for k in range(UPDATES))}), dimensions={{0}}\n"
    + "".join(f"  x{k} = f32[2] slice(x), slice={{[{k}:{k + 2}]}}\n" for k in range(UPDATES))
    + f"  ROOT out = (f32[{2 * UPDATES}], {', '.join(['f32[2]'] * UPDATES)}) tuple(cat, "
    + ", ".join(f"x{k}" for k in range(UPDATES))
    + ")\n}\n"
)

SMALL = Budgets(endpoints_per_value=4)


def _points(dims):
    return list(itertools.product(*(range(n) for n in dims)))


def _check_against_reference(comp, out2in, in2out) -> int:
    """Every known map of both directions reads, point by point, what the reference walk reads;
    returns the maps checked."""
    root = comp.root
    checked = 0
    for out in range(root.shape.num_outputs):
        for point in _points(root.shape.leaf(out).dims):
            want = backward_read_sets(comp, out, point)
            for (number, element), maps in out2in[out].items():
                if any(m.is_undefined for m in maps):
                    continue
                got = set().union(*(m.read_set(point) for m in maps))
                assert got == want.get((number, element), set()), (out, point, number)
                checked += 1
            for number, per_output in in2out.items():
                maps = per_output[out]
                if any(m.is_undefined for m in maps):
                    continue
                dims = comp.parameters[number].shape.dims
                got = {p for p in _points(dims) for m in maps if point in m.read_set(p)}
                assert got == want.get((number, 0), set()), (out, point, number)
                checked += 1
    return checked


def _passes(comp, budgets: Budgets):
    walk = walk_of(comp)
    with AnalysisContext(budgets):
        return bottom_up_output_to_input(comp, walk.order), all_inputs_to_output(comp, walk.order, walk.users)


def test_endpoints_reached_through_one_shared_map_stay_exact_under_a_smaller_budget():
    comp = parse_module_text(SHARED).entry
    out2in, in2out = _passes(comp, SMALL)
    total = out2in[UPDATES]
    assert len(total) == UPDATES > SMALL.endpoints_per_value
    assert not any(m.is_undefined for maps in total.values() for m in maps)
    flag = in2out[0]
    assert sum(1 for maps in flag if maps) == UPDATES
    assert not any(m.is_undefined for maps in flag for m in maps)
    assert _check_against_reference(comp, out2in, in2out) > 0
    with AnalysisContext(SMALL):  # what the commands report, through the same passes
        rows = [*output_to_input(comp), *input_to_output(comp)]
    assert rows and not any(m.is_undefined for row in rows for m in row.maps)


def test_exact_endpoints_per_value_still_bounds_endpoints_that_share_their_maps():
    comp = parse_module_text(SHARED).entry
    out2in, in2out = _passes(comp, Budgets(endpoints_per_value=4, exact_endpoints_per_value=4))
    reason = "budget exact_endpoints_per_value=4 exceeded:"
    # the flag's six uses are joined at once; the sum is cut at its fifth term (w5, joined after
    # the cut, stays exact: the budget bounds what one value carries, not what joins it later)
    flag = [maps for maps in in2out[0] if maps]
    assert all(len(maps) == 1 and maps[0].undefined_reason.startswith(reason) for maps in flag)
    total = out2in[UPDATES]
    cut = [key for key, maps in total.items() if any(m.is_undefined for m in maps)]
    assert cut == [(k, 0) for k in range(1, UPDATES)]
    assert all(total[key][0].undefined_reason.startswith(reason) for key in cut)
    assert _check_against_reference(comp, out2in, in2out) > 0  # the maps left exact


@pytest.mark.parametrize("budgets", [SMALL, Budgets()])
def test_endpoints_reached_through_distinct_maps_are_still_cut_at_the_budget(budgets):
    comp = parse_module_text(IRREGULAR).entry
    out2in, in2out = _passes(comp, budgets)
    cat = [maps for maps in out2in[0].values() if maps]
    x = [maps for maps in in2out[0] if maps]
    assert len(cat) == len(x) == UPDATES
    for maps in (*cat, *x):
        if budgets is SMALL:
            assert len(maps) == 1 and maps[0].is_undefined
            assert maps[0].undefined_reason.startswith("budget endpoints_per_value=4 exceeded:")
        else:
            assert not any(m.is_undefined for m in maps)
    assert _check_against_reference(comp, out2in, in2out) > 0


# w0..w5 reach the sum only through custom-calls of unknown semantics (each its own UNDEFINED map),
# x through the identity
OPAQUE = (
    "HloModule opaque\nENTRY e {\n  x = f32[8] parameter(0)\n"
    + "".join(f"  w{k} = f32[8] parameter({k + 1})\n" for k in range(UPDATES))
    + "".join(f'  o{k} = f32[8] custom-call(w{k}), custom_call_target="opaque_{k}"\n' for k in range(UPDATES))
    + "  s0 = f32[8] add(x, o0)\n"
    + "".join(f"  s{k} = f32[8] add(s{k - 1}, o{k})\n" for k in range(1, UPDATES))
    + f"  ROOT out = f32[8] negate(s{UPDATES - 1})\n}}\n"
)


def test_endpoints_reached_only_through_unknown_maps_keep_their_reason_and_spend_no_budget():
    comp = parse_module_text(OPAQUE).entry
    out2in, in2out = _passes(comp, SMALL)
    total = out2in[0]
    assert len(total) == UPDATES + 1 > SMALL.endpoints_per_value
    # x stays exact: the six opaque reads compose nothing, so they do not count against the budget
    assert not any(m.is_undefined for m in total[(0, 0)])
    for k in range(UPDATES):
        [m] = total[(k + 1, 0)]
        assert m.is_undefined and f"opaque_{k}" in m.undefined_reason, m.undefined_reason
        assert "budget" not in m.undefined_reason
    # x is read elementwise (the opaque ops have no reference to walk through: checked here)
    for p in _points((8,)):
        assert set().union(*(m.read_set(p) for m in total[(0, 0)])) == {p}
        assert {q for m in in2out[0][0] for q in m.read_set(p)} == {p}
