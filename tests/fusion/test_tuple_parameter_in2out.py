"""Input-to-output maps of tuple-shaped parameters (a while body's or a branch's loop state), one
element at a time, checked exhaustively against the reference walk; a nested tuple element stays
UNDEFINED with its reason; ``--verify`` checks tuple elements from both sides."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index import verify
from hlo_index.api import SelectedTarget
from hlo_index.fusion import OperandIndexing, input_to_output
from hlo_index.hlo import parse_module_text
from hlo_index.verify import backward_read_sets
from hlo_index.verify import pairs as verify_pairs

OPS = {
    "reverse": "f32[{n},{m}] reverse(t), dimensions={{0}}",
    "transpose": "f32[{m},{n}] transpose(t), dimensions={{1,0}}",
    "slice": "f32[{k},{m}] slice(t), slice={{[{lo}:{hi}], [0:{m}]}}",
    "reduce": "f32[{m}] reduce(t, zero), dimensions={{0}}, to_apply=add",
}


def _module(n: int, m: int, op: str, lo: int) -> str:
    hi = n
    k = hi - lo
    last = OPS[op].format(n=n, m=m, k=k, lo=lo, hi=hi)
    out_shape = last.split(" ", 1)[0]
    return f"""HloModule tuple_state

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

body {{
  p = (s32[], f32[{n},{m}], f32[{m}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[{n},{m}] get-tuple-element(p), index=1
  b = f32[{m}] get-tuple-element(p), index=2
  one = s32[] constant(1)
  zero = f32[] constant(0)
  j = s32[] add(i, one)
  bb = f32[{n},{m}] broadcast(b), dimensions={{1}}
  t = f32[{n},{m}] add(x, bb)
  r = {last}
  ROOT out = (s32[], {out_shape}, f32[{m}]) tuple(j, r, b)
}}

ENTRY main {{
  a = f32[{n},{m}] parameter(0)
  c = f32[{m}] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[{n},{m}], f32[{m}]) tuple(z, a, c)
  ROOT call = (s32[], {out_shape}, f32[{m}]) call(init), to_apply=body
}}
"""


def _body(text: str):
    module = parse_module_text(text)
    [body] = [c for c in module.computations if c.name == "body"]
    return body


def _points(shape):
    return list(itertools.product(*(range(n) for n in shape.dims)))


@settings(deadline=None, derandomize=True, max_examples=16)
@given(n=st.integers(1, 4), m=st.integers(1, 3), op=st.sampled_from(sorted(OPS)), lo=st.integers(0, 3))
def test_each_element_of_a_tuple_parameter_maps_exactly_to_each_output(n, m, op, lo):
    body = _body(_module(n, m, op, min(lo, n - 1)))
    rows = input_to_output(body)
    param = body.parameters[0]
    assert {(r.operand, r.operand_element) for r in rows} == {(0, e) for e in range(3)}
    root = body.root
    for element in range(3):
        elem_shape = param.shape.leaf(element)
        for out in range(root.shape.num_outputs):
            [row] = [r for r in rows if r.operand_element == element and r.output == out]
            assert all(not m_.is_undefined for m_ in row.maps)
            given = {(x, y) for x in _points(elem_shape) for m_ in row.maps for y in m_.read_set(x)}
            truth = {
                (x, y)
                for y in _points(root.shape.leaf(out))
                for x in backward_read_sets(body, out, y).get((0, element), set())
            }
            assert given == truth, (element, out)


NESTED = """HloModule nested

ENTRY main {
  p = ((f32[2], f32[3]), f32[4]) parameter(0)
  inner = (f32[2], f32[3]) get-tuple-element(p), index=0
  a = f32[2] get-tuple-element(inner), index=0
  b = f32[3] get-tuple-element(inner), index=1
  v = f32[4] get-tuple-element(p), index=1
  ROOT out = (f32[2], f32[4], f32[3]) tuple(a, v, b)
}
"""


def test_a_nested_tuple_element_is_unknown_with_its_reason_and_the_flat_one_is_exact():
    comp = parse_module_text(NESTED).entry
    rows = input_to_output(comp)
    # the nested element reaches outputs 0 and 2 (through both of its own elements): unknown for
    # both, never "not read" (get-tuple-element cannot say which of its outputs it forwards to)
    for out in (0, 2):
        [nested] = [r for r in rows if r.operand_element == 0 and r.output == out]
        assert nested.maps and all(m.is_undefined and "itself a tuple" in m.undefined_reason for m in nested.maps)
    [flat] = [r for r in rows if r.operand_element == 1 and r.output == 1]
    assert [m.read_set((k,)) for m in flat.maps for k in range(4)] == [{(k,)} for k in range(4)]
    [unread] = [r for r in rows if r.operand_element == 1 and r.output == 0]
    assert unread.maps == ()


def _selected():
    return SelectedTarget("computation", _body(_module(3, 2, "reverse", 0)))


def test_verify_checks_tuple_elements_and_passes_on_the_true_maps():
    outcome = verify.verify_target(_selected(), samples=6, seed=5)
    assert not outcome.errors
    assert outcome.checked_input_points >= 3


def test_verify_catches_a_wrong_map_of_a_tuple_element(monkeypatch):
    real = input_to_output(_selected().target)

    def without_reverse(target):
        # element 1 (the 3x2 state) claimed to reach output 1 through the identity: the reverse is lost
        from hlo_index.affine import parse_map

        wrong = (parse_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 2], d1 in [0, 1]"),)
        return [
            OperandIndexing(r.operand, r.output, wrong, r.operand_element)
            if (r.operand_element, r.output) == (1, 1)
            else r
            for r in real
        ]

    monkeypatch.setattr(verify_pairs, "input_to_output", without_reverse)
    outcome = verify.verify_target(_selected(), samples=6, seed=5)
    assert any("tuple element 1" in e for e in outcome.errors)
