"""conditional (and, below, while): maps through the called computations vs the reference,
which evaluates the branches by walking them with each op's reference read set."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hlo_index.fusion  # noqa: F401  (registers the conditional and while rules)
from hlo_index.affine import IndexingMap
from hlo_index.hlo import parse_module_text
from hlo_index.ops import output_to_input
from hlo_index.reference.ref_control_flow import element_reads
from hlo_index.verify import runtime_as_range

SETTINGS = settings(deadline=None, derandomize=True, max_examples=25)

# Branch bodies from f32[A,B] to f32[A,B], each reading its parameter differently.
BODIES = {
    "negate": "ROOT r = f32[{A},{B}] negate(p)",
    "reverse": "ROOT r = f32[{A},{B}] reverse(p), dimensions={{1}}",
    "row_sum": "z = f32[] constant(0)\n  s = f32[{A}] reduce(p, z), dimensions={{1}}, to_apply=add\n"
    "  ROOT r = f32[{A},{B}] broadcast(s), dimensions={{0}}",
    "column": "c = f32[{A},1] slice(p), slice={{[0:{A}], [0:1]}}\n  v = f32[{A}] reshape(c)\n"
    "  ROOT r = f32[{A},{B}] broadcast(v), dimensions={{0}}",
    "constant": "z = f32[] constant(1)\n  ROOT r = f32[{A},{B}] broadcast(z), dimensions={{}}",
}


def conditional_module(a: int, b: int, bodies: list[str], selector: str) -> str:
    comps = []
    for k, body in enumerate(bodies):
        comps.append(f"branch{k} {{\n  p = f32[{a},{b}] parameter(0)\n  {BODIES[body].format(A=a, B=b)}\n}}\n")
    operands = ", ".join(f"x{k}" for k in range(len(bodies)))
    first = 1 if selector.endswith("runtime") else 0
    params = "\n".join(f"  x{k} = f32[{a},{b}] parameter({k + first})" for k in range(len(bodies)))
    if len(bodies) == 2 and selector.startswith("pred"):
        sel_type, attrs = "pred", "true_computation=branch0, false_computation=branch1"
    else:
        sel_type = "s32"
        attrs = "branch_computations={" + ", ".join(f"branch{k}" for k in range(len(bodies))) + "}"
    sel = (
        f"  s = {sel_type}[] parameter(0)"
        if selector.endswith("runtime")
        else f"  s = {sel_type}[] constant({selector.split(':')[1]})"
    )
    return (
        "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
        + "".join(comps)
        + f"ENTRY e {{\n{sel}\n{params}\n"
        f"  ROOT c = f32[{a},{b}] conditional(s, {operands}), {attrs}\n}}\n"
    )


def check_against_reference(instr) -> int:
    compared = 0
    for out in range(instr.shape.num_outputs):
        rows = output_to_input(instr, out)
        dims = instr.shape.leaf(out).dims
        for y in itertools.product(*(range(n) for n in dims)):
            for k in range(len(instr.operands)):
                want = {e: s for e, s in element_reads(instr, out, y, k).items() if s}
                got: dict = {}
                runtime = False
                for om in rows:
                    if om.operand != k:
                        continue
                    for m in om.maps:
                        assert not m.is_undefined, m.undefined_reason
                        runtime |= bool(m.runtime_vars)
                        # maps with runtime variables: the union over their values
                        got.setdefault(om.operand_output, set()).update(runtime_as_range(m).read_set(y))
                got = {e: s for e, s in got.items() if s}
                if runtime:
                    assert all(want[e] <= got.get(e, set()) for e in want), (instr.name, out, y, k, got, want)
                else:
                    assert got == want, (instr.name, out, y, k, got, want)
                compared += 1
    return compared


@SETTINGS
@given(st.data())
def test_conditional_matches_reference(data):
    a, b = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    count = data.draw(st.integers(1, 3))
    bodies = [data.draw(st.sampled_from(sorted(BODIES))) for _ in range(count)]
    if count == 2 and data.draw(st.booleans()):
        selector = data.draw(st.sampled_from(["pred:runtime", "pred:true", "pred:false"]))
    else:
        selector = data.draw(st.sampled_from(["s32:runtime", "s32:0", "s32:1", "s32:7", "s32:-1"]))
    module = parse_module_text(conditional_module(a, b, bodies, selector))
    assert check_against_reference(module.entry.root) > 0


def test_constant_predicate_reads_only_the_branch_taken():
    module = parse_module_text(conditional_module(2, 3, ["negate", "reverse"], "pred:false"))
    sel, x0, x1 = output_to_input(module.entry.root)
    assert sel.maps[0].num_results == 0
    assert x0.maps == () and str(x1.maps[0]).startswith("(d0, d1) -> (d0, -d1 + 2)")


# ---- while -------------------------------------------------------------------------------------

# Loop bodies on the state (s32[] i, f32[A,B] acc, f32[A,B] x): the new acc from acc and x.
STEPS = {
    "accumulate": "n = f32[{A},{B}] add(acc, x)",
    "reverse": "n = f32[{A},{B}] reverse(acc), dimensions={{1}}",
    "row_sum": "z = f32[] constant(0)\n  s = f32[{A}] reduce(acc, z), dimensions={{1}}, to_apply=add\n"
    "  n = f32[{A},{B}] broadcast(s), dimensions={{0}}",
    "shift": "c = f32[{A},1] slice(acc), slice={{[0:{A}], [0:1]}}\n  r = f32[{A},{B1}] slice(acc), "
    "slice={{[0:{A}], [1:{B}]}}\n  n = f32[{A},{B}] concatenate(r, c), dimensions={{1}}",
    "overwrite": "n = f32[{A},{B}] negate(x)",
    "scan_row": "zero = s32[] constant(0)\n"
    "  row = f32[1,{B}] dynamic-slice(x, i, zero), dynamic_slice_sizes={{1,{B}}}\n"
    "  v = f32[{B}] reshape(row)\n  bv = f32[{A},{B}] broadcast(v), dimensions={{1}}\n"
    "  n = f32[{A},{B}] add(acc, bv)",
}


def counter_condition(state: str, bound: int, direction: str = "LT") -> str:
    """The condition computation ``cond`` of a loop state whose element 0 is the s32 counter:
    ``i < bound`` (or ``direction``)."""
    return (
        f"cond {{\n  p = {state} parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
        f"  k = s32[] constant({bound})\n  ROOT lt = pred[] compare(i, k), direction={direction}\n}}\n"
    )


def while_module(a: int, b: int, step: str, start: int, bound: int, data_dependent: bool) -> str:
    body = STEPS[step].format(A=a, B=b, B1=b - 1)
    cond = (
        f"  i = s32[] get-tuple-element(p), index=0\n  k = s32[] constant({bound})\n"
        "  ROOT lt = pred[] compare(i, k), direction=LT"
    )
    if data_dependent:
        cond = (
            f"  acc = f32[{a},{b}] get-tuple-element(p), index=1\n  z = f32[] constant(0)\n"
            "  s = f32[] reduce(acc, z), dimensions={0,1}, to_apply=add\n"
            "  ROOT gt = pred[] compare(s, z), direction=GT"
        )
    state = f"(s32[], f32[{a},{b}], f32[{a},{b}])"
    return f"""HloModule m
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}}
body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  acc = f32[{a},{b}] get-tuple-element(p), index=1
  x = f32[{a},{b}] get-tuple-element(p), index=2
  {body}
  ROOT t = {state} tuple(j, n, x)
}}
cond {{
  p = {state} parameter(0)
{cond}
}}
ENTRY e {{
  acc0 = f32[{a},{b}] parameter(0)
  x0 = f32[{a},{b}] parameter(1)
  i0 = s32[] constant({start})
  init = {state} tuple(i0, acc0, x0)
  ROOT w = {state} while(init), condition=cond, body=body
}}
"""


@SETTINGS
@given(st.data())
def test_while_matches_reference(data):
    a, b = data.draw(st.integers(1, 2)), data.draw(st.integers(2, 4))
    step = data.draw(st.sampled_from(sorted(STEPS)))
    start, trips = data.draw(st.integers(-3, 3)), data.draw(st.integers(0, 7))
    dependent = data.draw(st.booleans()) and step != "overwrite"
    module = parse_module_text(while_module(a, b, step, start, start + trips, dependent))
    assert check_against_reference(module.entry.root) > 0


def test_scan_loop_reads_rows_and_counts_trips():
    from hlo_index.fusion.loops.trip_count import known_trip_count

    module = parse_module_text(while_module(2, 3, "reverse", 0, 5, False))
    w = module.entry.root
    assert known_trip_count(w) == 5
    rows = {om.operand_output: om.maps for om in output_to_input(w, 1)}
    # five reversals: acc reads acc0 reversed, and the counter (the condition) as a scalar
    assert [str(m).split(",")[0:2] for m in rows[1]] == [["(d0", " d1) -> (d0"]]
    assert rows[1][0].read_set((0, 0)) == {(0, 2)}
    assert rows[0][0].num_results == 0


def test_periodic_loop_is_read_off_its_period():
    module = parse_module_text(while_module(1, 3, "shift", 0, 100, False))
    rows = {om.operand_output: om.maps for om in output_to_input(module.entry.root, 1)}
    assert rows[1][0].read_set((0, 0)) == {(0, 100 % 3)}


def test_long_loop_that_never_stabilises_is_undefined_with_the_budget():
    module = parse_module_text(while_module(1, 30, "shift", 0, 100, False))
    w = module.entry.root
    (om,) = [om for om in output_to_input(w, 1) if om.maps and om.maps[0].is_undefined]
    assert "do not stabilise" in om.maps[0].undefined_reason
    assert "budget loop_steps=24 exceeded" in om.maps[0].undefined_reason
    # only what reads through the rotating element is given up on: x and the counter (which the
    # condition reads, stable from the first step) keep their exact maps
    x = {om.operand_output: om.maps for om in output_to_input(w, 2)}
    assert x[2] == (IndexingMap.identity((1, 30)),) and not any(m.is_undefined for m in x[0])
    counter = {om.operand_output: om.maps for om in output_to_input(w, 0)}
    assert counter[0] and not any(m.is_undefined for m in counter[0])
    assert all(not m.is_undefined for m in {om.operand_output: om.maps for om in output_to_input(w, 1)}[0])


_ATTENTION = (
    "{{attn_heads = 1 : i64, bias_type = 0 : i64, dropout_probability = 0.000000e+00 : f64, input_batch = 1 : i64, "
    "is_training = true, kv_max_seqlen = {S} : i64, mask_type = 2 : i64, max_segments_per_seq = 1 : i64, "
    "num_gqa_groups = 1 : i64, q_max_seqlen = {S} : i64, qk_head_dim = 1 : i64, qkv_layout = 9 : i64, "
    "v_head_dim = 1 : i64, window_size_left = -1 : i64, window_size_right = -1 : i64}}"
)


def causal_attention_loop(s: int, trips: int) -> str:
    """A loop whose body attends causally over its state (TransformerEngine's fused attention,
    mask_type 2): row i of each iteration reads rows 0..i of the previous one."""
    x, state = f"bf16[1,{s},1,1]", f"(s32[], bf16[1,{s},1,1])"
    call = (
        f"a = ({x}, f32[1,1,{s},1], u32[2,4], u8[48]) "
        "custom-call(acc, acc, acc, bias, seed, cu, cu, e, e, e, e, e, e), "
        f'custom_call_target="te_fused_attn_forward_ffi", backend_config={_ATTENTION.format(S=s)}'
    )
    return f"""HloModule m
body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  acc = {x} get-tuple-element(p), index=1
  bias = bf16[0] constant({{}})
  seed = u32[2] constant({{0, 0}})
  cu = s32[2] constant({{0, {s}}})
  e = f32[0] constant({{}})
  {call}
  n = {x} get-tuple-element(a), index=0
  ROOT t = {state} tuple(j, n)
}}
{counter_condition(state, trips)}ENTRY e {{
  x0 = {x} parameter(0)
  i0 = s32[] constant(0)
  init = {state} tuple(i0, x0)
  ROOT w = {state} while(init), condition=cond, body=body
}}
"""


@pytest.mark.parametrize("trips", [3, 30])
def test_a_prefix_of_a_prefix_is_a_prefix(trips):
    # thirty causal steps are past the 24 compositions the general path may take: each
    # composition's witness row (some row between the two) is eliminated, so the maps are stable
    # after one step instead of growing a chain of witnesses
    w = parse_module_text(causal_attention_loop(4, trips)).entry.root
    assert check_against_reference(w) > 0
    acc = {om.operand_output: om.maps for om in output_to_input(w, 1)}
    assert not any(m.is_undefined for m in acc[1])
    assert set().union(*(m.read_set((0, 2, 0, 0)) for m in acc[1])) == {(0, r, 0, 0) for r in range(3)}


def test_loop_steps_budget_comes_from_the_context():
    """A smaller ``loop_steps`` on the context gives up sooner, naming the value in force."""
    from hlo_index.context import AnalysisContext, Budgets

    text = while_module(1, 30, "shift", 0, 100, False)
    with AnalysisContext(budgets=Budgets(loop_steps=3)):
        module = parse_module_text(text)
        (om,) = [om for om in output_to_input(module.entry.root, 1) if om.maps and om.maps[0].is_undefined]
        assert "budget loop_steps=3 exceeded" in om.maps[0].undefined_reason


def test_a_loop_steps_budget_of_none_knows_no_pair_stable():
    # no composition taken: not even the pairs that would stabilise at once are known to
    from hlo_index.context import AnalysisContext, Budgets

    with AnalysisContext(budgets=Budgets(loop_steps=0)):
        w = parse_module_text(while_module(1, 4, "shift", 0, 100, False)).entry.root
        for out in range(3):
            maps = [m for om in output_to_input(w, out) for m in om.maps]
            assert maps and all(m.is_undefined and "loop_steps=0" in m.undefined_reason for m in maps)


def _row_writing_loop(trips: int):
    """acc gets row 0 of x written at row i (the counter: folded per iteration up to
    ``Budgets.loop_steps`` iterations, a runtime offset to the body's maps beyond)."""
    text = while_module(2, 3, "overwrite", 0, trips, False)
    body = (
        "zero = s32[] constant(0)\n  row = f32[1,3] slice(x), slice={[0:1], [0:3]}\n"
        "  n = f32[2,3] dynamic-update-slice(acc, row, i, zero)"
    )
    return parse_module_text(text.replace("n = f32[2,3] negate(x)", body)).entry.root


def test_loop_overwriting_at_runtime_offsets_gives_up_on_that_pair_only():
    # two iterations: the pieces around each iteration's update, with fresh offsets, compose exactly
    short = _row_writing_loop(2)
    assert check_against_reference(short) > 0
    # thirty (past the unrolling budget): too many pieces for what acc reads through itself; x and
    # the counter keep their maps
    w = _row_writing_loop(30)
    acc = {om.operand_output: om.maps for om in output_to_input(w, 1)}
    (given_up,) = acc[1]
    assert given_up.is_undefined and "fresh offsets each iteration" in given_up.undefined_reason
    counter = {om.operand_output: om.maps for om in output_to_input(w, 0)}
    assert counter[0] and not any(m.is_undefined for m in counter[0])
    x = {om.operand_output: om.maps for om in output_to_input(w, 2)}
    assert x[2] == (IndexingMap.identity((2, 3)),)


def test_loop_overwriting_at_the_counter_row_is_exact_when_unrolled():
    # eight iterations write rows 0, 1, then (clamped) 1 again: nothing of acc0 survives
    w = _row_writing_loop(8)
    assert check_against_reference(w) > 0
    acc = {om.operand_output: om.maps for om in output_to_input(w, 1)}
    assert 1 not in acc
    assert all(not m.runtime_vars for maps in acc.values() for m in maps)


# ---- counters folded per iteration ---------------------------------------------------------------


def counter_row_module(
    rows: int, width: int, size: int, start: int, step: int, trips: int, scale: int, shift: int, through_call: bool
) -> str:
    """acc += the rows [r, r + size) of x, r = scale * i + shift (jax's negative-index select,
    XLA's clamp), i the counter: start, start + step, ... for ``trips`` iterations."""
    bound = start + step * trips
    direction = "LT" if step > 0 else "GT"
    state = f"(s32[], f32[{size},{width}], f32[{rows},{width}])"
    offset = (
        "  r = s32[] multiply(i, scale)\n  r1 = s32[] add(r, shift)\n"
        "  neg = pred[] compare(r1, zero), direction=LT\n  wrapped = s32[] add(r1, n)\n"
        "  idx = s32[] select(neg, wrapped, r1)\n"
    )
    consts = (
        f"  zero = s32[] constant(0)\n  scale = s32[] constant({scale})\n"
        f"  shift = s32[] constant({shift})\n  n = s32[] constant({rows})\n"
    )
    if through_call:
        helper = (
            f"pick {{\n  x = f32[{rows},{width}] parameter(0)\n  i = s32[] parameter(1)\n{consts}{offset}"
            f"  ROOT rows = f32[{size},{width}] dynamic-slice(x, idx, zero), "
            f"dynamic_slice_sizes={{{size},{width}}}\n}}\n"
        )
        read = f"  got = f32[{size},{width}] call(x, i), to_apply=pick\n"
    else:
        helper = ""
        read = (
            f"{consts}{offset}  got = f32[{size},{width}] dynamic-slice(x, idx, zero), "
            f"dynamic_slice_sizes={{{size},{width}}}\n"
        )
    return f"""HloModule m
{helper}body {{
  p = {state} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[{size},{width}] get-tuple-element(p), index=1
  x = f32[{rows},{width}] get-tuple-element(p), index=2
{read}  acc2 = f32[{size},{width}] add(acc, got)
  step = s32[] constant({step})
  j = s32[] add(i, step)
  ROOT t = {state} tuple(j, acc2, x)
}}
{counter_condition(state, bound, direction)}ENTRY e {{
  acc0 = f32[{size},{width}] parameter(0)
  x0 = f32[{rows},{width}] parameter(1)
  i0 = s32[] constant({start})
  init = {state} tuple(i0, acc0, x0)
  ROOT w = {state} while(init), condition=cond, body=body
}}
"""


@SETTINGS
@given(st.data())
def test_counter_rows_match_reference(data):
    rows, width = data.draw(st.integers(2, 6)), data.draw(st.integers(1, 2))
    size = data.draw(st.integers(1, rows))
    step = data.draw(st.sampled_from([1, 2, -1]))
    module = parse_module_text(
        counter_row_module(
            rows,
            width,
            size,
            data.draw(st.integers(-4, 4)),
            step,
            data.draw(st.integers(1, 6)),
            data.draw(st.integers(-2, 3)),
            data.draw(st.integers(-3, 3)),
            data.draw(st.booleans()),
        )
    )
    w = module.entry.root
    assert check_against_reference(w) > 0
    # the counter is folded: what acc reads of x has no runtime variable
    x_maps = [m for om in output_to_input(w, 1) if om.operand_output == 2 for m in om.maps]
    assert x_maps and not any(m.runtime_vars for m in x_maps)


def test_rows_one_three_five_are_exactly_those_rows():
    module = parse_module_text(counter_row_module(7, 2, 1, 0, 1, 3, 2, 1, True))
    (x_map,) = [m for om in output_to_input(module.entry.root, 1) if om.operand_output == 2 for m in om.maps]
    assert set().union(*(x_map.read_set((0, c)) for c in range(2))) == {(1, 0), (3, 0), (5, 0), (1, 1), (3, 1), (5, 1)}


def test_loop_past_the_unrolling_budget_keeps_the_runtime_variable():
    from hlo_index.context import Budgets

    module = parse_module_text(counter_row_module(7, 2, 1, 0, 1, Budgets().loop_steps + 1, 1, 0, False))
    x_maps = [m for om in output_to_input(module.entry.root, 1) if om.operand_output == 2 for m in om.maps]
    assert x_maps and all(m.runtime_vars for m in x_maps)


# jax's fori_loop(0, 3, acc + x[2k + 1]): two counters, the compared one (element 0) and the fori
# index (element 1) updated inside a call; the row offset computed from the index in that call.
JAX_FORI = """HloModule jit_fn, entry_computation_layout={(f32[7,4]{1,0})->f32[4]{0}}

closed_call.1 {
  Arg_1.1 = s32[] parameter(1)
  constant.10 = s32[] constant(1)
  add.4 = s32[] add(Arg_1.1, constant.10)
  Arg_2.1 = f32[4]{0} parameter(2)
  Arg_0.1 = f32[7,4]{1,0} parameter(0)
  constant.9 = s32[] constant(2)
  mul.1 = s32[] multiply(Arg_1.1, constant.9)
  add.5 = s32[] add(mul.1, constant.10)
  constant.8 = s32[] constant(0)
  lt.1 = pred[] compare(add.5, constant.8), direction=LT
  constant.7 = s32[] constant(7)
  add.6 = s32[] add(add.5, constant.7)
  select_n.1 = s32[] select(lt.1, add.6, add.5)
  dynamic_slice.1 = f32[1,4]{1,0} dynamic-slice(Arg_0.1, select_n.1, constant.8), dynamic_slice_sizes={1,4}
  squeeze.1 = f32[4]{0} reshape(dynamic_slice.1)
  add.7 = f32[4]{0} add(Arg_2.1, squeeze.1)
  ROOT tuple.1 = (s32[], f32[4]{0}) tuple(add.4, add.7)
}

region_0.2 {
  arg_tuple.1 = (s32[], s32[], f32[4]{0}, f32[7,4]{1,0}) parameter(0)
  get-tuple-element.4 = s32[] get-tuple-element(arg_tuple.1), index=0
  constant.11 = s32[] constant(1)
  add.9 = s32[] add(get-tuple-element.4, constant.11)
  get-tuple-element.7 = f32[7,4]{1,0} get-tuple-element(arg_tuple.1), index=3
  get-tuple-element.5 = s32[] get-tuple-element(arg_tuple.1), index=1
  get-tuple-element.6 = f32[4]{0} get-tuple-element(arg_tuple.1), index=2
  closed_call.3 = (s32[], f32[4]{0}) call(get-tuple-element.7, get-tuple-element.5, get-tuple-element.6), to_apply=closed_call.1
  closed_call.4 = s32[] get-tuple-element(closed_call.3), index=0
  closed_call.5 = f32[4]{0} get-tuple-element(closed_call.3), index=1
  ROOT tuple.3 = (s32[], s32[], f32[4]{0}, f32[7,4]{1,0}) tuple(add.9, closed_call.4, closed_call.5, get-tuple-element.7)
}

region_1.3 {
  arg_tuple.3 = (s32[], s32[], f32[4]{0}, f32[7,4]{1,0}) parameter(0)
  get-tuple-element.13 = s32[] get-tuple-element(arg_tuple.3), index=1
  get-tuple-element.14 = f32[4]{0} get-tuple-element(arg_tuple.3), index=2
  get-tuple-element.15 = f32[7,4]{1,0} get-tuple-element(arg_tuple.3), index=3
  get-tuple-element.12 = s32[] get-tuple-element(arg_tuple.3), index=0
  constant.13 = s32[] constant(3)
  ROOT lt.3 = pred[] compare(get-tuple-element.12, constant.13), direction=LT
}

ENTRY main.4 {
  constant.14 = s32[] constant(0)
  constant.15 = f32[] constant(0)
  broadcast.1 = f32[4]{0} broadcast(constant.15), dimensions={}
  x.1 = f32[7,4]{1,0} parameter(0)
  while.5 = (s32[], s32[], f32[4]{0}, f32[7,4]{1,0}) tuple(constant.14, constant.14, broadcast.1, x.1)
  while.6 = (s32[], s32[], f32[4]{0}, f32[7,4]{1,0}) while(while.5), condition=region_1.3, body=region_0.2
  while.7 = s32[] get-tuple-element(while.6), index=0
  while.8 = s32[] get-tuple-element(while.6), index=1
  ROOT while.9 = f32[4]{0} get-tuple-element(while.6), index=2
}
"""  # noqa: E501  (JAX's export, verbatim)


def test_jax_fori_index_is_folded_and_its_reads_kept():
    module = parse_module_text(JAX_FORI)
    (w,) = [i for i in module.entry.instructions if i.opcode == "while"]
    assert check_against_reference(w) > 0
    acc = {om.operand_output: om.maps for om in output_to_input(w, 2)}
    (x_map,) = acc[3]
    assert not x_map.runtime_vars and x_map.read_set((0,)) == {(1, 0), (3, 0), (5, 0)}
    # the offset read the fori index: acc reads its initial value (a scalar), as the reference says
    assert 1 in acc and all(m.num_results == 0 for m in acc[1])


MISFIT_WHILE = """HloModule m

body {{
  p_body = (f32[2], s32[]) parameter(0)
  v = f32[2] get-tuple-element(p_body), index=0
  k = s32[] get-tuple-element(p_body), index=1
  {body_root}
}}

condition {{
  p_cond = (f32[2], s32[]) parameter(0)
  i = s32[] get-tuple-element(p_cond), index=1
  n = s32[] constant(42)
  ROOT r = pred[] compare(i, n), direction=EQ
}}

ENTRY e {{
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  init = (f32[2], s32[]) tuple(a, b)
  ROOT w = (f32[2], s32[]) while(init), condition=condition, body=body
}}
"""


def test_a_body_that_does_not_give_back_the_loop_state_is_undefined_not_an_error():
    """XLA's parser reads a body whose result is not the loop state (its verifier rejects it:
    jaxlib 0.10.2 fails to compile it, 'expect operands to be compatible with body block return
    types'): every map of the loop is UNDEFINED, saying so; the well-formed body is read."""
    bad = parse_module_text(MISFIT_WHILE.format(body_root="ROOT c = s32[] constant(-1)"))
    for j in range(2):
        maps = [m for om in output_to_input(bad.entry.root, j) for m in om.maps]
        assert maps and all(m.is_undefined for m in maps)
        assert all("the body gives s32[]" in m.undefined_reason for m in maps)
    good = parse_module_text(MISFIT_WHILE.format(body_root="ROOT t = (f32[2], s32[]) tuple(v, k)"))
    rows = {om.operand_output: om.maps for om in output_to_input(good.entry.root, 0)}
    assert not any(m.is_undefined for maps in rows.values() for m in maps)
