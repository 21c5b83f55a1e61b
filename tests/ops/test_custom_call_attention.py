"""TransformerEngine's fused attention custom-calls: the rules against the numpy reference on
random sizes, masks and sequence lengths, in both directions; configurations outside the model
UNDEFINED naming what differs; the calls of a real dump (XLA's llama benchmark) all known."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_index.hlo import load
from hlo_index.hlo.backend_config import parse_typed_attributes
from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import input_to_output, output_to_input
from hlo_index.reference import read_set

SETTINGS = settings(deadline=None, derandomize=True, max_examples=25)
XLA_TOOLS = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "xla_hlo" / "xla-tools-data"


def _config(b, sq, skv, h, g, d, dv, mask, **changes):
    values = {
        "attn_heads": f"{h} : i64",
        "bias_type": "0 : i64",
        "dropout_probability": "0.000000e+00 : f64",
        "input_batch": f"{b} : i64",
        "is_training": "true",
        "kv_max_seqlen": f"{skv} : i64",
        "mask_type": f"{mask} : i64",
        "max_segments_per_seq": "1 : i64",
        "num_gqa_groups": f"{g} : i64",
        "q_max_seqlen": f"{sq} : i64",
        "qk_head_dim": f"{d} : i64",
        "qkv_layout": "9 : i64",
        "v_head_dim": f"{dv} : i64",
        "window_size_left": "-1 : i64",
        "window_size_right": "-1 : i64",
    }
    values.update(changes)
    return "{" + ", ".join(f"{k} = {v}" for k, v in values.items()) + "}"


def attention(forward, b, sq, skv, h, g, d, dv, mask, **changes):
    bf16 = lambda *dims: array_shape("bf16", dims)  # noqa: E731
    q, k, v, o = bf16(b, sq, h, d), bf16(b, skv, g, d), bf16(b, skv, g, dv), bf16(b, sq, h, dv)
    aux, cu, empty = array_shape("f32", (b, h, sq, 1)), array_shape("s32", (b + 1,)), array_shape("f32", (0,))
    if forward:
        operands = [q, k, v, bf16(0), array_shape("u32", (2,)), cu, cu] + [empty] * 6
        shape = tuple_shape(o, aux, array_shape("u32", (2, 4)), array_shape("u8", (48,)))
    else:
        operands = [q, k, v, bf16(0), aux, array_shape("u32", (2, 4)), o, o, cu, cu] + [empty] * 6
        shape = tuple_shape(q, k, v, bf16(0), array_shape("u8", (64,)))
    target = "te_fused_attn_forward_ffi" if forward else "te_fused_attn_backward_ffi"
    return instruction(
        "custom-call",
        shape,
        operands,
        custom_call_target=target,
        backend_config=_config(b, sq, skv, h, g, d, dv, mask, **changes),
    )


def _cu(lengths):
    return list(itertools.accumulate([0, *lengths]))


def _runtime(point_batch, q_lengths, kv_lengths):
    """The runtime variables' values at an element of batch ``point_batch`` (q_len, kv_len)."""
    if point_batch is None or point_batch >= len(q_lengths):
        return None  # rng_state and the lengths' maps carry none
    return (q_lengths[point_batch], kv_lengths[point_batch])


def _reads(maps, point, runtime):
    got = set()
    for m in maps:
        assert not m.is_undefined, m.undefined_reason
        got |= {tuple(int(x) for x in r) for r in m.read_set(point, runtime if m.runtime_vars else None)}
    return got


@st.composite
def configurations(draw):
    b, sq, skv = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    g, per_group = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    d, dv, mask = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.sampled_from([0, 1, 2, 3]))
    q_lengths = draw(st.lists(st.integers(0, sq), min_size=b, max_size=b))
    kv_lengths = draw(st.lists(st.integers(0, skv), min_size=b, max_size=b))
    if mask in (0, 2):
        q_lengths, kv_lengths = [sq] * b, [skv] * b
    return (b, sq, skv, g * per_group, g, d, dv, mask), q_lengths, kv_lengths


@SETTINGS
@given(configurations(), st.booleans())
def test_fused_attention_maps_are_the_reference_both_ways(config, forward):
    sizes, q_lengths, kv_lengths = config
    instr = attention(forward, *sizes)
    q_cu, kv_cu = (5, 6) if forward else (8, 9)
    values = {q_cu: _cu(q_lengths), kv_cu: _cu(kv_lengths)}
    outputs = 3
    for j in range(outputs):
        out_dims = instr.shape.leaf(j).dims
        for om in output_to_input(instr, j):
            for y in itertools.product(*(range(n) for n in out_dims)):
                runtime = _runtime(y[0], q_lengths, kv_lengths)
                want = read_set(instr, j, y, om.operand, values)
                assert _reads(om.maps, y, runtime) == want, (j, y, om.operand, [str(m) for m in om.maps])
    for k, operand in enumerate(instr.operands):
        per_output = input_to_output(instr, k)
        for j in range(outputs):
            out_dims = instr.shape.leaf(j).dims
            readers: dict = {}
            for y in itertools.product(*(range(n) for n in out_dims)):
                for x in read_set(instr, j, y, k, values):
                    readers.setdefault(x, set()).add(y)
            for x in itertools.product(*(range(n) for n in operand.shape.dims)):
                batch = x[0] if operand.shape.rank == 4 and k not in (q_cu, kv_cu) else None
                runtime = _runtime(batch, q_lengths, kv_lengths) if batch is not None else None
                got = _reads(per_output[j], x, runtime)
                assert got == readers.get(x, set()), (k, x, j, [str(m) for m in per_output[j]])


def test_workspace_and_empty_dbias_read_nothing():
    instr = attention(False, 1, 2, 2, 2, 1, 2, 2, 3)
    for j in (3, 4):
        assert all(not om.maps for om in output_to_input(instr, j))


@pytest.mark.parametrize(
    "change, named",
    [
        ({"dropout_probability": "1.000000e-01 : f64"}, "dropout"),
        ({"bias_type": "1 : i64"}, "bias_type"),
        ({"qkv_layout": "5 : i64"}, "qkv_layout"),
        ({"mask_type": "4 : i64"}, "mask_type"),
        ({"window_size_left": "128 : i64"}, "window_size_left"),
        ({"attn_heads": "6 : i64"}, "attn_heads"),
    ],
)
def test_configurations_outside_the_model_are_unknown_naming_what_differs(change, named):
    instr = attention(True, 1, 2, 2, 2, 1, 2, 2, 3, **change)
    for om in output_to_input(instr, 0):
        assert len(om.maps) == 1 and om.maps[0].is_undefined and named in om.maps[0].undefined_reason
    assert input_to_output(instr, 0)[0][0].is_undefined


def test_typed_attributes_are_read_with_their_types():
    text = '{heads = 64 : i64, scale = 1.250000e-01 : f64, train = true, name = "a, b", v = array<i64: 1, 2>}'
    assert parse_typed_attributes(text) == {
        "heads": 64,
        "scale": 0.125,
        "train": True,
        "name": "a, b",
        "v": "array<i64: 1, 2>",
    }
    assert parse_typed_attributes("not a dictionary") is None


@pytest.mark.skipif(not XLA_TOOLS.is_dir(), reason="needs ../shared/conformance")
def test_every_attention_call_of_the_llama_benchmark_is_known():
    path = XLA_TOOLS / "tools__benchmarks__hlo__hlo_llama31_70b_bf16_16x8.hlo"
    (result,) = list(load(str(path)))
    calls = [
        i
        for c in result.module.computations
        for i in c.instructions
        if i.opcode == "custom-call" and str(i.attr("custom_call_target")).startswith("te_fused_attn")
    ]
    assert len(calls) == 3
    for instr in calls:
        for j in range(instr.shape.num_outputs):
            for om in output_to_input(instr, j):
                assert not any(m.is_undefined for m in om.maps), (instr.name, j, om.operand)


@pytest.mark.skipif(not XLA_TOOLS.is_dir(), reason="needs ../shared/conformance")
def test_a_layer_loop_of_attention_calls_stops_when_each_iteration_brings_new_lengths():
    from hlo_index.context import AnalysisContext
    from hlo_index.fusion import output_to_input as computation_output_to_input

    path = XLA_TOOLS / "tools__benchmarks__hlo__hlo_llama31_70b_bf16_16x8.hlo"
    (result,) = list(load(str(path)))
    # with room for many runtime variables per map, each of the 80 iterations reads the sequence
    # lengths anew: the loop is given up early, saying why, instead of composing until its step
    # budget runs out; by default a path through two calls already exceeds runtime_vars_per_map
    for budget, said in ((100, "each iteration brings runtime variables of its own"), (None, "runtime_vars_per_map=2")):
        with AnalysisContext(**({"runtime_vars_per_map": budget} if budget else {})):
            reasons = {
                m.undefined_reason
                for row in computation_output_to_input(result.module.entry)
                for m in row.maps
                if m.is_undefined
            }
        assert reasons and all(said in r for r in reasons), reasons
