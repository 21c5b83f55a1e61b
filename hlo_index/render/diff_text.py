"""``diff``'s text: per module, a table of the fusions that differ (worst first, with the source
line that made them), each one's changes old → new, and the module's totals.

Unchanged fusions are listed only when asked (``show_same``). Lines are never cut, so a map or a
``file:line`` stays one line to copy or grep.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from ..report.diff import Change, ConditionMet, DiffReport, FusionDiff, ModuleDiff, SideTotals
from ..report.triage import human_bytes
from ..units import time_text
from .text import Painter, _table

_STATUS_STYLE = {"changed": "yellow", "added": "green", "removed": "red", "same": "dim"}


def _signed_bytes(n: float) -> str:
    if n == 0:
        return "0 B"
    return ("+" if n > 0 else "-") + human_bytes(int(abs(n)))


def _signed_time(us: float) -> str:
    return "0 us" if us == 0 else ("+" if us > 0 else "-") + time_text(abs(us))


def _time(us: float | None) -> str:
    return "?" if us is None else time_text(us)


def _percent(old: float | None, new: float | None) -> str:
    old, new = old or 0, new or 0
    if old == 0:
        return "" if new == 0 else " (new)"
    return f" ({100 * (new - old) / old:+.1f}%)"


def _fusion_name(f: FusionDiff) -> str:
    if f.old is None or f.new is None:
        return f"{'+' if f.old is None else '-'} {f.name}"
    return f.new.name if f.old.name == f.new.name else f"{f.old.name} → {f.new.name}"


def _kinds(f: FusionDiff) -> str:
    seen: list[str] = []
    for c in f.changes:
        if c.kind not in seen:
            seen.append(c.kind)
    return ", ".join(seen) if seen else ("-" if f.status == "same" else f.status)


def _old_new(f: FusionDiff, what: str, fmt: Callable[[int | None], str] | Callable[[float | None], str]) -> str:
    before = fmt(getattr(f.old, what)) if f.old is not None else "-"
    after = fmt(getattr(f.new, what)) if f.new is not None else "-"
    return f"{before} → {after}"


def _where(change: Change) -> str:
    if change.operand is None:
        return ""
    where = f"operand {change.operand}"
    return where + (f" (output {change.output})" if change.output is not None else "")


def _change_lines(p: Painter, c: Change) -> list[str]:
    label = p(f"    {c.kind:<16}", "bold")
    where = _where(c)
    # what ``old`` and ``new`` hold depends on the kind (``report.diff.Change``)
    if c.kind == "maps":
        old_maps, new_maps = cast("list[str]", c.old), cast("list[str]", c.new)
        # maps read both before and after are kept as context, unmarked
        lines = [label + (f" {where}:" if where else ":")]
        lines += [p("      - ", "red") + p.map(m) for m in old_maps if m not in new_maps]
        lines += [p("      + ", "green") + p.map(m) for m in new_maps if m not in old_maps]
        lines += ["        " + p.map(m) for m in new_maps if m in old_maps]
        return lines
    if c.kind == "bytes":
        old_bytes, new_bytes = cast("dict[str, int | None]", c.old), cast("dict[str, int | None]", c.new)
        parts = [
            f"{key} {human_bytes(old_bytes[key])} → {human_bytes(new_bytes[key])}"
            f"{_percent(old_bytes[key], new_bytes[key])}"
            for key in ("read", "written")
            if old_bytes[key] != new_bytes[key]
        ]
        return [label + " " + ", ".join(parts)]
    if c.kind == "computation":
        old_c, new_c = cast("dict", c.old), cast("dict", c.new)
        ops = ", ".join(
            f"{'+' if new_c['opcodes'][op] > n else '-'}{abs(new_c['opcodes'][op] - n)} {op}"
            for op, n in old_c["opcodes"].items()
        )
        what = ops or "the same opcodes: attributes, constants, shapes or wiring differ"
        return [label + f" {old_c['instructions']} → {new_c['instructions']} instruction(s) ({what})"]
    if c.kind == "flops":
        old_f, new_f = cast("float", c.old), cast("float", c.new)
        return [label + f" {old_f:.4g} → {new_f:.4g}{_percent(old_f, new_f)}"]
    if c.kind == "time":
        old_us, new_us = cast("float", c.old), cast("float", c.new)
        return [label + f" {_time(old_us)} → {_time(new_us)}{_percent(old_us, new_us)}"]
    if c.kind == "coalescing":  # None: that output reads none of the operand on that side
        old_v, new_v = (v if v is not None else "not read" for v in (c.old, c.new))
        return [label + f" {where}: {old_v} → {new_v}"]
    if c.kind == "duplicated_reads":
        return [label + f" {where}: {c.old} → {c.new} distinct map(s)"]
    if c.kind == "operands" and c.operand is None:
        return [label + f" {c.old} → {c.new} operand(s)"]
    return [label + f" {where}: {c.old} → {c.new}"]


def _totals_text(old: SideTotals, new: SideTotals, fusions: list[FusionDiff], has_cost: bool) -> str:
    counts = {s: sum(1 for f in fusions if f.status == s) for s in ("changed", "added", "removed", "same")}
    unknown = " (some unknown)" if old.bytes_unknown or new.bytes_unknown else ""
    text = (
        f"totals: {old.fusions} → {new.fusions} fusion(s), {human_bytes(old.bytes_read)} → "
        f"{human_bytes(new.bytes_read)} read{_percent(old.bytes_read, new.bytes_read)}{unknown}"
    )
    if has_cost:
        text += f", {_time(old.time_us)} → {_time(new.time_us)}{_percent(old.time_us, new.time_us)}"
    paired = {how: sum(1 for f in fusions if f.matched_by == how) for how in ("structure", "source", "name")}
    text += "; " + ", ".join(f"{n} {s}" for s, n in counts.items())
    text += " (paired by " + ", ".join(f"{how} {n}" for how, n in paired.items()) + ")"
    return text


def module_lines(p: Painter, m: ModuleDiff, has_cost: bool, show_same: bool = False) -> list[str]:
    if not m.fusions:  # a dump's before-optimizations modules: nothing to compare, one line
        return [
            p(f"module {m.name}", "bold")
            + p(f"  no fusions  (old {m.old_path or '(none)'}, new {m.new_path or '(none)'})", "dim")
        ]
    lines = [
        p(f"module {m.name}", "bold"),
        p(f"  old {m.old_path or '(none)'}", "dim"),
        p(f"  new {m.new_path or '(none)'}", "dim"),
    ]
    shown = [f for f in m.worst_first(by_time=has_cost) if show_same or f.status != "same"]
    if shown:
        what = "time_us" if has_cost else "bytes_read"
        header = [
            "Δ time" if has_cost else "Δ bytes read",
            "time" if has_cost else "bytes read",
            "status",
            "fusion",
            "matched",
            "changes",
            "source",
        ]
        rows, styles = [], []
        for f in shown:
            delta = f.delta(what)
            figure = _old_new(f, what, _time if has_cost else human_bytes)
            side = f.new or f.old
            assert side is not None, "a fusion diff has an OLD or a NEW side"
            source = side.source_text
            rows.append(
                [
                    _signed_time(delta) if has_cost else _signed_bytes(delta),
                    figure,
                    f.status,
                    _fusion_name(f),
                    f.matched_by or "-",
                    _kinds(f),
                    source,
                ]
            )
            styles.append(
                [
                    "bold red" if delta > 0 else "green" if delta < 0 else "",
                    "",
                    _STATUS_STYLE[f.status],
                    "cyan",
                    "dim",
                    "",
                    "magenta",
                ]
            )
        lines += _table(p, header, rows, right={0}, styles=styles)
        for f in shown:
            if not f.changes:
                continue
            how = f", matched by {f.matched_by}" if f.matched_by else ""
            lines.append("")
            lines.append(
                p(_fusion_name(f), "bold cyan")
                + p(f"  ({f.status}{how})", "dim")
                + ("  " + p(f.new.source_text, "magenta") if f.new is not None and f.new.source_text else "")
            )
            for c in f.changes:
                lines.extend(_change_lines(p, c))
    else:
        lines.append(p(f"all {len(m.fusions)} fusion(s) the same", "green"))
    lines.append(p(_totals_text(m.old_totals, m.new_totals, m.fusions, has_cost), "bold"))
    return lines


def render_diff_text(report: DiffReport, painter: Painter, show_same: bool = False) -> list[str]:
    lines: list[str] = []
    for k, m in enumerate(report.modules):
        if k:
            lines.append("")
        lines.extend(module_lines(painter, m, report.has_cost, show_same))
    if not report.modules:
        lines.append("no module to compare")
    return lines


def condition_lines(met: list[ConditionMet]) -> list[str]:
    """``--fail-on`` failures, one line per fusion (for stderr)."""
    return [
        f"error: --fail-on {m.condition}: module {m.module}"
        + (f", fusion '{m.fusion}'" if m.fusion else "")
        + f": {m.detail}"
        for m in met
    ]
