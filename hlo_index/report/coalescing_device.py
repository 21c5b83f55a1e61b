"""The GPU a module's coalescing figures are judged on: the one its cost is estimated for.

XLA judges a fusion's reads on the device it compiles for (its emitters' launch grid and unroll
factor come from the device, and the warp size too: 64 threads on AMD). So the figures take the
cost's device: the ``--device`` given, else the one the dump names (the ``gpu_target_config.pbtxt``
beside it, the compute capability in its file name, ROCm's architecture), else XLA's test device,
under which XLA's own coalescing tests are written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..context import current, register_table

_DEVICES = register_table("report.coalescing_device")  # id(module) -> (module, device)


def coalescing_device(module: Any, options: dict) -> Any:
    """The ``GpuDevice`` of ``module``'s coalescing figures (``options["gpu_device"]`` where a
    caller gives one), found once per module and analysis context; None for XLA's test device,
    the figures' default, which they keep too where the device the user named cannot be read
    (the cost says why)."""
    given = options.get("gpu_device")
    if given is not None:
        return given
    memo = current().tables[_DEVICES]
    hit = memo.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    from ..analyses.cost.devices import TPU_CHIPS, DeviceError
    from ..analyses.cost.options import TargetCostOptions
    from ..analyses.cost.target_cost import device_of
    from ..analyses.gpu_devices import DEFAULT_DEVICE, NAMED_DEVICES

    asked = options.get("cost")
    if not isinstance(asked, TargetCostOptions):
        asked = TargetCostOptions()
    if asked.device in TPU_CHIPS:  # the TPU modules' chip: a GPU module keeps its own device
        asked = replace(asked, device=None)
    try:
        spec = device_of(module, asked)[0]
    except DeviceError:  # a device file that cannot be read: the cost reports it
        spec = None
    # XLA's test device is the figures' own default (None: the object they use, its name theirs)
    device = None if spec is None or spec is NAMED_DEVICES[DEFAULT_DEVICE] else spec.emitter_device()
    memo[id(module)] = (module, device)
    return device
