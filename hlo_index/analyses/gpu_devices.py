"""The GPUs hlo-index models, described once: ``DeviceSpec`` holds a device's figures (XLA's
``se::DeviceDescription``, as ``GpuTargetConfigProto`` files carry them); ``GpuDevice`` is the view
XLA's emitters and coalescing rule take of one (its figures plus XLA's device-independent constants).

The named devices are those XLA's ``hlo-opt`` ships (``xla/tools/hlo_opt/gpu_specs``, ``h200`` from
``xla/backends/gpu/target_config/specs``) and XLA's unit-test device ``rtx_a6000``
(``TestGpuDeviceInfo::RTXA6000DeviceInfo()``: compute capability 8.9 at 1.41 GHz, not the real card of
``a6000``), with the public values of those files, one row each below. Fields XLA does not set in a
file keep XLA's defaults: ``l1_cache_size_per_SM`` 2 KiB, ``memory_transactions_per_clock`` 32 (one
32-byte transaction per SM per clock), ``dram_to_l2_transaction_size_bytes`` 64.

Every GPU figure the coalescing analysis prints (warp size, 128-byte transactions, threads per block,
unroll factors) comes from one ``GpuDevice``; the default, ``RTX_A6000``, is XLA's test device (the
device ``coalescing_analysis_test.cc`` runs against), so XLA's own coalescing verdicts reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

DEFAULT_DEVICE = "rtx_a6000"


@dataclass(frozen=True)
class DeviceSpec:
    """One GPU's figures, as the cost model reads them and as ``GpuDevice`` passes them to the
    emitter models (``capability``: ``sm_XY`` or a ROCm ``gfx`` name, the key of its HLO op profile)."""

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
        """The emitter models' view of this device (one object per description: the emitter
        plans are memoised by it)."""
        view = self.__dict__.get("_emitter_device")
        if view is None:
            view = GpuDevice(spec=self, name=self.description or self.name)
            object.__setattr__(self, "_emitter_device", view)  # a cache, not a field: equality and hash ignore it
        return view

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


@dataclass(frozen=True)
class GpuDevice:
    """The GPU as XLA's emitters and its coalescing rule see it: the device's own figures
    (``spec``, read through the properties below) and XLA's constants, the same on every device.

    ``transaction_bytes``: the memory transaction XLA's indexing-based coalescing rule counts
    (``kBytesPerMemoryTransaction = 128``, not the device's DRAM-to-L2 transaction);
    ``coalesced_threshold``: XLA's rule calls a warp's reads coalesced when the ideal transaction
    count exceeds this fraction of the actual count. ``name`` is the device as the figures name it.
    """

    spec: DeviceSpec = NAMED_DEVICES[DEFAULT_DEVICE]
    name: str = "NVIDIA RTX A6000 (XLA's TestGpuDeviceInfo)"
    transaction_bytes: int = 128
    coalesced_threshold: float = 0.9
    # XLA's emitter constants that are device-independent but belong to the same model
    loop_threads_per_block: int = 128  # warp size x 4 warp schedulers
    max_unroll_factor: int = 4
    row_reduction_max_threads_x: int = 512  # MinThreadsXRowReduction
    reduction_threads_per_block_target: int = 256
    transpose_tile: int = 32
    transpose_rows_per_pass: int = 4  # 128 threads: 4 rows of 32 lanes

    def __hash__(self) -> int:
        # the device is in the key of every per-fusion memo of the coalescing figures: its fields
        # are hashed once, where a dataclass's hash rebuilds and hashes their tuple on every call
        known = self.__dict__.get("_hash")
        if known is None:
            known = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, "_hash", known)
        return known

    def __getstate__(self) -> dict:
        # a string's hash differs between processes: a copy sent to a worker hashes afresh
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    @property
    def warp_size(self) -> int:
        return self.spec.threads_per_warp

    @property
    def dram_to_l2_transaction_bytes(self) -> int:
        """The transaction the tiled (Triton) heuristics count."""
        return self.spec.dram_to_l2_transaction_size_bytes

    @property
    def threads_per_block_limit(self) -> int:
        return self.spec.threads_per_block_limit

    @property
    def threads_per_core_limit(self) -> int:
        return self.spec.threads_per_core_limit

    @property
    def core_count(self) -> int:
        return self.spec.core_count

    @property
    def shared_memory_per_block(self) -> int:
        return self.spec.shared_memory_per_block

    def is_filled_by(self, threads: int) -> bool:
        """Whether ``threads`` threads occupy every thread slot of every core."""
        return threads >= self.threads_per_core_limit * self.core_count

    def has_idle_cores(self, blocks: int) -> bool:
        """Whether a grid of ``blocks`` blocks leaves a core without one."""
        return blocks < self.core_count

    def to_json(self) -> dict:
        keys: tuple[str, ...] = (
            "name",
            "warp_size",
            "transaction_bytes",
            "dram_to_l2_transaction_bytes",
            "threads_per_block_limit",
        )
        keys += ("threads_per_core_limit", "core_count", "shared_memory_per_block", "coalesced_threshold")
        keys += tuple(f.name for f in fields(self) if f.name not in keys and f.name != "spec")
        return {k: getattr(self, k) for k in keys}


RTX_A6000 = GpuDevice()
