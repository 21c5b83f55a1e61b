"""What XLA writes into the name of a dumped module's file.

XLA names it ``module_NNNN.<module name>.<stage>.txt``. An unoptimized module's stage is
``before_optimizations``; an optimized one's carries the backend first: ``cpu_after_optimizations``,
``sm_8.0_gpu_after_optimizations`` (CUDA: the compute capability, ``sm_9.0a`` for an
architecture-specific target) or ``gfx950_gpu_after_optimizations`` (ROCm: the GPU architecture).
The other files XLA writes for the module share the name up to the stage
(``module_NNNN.<module name>.gpu_target_config.pbtxt``).

Every reader of these names (the target, the cost's device, diff's pairing) asks this module, so
they agree on what a name says.

    >>> name = read_dump_name("dumps/module_0040.jit_step.sm_8.0_gpu_after_optimizations.txt.gz")
    >>> name.platform, name.capability, name.stage, name.number, name.module_name
    ('gpu', (8, 0), 'after_optimizations', 40, 'jit_step')
    >>> name.stem
    'dumps/module_0040.jit_step'
    >>> read_dump_name("module_0070.tf_rocm.gfx950_gpu_after_optimizations.txt").rocm_arch
    'gfx950'
    >>> read_dump_name("model.hlo") is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The stage at the end of a file's name (directories aside), after "." or "_" (a name written by
# hand: "model_gpu_after_optimizations.txt"), with what follows it (extensions).
_STAGE = re.compile(
    r"[._](?:(?P<backend>sm_(?P<major>\d+)\.(?P<minor>\d+)a?|gfx[0-9a-f]+)_)?"
    r"(?:(?P<platform>gpu|cpu|tpu)_)?(?P<stage>before_optimizations|after_optimizations)[^/\\]*$"
)
_NUMBERED = re.compile(r"module_(?P<number>\d+)\.(?P<module>.*)$")


@dataclass(frozen=True, slots=True)
class DumpName:
    """One dumped module's file name, read."""

    stem: str  # the path up to the stage (no separator): the other files of the module start so
    stage: str  # "before_optimizations" | "after_optimizations"
    platform: str | None  # "gpu" | "cpu" | "tpu" | None where the name says no backend
    capability: tuple[int, int] | None  # CUDA compute capability, (8, 0) for "sm_8.0"
    rocm_arch: str | None  # "gfx950"
    number: int | None  # NNNN of "module_NNNN.": counts compilations in one process
    module_name: str | None  # what follows "module_NNNN." up to the stage


def numbered_module_name(file_name: str) -> str | None:
    """What follows ``module_NNNN.`` in a file's name (``module_0001.jit_f.txt``: ``jit_f.txt``);
    None where the name does not start so."""
    numbered = _NUMBERED.match(file_name)
    return numbered.group("module") if numbered else None


def read_dump_name(path: str) -> DumpName | None:
    """``path``'s dump name, or None where its file name holds no stage."""
    match = _STAGE.search(path or "")
    if match is None:
        return None
    stem = path[: match.start()]
    base = stem.replace("\\", "/").rsplit("/", 1)[-1]
    numbered = _NUMBERED.match(base)
    backend = match.group("backend")
    major, minor = match.group("major"), match.group("minor")
    return DumpName(
        stem=stem,
        stage=match.group("stage"),
        platform=match.group("platform"),
        capability=(int(major), int(minor)) if major is not None else None,
        rocm_arch=backend if backend is not None and backend.startswith("gfx") else None,
        number=int(numbered.group("number")) if numbered else None,
        module_name=numbered.group("module") if numbered else None,
    )
