"""The machine a dump runs on: a GPU (with its parameters) or a CPU, and how to tell from the dump.

Every GPU figure hlo-index prints (warp size, 128-byte transactions, threads per block, unroll
factors) comes from one ``GpuDevice``. The defaults are XLA's test device,
``TestGpuDeviceInfo::RTXA6000DeviceInfo()`` (the device ``coalescing_analysis_test.cc`` runs
against), so XLA's own coalescing verdicts reproduce; pass another ``GpuDevice`` to model
another card.

``detect_target(module)`` reads the dump: GPU-only constructs (``kInput`` fusions, Triton /
cuBLAS / cuDNN calls, GPU backend configs) mean GPU; YNNPACK, oneDNN, XLA:CPU custom calls or
``ynn_fusion`` names mean CPU; a dump with neither says nothing about its backend and is taken
as CPU (XLA's CPU dumps carry no marker; GPU dumps almost always carry one of the above).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

GPU, CPU, AUTO = "gpu", "cpu", "auto"
TARGETS = (AUTO, GPU, CPU)


@dataclass(frozen=True)
class GpuDevice:
    """GPU parameters the emitter models and the coalescing verdict use.

    ``transaction_bytes``: the memory transaction XLA's indexing-based coalescing rule counts
    (``kBytesPerMemoryTransaction = 128``); ``dram_to_l2_transaction_bytes``: the transaction the
    tiled (Triton) heuristics count; ``coalesced_threshold``: XLA's rule calls a warp's reads
    coalesced when the ideal transaction count exceeds this fraction of the actual count.
    """

    name: str = "NVIDIA RTX A6000 (XLA's TestGpuDeviceInfo)"
    warp_size: int = 32
    transaction_bytes: int = 128
    dram_to_l2_transaction_bytes: int = 64
    threads_per_block_limit: int = 1024
    threads_per_core_limit: int = 1536
    core_count: int = 84
    shared_memory_per_block: int = 48 * 1024
    coalesced_threshold: float = 0.9
    # XLA's emitter constants that are device-independent but belong to the same model
    loop_threads_per_block: int = 128  # warp size x 4 warp schedulers
    max_unroll_factor: int = 4
    row_reduction_max_threads_x: int = 512  # MinThreadsXRowReduction
    reduction_threads_per_block_target: int = 256
    transpose_tile: int = 32
    transpose_rows_per_pass: int = 4  # 128 threads: 4 rows of 32 lanes

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


RTX_A6000 = GpuDevice()

_GPU_CUSTOM_CALL_MARKERS = (
    "__cublas",
    "__cudnn",
    "__triton",
    "triton",
    "__gpu",
    "cu_threefry",
    "__nvshmem",
    "cusolver",
    "cufft",
)
_CPU_CUSTOM_CALL_MARKERS = ("__onednn", "__xla_cpu", "xla_cpu", "ynnpack", "__ynn", "onednn")


def _markers(module) -> tuple[set[str], set[str]]:
    gpu: set[str] = set()
    cpu: set[str] = set()
    # no marker can come from an instruction without these (most instructions of a big dump)
    candidates = [
        instr
        for comp in module.computations
        for instr in comp.instructions
        if instr.attrs
        and (instr.opcode == "fusion" or "custom_call_target" in instr.attrs or "backend_config" in instr.attrs)
    ]
    for instr in candidates:
        target = str(instr.attrs.get("custom_call_target", "")).lower()
        config = str(instr.attrs.get("backend_config", ""))
        lower_config = config.lower()
        if instr.opcode == "fusion":
            kind = str(instr.attrs.get("kind", ""))
            if kind == "kInput":
                gpu.add("kInput fusion")
            if (
                "__triton" in lower_config
                or "triton_gemm_config" in lower_config
                or "block_level_fusion_config" in lower_config
            ):
                gpu.add("Triton fusion")
            if "__cudnn" in lower_config or "cudnn" in lower_config:
                gpu.add("cuDNN fusion")
            if "ynn" in instr.name.lower() or "ynnpack" in lower_config or "ynn" in lower_config:
                cpu.add("YNNPACK fusion")
            if "onednn" in lower_config:
                cpu.add("oneDNN fusion")
        if target:
            if any(m in target for m in _GPU_CUSTOM_CALL_MARKERS):
                gpu.add(f"custom-call {target}")
            if any(m in target for m in _CPU_CUSTOM_CALL_MARKERS):
                cpu.add(f"custom-call {target}")
        if (
            "operation_queue_id" in config
            or "force_earliest_schedule" in config
            or "fusion_backend_config" in config
            or "gemm_backend_config" in config
        ):
            gpu.add("GPU backend_config")
    return gpu, cpu


@dataclass(frozen=True)
class TargetChoice:
    target: str  # gpu | cpu
    requested: str  # gpu | cpu | auto
    evidence: str  # why (for auto), e.g. "kInput fusion, custom-call __cublas$gemm"

    def to_json(self) -> dict:
        return {"target": self.target, "requested": self.requested, "evidence": self.evidence}


def detect_target(module, requested: str = AUTO) -> TargetChoice:
    """``requested`` unless ``auto``; for ``auto`` the backend the dump's own constructs show."""
    if requested in (GPU, CPU):
        return TargetChoice(requested, requested, "requested with --target")
    gpu, cpu = _markers(module)
    if gpu and not cpu:
        return TargetChoice(GPU, AUTO, ", ".join(sorted(gpu)[:3]))
    if cpu and not gpu:
        return TargetChoice(CPU, AUTO, ", ".join(sorted(cpu)[:3]))
    if gpu and cpu:
        # Both kinds of marker (hand-written test modules): the majority decides, GPU on a tie
        # since the GPU vocabulary is the one with the more specific figures.
        pick = GPU if len(gpu) >= len(cpu) else CPU
        return TargetChoice(pick, AUTO, "mixed markers: " + ", ".join(sorted(gpu | cpu)[:4]))
    return TargetChoice(CPU, AUTO, "no GPU construct in the dump (plain XLA:CPU-style module)")


def has_backend_markers(module) -> bool:
    """Whether the dump shows constructs of either backend (else ``detect_target`` defaults)."""
    gpu, cpu = _markers(module)
    return bool(gpu or cpu)


def summarize_choices(choices: Iterable[TargetChoice]) -> str | None:
    seen = sorted({c.target for c in choices})
    return "/".join(seen) if seen else None
