"""GPU devices for the cost model: a named device (the table in ``analyses/gpu_devices.py``), the
default for a compute capability, or a reader for any ``GpuTargetConfigProto`` text file a user gives.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..gpu_devices import DEFAULT_DEVICE, NAMED_DEVICES, DeviceSpec
from ..gpu_target import config_path_beside
from .textproto import TextProtoError, first, parse_text_proto

__all__ = [
    "DEFAULT_DEVICE",
    "NAMED_DEVICES",
    "DeviceError",
    "DeviceSpec",
    "TPU_CHIPS",
    "TpuChip",
    "device_beside",
    "device_for_capability",
    "device_from_text",
    "load_device",
]

# the compute-capability major -> the device a dump of that generation is assumed to run on
DEFAULT_FOR_MAJOR = {6: "p100", 7: "v100", 8: "a100_sxm_80", 9: "h100_sxm", 10: "b200"}


class DeviceError(ValueError):
    """An unknown device name or an unreadable device file."""


@dataclass(frozen=True)
class TpuChip:
    """A TPU chip as a roofline: its peak bf16 FLOP/s (the matrix units') and HBM bytes/s, both per
    chip as Google Cloud's TPU documentation publishes them. No published model of a TPU kernel's
    time is known to this tool: a roofline of the peak is a lower bound on a fusion's time, and the
    bf16 matrix peak flatters the vector unit's elementwise flops most."""

    name: str
    description: str
    peak_flops: float
    memory_bandwidth: float  # bytes / s

    @property
    def roofline(self) -> tuple[float, float]:
        return self.peak_flops, self.memory_bandwidth


# Cloud TPU documentation, each chip's page ("Peak compute per chip (bf16)", "HBM bandwidth per chip")
TPU_CHIPS = {
    chip.name: chip
    for chip in (
        TpuChip("tpu_v5e", "Cloud TPU v5e (197 TFLOP/s bf16, 819 GB/s)", 197e12, 819e9),
        TpuChip("tpu_v5p", "Cloud TPU v5p (459 TFLOP/s bf16, 2765 GB/s)", 459e12, 2765e9),
        TpuChip("tpu_v6e", "Cloud TPU v6e Trillium (918 TFLOP/s bf16, 1638 GB/s)", 918e12, 1638e9),
    )
}


def device_from_text(text: str, name: str = "custom") -> DeviceSpec:
    """A device from ``GpuTargetConfigProto`` text (``gpu_device_info { ... }``)."""
    message = parse_text_proto(text)
    info = first(message, "gpu_device_info", message)
    cuda = first(info, "cuda_compute_capability")
    rocm = first(info, "rocm_compute_capability")
    if cuda is not None:
        capability = f"sm_{first(cuda, 'major', 0)}{first(cuda, 'minor', 0)}"
    elif rocm is not None:
        capability = str(first(rocm, "gcn_arch_name", "")).split(":")[0]
    else:
        capability = "<unknown>"
    description = first(message, "device_description_str") or first(info, "name") or ""
    figures = {
        f.name: first(info, f.name) for f in fields(DeviceSpec) if f.name not in ("name", "description", "capability")
    }
    missing = [
        k
        for k in ("core_count", "fpus_per_core", "clock_rate_ghz", "memory_bandwidth", "l2_cache_size")
        if figures[k] is None
    ]
    if missing:
        raise DeviceError(f"device {name}: gpu_device_info lacks {', '.join(missing)}")
    return DeviceSpec(
        name=name,
        description=str(description),
        capability=capability,
        **{k: v for k, v in figures.items() if v is not None},
    )


def load_device(name_or_path: str) -> DeviceSpec:
    """A named GPU (``h100_sxm``, ...) or a ``.txtpb`` file."""
    if name_or_path in NAMED_DEVICES:
        return NAMED_DEVICES[name_or_path]
    if name_or_path in TPU_CHIPS:
        raise DeviceError(f"{name_or_path} is a TPU chip: it gives TPU and CPU modules a roofline, not a GPU model")
    path = Path(name_or_path)
    if path.suffix in (".txtpb", ".pbtxt", ".textproto") or path.is_file():
        try:
            text = path.read_text()
        except OSError as e:
            raise DeviceError(f"{name_or_path}: {e.strerror or e}") from None
        except UnicodeDecodeError:
            raise DeviceError(f"{name_or_path}: not a text file") from None
        try:
            return device_from_text(text, path.stem)
        except TextProtoError as e:
            # a malformed file is a bad --device value, with where it goes wrong
            raise DeviceError(f"{name_or_path}:{e}") from None
    raise DeviceError(
        f"unknown device {name_or_path!r}; named devices: {', '.join(sorted(NAMED_DEVICES))}; "
        f"TPU chips: {', '.join(sorted(TPU_CHIPS))}"
    )


def device_for_capability(major: int | None) -> DeviceSpec:
    """The documented default for a compute-capability major (XLA's test device when unknown)."""
    return (
        NAMED_DEVICES[DEFAULT_FOR_MAJOR.get(major, DEFAULT_DEVICE)]
        if major is not None
        else NAMED_DEVICES[DEFAULT_DEVICE]
    )


def device_beside(source: str) -> tuple[DeviceSpec, str] | None:
    """The GPU XLA compiled a dumped module for: its ``*.gpu_target_config.pbtxt``, written beside
    the module's text in the same dump (``--xla_dump_to``); with the file's path. None when the
    source is not a dump file or the file is absent or unreadable."""
    path = config_path_beside(source)
    if path is None:
        return None
    try:
        device = device_from_text(path.read_text(), name=path.name)
    except (OSError, UnicodeDecodeError, DeviceError, ValueError):
        return None
    # the device's own words ("NVIDIA H200") name it better than the file does
    return (replace(device, name=device.description) if device.description else device), str(path)
