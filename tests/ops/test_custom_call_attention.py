"""TransformerEngine's fused attention custom-calls: the rules against the numpy reference on
random sizes and masks, in both directions; configurations outside the model (a padding mask
among them, as in XLA's llama benchmark) UNDEFINED naming what differs."""

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


def _reads(maps, point):
    got = set()
    for m in maps:
        assert not m.is_undefined, m.undefined_reason
        assert not m.runtime_vars, m
        got |= {tuple(int(x) for x in r) for r in m.read_set(point)}
    return got


@st.composite
def configurations(draw):
    b, sq, skv = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    g, per_group = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    d, dv, mask = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.sampled_from([0, 2]))
    return b, sq, skv, g * per_group, g, d, dv, mask


@SETTINGS
@given(configurations(), st.booleans())
def test_fused_attention_maps_are_the_reference_both_ways(sizes, forward):
    instr = attention(forward, *sizes)
    outputs = 3  # out, softmax_aux, rng_state / dq, dk, dv
    for j in range(outputs):
        out_dims = instr.shape.leaf(j).dims
        for om in output_to_input(instr, j):
            for y in itertools.product(*(range(n) for n in out_dims)):
                want = read_set(instr, j, y, om.operand, None)
                assert _reads(om.maps, y) == want, (j, y, om.operand, [str(m) for m in om.maps])
    for k, operand in enumerate(instr.operands):
        per_output = input_to_output(instr, k)
        for j in range(outputs):
            readers: dict = {}
            for y in itertools.product(*(range(n) for n in instr.shape.leaf(j).dims)):
                for x in read_set(instr, j, y, k, None):
                    readers.setdefault(x, set()).add(y)
            for x in itertools.product(*(range(n) for n in operand.shape.dims)):
                assert _reads(per_output[j], x) == readers.get(x, set()), (k, x, j, [str(m) for m in per_output[j]])


def test_workspace_and_empty_dbias_read_nothing():
    instr = attention(False, 1, 2, 2, 2, 1, 2, 2, 2)
    for j in (3, 4):
        assert all(not om.maps for om in output_to_input(instr, j))


@pytest.mark.parametrize(
    "change, named",
    [
        ({"dropout_probability": "1.000000e-01 : f64"}, "dropout"),
        ({"bias_type": "1 : i64"}, "bias_type"),
        ({"qkv_layout": "5 : i64"}, "qkv_layout"),
        ({"mask_type": "4 : i64"}, "mask_type"),
        ({"mask_type": "3 : i64"}, "padding mask"),
        ({"mask_type": "1 : i64"}, "padding mask"),
        ({"window_size_left": "128 : i64"}, "window_size_left"),
        ({"attn_heads": "6 : i64"}, "attn_heads"),
    ],
)
def test_configurations_outside_the_model_are_unknown_naming_what_differs(change, named):
    instr = attention(True, 1, 2, 2, 2, 1, 2, 2, 2, **change)
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
def test_the_llama_benchmark_calls_have_a_padding_mask_and_say_so():
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
        for om in output_to_input(instr, 0):
            (m,) = om.maps
            assert m.is_undefined and "mask_type = 3, a padding mask" in m.undefined_reason


def test_a_forward_and_backward_step_verifies_against_the_reference_walk():
    """A fusion of a causal forward call and the backward call reading its out and softmax_aux:
    the maps composed through both calls agree with the reference walked back element by
    element (``--verify``)."""
    from hlo_index.api import select_targets
    from hlo_index.verify import verify_target

    path = Path(__file__).resolve().parents[1] / "data" / "te_attention_causal_step.hlo"
    (result,) = list(load(str(path)))
    (selected,) = select_targets(result.module)
    outcome = verify_target(selected, result.module, samples=16)
    assert not outcome.errors, outcome.errors
    assert outcome.checked_points > 0 and outcome.checked_input_points > 0
    assert not any("skipped" in note for note in outcome.notes), outcome.notes
