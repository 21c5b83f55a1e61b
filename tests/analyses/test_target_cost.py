"""``cost_of_target`` / ``cost_totals``: keys of the JSON, exact figures against hand counts,
device choice, the CPU roofline."""

from __future__ import annotations

import math

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
