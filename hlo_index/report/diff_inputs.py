"""Which module of OLD goes with which module of NEW: files, dump directories, XLA's dump names.

XLA names a dump file ``module_NNNN.<module name>.<stage>.txt``, the stage of an optimized module
carrying the backend first (``cpu_after_optimizations``, ``sm_8.0_gpu_after_optimizations``). The
number counts compilations in one process, so it differs between two runs of one program; the
backend differs between two machines. A module's *dump key* is its file name without either
(``jit_f.after_optimizations``), or its module name for a file not named by XLA.

Modules are paired by key. When a key repeats on a side (one function compiled twice: two
``module_NNNN.jit_f`` files), its modules are paired in the order of their file names, which is
the order of compilation, and one left over on either side is unpaired. When each side holds a
single module, the two are paired whatever their keys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from ..hlo import load
from ..hlo.dump_names import numbered_module_name, read_dump_name
from ..hlo.model import Diagnostic, Module


@dataclass(slots=True)
class LoadedModule:
    key: str
    path: str
    module: Module


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


M = TypeVar("M", bound=Keyed)  # a module as loaded, or as a diff's side holds its figures


@dataclass(slots=True)
class ModulePair(Generic[M]):
    key: str
    old: M | None
    new: M | None


def dump_key(path: str, module_name: str, several_in_file: bool = False) -> str:
    """The name a module is paired by: the dump file's name without ``module_NNNN.``, the
    backend before the stage and the extensions; the module name for other files (and for each
    module of a file holding several)."""
    if several_in_file:
        return module_name
    named = read_dump_name(os.path.basename(path))
    if named is not None and named.module_name is not None:
        return f"{named.module_name}.{named.stage}"
    name = os.path.basename(path)
    for extension in (".gz", ".txt"):
        name = name.removesuffix(extension)
    written = numbered_module_name(name)  # a numbered name without a stage: the module name written there
    return written if written is not None else module_name


def load_side(path: str) -> tuple[list[LoadedModule], list[Diagnostic]]:
    """Every readable module under ``path`` with its dump key, and the diagnostics of the rest
    (and the warnings of the readable ones)."""
    results = load(path)
    modules, problems = [], []
    per_file: dict[str, int] = {}
    for r in results:
        per_file[r.path] = per_file.get(r.path, 0) + 1
    for r in results:
        problems.extend(r.diagnostics)
        if r.module is None:
            continue
        if not r.module.source:
            r.module.source = r.path
        modules.append(LoadedModule(dump_key(r.path, r.module.name, per_file[r.path] > 1), r.path, r.module))
    return modules, problems


def pair_modules(old: list[M], new: list[M]) -> list[ModulePair[M]]:
    """Modules paired by dump key, repeated keys in order; in the order of NEW, then the
    modules only OLD has."""
    if len(old) == 1 and len(new) == 1:
        return [ModulePair(new[0].key, old[0], new[0])]
    waiting: dict[str, list[M]] = {}
    for m in old:
        waiting.setdefault(m.key, []).append(m)
    pairs = []
    for m in new:
        queue = waiting.get(m.key)
        pairs.append(ModulePair(m.key, queue.pop(0) if queue else None, m))
    pairs.extend(ModulePair(m.key, m, None) for queue in waiting.values() for m in queue)
    return pairs
