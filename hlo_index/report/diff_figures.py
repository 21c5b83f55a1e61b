"""One side of a ``diff``: every fusion of a dump's modules with what a diff compares of it.

A fusion's structural identity here is ``computation_digest`` (a sha256 of the fused computation's
structure, equal across processes), not the in-process fingerprint ids: the two sides of a big
diff are analysed in two processes at once (``both_sides``), and their identities must compare.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass

from ..context import current
from ..fusion import callee_of
from ..fusion.fingerprint import computation_digest
from ..hlo.model import Diagnostic, Instruction, Module, Shape

# The report builders this module reads: the analysis of every fusion, and its bytes read.
from .build import module_report
from .diff_inputs import load_side
from .triage import figures_of

# The cost model's hook: estimated microseconds of one fusion (None when it does not apply).
FusionCost = Callable[[Instruction, Module], float | None]


@dataclass(frozen=True, slots=True)
class OperandRead:
    """How one output of a fusion reads one operand (one element of a tuple-shaped operand)."""

    operand: int
    element: int | None
    output: int
    maps: tuple[str, ...]  # map texts; an UNDEFINED map is "UNKNOWN (reason)"
    coalescing: str | None  # the verdict on the dump's target


@dataclass(frozen=True, slots=True)
class FusionFigures:
    name: str
    order: int  # position among the module's fusions
    identity: tuple  # structure, kind, operand shapes and wiring
    op_name: str
    source_file: str
    source_line: int
    operand_shapes: tuple[str, ...]
    outputs: int
    reads: tuple[OperandRead, ...]
    bytes_read: int | None  # None when an operand's figure is unknown
    bytes_written: int
    time_us: float | None = None
    flops: float | None = None  # XLA's count (the cost's), None where unknown
    # the fused computation's opcodes and how many of each, sorted (empty without one)
    opcodes: tuple[tuple[str, int], ...] = ()

    @property
    def source_key(self) -> tuple | None:
        if not self.op_name and not self.source_file:
            return None
        return (self.op_name, self.source_file, self.source_line)

    @property
    def source_text(self) -> str:
        """``op_name  file:line``, either part possibly empty."""
        where = f"{self.source_file}:{self.source_line}" if self.source_line else self.source_file
        return "  ".join(x for x in (self.op_name, where) if x)

    @property
    def several_maps(self) -> list[OperandRead]:
        return [r for r in self.reads if len(r.maps) > 1]


# ---- figures of one side -----------------------------------------------------------------------


def _bytes_of(shape: Shape) -> int:
    if shape.is_tuple:
        return sum(_bytes_of(s) for s in shape.tuple_shapes or ())
    return (shape.num_elements * shape.element_bits + 7) // 8


def _identity(instr: Instruction, digests: dict) -> tuple:
    """The fused computation's digest (``digests``: its memo for one module), the fusion's kind,
    its operands' shapes and wiring (which operands are one value)."""
    callee = callee_of(instr)
    first: dict[int, int] = {}
    wiring = tuple(first.setdefault(id(o), k) for k, o in enumerate(instr.operands))
    return (
        computation_digest(callee, digests) if callee is not None else None,
        instr.attr("kind"),
        tuple(str(o.shape) for o in instr.operands),
        wiring,
    )


def _opcodes(instr: Instruction) -> tuple[tuple[str, int], ...]:
    callee = callee_of(instr)
    if callee is None:
        return ()
    counts: dict[str, int] = {}
    for i in callee.instructions:
        counts[i.opcode] = counts.get(i.opcode, 0) + 1
    return tuple(sorted(counts.items()))


def _report_flops(cost: dict | None) -> float | None:
    """XLA's flop count of a target's cost; None where there is none or XLA cannot count (-1)."""
    flops = (cost or {}).get("flops")
    return float(flops) if isinstance(flops, (int, float)) and flops >= 0 else None


def _report_time(cost: dict | None) -> float | None:
    """The estimated microseconds of a target's cost; None where the model gives no time."""
    time = (cost or {}).get("time_us")
    if time == "inf":
        return math.inf
    return float(time) if isinstance(time, (int, float)) else None


def _verdict_read(row) -> str | None:
    """A row's coalescing verdict where its output reads the operand; None where it reads none of
    it (a GPU verdict is the operand's over the whole fusion, on every output's row)."""
    if row.reads_nothing:
        return None
    return (row.extra.get("coalescing") or {}).get("verdict")


def _map_text(m) -> str:
    return m.text if m.text is not None else f"UNKNOWN ({m.unknown})"


def module_figures(
    module: Module, cost: FusionCost | None = None, device: str | None = None
) -> tuple[list[FusionFigures], list[Diagnostic]]:
    """Every fusion of ``module`` with what a diff compares, in module order, in the current
    analysis context (a diff's two sides share one where they run in one process: what the
    second side has of the first is answered from its caches). ``device``: the report's cost's
    (``--device``: a GPU, or a TPU chip's roofline)."""
    from ..analyses.cost.options import TargetCostOptions

    # the report's own cost (its default device per target) unless a caller gives its own
    options: dict = {"analyses": True, "target": "auto"}
    if cost is None:
        options["cost"] = TargetCostOptions(device=device)
    report = module_report(module, options=options, fusions_only=True, own_context=False)
    by_name = {f.name: f for f in module.fusions}
    digests: dict = {}
    out = []
    for order, t in enumerate(report.targets):
        instr = by_name[t.name]
        loc = module.source_location(instr)
        reads = tuple(
            OperandRead(
                r.operand,
                r.extra.get("operand_element"),
                r.output,
                tuple(_map_text(m) for m in r.maps),
                _verdict_read(r),
            )
            for r in t.output_to_input
        )
        out.append(
            FusionFigures(
                t.name,
                order,
                _identity(instr, digests),
                t.op_name,
                loc.file if loc is not None else "",
                loc.line if loc is not None and loc.line else 0,
                tuple(str(o.shape) for o in instr.operands),
                instr.shape.num_outputs,
                reads,
                figures_of(t, report).bytes_read,
                _bytes_of(instr.shape),
                cost(instr, module) if cost is not None else _report_time(t.extra.get("cost")),
                _report_flops(t.extra.get("cost")),
                _opcodes(instr),
            )
        )
    problems = [
        Diagnostic(d.severity, d.message, d.line, d.column, d.source_line, d.path or module.source)
        for d in report.diagnostics
        if d.message.startswith("internal: ")
    ]
    return out, problems


@dataclass(frozen=True, slots=True)
class SideModule:
    """One module of a side, as a diff pairs and compares it."""

    key: str  # the dump key modules are paired by (``diff_inputs.dump_key``)
    path: str
    figures: list[FusionFigures]
    problems: list[Diagnostic]  # failures of its analysis


Side = tuple[list[SideModule], list[Diagnostic]]  # its modules, and the diagnostics of reading it


def side_figures(path: str, cost: FusionCost | None = None, device: str | None = None) -> Side:
    """Every readable module under ``path`` with its fusions' figures, in the current analysis
    context; the diagnostics of what could not be read (and the warnings of what could)."""
    loaded, problems = load_side(path)
    modules = []
    for m in loaded:
        figures, failed = module_figures(m.module, cost, device)
        modules.append(SideModule(m.key, m.path, figures, failed))
    return modules, problems


# Inputs smaller than this (bytes of text, both sides together) are read one after the other:
# a second process costs ~0.1 s to start and to send its side back, more than a small side takes.
PARALLEL_FROM_BYTES = 1 << 20


def both_sides(
    old_path: str, new_path: str, cost: FusionCost | None = None, processes: int = 1, device: str | None = None
) -> tuple[Side, Side]:
    """``side_figures`` of OLD and of NEW: with ``processes`` > 1 and inputs big enough, OLD's in
    a forked process while this one reads NEW's (a process that fails costs only time: OLD is
    then read here); else both here, in one analysis context."""
    if (
        processes > 1
        and hasattr(os, "fork")
        and "-" not in (old_path, new_path)  # stdin is this process's to read
        and _input_bytes(old_path) + _input_bytes(new_path) >= PARALLEL_FROM_BYTES
    ):
        import pickle

        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # OLD's side down the pipe, then gone without the parent's exit handlers
            code = 1
            try:
                os.close(read_end)
                data = pickle.dumps(side_figures(old_path, cost, device), pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        with current().child():
            new = side_figures(new_path, cost, device)
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        old = None
        if os.waitstatus_to_exitcode(status) == 0:
            try:
                old = pickle.loads(data)
            except Exception:  # noqa: BLE001  a truncated stream: OLD is read here below
                old = None
        if old is None:
            with current().child():
                old = side_figures(old_path, cost, device)
        return old, new
    with current().child():
        old = side_figures(old_path, cost, device)
        return old, side_figures(new_path, cost, device)


def _input_bytes(path: str) -> int:
    """The bytes of text in a file, or in every file under a directory (a gzip file's from its
    trailer, which holds the text's size)."""
    try:
        if not os.path.isdir(path):
            return _text_bytes(path)
        return sum(_text_bytes(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)
    except OSError:
        return 0


def _text_bytes(path: str) -> int:
    if not path.endswith(".gz"):
        return os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")  # the size modulo 2^32: enough to tell small from big
