"""GPU devices for the cost model: the figures of XLA's ``se::DeviceDescription`` the
performance model reads, for the named devices XLA's ``hlo-opt`` ships (``xla/tools/hlo_opt/gpu_specs``,
``h200`` from ``xla/backends/gpu/target_config/specs``) and XLA's unit-test device ``rtx_a6000``
(``TestGpuDeviceInfo::RTXA6000DeviceInfo()``: compute capability 8.9 at 1.41 GHz, not the real card of
``a6000``), and a reader for any ``GpuTargetConfigProto`` text file a user gives.

The numbers of the named devices are the public values of those files, one row each below.
Fields XLA does not set in a file keep XLA's defaults: ``l1_cache_size_per_SM`` 2 KiB,
``memory_transactions_per_clock`` 32 (one 32-byte transaction per SM per clock),
``dram_to_l2_transaction_size_bytes`` 64.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..gpu_target import GpuDevice
from .textproto import first, parse_text_proto

DEFAULT_DEVICE = "rtx_a6000"


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU as the cost model sees it (``capability``: ``sm_XY`` or a ROCm ``gfx`` name, the
    key of its HLO op profile)."""

    name: str
    description: str
    capability: str
    core_count: int
    fpus_per_core: int
    clock_rate_ghz: float
    memory_bandwidth: int  # bytes / s
    l2_cache_size: int
    threads_per_warp: int = 32
    threads_per_block_limit: int = 1024
    threads_per_core_limit: int = 2048
    shared_memory_per_block: int = 49152
    registers_per_block_limit: int = 65536
    device_memory_size: int = 0
    l1_cache_size_per_SM: int = 2 * 1024  # noqa: N815  (the field is read by its name in XLA's device description)
    memory_transactions_per_clock: int = 32
    dram_to_l2_transaction_size_bytes: int = 64

    def emitter_device(self) -> GpuDevice:
        """The emitter models' view of this device (warp size, block and core limits)."""
        return replace(
            GpuDevice(),
            name=self.description or self.name,
            warp_size=self.threads_per_warp,
            threads_per_block_limit=self.threads_per_block_limit,
            threads_per_core_limit=self.threads_per_core_limit,
            core_count=self.core_count,
            shared_memory_per_block=self.shared_memory_per_block,
        )

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _spec(name: str, description: str, capability: str, **figures) -> DeviceSpec:
    return DeviceSpec(name=name, description=description, capability=capability, **figures)


NAMED_DEVICES: dict[str, DeviceSpec] = {
    "a100_pcie_80": _spec(
        "a100_pcie_80",
        "A100 80GB",
        "sm_80",
        core_count=108,
        fpus_per_core=64,
        clock_rate_ghz=1.1105,
        memory_bandwidth=2039000000000,
        l2_cache_size=41943040,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=79050250240,
    ),
    "a100_sxm_40": _spec(
        "a100_sxm_40",
        "NVIDIA A100-SXM4-40GB",
        "sm_80",
        core_count=108,
        fpus_per_core=64,
        clock_rate_ghz=1.41,
        memory_bandwidth=1555200000000,
        l2_cache_size=41943040,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=42331013120,
    ),
    "a100_sxm_80": _spec(
        "a100_sxm_80",
        "NVIDIA A100-SXM4-80GB",
        "sm_80",
        core_count=108,
        fpus_per_core=64,
        clock_rate_ghz=1.41,
        memory_bandwidth=2039040000000,
        l2_cache_size=41943040,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=85100068864,
    ),
    "a6000": _spec(
        "a6000",
        "NVIDIA RTX A6000",
        "sm_86",
        core_count=84,
        fpus_per_core=128,
        clock_rate_ghz=1.8,
        memory_bandwidth=768096000000,
        l2_cache_size=6291456,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=1536,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=51041271808,
    ),
    "b200": _spec(
        "b200",
        "NVIDIA B200",
        "sm_100",
        core_count=148,
        fpus_per_core=128,
        clock_rate_ghz=1.965,
        memory_bandwidth=7672320000000,
        l2_cache_size=132644864,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=191514673152,
    ),
    "h100_pcie": _spec(
        "h100_pcie",
        "NVIDIA H100 PCIe",
        "sm_90",
        core_count=114,
        fpus_per_core=128,
        clock_rate_ghz=1.755,
        memory_bandwidth=2039040000000,
        l2_cache_size=52428800,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=84942979072,
    ),
    "h100_sxm": _spec(
        "h100_sxm",
        "NVIDIA H100 80GB HBM3",
        "sm_90",
        core_count=132,
        fpus_per_core=128,
        clock_rate_ghz=1.98,
        memory_bandwidth=3352320000000,
        l2_cache_size=52428800,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=84978434048,
    ),
    "h200": _spec(
        "h200",
        "NVIDIA H200 141GB HBM3e",
        "sm_90",
        core_count=132,
        fpus_per_core=128,
        clock_rate_ghz=1.98,
        memory_bandwidth=4800000000000,
        l2_cache_size=52428800,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=151397597184,
    ),
    "mi200": _spec(
        "mi200",
        "MI250",
        "gfx90a",
        core_count=110,
        fpus_per_core=128,
        clock_rate_ghz=1.7,
        memory_bandwidth=1638400000000,
        l2_cache_size=8388608,
        threads_per_warp=64,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=65536,
        registers_per_block_limit=65536,
        device_memory_size=67628957696,
    ),
    "p100": _spec(
        "p100",
        "Tesla P100-SXM2-16GB",
        "sm_60",
        core_count=56,
        fpus_per_core=64,
        clock_rate_ghz=1.4805,
        memory_bandwidth=732160000000,
        l2_cache_size=4194304,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=17066622976,
    ),
    "rtx_a6000": _spec(
        "rtx_a6000",
        "XLA's test device (TestGpuDeviceInfo::RTXA6000DeviceInfo)",
        "sm_89",
        core_count=84,
        fpus_per_core=128,
        clock_rate_ghz=1.41,
        memory_bandwidth=768096000000,
        l2_cache_size=6291456,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=1536,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=51050250240,
    ),
    "v100": _spec(
        "v100",
        "Tesla V100-SXM2-16GB",
        "sm_70",
        core_count=80,
        fpus_per_core=64,
        clock_rate_ghz=1.53,
        memory_bandwidth=898048000000,
        l2_cache_size=6291456,
        threads_per_warp=32,
        threads_per_block_limit=1024,
        threads_per_core_limit=2048,
        shared_memory_per_block=49152,
        registers_per_block_limit=65536,
        device_memory_size=16935419904,
    ),
}
# the compute-capability major -> the device a dump of that generation is assumed to run on
DEFAULT_FOR_MAJOR = {6: "p100", 7: "v100", 8: "a100_sxm_80", 9: "h100_sxm", 10: "b200"}


class DeviceError(ValueError):
    """An unknown device name or an unreadable device file."""


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
    """A named device (``h100_sxm``, ...) or a ``.txtpb`` file."""
    if name_or_path in NAMED_DEVICES:
        return NAMED_DEVICES[name_or_path]
    path = Path(name_or_path)
    if path.suffix in (".txtpb", ".pbtxt", ".textproto") or path.is_file():
        try:
            text = path.read_text()
        except OSError as e:
            raise DeviceError(f"{name_or_path}: {e.strerror or e}") from None
        return device_from_text(text, path.stem)
    raise DeviceError(f"unknown device {name_or_path!r}; named devices: {', '.join(sorted(NAMED_DEVICES))}")


def device_for_capability(major: int | None) -> DeviceSpec:
    """The documented default for a compute-capability major (XLA's test device when unknown)."""
    return (
        NAMED_DEVICES[DEFAULT_FOR_MAJOR.get(major, DEFAULT_DEVICE)]
        if major is not None
        else NAMED_DEVICES[DEFAULT_DEVICE]
    )
