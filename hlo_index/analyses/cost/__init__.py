"""Cost per instruction and per kernel: XLA's ``HloCostAnalysis`` figures (flops,
transcendentals, bytes per operand and output) and, on GPUs, ``GpuPerformanceModel``'s run time
on a device, with the what-if of fusing a producer into its consumers."""

from __future__ import annotations

from .devices import NAMED_DEVICES, DeviceError, DeviceSpec, device_from_text, load_device
from .flops import CostOptions
from .gpu_model import GpuPerformanceModel, RunTime
from .hlo_cost import HloCost, Properties, module_totals

__all__ = [
    "CostOptions",
    "DeviceError",
    "DeviceSpec",
    "GpuPerformanceModel",
    "HloCost",
    "NAMED_DEVICES",
    "Properties",
    "RunTime",
    "device_from_text",
    "load_device",
    "module_totals",
]
