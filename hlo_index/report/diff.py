"""``diff``: the fusions of two dumps paired, and what changed in how each reads its operands.

Fusions are paired in three rounds, each over what the rounds before left unpaired:

1. ``structure``: the fused computation's structural digest (``fusion.fingerprint.computation_digest``:
   every instruction's opcode, shape, attributes and wiring, no names; equal across processes),
   the fusion's kind and its operands' shapes and wiring (which operands are one value). Equal
   identities mean equal maps.
2. ``source``: the op name and ``file:line`` of the metadata, for a fusion whose structure changed.
3. ``name``: the fusion instruction's name.

Within a round, fusions with one key (a transformer's layers) pair one to one in their order of
appearance. What is left is ``added`` (NEW only) or ``removed`` (OLD only).

A pair's changes by kind (``CHANGE_KINDS``): ``operands`` (count, or an operand's shape),
``computation`` (the fused computation or the fusion's kind changed, paired by source or name:
the opcodes whose counts differ; where none do, said only if no other change shows it),
``maps`` (an operand's set of map texts),
``duplicated_reads`` (an operand gains or loses a second map), ``coalescing`` (an operand's
verdict on the dump's target), ``bytes`` (read or written), ``flops`` (XLA's count, as the cost
gives it) and ``time`` (estimated by the cost model where it gives a time: GPU modules, or a
caller's ``diff_paths(..., cost=...)``). A changed computation that changes no figure still
makes the pair ``changed``: equal maps and bytes do not make two kernels the same. Operands of a pair
are compared position by position; when their counts differ, they are aligned by shape first.
"""

from __future__ import annotations

import difflib
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..hlo.model import Diagnostic
from ..units import time_text
from .diff_figures import FusionCost, FusionFigures, OperandRead, SideModule, both_sides
from .diff_inputs import pair_modules
from .triage import human_bytes

__all__ = ["FusionCost", "FusionFigures", "OperandRead"]  # one side's figures, read with the diff

CHANGE_KINDS = ("operands", "computation", "maps", "duplicated_reads", "coalescing", "bytes", "flops", "time")
MATCHERS = ("structure", "source", "name")
UNCOALESCED = frozenset({"uncoalesced", "not contiguous"})  # GPU and CPU words for a bad read


@dataclass(frozen=True, slots=True)
class Change:
    kind: str  # one of CHANGE_KINDS
    operand: int | None  # NEW's operand number (OLD's when NEW has none); None: the fusion
    old: object
    new: object
    output: int | None = None  # which output reads it, for a fusion with several outputs


@dataclass(slots=True)
class FusionDiff:
    status: str  # "same" | "changed" | "added" | "removed"
    old: FusionFigures | None
    new: FusionFigures | None
    matched_by: str | None  # one of MATCHERS; None when unpaired
    changes: list[Change] = field(default_factory=list)

    @property
    def name(self) -> str:
        side = self.new or self.old
        if side is None:
            raise ValueError("a fusion diff has an OLD or a NEW side")
        return side.name

    def delta(self, what: str) -> float:
        """NEW minus OLD of ``bytes_read`` or ``time_us`` (an unknown or missing side counts 0)."""
        before = getattr(self.old, what, None) if self.old is not None else None
        after = getattr(self.new, what, None) if self.new is not None else None
        return (after or 0) - (before or 0)


@dataclass(frozen=True, slots=True)
class SideTotals:
    fusions: int
    bytes_read: int  # known figures only
    bytes_unknown: int  # fusions whose bytes read are unknown
    time_us: float | None = None


@dataclass(slots=True)
class ModuleDiff:
    name: str
    old_path: str | None
    new_path: str | None
    fusions: list[FusionDiff]
    old_totals: SideTotals
    new_totals: SideTotals

    def worst_first(self, by_time: bool = False) -> list[FusionDiff]:
        """Every fusion, the largest growth in time (with a cost) or bytes read first; then the
        most changes; unchanged and shrinking ones last."""
        what = "time_us" if by_time else "bytes_read"
        return sorted(self.fusions, key=lambda f: (-f.delta(what), f.status == "same", -len(f.changes), f.name))


@dataclass(slots=True)
class DiffReport:
    modules: list[ModuleDiff]
    diagnostics: list[Diagnostic]  # of both sides: unreadable inputs, warnings, analysis failures
    unreadable: bool  # some input (or some fusion's analysis) failed: exit 2
    has_cost: bool = False


# ---- pairing -----------------------------------------------------------------------------------

_KEYS: dict[str, Callable[[FusionFigures], object]] = {
    "structure": lambda f: f.identity,
    "source": lambda f: f.source_key,
    "name": lambda f: f.name,
}


def pair_fusions(
    old: list[FusionFigures], new: list[FusionFigures]
) -> list[tuple[FusionFigures | None, FusionFigures | None, str | None]]:
    """(old, new, matched by) for every fusion: NEW's in their order (paired or added), then
    OLD's unpaired (removed) in theirs."""
    partner: dict[int, tuple[FusionFigures, str]] = {}  # new order -> (old, how)
    left_old, left_new = list(old), list(new)
    for how in MATCHERS:
        key = _KEYS[how]
        groups: dict[object, deque] = {}
        for f in left_old:
            k = key(f)
            if k is not None:
                groups.setdefault(k, deque()).append(f)
        taken: set[int] = set()
        still_new = []
        for f in left_new:
            k = key(f)
            queue = groups.get(k) if k is not None else None
            if queue:
                match = queue.popleft()
                partner[f.order] = (match, how)
                taken.add(match.order)
            else:
                still_new.append(f)
        left_old = [f for f in left_old if f.order not in taken]
        left_new = still_new
    out: list[tuple[FusionFigures | None, FusionFigures | None, str | None]] = []
    for f in new:
        hit = partner.get(f.order)
        out.append((hit[0], f, hit[1]) if hit is not None else (None, f, None))
    out.extend((f, None, None) for f in left_old)
    return out


# ---- changes -----------------------------------------------------------------------------------

_NAME = re.compile(r"%[\w.\-]+")


def _comparable(maps: tuple[str, ...]) -> list[str]:
    """Map texts as compared: sorted, and an UNKNOWN map's reason without the instruction names
    it quotes (a renamed copy has the same unknowns)."""
    return sorted(_NAME.sub("%", m) if m.startswith("UNKNOWN") else m for m in maps)


def _aligned_operands(a: tuple[str, ...], b: tuple[str, ...]) -> list[tuple[int, int]]:
    if len(a) == len(b):
        return [(i, i) for i in range(len(a))]
    pairs: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            pairs.extend(zip(range(i1, i2), range(j1, j2)))
    return pairs


def changes_between(a: FusionFigures, b: FusionFigures) -> list[Change]:
    """What differs between two paired fusions, in ``CHANGE_KINDS`` order."""
    found: dict[str, list[Change]] = {kind: [] for kind in CHANGE_KINDS}
    aligned = _aligned_operands(a.operand_shapes, b.operand_shapes)
    if len(a.operand_shapes) != len(b.operand_shapes):
        found["operands"].append(Change("operands", None, len(a.operand_shapes), len(b.operand_shapes)))
    for i, j in aligned:
        if a.operand_shapes[i] != b.operand_shapes[j]:
            found["operands"].append(Change("operands", j, a.operand_shapes[i], b.operand_shapes[j]))
    several = max(a.outputs, b.outputs) > 1
    reads_a = {(r.operand, r.element, r.output): r for r in a.reads}
    reads_b: dict[int, list[OperandRead]] = {}
    for r in b.reads:
        reads_b.setdefault(r.operand, []).append(r)
    for i, j in aligned:
        for rb in reads_b.get(j, ()):
            ra = reads_a.get((i, rb.element, rb.output))
            if ra is None:
                continue
            output = rb.output if several else None
            if _comparable(ra.maps) != _comparable(rb.maps):
                found["maps"].append(Change("maps", j, list(ra.maps), list(rb.maps), output))
            if (len(ra.maps) > 1) != (len(rb.maps) > 1):
                found["duplicated_reads"].append(Change("duplicated_reads", j, len(ra.maps), len(rb.maps), output))
            if ra.coalescing != rb.coalescing:
                found["coalescing"].append(Change("coalescing", j, ra.coalescing, rb.coalescing, output))
    if (a.bytes_read, a.bytes_written) != (b.bytes_read, b.bytes_written):
        found["bytes"].append(
            Change(
                "bytes",
                None,
                {"read": a.bytes_read, "written": a.bytes_written},
                {"read": b.bytes_read, "written": b.bytes_written},
            )
        )
    if a.flops is not None and b.flops is not None and a.flops != b.flops:
        found["flops"].append(Change("flops", None, a.flops, b.flops))
    if a.time_us is not None and b.time_us is not None and a.time_us != b.time_us:
        found["time"].append(Change("time", None, a.time_us, b.time_us))
    if a.identity[:2] != b.identity[:2]:  # the fused computation (or the fusion's kind) changed
        # said where opcodes come or go, or where nothing else shows it (attributes, wiring): a
        # reshaped operand already says why its computation's shapes changed
        change = _computation_change(a, b)
        if change.old["opcodes"] or not any(found.values()):  # type: ignore[index]
            found["computation"].append(change)
    return [c for kind in CHANGE_KINDS for c in found[kind]]


def _computation_change(a: FusionFigures, b: FusionFigures) -> Change:
    """Each side's instruction count and the counts of the opcodes whose counts differ (none
    where only attributes, shapes or wiring changed)."""
    old, new = dict(a.opcodes), dict(b.opcodes)
    differ = sorted(op for op in old.keys() | new.keys() if old.get(op, 0) != new.get(op, 0))
    return Change(
        "computation",
        None,
        {"instructions": sum(old.values()), "opcodes": {op: old.get(op, 0) for op in differ}},
        {"instructions": sum(new.values()), "opcodes": {op: new.get(op, 0) for op in differ}},
    )


def _totals(figures: list[FusionFigures], has_cost: bool) -> SideTotals:
    known = [f.bytes_read for f in figures if f.bytes_read is not None]
    time = sum(f.time_us or 0.0 for f in figures) if has_cost else None
    return SideTotals(len(figures), sum(known), len(figures) - len(known), time)


def diff_modules(
    name: str, old: SideModule | None, new: SideModule | None, has_cost: bool = False
) -> tuple[ModuleDiff, list[Diagnostic]]:
    """The diff of two modules' figures (either may be missing: every fusion of the other is
    added or removed); ``has_cost``: times are compared even where neither side has one."""
    old_figures, problems = (old.figures, old.problems) if old is not None else ([], [])
    new_figures, more = (new.figures, new.problems) if new is not None else ([], [])
    fusions = []
    for a, b, how in pair_fusions(old_figures, new_figures):
        if a is None or b is None:
            fusions.append(FusionDiff("added" if a is None else "removed", a, b, None))
            continue
        changes = changes_between(a, b)
        fusions.append(FusionDiff("changed" if changes else "same", a, b, how, changes))
    has_cost = has_cost or any(f.time_us is not None for f in old_figures + new_figures)
    return (
        ModuleDiff(
            name,
            old.path if old is not None else None,
            new.path if new is not None else None,
            fusions,
            _totals(old_figures, has_cost),
            _totals(new_figures, has_cost),
        ),
        problems + more,
    )


def _has_error(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


def diff_paths(
    old_path: str, new_path: str, cost: FusionCost | None = None, processes: int = 1, device: str | None = None
) -> DiffReport:
    """Every module of OLD against its partner in NEW (``diff_inputs``: by dump name).

    ``processes`` > 1: big sides are analysed at once, OLD's in a second process
    (``diff_figures.both_sides``); the report is the same. ``device``: ``analyze --device``'s
    (a GPU, or a TPU chip's roofline: CPU and TPU modules get times only with one)."""
    (old, old_problems), (new, new_problems) = both_sides(old_path, new_path, cost, processes, device)
    diagnostics = old_problems + new_problems
    unreadable = _has_error(diagnostics)
    if (not old and _has_error(old_problems)) or (not new and _has_error(new_problems)):
        # a side that could not be read at all is not a dump without fusions: pairing against it
        # would list every fusion of the other side as removed (or added)
        return DiffReport([], diagnostics, True)
    modules = []
    for pair in pair_modules(old, new):
        module, problems = diff_modules(pair.key, pair.old, pair.new, cost is not None)
        modules.append(module)
        diagnostics.extend(problems)
        unreadable = unreadable or bool(problems)
    return DiffReport(
        modules, diagnostics, unreadable, cost is not None or any(m.old_totals.time_us is not None for m in modules)
    )


# ---- --fail-on ---------------------------------------------------------------------------------

_PERCENT = re.compile(r"^(?P<kind>bytes|time)\s*>\s*(?P<percent>\d+(?:\.\d*)?|\.\d+)\s*%$")


@dataclass(frozen=True, slots=True)
class FailCondition:
    kind: str  # "duplicated_reads" | "uncoalesced" | "bytes" | "time"
    percent: float | None = None  # bytes / time: growth of a module's total beyond this

    @property
    def text(self) -> str:
        return self.kind if self.percent is None else f"{self.kind}>{self.percent:g}%"


def parse_condition(text: str) -> FailCondition:
    """``duplicated_reads``, ``uncoalesced``, ``bytes>N%`` or ``time>N%``; ValueError otherwise."""
    word = text.strip()
    if word in ("duplicated_reads", "uncoalesced"):
        return FailCondition(word)
    m = _PERCENT.match(word)
    if m is None:
        raise ValueError(f"{text!r} is not a condition (duplicated_reads, uncoalesced, bytes>N%, time>N%)")
    return FailCondition(m.group("kind"), float(m.group("percent")))


@dataclass(frozen=True, slots=True)
class ConditionMet:
    condition: str
    module: str
    fusion: str  # NEW's name
    detail: str


def _gained(f: FusionDiff, kind: str) -> list[str]:
    """What makes ``f`` meet duplicated_reads / uncoalesced: a pair's operand that turned bad, or
    an added fusion's bad operand."""
    out: list[str] = []
    if f.status == "added" and f.new is not None:
        for r in f.new.reads:
            if kind == "duplicated_reads" and len(r.maps) > 1:
                out.append(f"added, reads operand {r.operand} through {len(r.maps)} maps")
            elif kind == "uncoalesced" and r.coalescing in UNCOALESCED:
                out.append(f"added, reads operand {r.operand} {r.coalescing}")
        return list(dict.fromkeys(out))  # an operand read by several outputs: said once
    for c in f.changes:
        if (
            kind == "duplicated_reads"
            and c.kind == "duplicated_reads"
            and isinstance(c.old, int)
            and isinstance(c.new, int)
            and c.old <= 1 < c.new
        ):
            out.append(f"reads operand {c.operand} through {c.new} maps (was {c.old})")
        elif kind == "uncoalesced" and c.kind == "coalescing" and c.new in UNCOALESCED and c.old not in UNCOALESCED:
            out.append(f"reads operand {c.operand} {c.new} (was {c.old if c.old is not None else 'not read'})")
    return list(dict.fromkeys(out))


def _bytes_amount(n: float) -> str:
    return human_bytes(int(n))


def _grew(old: float | None, new: float | None, percent: float) -> bool:
    old, new = old or 0, new or 0
    return new > old * (1 + percent / 100) if old > 0 else new > 0


def conditions_met(report: DiffReport, conditions: list[FailCondition]) -> list[ConditionMet]:
    """Each fusion that meets a condition (bytes / time: a module whose total grew beyond the
    percentage, naming its fusions that grew, largest growth first)."""
    met: list = []
    for cond in conditions:
        for mod in report.modules:
            if cond.kind in ("duplicated_reads", "uncoalesced"):
                for f in mod.fusions:
                    met.extend(ConditionMet(cond.text, mod.name, f.name, d) for d in _gained(f, cond.kind))
                continue
            what = "bytes_read" if cond.kind == "bytes" else "time_us"
            before, after = getattr(mod.old_totals, what), getattr(mod.new_totals, what)
            if cond.percent is None or not _grew(before, after, cond.percent):
                continue
            growing = sorted((f for f in mod.fusions if f.delta(what) > 0), key=lambda f: (-f.delta(what), f.name))
            label = "bytes read" if cond.kind == "bytes" else "time"
            amount = _bytes_amount if cond.kind == "bytes" else time_text
            growth = f", +{100 * ((after or 0) / before - 1):.1f}%" if before else ""
            total = f"module total {amount(before or 0)} -> {amount(after or 0)}{growth}"
            if not growing:  # the total grew through fusions whose figure is unknown on one side
                met.append(ConditionMet(cond.text, mod.name, "", total))
            met.extend(
                ConditionMet(cond.text, mod.name, f.name, f"{f.status}, {label} +{amount(f.delta(what))} ({total})")
                for f in growing
            )
    return met
