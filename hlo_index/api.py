"""The public Python API: load dumps, pick targets, get their indexing maps.

import hlo_index
[module] = hlo_index.load("dump/jit_f.after_optimizations.hlo.txt")
for fusion in module.fusions:
    for row in hlo_index.output_to_input(fusion):
        print(fusion.name, row.operand, [str(m) for m in row.maps], row.deduplicated)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .context import AnalysisContext, Budgets
from .fusion import OperandIndexing, callee_of, input_to_output, output_to_input
from .hlo.model import Computation, Instruction, Module, Shape

Target = Instruction | Computation


class TargetNotFound(LookupError):
    """No fusion / computation / instruction of that name in the module."""


def load(path: str) -> list[Module]:
    """Every module in a file (plain or .gz), a directory of dumps, or '-' for stdin.

    Raises ``hlo_index.hlo.ParseError`` (with ``.diagnostics``) for the first input that cannot be
    read or parsed; ``hlo_index.hlo.load`` gives per-file results instead.
    """
    from .hlo import load_path

    return load_path(path)


@dataclass(frozen=True, slots=True)
class SelectedTarget:
    """A target chosen by name: a fusion, a computation or an instruction."""

    kind: str  # "fusion" | "computation" | "instruction"
    target: Target


def _bare(name: str) -> str:
    return name.removeprefix("%")


def _find_instruction(module: Module, name: str) -> Instruction | None:
    for comp in module.computations:
        instr = comp.by_name.get(name)
        if instr is not None:
            return instr
    return None


def _kind_of(instr: Instruction) -> str:
    return "fusion" if instr.opcode == "fusion" else "instruction"


def matching_fusions(module: Module, patterns: str | Sequence[str]) -> list[Instruction]:
    """Fusions whose instruction or fused computation name matches a name or glob of ``patterns``
    (one string or several), in module order."""
    from fnmatch import fnmatchcase

    bare = [_bare(p) for p in ([patterns] if isinstance(patterns, str) else patterns)]
    out = []
    for f in module.fusions:
        callee = callee_of(f)
        names = (f.name, callee.name) if callee is not None else (f.name,)
        if any(n == p or fnmatchcase(n, p) for p in bare for n in names):
            out.append(f)
    return out


def select_targets(
    module: Module,
    fusion: str | Sequence[str] | None = None,
    computation: str | None = None,
    instruction: str | None = None,
    fusions_only: bool = False,
) -> list[SelectedTarget]:
    """The targets of one module: the named one, or every fusion (no fusion: the ENTRY computation,
    unless ``fusions_only``).

    A fusion may be named by its instruction or by its fused computation. Raises ``TargetNotFound``.
    """
    if fusion is not None:
        found = matching_fusions(module, fusion)
        if not found:
            patterns = [fusion] if isinstance(fusion, str) else list(fusion)
            raise TargetNotFound(
                f"no fusion named {' or '.join(repr(_bare(p)) for p in patterns)} in module {module.name}"
            )
        return [SelectedTarget("fusion", f) for f in found]
    if computation is not None:
        comp = module.by_name.get(_bare(computation))
        if comp is None:
            raise TargetNotFound(f"no computation named '{_bare(computation)}' in module {module.name}")
        return [SelectedTarget("computation", comp)]
    if instruction is not None:
        instr = _find_instruction(module, _bare(instruction))
        if instr is None:
            raise TargetNotFound(f"no instruction named '{_bare(instruction)}' in module {module.name}")
        return [SelectedTarget(_kind_of(instr), instr)]
    fusions = module.fusions
    if fusions:
        return [SelectedTarget("fusion", f) for f in fusions]
    if module.entry is not None and not fusions_only:
        return [SelectedTarget("computation", module.entry)]
    return []


class Session(AnalysisContext):
    """One analysis session: its caches (and the maps they hold) live as long as it does.

        with hlo_index.Session() as s:
            [module] = s.load("dump/jit_f.after_optimizations.hlo.txt")
            rows = s.output_to_input(module.fusions[0])   # plain hlo_index calls inside the
                                                          # ``with`` use this session too

    ``Session(budgets=Budgets(maps_per_value=16))`` or ``Session(maps_per_value=16)`` changes the
    budgets. Leaving the ``with`` (or ``close()``) frees every table; without a session, calls use
    the thread's default context (``hlo_index.context.current()``).
    """

    __slots__ = ()

    def load(self, path: str) -> list[Module]:
        return self.run(load, path)

    def output_to_input(self, target: Target) -> list[OperandIndexing]:
        return self.run(output_to_input, target)

    def input_to_output(self, target: Target) -> list[OperandIndexing]:
        return self.run(input_to_output, target)

    def analyze(self, target: Target, direction: str = "out2in") -> dict[str, list[OperandIndexing]]:
        """``{"out2in": rows, "in2out": rows}`` for ``direction`` out2in, in2out or both."""
        out = {}
        if direction in ("out2in", "both"):
            out["out2in"] = self.output_to_input(target)
        if direction in ("in2out", "both"):
            out["in2out"] = self.input_to_output(target)
        return out


def operand_info(target: Target) -> list[tuple[str, Shape | None]]:
    """(name, shape) of each operand of an instruction, or each parameter of a computation."""
    if isinstance(target, Computation):
        count = 1 + max(target.parameters, default=-1)
        out: list[tuple[str, Shape | None]] = []
        for n in range(count):
            p = target.parameters.get(n)
            out.append((p.name, p.shape) if p is not None else (f"param{n}", None))
        return out
    if target.operands:
        return [(o.name, o.shape) for o in target.operands]
    return [(n, None) for n in target.operand_names]


__all__ = [
    "Session",
    "Budgets",
    "AnalysisContext",
    "load",
    "select_targets",
    "matching_fusions",
    "SelectedTarget",
    "TargetNotFound",
    "output_to_input",
    "input_to_output",
    "OperandIndexing",
    "operand_info",
    "callee_of",
]
