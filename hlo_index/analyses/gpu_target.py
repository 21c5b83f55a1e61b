"""The machine a dump runs on, a GPU or a CPU, and how to tell from the dump (the GPU's figures:
``gpu_devices.py``).

``detect_target(module)`` reads the dump: GPU-only constructs (``kInput`` fusions, Triton /
cuBLAS / cuDNN calls, GPU backend configs) mean GPU; YNNPACK, oneDNN, XLA:CPU custom calls or
``ynn_fusion`` names mean CPU; a ``tpu_custom_call`` (Pallas) means TPU, and so do tiled
``T(...)`` layouts or ``S(n)`` memory spaces in a dump with no GPU or CPU marker (XLA:TPU writes
them on nearly every shape; XLA:GPU and XLA:CPU dumps rarely tile, and GPU dumps may use
``S(n)``). A dump with none of these is read by its file name, where XLA's dump names carry the
backend (``...sm_8.0_gpu_after_optimizations.txt``, ``...gfx950_gpu_after_...``,
``...cpu_after_optimizations.txt``, ``...tpu_after_...``; ``hlo.dump_names`` reads them): a small
GPU module of plain loop fusions shows no GPU construct. With neither, it is taken as CPU (XLA's
CPU dumps carry no marker; GPU dumps almost always carry one of the above).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

from ..context import current, register_table
from ..hlo.dump_names import read_dump_name

GPU, CPU, TPU, AUTO = "gpu", "cpu", "tpu", "auto"
TARGETS = (AUTO, GPU, CPU, TPU)
# Per analysis context: the target chosen for a module (keyed by the module object, kept in the
# value and checked, and the --target asked for).
_TARGETS = register_table("analyses.gpu_target.targets")


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
_SHAPE = attrgetter("shape")
# beside a dumped module, the GPU XLA compiled it for: "module_0040.jit_step.gpu_target_config.pbtxt"
TARGET_CONFIG_SUFFIX = ".gpu_target_config.pbtxt"
# said of any dump without evidence (a Neuron or hand-written module too): the CPU is a default here
_NO_EVIDENCE = "no backend construct in the dump nor backend in its file name: taken as CPU"


def _candidates(module) -> list:
    """The instructions a backend marker can come from (few of a big dump's): fusions and those
    with a custom-call target or a backend config (none in a body not read yet: ``hlo.deferred``)."""
    return [
        instr
        for comp in module.read_computations()
        for instr in comp.instructions
        if instr.attrs
        and (instr.opcode == "fusion" or "custom_call_target" in instr.attrs or "backend_config" in instr.attrs)
    ]


def _markers(candidates: list) -> tuple[set[str], set[str]]:
    gpu: set[str] = set()
    cpu: set[str] = set()
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


def _tpu_markers(module, candidates: list, layouts: bool = True) -> set[str]:
    """``tpu_custom_call`` targets, tiled layouts and memory spaces, each named once; the layouts
    only with ``layouts`` (a pass over every instruction's shape)."""
    found: set[str] = set()
    if any(instr.attrs.get("custom_call_target") == "tpu_custom_call" for instr in candidates):
        found.add("custom-call tpu_custom_call")
    if not layouts:
        return found
    # instructions share shape objects (the parser's shape memo): each distinct one read once
    distinct = {id(shape): shape for comp in module.computations for shape in map(_SHAPE, comp.instructions)}
    for top in distinct.values():
        for shape in _leaves(top):
            layout = shape.layout
            if layout is None:
                continue
            if layout.tiles:
                found.add("tiled T(...) layouts")
            if layout.memory_space:
                found.add("S(n) memory spaces")
        if len(found) == 3:
            break
    return found


def _leaves(shape):
    if shape.tuple_shapes is None:
        yield shape
        return
    for element in shape.tuple_shapes:
        yield from _leaves(element)


@dataclass(frozen=True)
class TargetChoice:
    """The backend a dump's figures are for, what was asked, and the evidence."""

    target: str  # gpu | cpu | tpu
    requested: str  # gpu | cpu | tpu | auto
    evidence: str  # why (for auto), e.g. "kInput fusion, custom-call __cublas$gemm"

    def to_json(self) -> dict:
        return {"target": self.target, "requested": self.requested, "evidence": self.evidence}


def detect_target(module, requested: str = AUTO) -> TargetChoice:
    """``requested`` unless ``auto``; for ``auto`` the backend the dump's own constructs show."""
    if requested in (GPU, CPU, TPU):
        return TargetChoice(requested, requested, "requested with --target")
    candidates = _candidates(module)
    gpu, cpu = _markers(candidates)
    # layouts decide only where no GPU or CPU construct does (a GPU dump may tile or use S(n))
    tpu = _tpu_markers(module, candidates, layouts=not gpu and not cpu)
    if "custom-call tpu_custom_call" in tpu or (tpu and not gpu and not cpu):
        return TargetChoice(TPU, AUTO, ", ".join(sorted(tpu)))
    if gpu and not cpu:
        return TargetChoice(GPU, AUTO, ", ".join(sorted(gpu)[:3]))
    if cpu and not gpu:
        return TargetChoice(CPU, AUTO, ", ".join(sorted(cpu)[:3]))
    if gpu and cpu:
        # Both kinds of marker (hand-written test modules): the majority decides, GPU on a tie
        # since the GPU vocabulary is the one with the more specific figures.
        pick = GPU if len(gpu) >= len(cpu) else CPU
        return TargetChoice(pick, AUTO, "mixed markers: " + ", ".join(sorted(gpu | cpu)[:4]))
    source = getattr(module, "source", "") or ""
    named = read_dump_name(source)
    if named is not None and named.platform is not None:
        return TargetChoice(named.platform, AUTO, f"the dump's file name: {named.platform}_{named.stage}")
    config = _gpu_config_beside(source)
    if config is not None:
        # XLA:GPU writes it beside every module of a dump, before_optimizations ones included
        return TargetChoice(GPU, AUTO, f"{config} beside the dump")
    return TargetChoice(CPU, AUTO, _NO_EVIDENCE)


def config_path_beside(source: str) -> Path | None:
    """Where XLA:GPU writes the target config of a dumped module (None: not a dump file name)."""
    named = read_dump_name(source)
    return Path(named.stem + TARGET_CONFIG_SUFFIX) if named is not None else None


def _gpu_config_beside(source: str) -> str | None:
    """The name of the ``*.gpu_target_config.pbtxt`` XLA:GPU wrote beside a dumped module, if any."""
    path = config_path_beside(source)
    return path.name if path is not None and path.is_file() else None


def module_target(module: Any, asked: str = AUTO) -> TargetChoice:
    """``detect_target(module, asked)``, decided once per module and analysis context (the
    figures and the cost of every target ask it)."""
    targets = current().tables[_TARGETS]
    key = (id(module), asked)
    hit = targets.get(key)
    if hit is not None and hit[0] is module:
        return hit[1]
    choice = detect_target(module, asked)
    targets[key] = (module, choice)
    return choice


def has_backend_markers(module) -> bool:
    """Whether the dump says what its backend is, by a construct of one (TPU ones included) or by
    its file name; else ``detect_target`` defaults."""
    return module_target(module).evidence != _NO_EVIDENCE


def summarize_choices(choices: Iterable[TargetChoice]) -> str | None:
    seen = sorted({c.target for c in choices})
    return "/".join(seen) if seen else None
