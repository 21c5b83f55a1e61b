"""``analyze``'s cost: each cost flag against the expectations of XLA's own cost-model tests
(``../shared/conformance/xla_cost_model_tests.json``, run through the command line as the
conformance README maps them), the CPU roofline against hand counts, ``--top --sort time``, and
the exit codes of bad cost options. Every document is validated against the published schema."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from hlo_index.cli import main
from tests.cli.test_schemas import validate
from tests.conformance.test_xla_cost_model import CASES, CONFORMANCE, check

SPECS = CONFORMANCE / "gpu_specs"
GPU_FIELD = (
    Path(__file__).resolve().parents[2]
    / ".."
    / "shared"
    / "field"
    / "gpu"
    / "jaxdecomp-benchmarks.a100x16.jaxfft_2048_4x4_f32_FFT.gpu_after_optimizations.txt"
)
needs_cases = pytest.mark.skipif(not CASES, reason="../shared/conformance is not present")


@pytest.fixture
def runner():
    return CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()


def _analyze(runner, *args) -> tuple[int, dict | None, str]:
    result = runner.invoke(main, ["analyze", *map(str, args)])
    doc = None
    if result.stdout.strip().startswith("{"):
        doc = json.loads(result.stdout)
        validate(doc)
    return result.exit_code, doc, result.stderr


def _xla_keys(cost: dict) -> dict:
    """The target's cost under the names of XLA's tests (``expect`` keys)."""
    out = {
        "flops": cost["flops"],
        "bytes_accessed": cost["bytes_accessed"],
        "output_bytes_accessed": cost["output_bytes_accessed"],
        "operand_bytes_accessed": {str(k): v for k, v in enumerate(cost["operand_bytes_accessed"])},
        "tile_sizes": cost["tile_sizes"],
    }
    for key in ("time_unfused_us", "time_fused_us"):
        out[key] = _number(cost[key])
    timed = cost["fused"] or cost
    out.update(
        {
            "bytes_read": timed["bytes_read"],
            "bytes_written": timed["bytes_written"],
            "exec_time_us": _number(timed["time_us"]),
            "compute_time_us": _number(timed["compute_time_us"]),
            "read_time_us": _number(timed["read_time_us"]),
            "write_time_us": _number(timed["write_time_us"]),
        }
    )
    if timed["launch"]:
        out["num_blocks"] = timed["launch"]["blocks"]
        out["num_threads_per_block"] = timed["launch"]["threads_per_block"]
    if cost["fused"]:
        out["flops"] = cost["fused"]["flops"]
    return out


def _number(value):
    return math.inf if value == "inf" else value


def _case_args(case: dict, hlo: Path, named_device: bool) -> list[str]:
    target, options = case["target"], case["options"]
    kind = "fusion" if "fusion" in target else "instruction"
    name = target[kind]
    args = [hlo, "--format", "json", f"--{kind}", name]
    args += ["--device", case["device"] if named_device else SPECS / f"{case['device']}.txtpb"]
    if "count_multiple_input_accesses" in options:
        flag = "true" if options["count_multiple_input_accesses"] else "false"
        args += ["--cost-option", f"count_multiple_input_accesses={flag}"]
    if options.get("cost_model") == "indexing" and case["model"] == "gpu_indexing_performance_model":
        args += ["--cost-model", "indexing"]
    if "consumers" in target:
        args += ["--fusion-candidate", name, "--fusion-consumers", ",".join(target["consumers"]) or "none"]
    if options.get("multi_output_fusion"):
        args += ["--multi-output"]
    if case["model"] == "gpu_indexing_performance_model_tiled" and not options.get("tiling_from_backend_config"):
        tile = options["tile"]
        args += ["--tile", tile if tile == "auto" else ",".join(map(str, tile))]
        if options.get("launch"):
            launch = options["launch"]
            args += ["--launch", f"{launch['num_blocks']},{launch['num_threads_per_block']}"]
    return args


# One case per flag (and per model): the flag's question, as XLA's test asks it.
FLAG_CASES = [
    ("GpuHloCostAnalysisTest.Slice", False),  # --device PATH.txtpb, the cost analysis of a fusion
    ("GpuHloCostAnalysisTest.WithoutRepeats", False),  # --cost-option count_multiple_input_accesses=false
    ("GpuHloCostAnalysisTest.Reduce", True),  # --instruction, --device NAME
    ("GpuPerformanceModelTest.LargeReadWrite#reification", True),  # the time of one kernel
    ("GpuPerformanceModelTest.FusingTransposeIntoReduceIsSlow", False),  # --fusion-candidate / -consumers
    ("GpuPerformanceModelTest.EstimateRunTimeForFusion_MultiOutputWrite_ReturnsCorrectTime", False),  # --multi-output
    ("GpuPerformanceModelTest.SmallReadWrite#indexing", False),  # --cost-model indexing, --fusion-consumers none
    ("GpuIndexingPerformanceModelTest.TritonSoftmaxFusionInstructionIsSupported", False),  # tiles from the config
    ("GpuIndexingPerformanceModelTest.EstimateBestTiling_TritonSoftmax_IsSupported", False),  # --tile auto
    (
        "GpuIndexingPerformanceModelTest.EstimateRunTimeForTiledFusion_NumberOfTilesLargerThanInt32Max_IsSupported",
        False,
    ),  # --tile a,b --launch BLOCKS,THREADS
    ("GpuIndexingPerformanceModelTest.GetLaunchDimensionsForTiledFusion_IsSupported", False),  # --tile a,b,c
    (
        "GpuIndexingPerformanceModelTest.EstimateRunTimeForTiledFusion_Softmax_RegisterSpill_ReturnsInfinite"
        "#tile=1x16000",
        False,
    ),  # an infinite time is the string "inf"
]


@needs_cases
@pytest.mark.parametrize("name,named_device", FLAG_CASES, ids=[n for n, _ in FLAG_CASES])
def test_each_cost_flag_meets_xla_expectations(runner, tmp_path, name, named_device):
    case = CASES[name]
    hlo = tmp_path / "case.hlo"
    hlo.write_text(case["hlo"])
    code, doc, stderr = _analyze(runner, *_case_args(case, hlo, named_device))
    assert code == 0, stderr
    (target,) = [t for m in doc["modules"] for t in m["targets"]]
    got = _xla_keys(target["cost"])
    for key, expected in case["expect"].items():
        ok, why = check(expected, got.get(key))
        assert ok, f"{key}: {why}"


# A CPU fusion counted by hand: a broadcast of 8 f32 to [8,16], added to itself.
BROADCAST_CPU = """HloModule m
fused {
  p = f32[8]{0} parameter(0)
  b = f32[8,16]{1,0} broadcast(p), dimensions={0}
  ROOT a = f32[8,16]{1,0} add(b, b)
}
ENTRY e {
  p0 = f32[8]{0} parameter(0)
  ROOT f = f32[8,16]{1,0} fusion(p0), kind=kLoop, calls=fused
}
"""
FLOPS = 8 * 16  # one add per output element
# written: 8 x 16 x 4 B; read: the broadcast's operand once (XLA's generic rule), 8 x 4 B
BYTES = 8 * 16 * 4 + 8 * 4
SMALL_CPU = """gpu_device_info {
  core_count: 2
  fpus_per_core: 8
  clock_rate_ghz: 1.0
  memory_bandwidth: 1000000000
  l2_cache_size: 1048576
}
"""


# the module of BROADCAST_CPU in TPU's tiled layouts
BROADCAST_TPU = BROADCAST_CPU.replace("[8]{0}", "[8]{0:T(256)}").replace("{1,0}", "{1,0:T(8,128)}")


def _first_cost(runner, path: Path, text: str, *args) -> tuple[dict, dict, str]:
    """``text`` written to ``path`` and analysed to JSON with ``args``: its first target's cost,
    the document and stderr (the run must succeed)."""
    path.write_text(text)
    code, doc, err = _analyze(runner, path, "--format", "json", *args)
    assert code == 0, err
    return doc["modules"][0]["targets"][0]["cost"], doc, err


def test_a_cpu_module_has_figures_and_no_time_without_a_device(runner, tmp_path):
    cost, doc, _ = _first_cost(runner, tmp_path / "cpu.hlo", BROADCAST_CPU, "--target", "cpu")
    assert cost["flops"] == FLOPS and cost["bytes_accessed"] == BYTES
    assert cost["time_us"] is None and cost["device"] is None
    assert cost["intensity"] == pytest.approx(FLOPS / BYTES)
    assert cost["exact"]["operand_bytes_read"] == [8 * 4]
    totals = doc["modules"][0]["cost_totals"]
    assert totals["flops"] == FLOPS and totals["time_us"] is None


def test_a_cpu_module_gets_a_roofline_time_from_a_user_device(runner, tmp_path):
    hlo = tmp_path / "cpu.hlo"
    hlo.write_text(BROADCAST_CPU)
    device = tmp_path / "small_cpu.txtpb"
    device.write_text(SMALL_CPU)
    code, doc, _ = _analyze(runner, hlo, "--format", "json", "--target", "cpu", "--device", device)
    assert code == 0
    cost = doc["modules"][0]["targets"][0]["cost"]
    peak = 2 * 1.0e9 * 8 * 2  # FLOP/s: 2 x clock x FPUs per core x cores
    assert cost["device"] == "small_cpu" and cost["bound"] == "memory"
    assert cost["time_us"] == pytest.approx(max(FLOPS / peak, BYTES / 1e9) * 1e6)
    assert doc["modules"][0]["cost_totals"]["time_us"] == pytest.approx(cost["time_us"])
    text = runner.invoke(main, ["analyze", str(hlo), "--target", "cpu", "--device", str(device), "--color", "never"])
    assert text.exit_code == 0
    assert "cost: 544 ns on small_cpu, memory-bound" in text.stdout


def test_a_tpu_module_gets_the_roofline_not_the_gpu_model_from_a_user_device(runner, tmp_path):
    # tiled layouts mark the module as TPU: a device file gives it the roofline of its figures,
    # never XLA:GPU's performance model
    device = tmp_path / "small_cpu.txtpb"
    device.write_text(SMALL_CPU)
    cost, doc, _ = _first_cost(runner, tmp_path / "tpu.hlo", BROADCAST_TPU, "--device", device)
    assert doc["modules"][0]["targets"][0]["target"].startswith("tpu")
    peak = 2 * 1.0e9 * 8 * 2  # FLOP/s: 2 x clock x FPUs per core x cores
    assert cost["model"].startswith("roofline") and cost["launch"] is None
    assert cost["time_us"] == pytest.approx(max(FLOPS / peak, BYTES / 1e9) * 1e6)


def test_a_tpu_chip_gives_a_tpu_module_the_roofline_of_its_published_figures(runner, tmp_path):
    # Cloud TPU v6e: 918 TFLOP/s bf16, 1638 GB/s of HBM per chip (the chip's documentation page)
    cost, _, _ = _first_cost(runner, tmp_path / "tpu.hlo", BROADCAST_TPU, "--device", "tpu_v6e")
    assert cost["device"] == "tpu_v6e" and "Cloud TPU v6e" in cost["model"]
    assert cost["time_us"] == pytest.approx(max(FLOPS / 918e12, BYTES / 1638e9) * 1e6)
    assert cost["bound"] == "memory"


def test_a_tpu_chip_leaves_a_gpu_module_on_its_own_device_and_says_so(runner, tmp_path):
    gpu = tmp_path / "module_0001.jit_f.sm_9.0_gpu_after_optimizations.txt"
    cost, _, err = _first_cost(runner, gpu, BROADCAST_CPU, "--device", "tpu_v6e")
    assert cost["device"] == "h100_sxm" and cost["device_assumed"].startswith("compute capability 9.0")
    assert "warning: cost: --device tpu_v6e is a TPU chip; module m is a GPU module, costed on h100_sxm" in err


def test_an_unknown_device_lists_the_gpus_and_the_tpu_chips(runner, tmp_path):
    hlo = tmp_path / "m.hlo"
    hlo.write_text(BROADCAST_CPU)
    code, _, err = _analyze(runner, hlo, "--device", "tpu_v9")
    assert code == 2 and "named devices: " in err and "TPU chips: tpu_v5e, tpu_v5p, tpu_v6e" in err


CUSTOM_CALL_ONLY = """HloModule m
ENTRY e {
  p0 = f32[8,128]{1,0} parameter(0)
  ROOT k = f32[8,128]{1,0} custom-call(p0), custom_call_target="my_kernel"
}
"""


def test_a_custom_calls_unknown_cost_reads_as_unknown_in_text(runner, tmp_path):
    # XLA's HloCostAnalysis counts a custom-call's flops and bytes as -1; JSON keeps XLA's figure,
    # the text says unknown rather than "-1 flops, 0 B accessed"
    hlo = tmp_path / "kernel.hlo"
    hlo.write_text(CUSTOM_CALL_ONLY)
    code, doc, _ = _analyze(runner, hlo, "--format", "json")
    assert code == 0
    assert doc["modules"][0]["targets"][0]["cost"]["flops"] == -1
    for args in ([], ["--top", "1", "--sort", "flops"]):
        text = runner.invoke(main, ["analyze", str(hlo), "--color", "never", *args])
        assert text.exit_code == 0
        assert "flops unknown, bytes unknown" in text.stdout
        assert "-1 flops" not in text.stdout and " -1 " not in text.stdout
    assert "module: ? FLOP, 0 transcendentals, ? B accessed" in text.stdout
    # no target's bytes are known: the total says so rather than "0 B (some unknown) read"
    assert "total: 0 fusion(s), 1 other target(s), unknown bytes read" in text.stdout


@pytest.mark.skipif(not GPU_FIELD.is_file(), reason="../shared/field is not present")
def test_top_by_time_on_a_gpu_dump(runner):
    code, doc, _ = _analyze(runner, GPU_FIELD, "--format", "json", "--top", "10", "--sort", "time")
    assert code == 0
    assert doc["top"]["sort"] == "time"
    targets = [t for m in doc["modules"] for t in m["targets"]]
    assert [t["rank"] for t in targets] == list(range(1, len(targets) + 1))
    times = [_number(t["cost"]["time_us"]) for t in targets]
    assert all(t is not None for t in times) and times == sorted(times, reverse=True)
    # no compute capability in the file name: XLA's test device, and the output says so
    assert all(t["cost"]["device"] == "rtx_a6000" and t["cost"]["device_assumed"] for t in targets)
    totals = doc["modules"][0]["cost_totals"]
    assert sum(totals["time_by_bound_us"].values()) == pytest.approx(totals["time_us"])
    assert 0 < totals["top_share"] <= 1
    text = runner.invoke(main, ["analyze", str(GPU_FIELD), "--top", "10", "--sort", "time", "--color", "never"])
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0].startswith(f"top {len(targets)} of ") and lines[0].endswith("by time")
    assert [line.split()[0] for line in lines[2 : 2 + len(targets)]] == [t["name"] for t in targets]
    assert any(line.startswith("cost of ") and "estimated on rtx_a6000" in line for line in lines)


@pytest.mark.parametrize(
    "args",
    [
        ["--device", "no_such_gpu"],
        ["--device", "missing.txtpb"],
        ["--tile", "4,x"],
        ["--tile", "0,4"],
        ["--launch", "8"],
        ["--cost-option", "count_multiple_input_accesses=maybe"],
        ["--cost-option", "no_such_option=true"],
        ["--fusion-consumers", "c"],
        ["--fusion-candidate", "p"],
        ["--multi-output"],
        ["--no-analyses", "--device", "h100_sxm"],
    ],
)
def test_bad_cost_options_exit_2(runner, tmp_path, args):
    hlo = tmp_path / "cpu.hlo"
    hlo.write_text(BROADCAST_CPU)
    assert runner.invoke(main, ["analyze", str(hlo), *args]).exit_code == 2


def test_an_unknown_producer_or_consumer_exits_2(runner, tmp_path):
    hlo = tmp_path / "cpu.hlo"
    hlo.write_text(BROADCAST_CPU)
    missing = ["--fusion-candidate", "nope", "--fusion-consumers", "none", "--format", "json"]
    code, _, stderr = _analyze(runner, hlo, *missing)
    assert code == 2 and "nope" in stderr
    code, _, stderr = _analyze(runner, hlo, "--fusion-candidate", "f", "--fusion-consumers", "ghost")
    assert code == 2 and "ghost" in stderr


TRITON_GEMM_CONFIG = {
    "operation_queue_id": "0",
    "wait_on_operation_queues": [],
    "fusion_backend_config": {
        "kind": "__triton_gemm",
        "triton_gemm_config": {
            "block_m": "64",
            "block_n": "128",
            "block_k": "32",
            "split_k": "1",
            "num_stages": "4",
            "num_warps": "4",
            "num_ctas": "1",
        },
    },
    "force_earliest_schedule": False,
}
TRITON_GEMM = """HloModule triton_gemm

%gemm_dot (p0: bf16[64,32], p1: bf16[32,128]) -> bf16[64,128] {
  %p0 = bf16[64,32]{1,0} parameter(0)
  %p1 = bf16[32,128]{1,0} parameter(1)
  ROOT %dot.1 = bf16[64,128]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %main (a: bf16[64,32], b: bf16[32,128]) -> bf16[64,128] {
  %a = bf16[64,32]{1,0} parameter(0)
  %b = bf16[32,128]{1,0} parameter(1)
  ROOT %gemm_fusion_dot.1 = bf16[64,128]{1,0} fusion(%a, %b), kind=kCustom, calls=%gemm_dot, backend_config=CONFIG
}
"""


def test_triton_gemm_time_is_not_modelled(tmp_path: Path) -> None:
    """XLA times a Triton gemm from its Triton tiling: no loop-emitter time, none in the totals;
    its figures stay XLA's cost analysis (a dot: 2 x M x N x K flops)."""
    path = tmp_path / "module.sm_8.0_gpu_after_optimizations.txt"
    path.write_text(TRITON_GEMM.replace("CONFIG", json.dumps(TRITON_GEMM_CONFIG, separators=(",", ":"))))
    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    module = json.loads(result.output)["modules"][0]
    (target,) = [t for t in module["targets"] if t["name"] == "gemm_fusion_dot.1"]
    cost = target["cost"]
    assert cost["time_us"] is None
    assert cost["model"] == "not modelled: Triton gemm fusion (XLA costs it with its Triton tiling)"
    assert cost["flops"] == 2 * 64 * 128 * 32
    assert module["cost_totals"]["time_us"] is None
    assert module["cost_totals"]["targets_timed"] == 0
    text = CliRunner().invoke(main, ["analyze", str(path)])
    assert "time not modelled: Triton gemm fusion" in text.output


VARIADIC_REDUCE_GPU = """HloModule argmax, entry_computation_layout={(f32[8,64]{1,0})->(f32[8]{0}, s32[8]{0})}

%max_index (a: f32[], i: s32[], b: f32[], j: s32[]) -> (f32[], s32[]) {
  %a = f32[] parameter(0)
  %i = s32[] parameter(1)
  %b = f32[] parameter(2)
  %j = s32[] parameter(3)
  %ge = pred[] compare(%a, %b), direction=GE
  %v = f32[] select(%ge, %a, %b)
  %k = s32[] select(%ge, %i, %j)
  ROOT %t = (f32[], s32[]) tuple(%v, %k)
}

%fused_argmax (p: f32[8,64]) -> (f32[8], s32[8]) {
  %p = f32[8,64]{1,0} parameter(0)
  %iota = s32[8,64]{1,0} iota(), iota_dimension=1
  %lo = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[8]{0}, s32[8]{0}) reduce(%p, %iota, %lo, %zero), dimensions={1}, to_apply=%max_index
}

ENTRY %main (x: f32[8,64]) -> (f32[8], s32[8]) {
  %x = f32[8,64]{1,0} parameter(0)
  ROOT %input_reduce_fusion = (f32[8]{0}, s32[8]{0}) fusion(%x), kind=kInput, calls=%fused_argmax
}
"""


def test_a_tiled_estimate_of_a_variadic_reduce_says_why_there_is_none(runner, tmp_path):
    """A variadic reduce's result is a tuple, not an array with a box to tile: ``--tile auto``
    gives no tiled time and names the root, never an internal error."""
    hlo = tmp_path / "argmax.hlo"
    hlo.write_text(VARIADIC_REDUCE_GPU)
    code, doc, err = _analyze(runner, hlo, "--format", "json", "--target", "gpu", "--tile", "auto")
    assert code == 0, err
    assert "internal" not in err and not doc["modules"][0].get("diagnostics")
    cost = doc["modules"][0]["targets"][0]["cost"]
    assert cost["time_us"] is None
    assert "output r has a tuple shape" in cost["model"]


TWIN_FUSIONS_GPU = """HloModule twins

%add_one.1 {
  %p = f32[64,128]{1,0} parameter(0)
  %one = f32[] constant(1)
  %ones = f32[64,128]{1,0} broadcast(%one), dimensions={}
  ROOT %sum = f32[64,128]{1,0} add(%p, %ones)
}

%add_one.2 {
  %p = f32[64,128]{1,0} parameter(0)
  %one = f32[] constant(1)
  %ones = f32[64,128]{1,0} broadcast(%one), dimensions={}
  ROOT %sum = f32[64,128]{1,0} add(%p, %ones)
}

%negate {
  %p = f32[64,128]{1,0} parameter(0)
  ROOT %neg = f32[64,128]{1,0} negate(%p)
}

ENTRY %main {
  %x = f32[64,128]{1,0} parameter(0)
  %y = f32[64,128]{1,0} parameter(1)
  %first = f32[64,128]{1,0} fusion(%x), kind=kLoop, calls=%add_one.1
  %second = f32[64,128]{1,0} fusion(%y), kind=kLoop, calls=%add_one.2
  ROOT %user = f32[64,128]{1,0} fusion(%second), kind=kLoop, calls=%negate
}
"""


def test_a_what_if_candidate_gets_its_own_estimate_beside_a_twin(runner, tmp_path):
    """Fusions equal in structure share one cost, but the what-if is the candidate's alone: the
    twin before it has no fused estimate, the candidate has both (XLA's EstimateRunTimes)."""
    hlo = tmp_path / "twins.hlo"
    hlo.write_text(TWIN_FUSIONS_GPU)
    what_if = ["--fusion-candidate", "second", "--fusion-consumers", "user", "--device", "h100_sxm"]
    code, doc, stderr = _analyze(runner, hlo, "--fusion", "first", "--fusion", "second", *what_if, "--format", "json")
    assert code == 0, stderr
    costs = {t["name"]: t["cost"] for t in doc["modules"][0]["targets"]}
    assert costs["first"]["time_fused_us"] is None and costs["first"]["time_unfused_us"] is None
    assert costs["second"]["time_fused_us"] is not None and costs["second"]["time_unfused_us"] is not None
    assert not [d for d in doc["modules"][0]["diagnostics"] if d["severity"] == "error"]


BLOCK_LEVEL = """HloModule block_level

%fused_negate (p0: f32[64,128]) -> f32[64,128] {
  %p0 = f32[64,128]{1,0} parameter(0)
  ROOT %n = f32[64,128]{1,0} negate(%p0)
}

ENTRY %main (a: f32[64,128]) -> f32[64,128] {
  %a = f32[64,128]{1,0} parameter(0)
  ROOT %negate_fusion = f32[64,128]{1,0} fusion(%a), kind=kCustom, calls=%fused_negate, backend_config=CONFIG
}
"""


@pytest.mark.parametrize("kind", ["__triton", "__triton_gemm"])
def test_a_block_level_config_that_is_not_integers_gives_no_time_and_says_why(tmp_path, kind):
    """Tile sizes XLA's backend cannot read into its proto (a fuzzed "" among them) give no tiling
    and no grid, where they ended in an internal error; the tiled estimate names the config."""
    config = {
        "fusion_backend_config": {
            "kind": kind,
            "block_level_fusion_config": {"output_tiles": [{"sizes": ["", "16"]}], "num_warps": "2"},
        }
    }
    path = tmp_path / "module.sm_9.0_gpu_after_optimizations.txt"
    path.write_text(BLOCK_LEVEL.replace("CONFIG", json.dumps(config, separators=(",", ":"))))
    result = CliRunner().invoke(main, ["analyze", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    (target,) = json.loads(result.output)["modules"][0]["targets"]
    cost = target["cost"]
    assert cost["time_us"] is None and cost["launch"] is None
    if kind == "__triton":
        assert "block_level_fusion_config of %negate_fusion is not read" in cost["model"]


SLICED_SHARDS = """HloModule sliced_shards

%shard_a (p: f32[8192]) -> f32[1024] {
  %p = f32[8192]{0} parameter(0)
  ROOT %s = f32[1024]{0} slice(%p), slice={[0:1024]}
}

%shard_b (p: f32[8192]) -> f32[1024] {
  %p = f32[8192]{0} parameter(0)
  ROOT %s = f32[1024]{0} slice(%p), slice={[1024:2048]}
}

%shard_c (p: f32[8192]) -> f32[1024] {
  %p = f32[8192]{0} parameter(0)
  ROOT %s = f32[1024]{0} slice(%p), slice={[3:1027]}
}

%shard_d (p: f32[8192]) -> f32[1024] {
  %p = f32[8192]{0} parameter(0)
  ROOT %s = f32[1024]{0} slice(%p), slice={[0:2048:2]}
}

%shard_e (p: f32[8192]) -> f32[2048] {
  %p = f32[8192]{0} parameter(0)
  ROOT %s = f32[2048]{0} slice(%p), slice={[4096:6144]}
}

%pair_f (p: f32[8192]) -> (f32[1024], f32[1024]) {
  %p = f32[8192]{0} parameter(0)
  %s = f32[1024]{0} slice(%p), slice={[0:1024]}
  %t = f32[1024]{0} slice(%p), slice={[2048:3072]}
  ROOT %r = (f32[1024]{0}, f32[1024]{0}) tuple(%s, %t)
}

%pair_g (p: f32[8192]) -> (f32[1024], f32[1024]) {
  %p = f32[8192]{0} parameter(0)
  %s = f32[1024]{0} slice(%p), slice={[5:1029]}
  %t = f32[1024]{0} slice(%p), slice={[7000:8024]}
  ROOT %r = (f32[1024]{0}, f32[1024]{0}) tuple(%s, %t)
}

ENTRY %main (flat: f32[8192]) -> (f32[1024], f32[1024], f32[1024], f32[1024], f32[2048]) {
  %flat = f32[8192]{0} parameter(0)
  %a = f32[1024]{0} fusion(%flat), kind=kLoop, calls=%shard_a
  %b = f32[1024]{0} fusion(%flat), kind=kLoop, calls=%shard_b
  %c = f32[1024]{0} fusion(%flat), kind=kLoop, calls=%shard_c
  %d = f32[1024]{0} fusion(%flat), kind=kLoop, calls=%shard_d
  %e = f32[2048]{0} fusion(%flat), kind=kLoop, calls=%shard_e
  %f = (f32[1024]{0}, f32[1024]{0}) fusion(%flat), kind=kLoop, calls=%pair_f
  %g = (f32[1024]{0}, f32[1024]{0}) fusion(%flat), kind=kLoop, calls=%pair_g
  ROOT %t = (f32[1024]{0}, f32[1024]{0}, f32[1024]{0}, f32[1024]{0}, f32[2048]{0}) tuple(%a, %b, %c, %d, %e)
}
"""


@pytest.mark.parametrize("model", [[], ["--cost-model", "indexing"]])
def test_fusions_slicing_one_buffer_at_other_offsets_share_the_cost_each_has_alone(runner, tmp_path, model):
    """Fusions that only slice their parameter (an FSDP step's shards) share one cost where they
    differ only in where the slices start (a, b, c; f, g); a stride (d) or a size (e) is a cost
    of its own. Each fusion's cost in the whole report is the one it gets reported alone, for the
    classic model (given verdicts) and the indexing one (which reads the maps: shared by
    structure only)."""
    hlo = tmp_path / "shards.sm_9.0_gpu_after_optimizations.txt"
    hlo.write_text(SLICED_SHARDS)
    code, doc, stderr = _analyze(runner, hlo, "--target", "gpu", *model, "--format", "json")
    assert code == 0, stderr
    together = {t["name"]: t["cost"] for t in doc["modules"][0]["targets"] if t["opcode"] == "fusion"}
    assert set(together) == set("abcdefg")
    for name, cost in together.items():
        code, alone, stderr = _analyze(runner, hlo, "--target", "gpu", *model, "--fusion", name, "--format", "json")
        assert code == 0, stderr
        (target,) = alone["modules"][0]["targets"]
        assert target["cost"] == cost, name
    # XLA's slice reads what it writes: 4 KB for the 1024-element shards, twice that for e, f, g
    for name, written in {"a": 4096, "b": 4096, "c": 4096, "d": 4096, "e": 8192, "f": 8192, "g": 8192}.items():
        assert together[name]["operand_bytes_accessed"] == [written], name
        assert together[name]["bytes_accessed"] == 2 * written, name
        # XLA's indexing model times no multi-output fusion
        assert (together[name]["time_us"] is None) == (bool(model) and name in "fg"), name
    if not model:  # the classic model: a stride-2 slice is read uncoalesced, slower than its neighbours
        assert together["d"]["read_time_us"] > together["a"]["read_time_us"]
        return
    # a target the device's model does not time says why, not that a device is missing
    why = "(no time: the indexing cost model does not support multi-output fusions)"
    assert together["f"]["explanation"].endswith(why)
    result = runner.invoke(main, ["analyze", str(hlo), "--target", "gpu", *model, "--fusion", "f"])
    assert "no time (no target timed on h100_sxm)" in result.stdout


@pytest.mark.skipif(not GPU_FIELD.is_file(), reason="../shared/field is not present")
def test_the_top_share_is_left_out_when_every_target_is_in_the_top(runner):
    # five fusions, all timed: "the top 10 take 100%" would say nothing
    code, doc, _ = _analyze(runner, GPU_FIELD, "--format", "json")
    totals = doc["modules"][0]["cost_totals"]
    assert code == 0 and totals["targets_timed"] == 5 and totals["top_share_of"] == 10
    text = runner.invoke(main, ["analyze", str(GPU_FIELD), "--color", "never"]).stdout
    [line] = [line for line in text.splitlines() if line.startswith("cost of ")]
    assert "over 5 target(s)" in line and "the top" not in line


PRODUCER_CONSUMER_GPU = """HloModule m
fused_producer {
  p = f32[1024,256]{1,0} parameter(0)
  ROOT e = f32[1024,256]{1,0} exponential(p)
}
fused_consumer {
  p = f32[1024,256]{1,0} parameter(0)
  ROOT n = f32[1024,256]{1,0} negate(p)
}
ENTRY e {
  p0 = f32[1024,256]{1,0} parameter(0)
  producer = f32[1024,256]{1,0} fusion(p0), kind=kInput, calls=fused_producer
  ROOT consumer = f32[1024,256]{1,0} fusion(producer), kind=kLoop, calls=fused_consumer
}
"""


def test_the_fusion_what_if_is_in_the_text_too(runner, tmp_path):
    hlo = tmp_path / "gpu.hlo"
    hlo.write_text(PRODUCER_CONSUMER_GPU)
    args = ["--fusion-candidate", "producer", "--fusion-consumers", "consumer", "--device", "h100_sxm"]
    code, doc, _ = _analyze(runner, hlo, *args, "--format", "json")
    assert code == 0
    cost = doc["modules"][0]["targets"][0]["cost"]
    unfused, fused = cost["time_unfused_us"], cost["time_fused_us"]
    # fusing an elementwise producer into its only consumer drops a write and a read of 1 MB
    assert 0 < fused < unfused
    text = runner.invoke(main, ["analyze", str(hlo), *args, "--color", "never"]).stdout
    [line] = [line for line in text.splitlines() if "what-if:" in line]
    assert f"{unfused:.2f} us unfused" in line and f"{fused:.2f} us fused" in line and "fusing saves" in line


def test_gpu_only_cost_options_on_a_cpu_module_warn_that_they_change_nothing(runner, tmp_path):
    hlo = tmp_path / "cpu.hlo"
    hlo.write_text(BROADCAST_CPU)
    gpu_only = ["--tile", "4,4", "--launch", "1,32"]
    code, doc, stderr = _analyze(runner, hlo, "--format", "json", "--target", "cpu", *gpu_only)
    assert code == 0  # a warning, not an error: the figures are still right
    assert "--tile, --launch apply only to XLA:GPU's performance model" in stderr and "cpu module" in stderr
    assert any(d["severity"] == "warning" for d in doc["modules"][0]["diagnostics"])
    # a GPU module reads them: no warning
    gpu = tmp_path / "gpu.hlo"
    gpu.write_text(PRODUCER_CONSUMER_GPU)
    _, _, stderr = _analyze(runner, gpu, "--format", "json", "--launch", "1,32", "--device", "h100_sxm")
    assert "XLA:GPU's performance model" not in stderr


def test_a_whole_computation_untimed_with_a_device_says_why(runner, tmp_path):
    # a module without fusions is analysed as its ENTRY computation, which no model times: with a
    # device given, "give a device" would be wrong
    hlo = tmp_path / "no_fusion.hlo"
    hlo.write_text("HloModule m\nENTRY e {\n  p = f32[64]{0} parameter(0)\n  ROOT n = f32[64]{0} negate(p)\n}\n")
    for target in ("cpu", "gpu"):
        code, doc, _ = _analyze(runner, hlo, "--format", "json", "--target", target, "--device", "h100_sxm")
        cost = doc["modules"][0]["targets"][0]["cost"]
        assert code == 0 and cost["time_us"] is None
        assert "a whole computation" in cost["explanation"] and "give a device" not in cost["explanation"]
    _, doc, _ = _analyze(runner, hlo, "--format", "json", "--target", "cpu")
    assert "give a device" in doc["modules"][0]["targets"][0]["cost"]["explanation"]


@pytest.mark.parametrize("content", [b"gpu_device_info {{{\n", b"\xff\xfe\x00binary"])
def test_a_malformed_device_file_is_a_usage_error_not_a_traceback(runner, tmp_path, content):
    hlo = tmp_path / "cpu.hlo"
    hlo.write_text(BROADCAST_CPU)
    device = tmp_path / "broken.txtpb"
    device.write_bytes(content)
    result = runner.invoke(main, ["analyze", str(hlo), "--device", str(device)])
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert "Invalid value for '--device'" in result.stderr and "broken.txtpb" in result.stderr


def test_the_why_says_when_xla_counts_more_bytes_than_the_maps_read(runner):
    # loop_convert_fusion reads f32[8,512,32768] (536,870,912 B), two f32 vectors of 16,384 B that
    # it broadcasts to the output, and bf16[4096,32768] (268,435,456 B), each whole once: 805.3 MB.
    # XLA counts each broadcast vector as read once per output element (536.9 MB each): 1.9 GB.
    dump = Path(__file__).resolve().parents[1] / "data" / "gpu" / "gpt_wide_bf16"
    [path] = dump.glob("*.sm_9.0a_gpu_after_optimizations.txt.gz")
    result = runner.invoke(main, ["analyze", str(path), "--fusion", "loop_convert_fusion", "--format", "json"])
    cost = json.loads(result.output)["modules"][0]["targets"][0]["cost"]
    assert sum(cost["exact"]["operand_bytes_read"]) == 536_870_912 + 2 * 16_384 + 268_435_456
    assert "1.9 GB read as XLA counts it (805.3 MB distinct)" in cost["explanation"]
    exact = runner.invoke(
        main,
        [
            "analyze",
            str(path),
            "--fusion",
            "loop_convert_fusion",
            "--format",
            "json",
            "--cost-option",
            "time_uses=exact",
        ],
    )
    # the time from the maps' own figures: one count, said once
    assert "as XLA counts it" not in json.loads(exact.output)["modules"][0]["targets"][0]["cost"]["explanation"]
