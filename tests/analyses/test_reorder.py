"""bubble: spec cases, and every legal rewrite re-parsed, re-analysed and evaluated with numpy."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hlo_index.analyses.reorder import analyse_module, reshape_groups
from hlo_index.cli import main
from hlo_index.hlo import parse_module_text


def module(x, first, second):
    return f"HloModule m\nENTRY e {{\n  p0 = {x} parameter(0)\n  {first}\n  ROOT {second}\n}}\n"


SPEC = {
    "possible": (
        module("f16[4096]", "s = f16[2048] slice(p0), slice={[0:2048]}", "r = f16[32,64] reshape(s)"),
        "legal",
    ),
    "impossible": (
        module("f16[2049]", "s = f16[2048] slice(p0), slice={[0:2048]}", "r = f16[32,64] reshape(s)"),
        "illegal",
    ),
    "misaligned": (
        module("f16[4096]", "s = f16[2048] slice(p0), slice={[1:2049]}", "r = f16[32,64] reshape(s)"),
        "illegal",
    ),
    "multi": (
        module(
            "f32[2,32,2,8,32,128]",
            "s = f32[2,1,1,8,32,128] slice(p0), slice={[0:2],[31:32],[0:1],[0:8],[0:32],[0:128]}",
            "r = f32[2,8,32,2,64] reshape(s)",
        ),
        "legal",
    ),
    "dynamic_const": (
        module(
            "f16[4096]",
            "c = s32[] constant(1024)\n  s = f16[2048] dynamic-slice(p0, c), dynamic_slice_sizes={2048}",
            "r = f16[32,64] reshape(s)",
        ),
        "legal",
    ),
    "dynamic_runtime": (
        "HloModule m\nENTRY e {\n  p0 = f16[4096] parameter(0)\n  i = s32[] parameter(1)\n"
        "  s = f16[2048] dynamic-slice(p0, i), dynamic_slice_sizes={2048}\n  ROOT r = f16[32,64] reshape(s)\n}\n",
        "unprovable",
    ),
    "stride_inner": (
        module("f32[64,64]", "s = f32[64,32] slice(p0), slice={[0:64], [0:64:2]}", "r = f32[2048] reshape(s)"),
        "legal",
    ),
    "stride_outer": (
        module("f32[64,64]", "s = f32[32,32] slice(p0), slice={[0:64:2], [0:32]}", "r = f32[1024] reshape(s)"),
        "illegal",
    ),
    "collapse_then_slice": (
        module("f32[64,64]", "r = f32[4096] reshape(p0)", "s = f32[2048] slice(r), slice={[0:2048]}"),
        "legal",
    ),
    "collapse_misaligned": (
        module("f32[64,64]", "r = f32[4096] reshape(p0)", "s = f32[2048] slice(r), slice={[1:2049]}"),
        "illegal",
    ),
    "expand_then_slice": (
        module("f32[256]", "r = f32[8,32] reshape(p0)", "s = f32[4,32] slice(r), slice={[2:6], [0:32]}"),
        "legal",
    ),
    "expand_partial_rows": (
        module("f32[256]", "r = f32[8,32] reshape(p0)", "s = f32[8,16] slice(r), slice={[0:8], [0:16]}"),
        "illegal",
    ),
}


def numpy_pair(mod, x, offsets=()):
    """Evaluate the ENTRY (parameters, slices, dynamic slices, reshapes and pure-reshape bitcasts)
    in numpy; parameter 0 is ``x``, parameter k > 0 the scalar ``offsets[k - 1]``."""
    values = {}
    for instr in mod.entry.instructions:
        if instr.opcode == "parameter":
            n = instr.parameter_number
            values[instr.name] = x if n == 0 else int(offsets[n - 1])
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
        elif instr.opcode == "multiply":
            a, b = (values[n] for n in instr.operand_names)
            values[instr.name] = a * b
        elif instr.opcode in ("reshape", "bitcast"):
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
        ([0], [0]),
        ([1, 2, 3], [1]),
        ([4], [2]),
        ([5], [3, 4]),
    ]


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
    assert data["schema"] == "hlo-index/1"
    assert set(data["modules"][0]["chains"][0]) == {
        "slice",
        "reshape",
        "order",
        "verdict",
        "reason",
        "condition",
        "rewrite",
    }
    # the rewrite is the instructions that change, parsed back in place of the pair
    chain = data["modules"][0]["chains"][0]
    assert chain["condition"] is None and "slice(" in chain["rewrite"] and "reshape(" in chain["rewrite"]
    # the whole module only on request, written to a file the JSON names
    out = tmp_path / "rewrites"
    result = CliRunner().invoke(main, ["bubble", "--format", "json", "--write-rewrites", str(out), *files])
    chain = json.loads(result.output)["modules"][0]["chains"][0]
    written = parse_module_text(Path(chain["rewrite_module"]).read_text())
    assert analyse_module(written)[0].order == "reshape_then_slice"
    assert "rewrite_module" not in json.loads(result.output)["modules"][1]["chains"][0]
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\nENTRY e {\n  p0 = f32[4 parameter(0)\n}\n")
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    result = runner.invoke(main, ["bubble", str(bad), files[0]])
    assert result.exit_code == 2
    # the error names the file, line and column, with the source line and a caret
    assert f"{bad}:3:" in result.stderr and "^" in result.stderr
    assert "legal" in result.stdout  # the readable file is still analysed


RUNTIME = {
    # the runtime offset sits in dim 0, which the reshape leaves alone
    "slice_then_reshape": (
        "HloModule m\nENTRY e {\n  p0 = f32[8,4096] parameter(0)\n  i = s32[] parameter(1)\n"
        "  z = s32[] constant(0)\n  s = f32[1,2048] dynamic-slice(p0, i, z), dynamic_slice_sizes={1,2048}\n"
        "  ROOT r = f32[1,32,64] reshape(s)\n}\n",
        "legal",
    ),
    "reshape_then_slice": (
        "HloModule m\nENTRY e {\n  p0 = f32[8,4096] parameter(0)\n  r = f32[8,64,64] reshape(p0)\n"
        "  i = s32[] parameter(1)\n  z = s32[] constant(0)\n"
        "  ROOT s = f32[2,64,64] dynamic-slice(r, i, z, z), dynamic_slice_sizes={2,64,64}\n}\n",
        "legal",
    ),
    "two_runtime_dims": (
        "HloModule m\nENTRY e {\n  p0 = f32[6,4096,5] parameter(0)\n  i = s32[] parameter(1)\n"
        "  j = s32[] parameter(2)\n  z = s32[] constant(1024)\n"
        "  s = f32[2,2048,3] dynamic-slice(p0, i, z, j), dynamic_slice_sizes={2,2048,3}\n"
        "  ROOT r = f32[2,32,64,3] reshape(s)\n}\n",
        "legal",
    ),
    # untouched runtime dim, but the reshaped dim is 2049 long: illegal whatever the offset
    "runtime_but_misaligned": (
        "HloModule m\nENTRY e {\n  p0 = f32[8,2049] parameter(0)\n  i = s32[] parameter(1)\n"
        "  z = s32[] constant(0)\n  s = f32[1,2048] dynamic-slice(p0, i, z), dynamic_slice_sizes={1,2048}\n"
        "  ROOT r = f32[1,32,64] reshape(s)\n}\n",
        "illegal",
    ),
    # the runtime offset is in the dim the reshape splits: its alignment is unknown
    "runtime_in_split_dim": (
        "HloModule m\nENTRY e {\n  p0 = f32[8,4096] parameter(0)\n  i = s32[] parameter(1)\n"
        "  z = s32[] constant(0)\n  s = f32[8,2048] dynamic-slice(p0, z, i), dynamic_slice_sizes={8,2048}\n"
        "  ROOT r = f32[8,32,64] reshape(s)\n}\n",
        "unprovable",
    ),
    # a scan step: the runtime offset of the time dim, merged with the dims inside it by the
    # bitcast, becomes 8 * offset in the flattened dim
    "scan_step": (
        "HloModule m\nENTRY e {\n  p0 = f32[20,8,32]{2,1,0} parameter(0)\n  i = s32[] parameter(1)\n"
        "  z = s32[] constant(0)\n  s = f32[1,8,32]{2,1,0} dynamic-slice(p0, i, z, z), dynamic_slice_sizes={1,8,32}\n"
        "  ROOT r = f32[8,32]{1,0} bitcast(s)\n}\n",
        "legal",
    ),
    "bitcast_is_a_reshape": (
        module("f16[4096]{0}", "s = f16[2048]{0} slice(p0), slice={[0:2048]}", "r = f16[32,64]{1,0} bitcast(s)"),
        "legal",
    ),
    "bitcast_misaligned": (
        module("f16[4096]{0}", "s = f16[2048]{0} slice(p0), slice={[1:2049]}", "r = f16[32,64]{1,0} bitcast(s)"),
        "illegal",
    ),
}


def test_modules_of_one_name_in_two_files_are_told_apart(tmp_path):
    # a program's before- and after-optimizations dumps share the module name
    files = []
    for name in ("before", "after"):
        p = tmp_path / f"{name}.hlo"
        p.write_text(SPEC["possible"][0])
        files.append(str(p))
    out = tmp_path / "rewrites"
    result = CliRunner().invoke(main, ["bubble", "--format", "json", "--write-rewrites", str(out), *files])
    modules = json.loads(result.output)["modules"]
    assert [m["source"] for m in modules] == files
    # each legal pair keeps its own rewritten module: the second does not overwrite the first
    written = [m["chains"][0]["rewrite_module"] for m in modules]
    assert len(set(written)) == 2 and all(Path(w).is_file() for w in written)
    text = CliRunner().invoke(main, ["bubble", *files, "--color", "never"]).output
    assert [line for line in text.splitlines() if line.startswith("module ")] == [
        f"module m ({f}): 1 slice/reshape pair(s)" for f in files
    ]


@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_runtime_offsets_and_bitcasts(name):
    text, verdict = RUNTIME[name]
    mod = parse_module_text(text)
    chains = analyse_module(mod)
    assert len(chains) == 1
    chain = chains[0]
    assert chain.verdict == verdict, chain.reason
    x_shape = mod.entry.parameters[0].shape
    x = np.arange(x_shape.num_elements).reshape(x_shape.dims)
    n_offsets = len(mod.entry.parameters) - 1
    # every offset value, including out-of-range ones that XLA clamps
    trials = [tuple(v + k for k in range(n_offsets)) for v in (-3, 0, 1, 2, 5, 7, 100)]
    if verdict != "legal":
        assert chain.rewrite_module is None and chain.reason
        if name == "bitcast_misaligned":
            # numpy witness: no row-aligned slice of the 64x64 view gives the original pair's tensor
            want = numpy_pair(mod, x)
            assert not any(np.array_equal(x.reshape(64, 64)[a : a + 32], want) for a in range(33))
            assert "not aligned" in chain.reason
        if name == "runtime_but_misaligned":
            # numpy witness: the row of 2049 cannot be viewed as rows of 64 at all
            with pytest.raises(ValueError, match="cannot reshape"):
                x.reshape(8, -1, 64)
            assert "not divisible" in chain.reason
        return
    rewritten = parse_module_text(chain.rewrite_module)
    assert [p.name for p in rewritten.entry.parameters.values()] == [p.name for p in mod.entry.parameters.values()]
    for offsets in trials:
        assert np.array_equal(numpy_pair(mod, x, offsets), numpy_pair(rewritten, x, offsets)), offsets
    again = analyse_module(rewritten)
    assert len(again) == 1 and again[0].order != chain.order
    scaled = any(i.opcode == "multiply" for i in rewritten.entry.instructions)
    # a scaled offset going back would need dividing it: not claimed, so unprovable
    assert again[0].verdict == ("unprovable" if scaled else "legal"), again[0].reason
    if n_offsets:
        swapped = next(i for i in rewritten.entry.instructions if i.opcode == "dynamic-slice")
        constants = [o for o in swapped.operands[1:] if o.opcode == "constant"]
        assert all(c.shape.element_type == "s32" and c.shape.rank == 0 for c in constants)


def test_bitcast_with_a_permuted_layout_is_not_a_reshape():
    text = module(
        "f16[64,64]{1,0}", "s = f16[64,32]{1,0} slice(p0), slice={[0:64], [0:32]}", "r = f16[32,64]{0,1} bitcast(s)"
    )
    assert analyse_module(parse_module_text(text)) == []


def test_fast_map_comparison_agrees_with_the_brute_force_one():
    """``_same`` compares two function maps as arrays; it must agree with semantically_equal."""
    from hlo_index import ops
    from hlo_index.analyses.reorder import _same_functions
    from hlo_index.hlo import build
    from hlo_index.hlo.model import SliceDim

    def composed(n, first_slice, dims, second_slice=None):
        x = build.parameter(0, build.array_shape("f32", (n,)))
        if second_slice is None:  # slice then reshape
            s = build.instruction(
                "slice",
                build.array_shape("f32", (first_slice[1],)),
                [x],
                slice=(SliceDim(first_slice[0], first_slice[0] + first_slice[1], 1),),
            )
            r = build.instruction("reshape", build.array_shape("f32", dims), [s])
            return ops.output_to_input(s)[0].maps[0].compose(ops.output_to_input(r)[0].maps[0])
        r = build.instruction("reshape", build.array_shape("f32", dims), [x])
        s = build.instruction(
            "slice",
            build.array_shape("f32", [n for _, n in second_slice]),
            [r],
            slice=tuple(SliceDim(o, o + k, 1) for o, k in second_slice),
        )
        return ops.output_to_input(r)[0].maps[0].compose(ops.output_to_input(s)[0].maps[0])

    orig = composed(4096, (0, 2048), (32, 64))
    good = composed(4096, None, (64, 64), [(0, 32), (0, 64)])
    orig_4128 = composed(4128, (0, 2048), (32, 64))
    bad = composed(4128, None, (32, 129), [(0, 32), (0, 64)])
    for a, b in ((orig, good), (orig_4128, bad), (orig, orig)):
        assert _same_functions(a, b) == a.semantically_equal(b)
    assert _same_functions(orig, good) and not _same_functions(orig_4128, bad)


def test_rewrite_names_avoid_the_module_names():
    # HLO instruction names are unique in a module: the swapped reshape may not take a name in use
    text = (
        "HloModule m\nENTRY e {\n  p0 = f16[4096] parameter(0)\n  s.swapped = f16[4096] negate(p0)\n"
        "  s = f16[2048] slice(p0), slice={[0:2048]}\n  ROOT r = f16[32,64] reshape(s)\n}\n"
    )
    (chain,) = analyse_module(parse_module_text(text))
    assert chain.verdict == "legal"
    defined = [line.split("=", 1)[0].split()[-1].lstrip("%") for line in chain.rewrite.splitlines()]
    assert defined[-1] == "r"  # the pair's result keeps its name, so its users are unchanged
    assert not set(defined[:-1]) & {"p0", "s.swapped", "s", "r"}
    assert set(defined) <= {
        i.name for c in parse_module_text(chain.rewrite_module).computations for i in c.instructions
    }


@pytest.mark.parametrize(
    "pair, swapped_layout",
    [
        # slice then reshape: the new reshape stands for the old one, unsliced
        (
            "  s = f32[4,128]{1,0:T(8,128)} slice(p0), slice={[0:4],[0:128]}\n"
            "  ROOT r = f32[512]{0:T(1024)} reshape(s)\n",
            "f32[1024]{0:T(1024)}",
        ),
        # reshape then slice: the new slice keeps the source's rank and layout
        (
            "  r = f32[1024]{0:T(1024)} reshape(p0)\n  ROOT s = f32[512]{0:T(1024)} slice(r), slice={[0:512]}\n",
            "f32[4,128]{1,0:T(8,128)}",
        ),
    ],
)
def test_a_rewrite_keeps_the_tiled_layouts_of_a_tpu_module(pair, swapped_layout):
    text = "HloModule m\nENTRY e {\n  p0 = f32[8,128]{1,0:T(8,128)} parameter(0)\n" + pair + "}\n"
    (chain,) = analyse_module(parse_module_text(text))
    assert chain.verdict == "legal", chain.reason
    first = chain.rewrite.splitlines()[0]
    assert f"= {swapped_layout} " in first, first
    rewritten = parse_module_text(chain.rewrite_module)
    assert all(i.shape.layout is not None and i.shape.layout.tiles for i in rewritten.entry.instructions)


def test_a_pair_whose_slice_xlas_verifier_rejects_is_unprovable_saying_why():
    # a dynamic-slice of a rank-2 source with one slice size: no verdict on an op that cannot run.
    # Reading such text is an error at the op now; a module built or edited through the Python API
    # can still hold one.
    text = (
        "HloModule m\n\nENTRY e {\n  x = f32[4,9] parameter(0)\n  i = s32[] parameter(1)\n"
        "  s = f32[1,9] dynamic-slice(x, i, i), dynamic_slice_sizes={1,9}\n  ROOT r = f32[9] reshape(s)\n}\n"
    )
    module = parse_module_text(text)
    module.entry.by_name["s"].attrs["dynamic_slice_sizes"] = (3,)
    (chain,) = analyse_module(module)
    assert chain.verdict == "unprovable"
    assert "dynamic_slice_sizes has 1 entries, the operand 2 dims" in chain.reason and "verifier" in chain.reason
