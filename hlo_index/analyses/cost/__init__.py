"""Cost per instruction and per kernel: XLA's ``HloCostAnalysis`` figures (flops,
transcendentals, bytes per operand and output) and, on GPUs, ``GpuPerformanceModel``'s run time
on a device, with the what-if of fusing a producer into its consumers.

The names below are imported on first use: a command that only holds cost options
(``options.TargetCostOptions``) does not pay for the models."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .devices import NAMED_DEVICES, DeviceError, DeviceSpec, device_from_text, load_device
    from .flops import CostOptions
    from .gpu_model import GpuPerformanceModel, RunTime
    from .hlo_cost import HloCost, Properties, module_totals

_HOME = {
    "NAMED_DEVICES": "devices",
    "DeviceError": "devices",
    "DeviceSpec": "devices",
    "device_from_text": "devices",
    "load_device": "devices",
    "CostOptions": "flops",
    "GpuPerformanceModel": "gpu_model",
    "RunTime": "gpu_model",
    "HloCost": "hlo_cost",
    "Properties": "hlo_cost",
    "module_totals": "hlo_cost",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


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
