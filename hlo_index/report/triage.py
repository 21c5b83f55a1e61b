"""Per-target figures for triage: bytes read, duplicated reads, uncoalesced operands, worst operand.

Computed from a report alone (its operands' ``utilization`` / ``coalescing`` extras), so the text
writer keeps one small row per target instead of the target, and ``--top`` / ``--sort`` order the
same way in text and JSON.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..units import bytes_text
from .model import ModuleReport, OperandReport, OperandRows, TargetReport

SORTS = ("bytes", "uncoalesced", "utilization", "maps", "time", "flops", "intensity")
COST_SORTS = ("time", "flops", "intensity")


@dataclass(frozen=True, slots=True)
class TargetFigures:
    source: str  # the file the module came from
    module: str
    name: str
    kind: str
    where: str  # op_name and file:line of the target, for one-line listings
    operands: int
    maps: int
    several_maps: int  # operands some output reads through more than one distinct map
    unknown: int  # UNDEFINED maps
    bytes_read: int | None  # None when some operand's figure is unknown
    uncoalesced: int
    max_reads_per_element: float | None
    max_maps: int
    worst: dict  # sort -> the worst operand's figure for that sort, in words
    target: str = ""  # gpu | cpu | tpu: what "uncoalesced" means (CPU: not contiguous; TPU: across tiles)
    # the cost (report/cost.py); None where it has no such figure
    time_us: float | None = None  # math.inf: the model says the kernel spills
    flops: float | None = None
    intensity: float | None = None
    bound: str | None = None
    why: str = ""  # the cost's one-line explanation


# What the "uncoalesced" slot says per target.
_BAD = {"cpu": "not contiguous", "tpu": "walking across tiles"}
_GOOD = {"cpu": "all contiguous", "tpu": "none walking across tiles"}


def human_bytes(n: int | None) -> str:
    return "?" if n is None else bytes_text(n)


def _kinds(rows: Sequence[OperandReport]) -> list[tuple[OperandReport, int]]:
    """``rows`` as (a row of each kind, its number of entries), the kinds in the order of their
    first entries. Every figure here is the same for the entries of a kind (they differ in their
    ``output`` alone, never read here), and a "first row with the most" is the first entry of
    its kind: rows stored by kind (a whole ENTRY's ~10^6) are read kind by kind."""
    if type(rows) is OperandRows and rows.entries is None:
        counts = Counter(rows.kind_of)
        return [(rows.templates[k], counts[k]) for k in dict.fromkeys(rows.kind_of)]
    return [(r, 1) for r in rows]


def _latest_first(rows: Sequence[OperandReport]) -> list[OperandReport]:
    """A row of each kind, the kinds in the order of their last entries, the last first."""
    if type(rows) is OperandRows and rows.entries is None:
        return [rows.templates[k] for k in dict.fromkeys(reversed(rows.kind_of))]
    return list(reversed(rows))


def _coalescing(row: OperandReport) -> dict:
    return row.extra.get("coalescing") or row.extra.get("tpu") or {}


def figures_of(t: TargetReport, mod: ModuleReport) -> TargetFigures:
    out2in = _kinds(t.output_to_input)
    rows = out2in or _kinds(t.input_to_output)
    total: int | None = 0
    heaviest: tuple[int, str] = (-1, "-")
    bad_operands: set[tuple[int, object]] = set()
    unco_at = ""
    worst_mult: float | None = None
    worst_mult_at = "-"
    for r, entries in out2in:
        u = r.extra.get("utilization") or {}
        b = u.get("bytes_read")
        total = None if total is None or b is None else total + b * entries
        if b is not None and b > heaviest[0]:
            frac = u.get("fraction")
            share = f", {100 * frac:.0f}% of it" if frac is not None else ""
            heaviest = (b, f"%{r.operand_name} {human_bytes(b)}{share}")
        mult = u.get("multiplicity")
        # a scalar read by every output element is normal: it says nothing about the fusion
        if mult is not None and (u.get("total_elements") or 0) > 1 and (worst_mult is None or mult > worst_mult):
            worst_mult, worst_mult_at = mult, f"%{r.operand_name} read {mult:.2f}x per element"
        c = _coalescing(r)
        # CPU figures say "not contiguous" (no warps on a CPU), TPU figures "across tiles": the
        # same slot in the triage. An operand counts once, however many outputs read it, and
        # only where one reads it (a GPU verdict is the operand's, on every output's row).
        if c.get("verdict") in ("uncoalesced", "not contiguous", "across tiles") and not r.reads_nothing:
            bad_operands.add((r.operand, r.extra.get("operand_element")))
            unco_at = unco_at or f"%{r.operand_name}"
    # the machine the figures are for: the last row's that names one
    target = next((c["target"] for c in map(_coalescing, _latest_first(t.output_to_input)) if "target" in c), "")
    unco = len(bad_operands)
    # a multi-output fusion has a row per (output, operand): an operand counts once
    operands = {(r.operand, r.extra.get("operand_element")) for r, _ in rows}
    several = {(r.operand, r.extra.get("operand_element")) for r, _ in rows if r.distinct > 1}
    if not t.output_to_input:
        total = None
    max_maps = max((r.distinct for r, _ in rows), default=0)
    most = max((r for r, _ in rows), key=lambda r: r.distinct, default=None)
    worst = {
        "bytes": heaviest[1],
        "uncoalesced": (
            f"{unco} {_BAD.get(target, 'uncoalesced')} ({unco_at})" if unco else _GOOD.get(target, "all coalesced")
        ),
        "utilization": worst_mult_at,
        "maps": f"{max_maps} maps for %{most.operand_name}" if most is not None else "-",
    }
    cost = t.extra.get("cost") or {}
    time_us = cost.get("time_us")
    if time_us == "inf":
        time_us = math.inf
    return TargetFigures(
        source=mod.source,
        module=mod.name,
        name=t.name,
        kind=t.kind,
        where="  ".join(x for x in (t.op_name, t.source_location) if x),
        operands=len(operands),
        maps=sum(r.distinct * entries for r, entries in rows),
        several_maps=len(several),
        unknown=sum(entries for r, entries in rows for m in r.maps if m.text is None),
        bytes_read=total,
        uncoalesced=unco,
        max_reads_per_element=worst_mult,
        max_maps=max_maps,
        worst=worst,
        target=target,
        time_us=time_us if isinstance(time_us, (int, float)) else None,
        flops=cost.get("flops"),
        intensity=cost.get("intensity"),
        bound=cost.get("bound"),
        why=cost.get("explanation") or "",
    )


def _neg(value: float | None) -> float:
    return -(value if value is not None else -1.0)


# Heaviest first; ties by file then name, so the order never depends on the order of the input.
SORT_KEYS: dict[str, Callable[[TargetFigures], tuple]] = {
    "bytes": lambda r: (_neg(r.bytes_read), r.source, r.name),
    "uncoalesced": lambda r: (-r.uncoalesced, _neg(r.bytes_read), r.source, r.name),
    "utilization": lambda r: (_neg(r.max_reads_per_element), _neg(r.bytes_read), r.source, r.name),
    "maps": lambda r: (-r.max_maps, _neg(r.bytes_read), r.source, r.name),
    "time": lambda r: (_neg(r.time_us), _neg(r.flops), r.source, r.name),
    "flops": lambda r: (_neg(r.flops), _neg(r.time_us), r.source, r.name),
    "intensity": lambda r: (_neg(r.intensity), _neg(r.flops), r.source, r.name),
}


def top_targets(rows: list[TargetFigures], top: int, sort: str) -> list[TargetFigures]:
    """The ``top`` heaviest of ``rows`` by ``sort``."""
    return sorted(rows, key=SORT_KEYS[sort])[:top]


class TopTargets:
    """The ``top`` heaviest targets by ``sort`` over modules added one at a time, each module's
    other targets dropped as it is added: what ``--top`` keeps is bounded by ``top``, not by the run
    (a whole ENTRY's report is one target of ~10^6 rows). Ties keep the order the targets came in."""

    def __init__(self, top: int, sort: str):
        self.top, self.key = top, SORT_KEYS[sort]
        self.ranked = 0  # targets seen
        self._best: list[tuple[tuple, int, int, TargetReport]] = []  # (key, module, target, report)

    def add(self, module_index: int, mod: ModuleReport) -> None:
        key, best = self.key, self._best
        for ti, t in enumerate(mod.targets):
            best.append((key(figures_of(t, mod)), module_index, ti, t))
            if len(best) >= 2 * self.top + 64:  # sorted now and then, not per target
                self._cut()
        self.ranked += len(mod.targets)

    def _cut(self) -> None:
        self._best.sort(key=lambda item: item[:3])
        del self._best[self.top :]

    def by_module(self) -> dict[int, list[tuple[int, TargetReport]]]:
        """``{module index: [(rank, target), ...]}`` in rank order, rank 1 the heaviest."""
        self._cut()
        picked: dict[int, list[tuple[int, TargetReport]]] = {}
        for rank, (_, mi, _, t) in enumerate(self._best, 1):
            picked.setdefault(mi, []).append((rank, t))
        return picked


@dataclass(frozen=True, slots=True)
class Totals:
    """What the targets of a run add up to."""

    fusions: int
    others: int
    bytes_read: int  # over the targets whose figure is known
    bytes_complete: bool  # every target's figure is known
    several_maps: int
    uncoalesced: int
    files: int
    cpu_only: bool  # every target with a figure is for a CPU: "not contiguous"
    tpu_only: bool = False  # every target with a figure is for a TPU: "across tiles"
    bytes_known: int = 0  # targets whose figure is known (none: the sum says nothing)


def totals_of(rows: list[TargetFigures], files: int) -> Totals:
    fusions = sum(1 for r in rows if r.kind == "fusion")
    known = [r.bytes_read for r in rows if r.bytes_read is not None]
    return Totals(
        fusions,
        len(rows) - fusions,
        sum(known),
        len(known) == len(rows),
        sum(r.several_maps for r in rows),
        sum(r.uncoalesced for r in rows),
        files,
        {r.target for r in rows if r.target} == {"cpu"},
        {r.target for r in rows if r.target} == {"tpu"},
        len(known),
    )
