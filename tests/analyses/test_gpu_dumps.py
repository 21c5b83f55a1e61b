"""XLA:GPU dumps made with jax on an H200 (``tests/data/gpu``, see ``make_gpu_dumps.py`` there):
what XLA itself wrote beside each module (the GPU it compiled for, the launch dimensions of every
kernel it emitted) against what hlo-index says of the module's text."""

from __future__ import annotations

import glob
import json
import os
import shutil

import pytest

from tests.spec.helpers import run_cli

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "gpu")
VARIANTS = ("gpt_f32", "gpt_bf16", "gpt_wide_bf16", "resnet_bf16")

# Launch dimensions where the emitters of the XLA that made these dumps (jax 0.11.2) differ from the
# XLA version whose emitter tests the model follows (``../shared/conformance``): that XLA's row
# reductions of 512-element rows run 512 threads per block (the model: 256, two elements a thread;
# the 1024-element rows of gpt_wide agree), its transposes of 16-bit types pack two elements per
# shared-memory word, so each block moves a 64x64 tile (the model: 32x32, four times the blocks), and
# two of its column reductions use twice the blocks. Every other kernel must match.
_BF16_TRANSPOSES = {"input_transpose_fusion"} | {f"input_transpose_fusion.{k}" for k in range(1, 6)}
NEWER_EMITTERS = {
    "gpt_f32": {"input_reduce_fusion", "input_reduce_fusion.6", "input_reduce_fusion.7"},
    "gpt_bf16": {
        "input_reduce_fusion",
        "input_reduce_fusion.6",
        "input_reduce_fusion.11",
    }
    | _BF16_TRANSPOSES,
    "gpt_wide_bf16": {"input_reduce_fusion", "wrapped_transpose"}
    | {f"wrapped_transpose.{k}" for k in range(1, 4)}
    | _BF16_TRANSPOSES,
    "resnet_bf16": {"input_reduce_fusion.41", "input_reduce_fusion.72"},
}


def _after(variant: str) -> str:
    (path,) = glob.glob(os.path.join(DATA, variant, "*gpu_after_optimizations.txt.gz"))
    return path


def _report(path: str) -> dict:
    code, out = run_cli(["analyze", path, "--format", "json"])
    assert code == 0, out
    (module,) = json.loads(out)["modules"]
    assert not [d for d in module["diagnostics"] if d["severity"] == "error"]
    return module


@pytest.fixture(scope="module", params=VARIANTS)
def dump(request):
    variant = request.param
    with open(os.path.join(DATA, variant, "kernels.json")) as f:
        kernels = json.load(f)
    return variant, _report(_after(variant)), kernels


def test_the_device_is_the_one_xla_compiled_for(dump):
    _, module, kernels = dump
    totals = module["cost_totals"]
    assert kernels["device"]["kind"] == "NVIDIA H200"
    assert totals["device"] == "NVIDIA H200"
    assert totals["device_assumed"].startswith("from the dump: ")


def test_without_xlas_device_file_the_capability_picks_the_default(tmp_path):
    alone = tmp_path / os.path.basename(_after("gpt_f32"))
    shutil.copy(_after("gpt_f32"), alone)
    totals = _report(str(alone))["cost_totals"]
    assert totals["device"] == "h100_sxm"
    assert "compute capability 9.0" in totals["device_assumed"]


def test_every_kernel_xla_launched_is_a_target(dump):
    _, module, kernels = dump
    names = {t["name"] for t in module["targets"]}
    launched = {k["instruction"] for k in kernels["thunks"] if k["grid"] is not None}
    assert launched <= names


def test_launch_dimensions_are_the_ones_xla_chose(dump):
    variant, module, kernels = dump
    targets = {t["name"]: t for t in module["targets"]}
    differ = set()
    compared = 0
    for thunk in kernels["thunks"]:
        if thunk["grid"] is None:
            continue  # a cuBLAS gemm: cuBLAS picks its own grid
        launch = targets[thunk["instruction"]]["cost"]["launch"]
        xla = (thunk["grid"][0] * thunk["grid"][1] * thunk["grid"][2], thunk["threads"][0])
        compared += 1
        if (launch["blocks"], launch["threads_per_block"]) != xla:
            differ.add(thunk["instruction"])
    assert compared > 75
    assert differ == NEWER_EMITTERS[variant]


def test_gemm_fusions_are_not_timed(dump):
    _, module, _ = dump
    gemms = [t for t in module["targets"] if t["name"].startswith("gemm_fusion")]
    assert gemms
    for t in gemms:
        assert t["cost"]["time_us"] is None
        assert "not modelled" in t["cost"]["explanation"]


def test_operands_written_as_output_references_are_the_elements(dump):
    """``%custom-call.1#0``: the gemm's result, not its (result, workspace) tuple."""
    _, module, _ = dump
    reads = [o for t in module["targets"] for o in t.get("output_to_input", []) if "#" in (o.get("operand_name") or "")]
    assert reads
    for o in reads:
        assert not o["operand_shape"].startswith("(")


def test_verify_is_clean(dump):
    variant, _, _ = dump
    code, out = run_cli(["check", _after(variant), "--verify", "--format", "json"])
    assert code == 0
    assert "HI900" not in out


def _ranks(values):
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0] * len(values)
    for r, k in enumerate(order):
        ranks[k] = r
    return ranks


def _rank_correlation(a, b) -> float:
    ra, rb = _ranks(a), _ranks(b)
    n = len(a)
    return 1 - 6 * sum((x - y) ** 2 for x, y in zip(ra, rb)) / (n * (n * n - 1))


def test_the_exact_bytes_estimate_the_measured_kernels_better(dump):
    """Against the kernels' durations measured on the GPU (recorded in kernels.json): the time from
    the maps' bytes ranks the fusions closer to the measured order than the time from XLA's figures,
    and puts more of them within 2x of their measured time (its sum is not always nearer: on the
    ResNet step it is lower than the measured sum by more than XLA's is higher)."""
    _, module, kernels = dump
    targets = {t["name"]: t["cost"] for t in module["targets"]}
    rows = []
    for thunk in kernels["thunks"]:
        cost = targets.get(thunk["instruction"])
        if thunk["grid"] is None or cost is None or not isinstance(cost.get("time_us"), float):
            continue
        rows.append((cost["time_us"], cost["exact"].get("time_us", cost["time_us"]), thunk["median_us"]))
    assert len(rows) > 75
    xla, exact, measured = (list(c) for c in zip(*rows))
    assert _rank_correlation(exact, measured) >= _rank_correlation(xla, measured)

    def within_2x(estimate):
        return sum(1 for e, m in zip(estimate, measured) if m / 2 <= e <= 2 * m)

    assert within_2x(exact) >= within_2x(xla)


def test_the_module_totals_are_what_jax_reports(dump):
    """``compiled.cost_analysis()`` of each module, taken by jax on the GPU when the dump was made."""
    _, module, kernels = dump
    reported = kernels["xla_cost_analysis"]
    ours = module["cost_totals"]["hlo_cost_analysis"]
    assert ours == {
        "flops": reported["flops"],
        "transcendentals": reported["transcendentals"],
        "bytes_accessed": reported["bytes accessed"],
    }
