"""bubble: spec cases, and every legal rewrite re-parsed, re-analysed and evaluated with numpy."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

from hlo_index.analyses.reorder import analyse_module, reshape_groups
from hlo_index.cli import main
from hlo_index.hlo import parse_module_text


def module(x, first, second):
    return f"HloModule m\nENTRY e {{\n  p0 = {x} parameter(0)\n  {first}\n  ROOT {second}\n}}\n"


SPEC = {
    "possible": (module("f16[4096]", "s = f16[2048] slice(p0), slice={[0:2048]}", "r = f16[32,64] reshape(s)"), "legal"),
    "impossible": (module("f16[2049]", "s = f16[2048] slice(p0), slice={[0:2048]}", "r = f16[32,64] reshape(s)"), "illegal"),
    "misaligned": (module("f16[4096]", "s = f16[2048] slice(p0), slice={[1:2049]}", "r = f16[32,64] reshape(s)"), "illegal"),
    "multi": (module("f32[2,32,2,8,32,128]", "s = f32[2,1,1,8,32,128] slice(p0), slice={[0:2],[31:32],[0:1],[0:8],[0:32],[0:128]}",
                     "r = f32[2,8,32,2,64] reshape(s)"), "legal"),
    "dynamic_const": (module("f16[4096]", "c = s32[] constant(1024)\n  s = f16[2048] dynamic-slice(p0, c), dynamic_slice_sizes={2048}",
                             "r = f16[32,64] reshape(s)"), "legal"),
    "dynamic_runtime": ("HloModule m\nENTRY e {\n  p0 = f16[4096] parameter(0)\n  i = s32[] parameter(1)\n"
                        "  s = f16[2048] dynamic-slice(p0, i), dynamic_slice_sizes={2048}\n  ROOT r = f16[32,64] reshape(s)\n}\n",
                        "unprovable"),
    "stride_inner": (module("f32[64,64]", "s = f32[64,32] slice(p0), slice={[0:64], [0:64:2]}", "r = f32[2048] reshape(s)"), "legal"),
    "stride_outer": (module("f32[64,64]", "s = f32[32,32] slice(p0), slice={[0:64:2], [0:32]}", "r = f32[1024] reshape(s)"), "illegal"),
    "collapse_then_slice": (module("f32[64,64]", "r = f32[4096] reshape(p0)", "s = f32[2048] slice(r), slice={[0:2048]}"), "legal"),
    "collapse_misaligned": (module("f32[64,64]", "r = f32[4096] reshape(p0)", "s = f32[2048] slice(r), slice={[1:2049]}"), "illegal"),
    "expand_then_slice": (module("f32[256]", "r = f32[8,32] reshape(p0)", "s = f32[4,32] slice(r), slice={[2:6], [0:32]}"), "legal"),
    "expand_partial_rows": (module("f32[256]", "r = f32[8,32] reshape(p0)", "s = f32[8,16] slice(r), slice={[0:8], [0:16]}"), "illegal"),
}


def numpy_pair(mod, x):
    """Evaluate the ENTRY (parameters, slices, dynamic slices with constants, reshapes) in numpy."""
    values = {}
    for instr in mod.entry.instructions:
        if instr.opcode == "parameter":
            values[instr.name] = x
        elif instr.opcode == "constant":
            values[instr.name] = int(instr.literal)
        elif instr.opcode == "slice":
            src = values[instr.operand_names[0]]
            values[instr.name] = src[tuple(slice(d.start, d.limit, d.stride) for d in instr.attr("slice"))]
        elif instr.opcode == "dynamic-slice":
            src = values[instr.operand_names[0]]
            sizes = instr.attr("dynamic_slice_sizes")
            starts = [min(max(values[n], 0), src.shape[k] - sizes[k]) for k, n in enumerate(instr.operand_names[1:])]
            values[instr.name] = src[tuple(slice(a, a + n) for a, n in zip(starts, sizes))]
        elif instr.opcode == "reshape":
            values[instr.name] = values[instr.operand_names[0]].reshape(instr.shape.dims)
    return values[mod.entry.root.name]


@pytest.mark.parametrize("name", sorted(SPEC))
def test_spec_cases(name):
    text, verdict = SPEC[name]
    mod = parse_module_text(text)
    chains = analyse_module(mod)
    assert len(chains) == 1
    chain = chains[0]
    assert chain.verdict == verdict, chain.reason
    if verdict != "legal":
        assert chain.rewrite_module is None and chain.reason
        return
    rewritten = parse_module_text(chain.rewrite_module)
    x_shape = mod.entry.parameters[0].shape
    x = np.arange(x_shape.num_elements).reshape(x_shape.dims)
    assert np.array_equal(numpy_pair(mod, x), numpy_pair(rewritten, x))
    # re-analysed by hlo-index: the rewritten pair is found in the swapped order and its maps agree
    again = analyse_module(rewritten)
    assert len(again) == 1 and again[0].order != chain.order
    from hlo_index.fusion import output_to_input
    a = output_to_input(mod.entry)[0].maps[0]
    b = output_to_input(rewritten.entry)[0].maps[0]
    assert a == b or a.semantically_equal(b)


def test_spec_reasons():
    chain = analyse_module(parse_module_text(SPEC["impossible"][0]))[0]
    assert chain.reason == "the source size 2049 is not divisible by the inner factor 64"
    chain = analyse_module(parse_module_text(SPEC["misaligned"][0]))[0]
    assert "the start 1 is not aligned" in chain.reason


def test_groups():
    assert reshape_groups((2, 1, 1, 8, 32, 128), (2, 8, 32, 2, 64)) == [
        ([0], [0]), ([1, 2, 3], [1]), ([4], [2]), ([5], [3, 4])]


def test_cli_json_and_errors(tmp_path):
    files = []
    for name in ("possible", "impossible"):
        p = tmp_path / f"{name}.hlo"
        p.write_text(SPEC[name][0])
        files.append(str(p))
    result = CliRunner().invoke(main, ["bubble", "--format", "json", *files])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [c["verdict"] for m in data["modules"] for c in m["chains"]] == ["legal", "illegal"]
    assert set(data["modules"][0]["chains"][0]) == {"slice", "reshape", "order", "verdict", "reason", "rewrite_module"}
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  p0 = f32[4 parameter(0)\n}\n")
    result = CliRunner().invoke(main, ["bubble", str(bad)])
    assert result.exit_code == 2
