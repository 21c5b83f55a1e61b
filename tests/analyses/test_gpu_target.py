"""The target model: detection from the dump, the emitters' thread maps (checked by brute force to
cover every element exactly once), the CPU wording, and the GPU figures on real modules."""

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.analyses.emitter_plans import plan_for
from hlo_index.analyses.emitters import ComputationAsFusion, default_thread_map, tile_map
from hlo_index.analyses.gpu_coalescing import fusion_coalescing, parameter_thread_maps
from hlo_index.analyses.gpu_devices import RTX_A6000, GpuDevice
from hlo_index.analyses.gpu_target import detect_target
from hlo_index.cli import main
from hlo_index.fusion import output_to_input
from hlo_index.hlo import load, parse_module_text

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def _fusion(body: str, params: list[str], out: str, kind: str = "kLoop"):
    decl = "\n".join(f"  p{i} = {s} parameter({i})" for i, s in enumerate(params))
    args = ", ".join(f"a{i}" for i in range(len(params)))
    entry = "\n".join(f"  a{i} = {s} parameter({i})" for i, s in enumerate(params))
    text = f"""HloModule m
add {{
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}}
fused {{
{decl}
{body}
}}
ENTRY e {{
{entry}
  ROOT f = {out} fusion({args}), kind={kind}, calls=fused
}}
"""
    return parse_module_text(text).entry.root


def _points(m, loops_at=None):
    """Every (thread_x, block_x, loops...) point of a thread map's domain that passes its constraints."""
    ranges = [range(iv.lo, iv.hi + 1) for iv in m.dims]
    for p in itertools.product(*ranges):
        if all(
            iv.lo <= v <= iv.hi
            for v, (_, iv) in zip(
                [type(m)(m.dims, (), (), [e], ()).evaluate(p)[0] for e, _ in m.constraints], m.constraints
            )
        ):
            yield p


def test_detect_target():
    gpu = _fusion("  ROOT n = f32[8,16] negate(p0)", ["f32[8,16]"], "f32[8,16]", kind="kInput")
    assert detect_target(gpu.computation.module).target == "gpu"
    cpu = _fusion("  ROOT n = f32[8,16] negate(p0)", ["f32[8,16]"], "f32[8,16]")
    assert detect_target(cpu.computation.module).target == "cpu"  # nothing GPU-only in it
    assert detect_target(cpu.computation.module, "gpu").target == "gpu"


@pytest.mark.parametrize(
    "dims,layout,unroll", [((6, 10), "{1,0}", 1), ((6, 10), "{0,1}", 2), ((4, 3, 5), "{1,2,0}", 4)]
)
def test_loop_thread_map_covers_every_element_once(dims, layout, unroll):
    shape = parse_module_text(
        f"HloModule m\nENTRY e {{\n  ROOT p = f32[{','.join(map(str, dims))}]{layout} parameter(0)\n}}\n"
    ).entry.root.shape
    m, _tpb, _blocks = default_thread_map(shape, unroll, GpuDevice(loop_threads_per_block=8))
    seen = Counter(m.evaluate(p) for p in _points(m))
    assert set(seen) == set(itertools.product(*[range(d) for d in dims]))
    assert set(seen.values()) == {1}


def test_loop_thread_map_follows_the_physical_layout():
    shape = parse_module_text("HloModule m\nENTRY e {\n  ROOT p = f32[6,10]{0,1} parameter(0)\n}\n").entry.root.shape
    m, _, _ = default_thread_map(shape, 1, RTX_A6000)
    # consecutive threads walk dim 0, the layout's minor dimension
    assert [m.evaluate((t, 0, 0)) for t in range(3)] == [(0, 0), (1, 0), (2, 0)]


def test_transpose_tile_map_covers_every_element_once():
    shape = parse_module_text("HloModule m\nENTRY e {\n  ROOT p = f32[3,40,36] parameter(0)\n}\n").entry.root.shape
    m, _tpb, _blocks = tile_map(shape, 2, 1, RTX_A6000)
    seen = Counter(m.evaluate(p) for p in _points(m))
    assert set(seen) == set(itertools.product(range(3), range(40), range(36)))
    assert set(seen.values()) == {1}
    # one warp, first pass: 32 consecutive elements of the input's minor dimension
    assert [m.evaluate((t, 0, 0)) for t in (0, 1, 31)] == [(0, 0, 0), (0, 0, 1), (0, 0, 31)]


@pytest.mark.parametrize(
    "shape,dims,emitter",
    [
        ("f32[8,512]", "{1}", "row reduction"),
        ("f32[64,8]", "{1}", "multi-row reduction"),
        ("f32[64,100]", "{0}", "column reduction"),
        ("f32[64,8]", "{0}", "small column reduction"),
    ],
)
def test_reduction_thread_maps_read_every_input_element_once(shape, dims, emitter):
    rows, cols = (int(x) for x in shape[4:-1].split(","))
    out = f"f32[{rows}]" if dims == "{1}" else f"f32[{cols}]"
    fusion = _fusion(
        f"  z = f32[] constant(0)\n  ROOT r = {out} reduce(p0, z), dimensions={dims}, to_apply=add",
        [shape],
        out,
        kind="kInput",
    )
    plan = plan_for(fusion, RTX_A6000)
    assert plan.emitter == emitter
    [m] = parameter_thread_maps(fusion.fused_computation, plan)[0]
    seen = Counter(m.evaluate(p) for p in _points(m))
    assert set(seen) == set(itertools.product(range(rows), range(cols)))
    assert set(seen.values()) == {1}


def test_a_row_reduction_of_no_elements_is_planned_elemental():
    # XLA's IsUnnestedReductionFasterThanElemental divides the warp by the row's length: a reduce
    # of f32[4,0] (which XLA's simplifier removes first) was an internal failure here
    fusion = _fusion(
        "  z = f32[] constant(0)\n  ROOT r = f32[4] reduce(p0, z), dimensions={1}, to_apply=add",
        ["f32[4,0]"],
        "f32[4]",
        kind="kInput",
    )
    assert "reduction" not in plan_for(fusion, RTX_A6000).emitter
    assert fusion_coalescing(fusion, RTX_A6000) is not None


def test_thread_maps_compose_like_the_fusion_maps():
    """Thread -> parameter maps equal thread -> output composed with the fusion's own maps."""
    fusion = _fusion(
        "  t = f32[12,8] transpose(p0), dimensions={1,0}\n  ROOT e = f32[12,8] exponential(t)",
        ["f32[8,12]"],
        "f32[12,8]",
    )
    plan = plan_for(fusion, GpuDevice(loop_threads_per_block=16))
    assert plan.emitter == "loop"
    [thread_to_param] = parameter_thread_maps(fusion.fused_computation, plan)[0]
    [thread_to_out] = plan.seeds[0].maps
    [out_to_param] = output_to_input(fusion)[0].maps
    for p in _points(thread_to_out):
        assert thread_to_param.evaluate(p) == out_to_param.evaluate(thread_to_out.evaluate(p))


def test_in_place_dus_does_not_read_the_buffer():
    fusion = _fusion(
        "  ROOT d = f32[64,128] dynamic-update-slice(p0, p1, p2, p2)",
        ["f32[64,128]", "f32[8,128]", "s32[]"],
        "f32[64,128]",
    )
    result = fusion_coalescing(fusion)
    assert result.emitter == "in-place dynamic-update-slice"
    assert "in place" in result.per_operand[0].reason
    assert result.per_operand[1].verdict == "coalesced" and result.per_operand[1].reads


def test_scatter_operands_get_real_reads():
    body = """  ROOT s = f32[100,64] scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add"""
    fusion = _fusion(body, ["f32[100,64]", "s32[32,1]", "f32[32,64]"], "f32[100,64]")
    result = fusion_coalescing(fusion)
    assert result.emitter == "scatter"
    for k in range(3):
        v = result.per_operand[k]
        assert v.reads and all(r.warp is not None for r in v.reads), (k, v.reason)
    assert result.per_operand[2].verdict == "coalesced"  # updates, row by row


def test_heuristic_for_triton_fusions():
    fusion = _fusion(
        "  ROOT t = f32[64,32] transpose(p0), dimensions={1,0}", ["f32[32,64]"], "f32[64,32]", kind="kCustom"
    )
    fusion.attrs["backend_config"] = '{"fusion_backend_config":{"kind":"__triton"}}'
    result = fusion_coalescing(fusion)
    assert result.per_operand[0].method == "heuristic" and result.per_operand[0].verdict == "uncoalesced"


def test_cpu_row_reduction_is_vectorisable_not_a_warp_verdict():
    path = SHARED / "corpus"
    files = sorted(path.glob("mlp/*after_optimizations*")) if path.exists() else []
    if not files:
        pytest.skip("../shared/corpus is not available")
    result = CliRunner().invoke(main, ["analyze", str(files[0]), "--format", "json"])
    data = json.loads(result.stdout)
    verdicts = Counter()
    for module in data["modules"]:
        for t in module["targets"]:
            assert t["target"].startswith("cpu")
            for entry in t["output_to_input"]:
                c = entry["coalescing"]
                text = json.dumps(c)
                assert "warp" not in text and "transaction" not in text
                verdicts[c["verdict"]] += 1
    assert verdicts["vectorisable"] > 0


def test_gpu_emitter_tests_get_a_figure_for_every_operand():
    folder = SHARED / "conformance" / "xla_hlo" / "xla-gpu-emitter-tests"
    if not folder.exists():
        pytest.skip("../shared/conformance is not available")
    counts = Counter()
    for path in sorted(folder.glob("*.hlo")):
        for res in load(str(path)):
            if res.module is None:
                continue
            comp = res.module.entry  # these files hold a fused computation and its helpers
            if comp is None or comp.root is None or any(True for _ in res.module.fusions):
                continue
            result = fusion_coalescing(ComputationAsFusion(comp))
            for v in result.per_operand.values():
                counts[v.verdict] += 1
    assert counts["coalesced"] + counts["uncoalesced"] > 50
    assert counts["unknown"] == 0, counts


def test_cli_target_option_in_text_and_json(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text("""HloModule m
fused {
  p0 = f32[32,64] parameter(0)
  ROOT t = f32[64,32] transpose(p0), dimensions={1,0}
}
ENTRY e {
  a = f32[32,64] parameter(0)
  ROOT f = f32[64,32] fusion(a), kind=kLoop, calls=fused
}
""")
    runner = CliRunner()
    gpu = json.loads(runner.invoke(main, ["analyze", str(path), "--target", "gpu", "--format", "json"]).stdout)
    [t] = gpu["modules"][0]["targets"]
    assert t["target"].startswith("gpu") and t["gpu_emitter"].startswith("transpose")
    c = t["output_to_input"][0]["coalescing"]
    assert c["target"] == "gpu" and c["verdict"] == "coalesced" and c["warp_reads"][0]["intervals"] == [[0, 31]]
    cpu = json.loads(runner.invoke(main, ["analyze", str(path), "--target", "cpu", "--format", "json"]).stdout)
    c = cpu["modules"][0]["targets"][0]["output_to_input"][0]["coalescing"]
    assert c["target"] == "cpu" and c["verdict"] == "not contiguous" and c["maps"][0]["stride"] == 64
    text = runner.invoke(main, ["analyze", str(path), "--target", "gpu", "--color", "never", "--no-pager"]).stdout
    assert "warp of 32 threads reads 1 contiguous run: 1 transaction of 128 B; ideal 1 — coalesced" in text


def _plan_fields(plan):
    return (plan.emitter, plan.threads_per_block, plan.blocks, plan.loops, plan.innermost, plan.notes)


@pytest.mark.parametrize("elements", [4096, 16 * 1024 * 1024])
def test_devices_that_answer_alike_share_a_plan(elements):
    """A plan built on one device serves another device only where it is the plan built there
    afresh: a loop fusion below both devices' thread counts (no unroll on either) shares one; one
    above both shares one too; the plans are those each device builds alone."""
    from hlo_index.analyses.cost.devices import load_device
    from hlo_index.context import current

    fusion = _fusion(f"  ROOT e = f32[{elements}] exponential(p0)", [f"f32[{elements}]"], f"f32[{elements}]")
    other = load_device("a100_sxm_80").emitter_device()
    assert other.core_count != RTX_A6000.core_count
    with current().child():
        alone = _plan_fields(plan_for(fusion, other))
    with current().child():
        first = plan_for(fusion, RTX_A6000)
        second = plan_for(fusion, other)
        assert second is first
        assert _plan_fields(second) == alone


def test_devices_that_answer_differently_get_plans_of_their_own():
    """Between the two devices' thread counts (RTX A6000: 84 x 1536, A100: 108 x 2048) the loop
    emitter unrolls on one and not the other: the second device gets the plan it builds alone."""
    from hlo_index.analyses.cost.devices import load_device
    from hlo_index.context import current

    elements = 160 * 1024
    other = load_device("a100_sxm_80").emitter_device()
    assert RTX_A6000.is_filled_by(elements) and not other.is_filled_by(elements)
    fusion = _fusion(f"  ROOT e = f32[{elements}] exponential(p0)", [f"f32[{elements}]"], f"f32[{elements}]")
    with current().child():
        alone = _plan_fields(plan_for(fusion, other))
    with current().child():
        first = plan_for(fusion, RTX_A6000)
        second = plan_for(fusion, other)
        assert second is not first
        assert _plan_fields(second) == alone
        assert "unroll factor 4" in first.notes and "unroll factor 1" in second.notes


def test_detect_target_reads_the_backend_in_the_dump_file_name():
    # a GPU module of one plain loop fusion shows no GPU construct; XLA's dump name still says GPU
    text = """HloModule m
fused {
  p0 = f32[8,16] parameter(0)
  ROOT n = f32[8,16] negate(p0)
}
ENTRY e {
  a0 = f32[8,16] parameter(0)
  ROOT f = f32[8,16] fusion(a0), kind=kLoop, calls=fused
}
"""
    for name, want in [
        ("dump/module_0002.jit_f.gpu_after_optimizations.txt", "gpu"),
        ("dump/module_0002.jit_f.sm_8.0_gpu_after_optimizations.txt", "gpu"),
        ("dump/module_0002.jit_f.gfx950_gpu_after_optimizations.txt", "gpu"),
        ("dump/module_0002.jit_f.cpu_after_optimizations.txt", "cpu"),
        ("dump/module_0002.jit_f.after_optimizations.txt", "cpu"),
        ("gpu_after_optimizations/module.txt", "cpu"),  # a folder's name is not the dump's
    ]:
        assert detect_target(parse_module_text(text, source=name)).target == want, name
    # a construct in the module outranks the name
    ynn = text.replace("ROOT f =", "ROOT ynn_fusion =")
    assert detect_target(parse_module_text(ynn, source="m.gpu_after_optimizations.txt")).target == "cpu"


def test_a_dump_without_evidence_says_cpu_is_a_default():
    # a Neuron or hand-written module is not an XLA:CPU dump: the label must not claim it is one
    module = parse_module_text("HloModule m\nENTRY e {\n  ROOT p = f32[4]{0} parameter(0)\n}\n", source="graph.hlo.txt")
    choice = detect_target(module)
    assert choice.target == "cpu" and "taken as CPU" in choice.evidence and "CPU-style" not in choice.evidence


def test_a_gpu_target_config_beside_a_dumped_module_means_gpu(tmp_path):
    # XLA:GPU's before_optimizations dumps carry no backend in their name, but the dump holds the
    # target config it compiled for beside them
    text = "HloModule m\nENTRY e {\n  p = f32[4]{0} parameter(0)\n  ROOT n = f32[4]{0} negate(p)\n}\n"
    dumped = tmp_path / "module_0007.jit_f.before_optimizations.txt"
    dumped.write_text(text)
    assert detect_target(parse_module_text(text, source=str(dumped))).target == "cpu"
    (tmp_path / "module_0007.jit_f.gpu_target_config.pbtxt").write_text("gpu_device_info { }\n")
    choice = detect_target(parse_module_text(text, source=str(dumped)))
    assert choice.target == "gpu" and "gpu_target_config.pbtxt" in choice.evidence
