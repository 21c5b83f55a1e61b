"""A while loop whose body reads one loop state element through an op with unknown maps (a
custom-call of external code): the pairs of loop state elements it does not reach keep their
exact maps, the pairs it reaches keep their known maps beside one UNDEFINED map, and where the
known maps read every element (a full read) the read is exact again.

The unknown op's reads are not known, so the expectations come from variants of the same module
in which the custom-call is replaced by ops the reference knows: one that reads nothing of its
operand (``broadcast`` of a constant) and one that reads it whole. Whatever the external code
reads, what the loop reads through the known maps is read (the variant that reads nothing gives
exactly that), and a full read is the same in every variant."""

from __future__ import annotations

import itertools

import pytest

import hlo_index.fusion  # noqa: F401  (registers the while rule)
from hlo_index.api import select_targets
from hlo_index.context import AnalysisContext
from hlo_index.fusion.compose import computation_output_to_input
from hlo_index.hlo import parse_module_text
from hlo_index.ops import output_to_input
from hlo_index.verify import runtime_as_range, verify_target
from tests.fusion.test_full_reads import ADD
from tests.fusion.test_rules_control_flow import check_against_reference, counter_condition

STATE = "(s32[], f32[4,8], f32[3,8,8], f32[4,8])"
UNKNOWN = 'custom-call(x), custom_call_target="external_kernel"'
READS_NOTHING = "broadcast(zero_f), dimensions={}"
READS_ALL = "broadcast(sum_x), dimensions={}"


def loop_module(op: str, root: str) -> str:
    """x += x @ w[i] + op(x); y += 2 y (y never meets x); w kept; three iterations; the ENTRY's
    root is ``root`` over the final loop state ``loop``."""
    return f"""HloModule m
{ADD}body {{
  p = {STATE} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4,8] get-tuple-element(p), index=1
  w = f32[3,8,8] get-tuple-element(p), index=2
  y = f32[4,8] get-tuple-element(p), index=3
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  zero = s32[] constant(0)
  zero_f = f32[] constant(0)
  sum_x = f32[] reduce(x, zero_f), dimensions={{0,1}}, to_apply=add
  ws = f32[1,8,8] dynamic-slice(w, i, zero, zero), dynamic_slice_sizes={{1,8,8}}
  wr = f32[8,8] reshape(ws)
  mm = f32[4,8] dot(x, wr), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  cc = f32[4,8] {op}
  s1 = f32[4,8] add(x, mm)
  x1 = f32[4,8] add(s1, cc)
  y1 = f32[4,8] add(y, y)
  ROOT t = {STATE} tuple(i1, x1, w, y1)
}}
{counter_condition(STATE, 3)}ENTRY main {{
  x0 = f32[4,8] parameter(0)
  w0 = f32[3,8,8] parameter(1)
  y0 = f32[4,8] parameter(2)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  init = {STATE} tuple(z, x0, w0, y0)
  loop = {STATE} while(init), condition=cond, body=body
  xf = f32[4,8] get-tuple-element(loop), index=1
  {root}
}}
"""


LOSS = "ROOT loss = f32[] reduce(xf, zf), dimensions={0,1}, to_apply=add"
STATE_OUT = f"ROOT out = {STATE} copy(loop)"


def _keys(maps) -> set:
    return {m.canonical_key() for m in maps}


def _pairs(instr, out: int) -> dict:
    return {om.operand_output: om.maps for om in output_to_input(instr, out)}


def _loop(text: str):
    module = parse_module_text(text)
    return module, next(i for i in module.entry.instructions if i.opcode == "while")


def test_pairs_the_unknown_op_does_not_reach_keep_their_exact_maps():
    with AnalysisContext():
        _, loop = _loop(loop_module(UNKNOWN, STATE_OUT))
        y_reads = _pairs(loop, 3)
        x_reads = _pairs(loop, 1)
        _, known = _loop(loop_module(READS_NOTHING, STATE_OUT))
        assert check_against_reference(known) > 0  # the variant's maps are the reference's
        # y never meets x: read exactly as in every variant (the counter too: the condition reads
        # it, and the number of iterations decides every element), and x is not read by it at all
        assert set(y_reads) == {0, 3}
        for element in (0, 3):
            assert _keys(y_reads[element]) == _keys(_pairs(known, 3)[element])
        # x reads x and w through the external code (w from the second iteration on, through the
        # x it read): unknown, but what the known maps say is kept, as the variant reads it
        for element in (1, 2):
            unknown = [m for m in x_reads[element] if m.is_undefined]
            assert len(unknown) == 1 and "external_kernel" in unknown[0].undefined_reason
            assert _keys(m for m in x_reads[element] if not m.is_undefined) == _keys(_pairs(known, 1)[element])


@pytest.mark.parametrize("variant", [READS_NOTHING, READS_ALL])
def test_a_full_read_beside_an_unknown_map_is_that_full_read(variant):
    """The loss reads every element of x0 and of w0 through the loop whatever the external code
    reads: through the residual adds and the dots. The tool says so exactly, and the variants,
    checked against the reference, agree."""
    with AnalysisContext():
        module = parse_module_text(loop_module(UNKNOWN, LOSS))
        reads = computation_output_to_input(module.entry, 0)
        other = parse_module_text(loop_module(variant, LOSS))
        expected = computation_output_to_input(other.entry, 0)
        (target,) = select_targets(other)
        outcome = verify_target(target, other, samples=4)
        assert not outcome.errors, outcome.errors
        assert outcome.checked_points > 0
        for parameter, dims in (((0, 0), (4, 8)), ((1, 0), (3, 8, 8))):
            maps = reads[parameter]
            assert not any(m.is_undefined for m in maps), maps
            every = set(itertools.product(*(range(n) for n in dims)))
            assert _read(maps) == every == _read(expected[parameter])


def _read(maps) -> set:
    """The elements the scalar output reads through ``maps``."""
    out: set = set()
    for m in maps:
        out |= runtime_as_range(m).read_set(())
    return out
