"""Input XLA's parser reads and its verifier rejects, on which an analysis fails: reported as
invalid input at the instruction (exit 2), never as an internal failure of the tool. And inputs an
analysis must read without failing: a custom-call whose config does not fit its operands (nobody
checks it before its kernel runs)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hlo_index.cli import main

# A Triton fusion whose fused computation takes f32[10,10] where the fusion passes f32[8,4,1]: the
# maps are UNDEFINED (the callee does not fit), and the cost model's tiling reads the parameter.
MISFIT = """HloModule m

fused {
  ROOT p = f32[10,10] parameter(0)
}

ENTRY e {
  x = f32[8,4,1] parameter(0)
  ROOT f = f32[10,10] fusion(x), kind=kCustom, calls=fused,
    backend_config={"fusion_backend_config":{"kind":"__triton","block_level_fusion_config":{}}}
}
"""

# An all-gather-done written f32[2,4] where its start gives f32[2] (element 1 of its tuple).
DONE = """HloModule m

ENTRY e {
  p = f32[1] parameter(0)
  s = (f32[1], f32[2]) all-gather-start(p), dimensions={0}, replica_groups={{0,1}}
  ROOT d = f32[2,4] all-gather-done(s)
}
"""

# A cuDNN convolution whose dim_labels name four dimensions of a three-dimensional input.
CUDNN = """HloModule m

ENTRY e {
  input = f16[3,2,2] parameter(0)
  filter = f16[2,2,41,40] parameter(1)
  ROOT result = (f16[10,20,30,40], u8[0]) custom-call(input, filter), window={size=2x2},
    dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward"
}
"""


def analyze(text: str, *args: str):
    result = CliRunner().invoke(main, ["analyze", "-", "--format", "json", *args], input=text)
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def messages(doc) -> list[str]:
    return [d["message"] for m in doc["modules"] for d in m["diagnostics"]]


def test_a_fusion_whose_callee_does_not_fit_is_invalid_input_at_the_fusion():
    result, doc = analyze(MISFIT, "--device", "h100_sxm")
    assert result.exit_code == 2
    said = [d for m in doc["modules"] for d in m["diagnostics"] if d["message"].startswith("invalid: ")]
    assert said and (said[0]["line"], said[0]["column"]) == (9, 8)
    assert "parameter 0 is f32[10,10]" in said[0]["message"] and "(%x) is f32[8,4,1]" in said[0]["message"]
    assert not any(m.startswith("internal: ") for m in messages(doc))


def test_a_done_whose_shape_is_not_its_starts_is_invalid_input_at_the_done():
    result, doc = analyze(DONE)
    assert result.exit_code == 2
    said = [d for m in doc["modules"] for d in m["diagnostics"] if d["message"].startswith("invalid: ")]
    assert said and said[0]["line"] == 6 and "(f32[2])" in said[0]["message"]
    assert not any(m.startswith("internal: ") for m in messages(doc))


def test_a_cudnn_convolution_whose_labels_do_not_fit_has_no_flop_count():
    result, doc = analyze(CUDNN, "--device", "h100_sxm")
    assert result.exit_code == 0, result.output
    (target,) = doc["modules"][0]["targets"]
    assert target["cost"]["flops"] == -1  # XLA's own "not counted"
    assert not any(m.startswith("internal: ") for m in messages(doc))


def test_a_collective_permute_of_another_shape_is_rejected_at_the_op():
    # its rule once read the written shape alone: (d0, d1) -> (d0, d1) into an f32[16], "exact";
    # the written result is now compared with the inferred one when the module is read
    text = (
        "HloModule m\n\nENTRY e {\n  p = f32[16] parameter(0)\n"
        "  ROOT c = f32[16,3] collective-permute(p), source_target_pairs={{0,1},{1,0}}\n}\n"
    )
    result, doc = analyze(text, "--direction", "both")
    assert result.exit_code == 2, result.output
    (diagnostic,) = doc["modules"][0]["diagnostics"]
    assert (diagnostic["line"], diagnostic["column"]) == (5, 8)
    assert "InferCollectivePermuteShape" in diagnostic["message"] and "f32[16,3]" in diagnostic["message"]
    assert doc["modules"][0]["targets"] == []


def test_an_op_without_a_shape_inference_whose_maps_do_not_fit_has_none():
    # copy-start's rule reads its written shape, which its operand does not give; no inference of
    # copy-start's shape says so here: the shapes are named instead
    text = "HloModule m\n\nENTRY e {\n  p = f32[16] parameter(0)\n  ROOT c = f32[16,3] copy-start(p)\n}\n"
    result, doc = analyze(text)
    assert result.exit_code == 0, result.output
    (target,) = doc["modules"][0]["targets"]
    (row,) = target["output_to_input"]
    assert row["maps"] == [
        {"map": None, "unknown": "the written shape f32[16,3] of copy-start %c does not fit its operands (f32[16])"}
    ]


def test_an_all_reduce_of_another_shape_is_no_tile():
    text = (
        "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[128] all-reduce(p), replica_groups={}, to_apply=sum\n}\n"
    )
    result = CliRunner().invoke(main, ["tile", "-", "--fusion", "r", "--tile", "2"], input=text)
    assert result.exit_code == 2, result.output
    assert "<stdin>:11:8: error:" in result.output and "InferAllReduceShape" in result.output


def test_a_failure_beside_a_valid_broadcast_is_the_tools_own(monkeypatch):
    """A broadcast's written shape is its own (its dimensions place the operand in it): a failing
    analysis of a module with one is an internal failure, not that broadcast blamed as invalid."""
    from hlo_index.report import build

    text = """HloModule m

ENTRY e {
  p = f32[] parameter(0)
  b = f32[16,8] broadcast(p), dimensions={}
  ROOT n = f32[16,8] negate(b)
}
"""

    def broken(*args, **kwargs):
        raise ArithmeticError("a rule that fails")

    monkeypatch.setattr(build, "target_report", broken)
    _, doc = analyze(text)
    [message] = messages(doc)
    assert message.startswith("internal: ") and "a rule that fails" in message, message
