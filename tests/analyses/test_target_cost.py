"""``cost_of_target`` / ``cost_totals``: keys of the JSON, exact figures against hand counts,
device choice, the CPU roofline."""

from __future__ import annotations

import math

import pytest

from hlo_index.analyses.cost.target_cost import (
    FusionCost,
    TargetCostOptions,
    capability_of,
    cost_of_target,
    cost_totals,
)
from hlo_index.hlo import parse_module_text

KEYS = {
    "flops",
    "transcendentals",
    "bytes_accessed",
    "operand_bytes_accessed",
    "output_bytes_accessed",
    "operand_utilization",
    "bytes_read",
    "bytes_written",
    "device",
    "time_us",
    "compute_time_us",
    "read_time_us",
    "write_time_us",
    "bound",
    "launch",
    "tile_sizes",
    "fused",
    "time_unfused_us",
    "time_fused_us",
    "exact",
    "time_uses",
}

SLICE_GPU = """HloModule m
fused {
  p = f32[64,128]{1,0} parameter(0)
  s = f32[64,64]{1,0} slice(p), slice={[0:64], [0:64]}
  ROOT e = f32[64,64]{1,0} exponential(s)
}
ENTRY e {
  p0 = f32[64,128]{1,0} parameter(0)
  ROOT f = f32[64,64]{1,0} fusion(p0), kind=kInput, calls=fused
}
"""

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


def test_gpu_cost_keys_and_exact_bytes() -> None:
    module = parse_module_text(SLICE_GPU)
    fusion = module.entry.root
    cost = cost_of_target(fusion, module, TargetCostOptions(device="h100_sxm"))
    out = cost.to_json()
    assert set(out) >= KEYS
    assert out["device"] == "h100_sxm" and out["time_us"] > 0 and out["bound"] in ("memory", "compute")
    # the slice reads half of the operand: 64 x 64 f32 elements, each once
    assert out["exact"]["operand_bytes_read"] == [64 * 64 * 4]
    assert out["exact"]["operand_reads_per_element"] == [1.0]
    assert out["output_bytes_accessed"] == 64 * 64 * 4
    assert "on h100_sxm" in cost.explanation


def test_cpu_module_has_no_time_without_a_roofline() -> None:
    module = parse_module_text(BROADCAST_CPU)
    fusion = module.entry.root
    cost = cost_of_target(fusion, module, TargetCostOptions(target="cpu"))
    assert cost.time_us is None and cost.device is None
    assert cost.flops == 8 * 16  # one add per output element
    assert cost.exact["operand_bytes_read"] == [8 * 4]
    # (output point, element) pairs per element: the 16 columns (both uses go through one map)
    assert cost.exact["operand_reads_per_element"] == [16.0]
    roof = cost_of_target(fusion, module, TargetCostOptions(target="cpu", roofline=(1e9, 1e9)))
    assert roof.time_us == max(roof.flops, roof.bytes_accessed) / 1e9 * 1e6
    assert roof.model.startswith("roofline")
    totals = cost_totals(module, [roof], TargetCostOptions(target="cpu"))
    assert totals["flops"] == 128 and totals["time_us"] == roof.time_us


def test_infinite_time_is_the_string_inf() -> None:
    cost = FusionCost(1.0, 0.0, 4.0, [4.0], 4.0, [1.0], time_us=math.inf)
    assert cost.to_json()["time_us"] == "inf"


def test_capability_from_the_dump_name() -> None:
    module = parse_module_text(SLICE_GPU, "module_0040.step.sm_9.0_gpu_after_optimizations.txt")
    assert capability_of(module) == (9, 0)
    cost = cost_of_target(module.entry.root, module)
    assert cost.device == "h100_sxm" and "9.0" in cost.device_assumed


def test_a_rocm_dump_name_assumes_the_amd_device() -> None:
    # XLA:ROCm names a dump by its architecture, not a CUDA compute capability
    module = parse_module_text(SLICE_GPU, "module_0002.jit_f.gfx950_gpu_after_optimizations.txt")
    assert capability_of(module) is None
    cost = cost_of_target(module.entry.root, module)
    assert cost.device == "mi200" and "gfx950" in cost.device_assumed


# ---- the time from the maps' exact bytes (exact["time_us"]) ---------------------------------

SCATTER_IN_PLACE = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p0 = f32[4096,64]{1,0} parameter(0)
  p1 = s32[8,1]{1,0} parameter(1)
  p2 = f32[8,64]{1,0} parameter(2)
  ROOT sc = f32[4096,64]{1,0} scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
ENTRY e {
  p0 = f32[4096,64]{1,0} parameter(0)
  p1 = s32[8,1]{1,0} parameter(1)
  p2 = f32[8,64]{1,0} parameter(2)
  ROOT f = f32[4096,64]{1,0} fusion(p0, p1, p2), kind=kInput, calls=fused
}
"""


def _gpu_cost(tmp_path, text: str, *extra: str) -> dict:
    import json

    from tests.spec.helpers import run_cli

    path = tmp_path / "m.hlo"
    path.write_text(text)
    code, out = run_cli(["analyze", str(path), "--format", "json", "--target", "gpu", "--device", "h100_sxm", *extra])
    assert code == 0, out
    (target,) = [t for t in json.loads(out)["modules"][0]["targets"] if t["name"] == "f"]
    return target["cost"]


def test_a_scatter_in_place_writes_only_its_updates(tmp_path):
    cost = _gpu_cost(tmp_path, SCATTER_IN_PLACE)
    # XLA's figure writes the whole output; the scatter emitter updates 8 rows of 64 floats in place
    assert cost["output_bytes_accessed"] == 4096 * 64 * 4
    assert cost["exact"]["bytes_written"] == 8 * 64 * 4
    assert cost["exact"]["time_us"] < cost["time_us"]


def _transpose_module(permute: bool) -> str:
    # [1024,8,128] -> [1024,128,8]: a minor dimension of 8 is too small for XLA's transpose emitter,
    # so the loop emitter reads the operand with a stride of 128 elements between neighbouring threads
    root = (
        "ROOT t = f32[1024,128,8]{2,1,0} transpose(p), dimensions={0,2,1}"
        if permute
        else "ROOT t = f32[1024,128,8]{2,1,0} bitcast(p)"
    )
    return f"""HloModule m
fused {{
  p = f32[1024,8,128]{{2,1,0}} parameter(0)
  {root}
}}
ENTRY e {{
  p0 = f32[1024,8,128]{{2,1,0}} parameter(0)
  ROOT f = f32[1024,128,8]{{2,1,0}} fusion(p0), kind=kLoop, calls=fused
}}
"""


def test_an_uncoalesced_read_that_fits_in_l2_costs_what_a_coalesced_one_does(tmp_path):
    transposed = _gpu_cost(tmp_path, _transpose_module(True))
    straight = _gpu_cost(tmp_path, _transpose_module(False))
    # a loop fusion reading a transposed 4 MB operand: uncoalesced, so XLA's time pays the sector
    # penalty; 4 MB fits in the H100's 50 MB L2, so the exact time reads it as the straight copy of
    # the same bytes does
    assert transposed["time_us"] > straight["time_us"]
    assert transposed["exact"]["time_us"] == pytest.approx(straight["exact"]["time_us"], rel=1e-6)


def test_time_uses_exact_makes_the_exact_time_the_time(tmp_path):
    default = _gpu_cost(tmp_path, _transpose_module(True))
    exact = _gpu_cost(tmp_path, _transpose_module(True), "--cost-option", "time_uses=exact")
    assert default["time_uses"] == "xla" and exact["time_uses"] == "exact"
    assert exact["time_us"] == pytest.approx(default["exact"]["time_us"])


def test_a_fusion_that_only_slices_is_costed_by_its_shapes_and_strides_not_its_starts() -> None:
    from hlo_index.analyses.cost.cost_keys import fusion_cost_key
    from hlo_index.analyses.structure_keys import fusion_structure_key
    from tests.cli.test_cost_cli import SLICED_SHARDS

    module = parse_module_text(SLICED_SHARDS)
    fusions = {i.name: i for i in module.entry.instructions if i.opcode == "fusion"}
    key = {name: fusion_cost_key(f) for name, f in fusions.items()}
    assert key["a"] == key["b"] == key["c"] and key["f"] == key["g"]
    assert len({key["a"], key["d"], key["e"], key["f"]}) == 4  # a stride, a size, two outputs
    assert fusion_structure_key(fusions["a"]) != fusion_structure_key(fusions["b"])
    # a fusion that does more than slice keeps its structure's key
    gpu = parse_module_text(SLICE_GPU)
    assert fusion_cost_key(gpu.entry.root) == fusion_structure_key(gpu.entry.root)
