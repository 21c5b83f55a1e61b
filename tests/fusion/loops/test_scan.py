"""jax's ``lax.scan`` as XLA receives it: a counter, a carry, the stacked inputs read at the
counter (dynamic-slice) and the stacked outputs written at it (dynamic-update-slice). Unrolled,
each iteration writes one row; the rows join into one map over the stack. Expectations come from
the scan's semantics (and the reference's read sets), never from the tool."""

from __future__ import annotations

import itertools

import pytest

import hlo_index.fusion  # noqa: F401  (registers the while rule)
from hlo_index.hlo import parse_module_text
from hlo_index.ops import output_to_input
from tests.fusion.test_rules_control_flow import check_against_reference, counter_condition


def scan_module(n: int, w: int, reverse: bool) -> str:
    """carry += xs[r]; ys[r] = carry, r = i (or n - 1 - i), over i = 0 .. n - 1, through jax's
    negative-index normalisation of the offset."""
    state = f"(s32[], f32[{w}], f32[{n},{w}], f32[{n},{w}])"
    row = f"  last = s32[] constant({n - 1})\n  r = s32[] subtract(last, i)\n" if reverse else "  r = s32[] copy(i)\n"
    # (a copy of the counter: what jax's index arithmetic reduces to for a forward scan)
    return f"""HloModule scan
body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  c = f32[{w}] get-tuple-element(p), index=1
  xs = f32[{n},{w}] get-tuple-element(p), index=2
  ys = f32[{n},{w}] get-tuple-element(p), index=3
  zero = s32[] constant(0)
  size = s32[] constant({n})
{row}  neg = pred[] compare(r, zero), direction=LT
  wrapped = s32[] add(r, size)
  idx = s32[] select(neg, wrapped, r)
  x = f32[1,{w}] dynamic-slice(xs, idx, zero), dynamic_slice_sizes={{1,{w}}}
  xr = f32[{w}] reshape(x)
  c2 = f32[{w}] add(c, xr)
  c2r = f32[1,{w}] reshape(c2)
  ys2 = f32[{n},{w}] dynamic-update-slice(ys, c2r, idx, zero)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = {state} tuple(i2, c2, xs, ys2)
}}
{counter_condition(state, n)}ENTRY e {{
  c0 = f32[{w}] parameter(0)
  xs0 = f32[{n},{w}] parameter(1)
  ys0 = f32[{n},{w}] parameter(2)
  i0 = s32[] constant(0)
  init = {state} tuple(i0, c0, xs0, ys0)
  ROOT loop = {state} while(init), condition=cond, body=body
}}
"""


def _rows(w, out):
    return {om.operand_output: om.maps for om in output_to_input(w, out)}


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n, w", [(2, 1), (4, 2), (6, 1)])
def test_scan_matches_reference(n, w, reverse):
    loop = parse_module_text(scan_module(n, w, reverse)).entry.root
    assert check_against_reference(loop) > 0


@pytest.mark.parametrize("reverse", [False, True])
def test_stacked_output_row_t_reads_the_rows_scanned_up_to_t(reverse):
    n, w = 5, 3
    loop = parse_module_text(scan_module(n, w, reverse)).entry.root
    ys = _rows(loop, 3)
    # every row is written: nothing of ys0 survives
    assert 3 not in ys
    # one map from ys to xs: row t is the running sum of the rows scanned before it, itself included
    (to_xs,) = ys[2]
    assert not to_xs.is_undefined and not to_xs.runtime_vars
    for t, col in itertools.product(range(n), range(w)):
        scanned = range(t, n) if reverse else range(t + 1)
        assert to_xs.read_set((t, col)) == {(u, col) for u in scanned}
    # and the initial carry, one element per element
    (to_c0,) = ys[1]
    for t, col in itertools.product(range(n), range(w)):
        assert to_c0.read_set((t, col)) == {(col,)}


def test_scan_longer_than_the_pair_budget_stays_exact():
    """Twenty rows: more pieces than ``Budgets.loop_maps_per_pair`` before they are joined."""
    from hlo_index.context import AnalysisContext

    n = 20
    with AnalysisContext(loop_maps_per_pair=8):
        loop = parse_module_text(scan_module(n, 1, False)).entry.root
        (to_xs,) = _rows(loop, 3)[2]
        assert not to_xs.is_undefined
        for t in range(n):
            assert to_xs.read_set((t, 0)) == {(u, 0) for u in range(t + 1)}


def test_rows_kept_in_place_compose_as_a_box_as_the_general_composition_does():
    # one iteration keeps every row of a stacked element but the one it writes: the identity
    # with a constraint on d0; a piece read at rows inside, outside or across that range composes
    # through it as through the general composition (same relation, brute force)
    from hlo_index.affine import parse_map
    from hlo_index.fusion.loops import matrix
    from tests.affine.affine_helpers import brute_relation

    loop = parse_module_text(scan_module(5, 3, False)).entry.root
    keep = parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 4], d1 in [0, 2], d0 in [2, 4]")
    box = matrix._box_of_identity(keep, (5, 3))
    assert box is not None and (box[0].lo, box[0].hi) == (2, 4)
    for text in (
        "(d0, d1)[s0] -> (s0, d1), domain: d0 in [3, 3], d1 in [0, 2], s0 in [0, 3]",  # inside
        "(d0, d1)[s0] -> (s0, d1), domain: d0 in [1, 1], d1 in [0, 2], s0 in [0, 3]",  # outside
        "(d0, d1) -> (d0 + 1, d1), domain: d0 in [0, 3], d1 in [0, 2]",  # across
    ):
        piece = parse_map(text)
        fast = matrix._pair(piece, keep, box, loop, (5, 3))
        general = matrix._pair(piece, keep, None, loop, (5, 3))
        assert (brute_relation(fast) if fast is not None else set()) == (
            brute_relation(general) if general is not None else set()
        ), text
    assert (
        matrix._box_of_identity(
            parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 4], d1 in [0, 2], d0 + d1 in [0, 4]"), (5, 3)
        )
        is None
    )


def test_pieces_that_multiply_reach_the_budget_within_a_few_iterations(monkeypatch):
    """XLA's expanded scatter (a 16-trip loop of dynamic-update-slices at fresh runtime offsets):
    the pieces kept in place multiply each iteration, and the pair ends UNDEFINED whatever the
    iteration; the room grows with the square of the iterations done, so the budget is met early
    (62,480 compositions when the room was the square of all 16 trips from the start), and a pair
    stops composing once it holds more maps than the budget (7,217 compositions when every pair of
    the step was composed to the end, 3,076 with the stop)."""
    from hlo_index.fusion.loops import matrix
    from hlo_index.hlo.loader import load

    path = _conformance_file("xla-cc-service", "dynamic_update_slice_test__L00097_ExpandedScatter.hlo")
    count = [0]
    pair = matrix._pair

    def counted(*args):
        count[0] += 1
        return pair(*args)

    monkeypatch.setattr(matrix, "_pair", counted)
    from hlo_index.fusion import output_to_input as computation_rows

    module = load(path)[0].module
    rows = computation_rows(module.entry)
    reasons = {m.undefined_reason for r in rows for m in r.maps if m.is_undefined}
    assert any("loop_maps_per_pair" in r for r in reasons), reasons
    assert count[0] < 4000, count[0]


def test_each_distinct_composition_of_a_loop_is_made_once(monkeypatch):
    """Each iteration of a loop makes new map objects equal to the last iteration's; a composition
    is made once per pair of maps as written, whichever objects carry them (the llama 3.1 70b fp8
    layer loop composed 15,092 pairs for 2,267 distinct ones, most of its analysis time)."""
    from hlo_index.fusion.loops import matrix
    from hlo_index.hlo.loader import load

    path = _conformance_file("xla-tools-data", "tools__benchmarks__hlo__hlo_llama31_70b_fp8_16x8.hlo")
    made: list[tuple] = []
    pair = matrix._pair

    def counted(m_out, m_in, box, instr, value_dims):
        made.append((m_out.written_key(), m_in.written_key(), value_dims, id(instr)))
        return pair(m_out, m_in, box, instr, value_dims)

    monkeypatch.setattr(matrix, "_pair", counted)
    module = load(path)[0].module
    loops = [i for c in module.computations for i in c.instructions if i.opcode == "while"]
    assert loops
    for loop in loops:
        matrix.loop_matrix(loop)
    assert len(made) > 1000, len(made)  # the layer loop's compositions were made here
    assert len(made) == len(set(made))


def _conformance_file(folder: str, name: str) -> str:
    """The path of a module of ``../shared/conformance/xla_hlo``; the test is skipped without it."""
    import os

    path = os.path.join(os.path.dirname(__file__), *[".."] * 4, "shared", "conformance", "xla_hlo", folder, name)
    if not os.path.exists(path):
        pytest.skip("../shared/conformance is not here")
    return path
