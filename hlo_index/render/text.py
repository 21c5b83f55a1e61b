"""Text output of analysis reports, written line by line as targets arrive (no layout engine).

Each target is a block: a title rule, then indented lines with a left border. Lines are never
wrapped or cut, so a map or a ``file:line`` stays one line to copy or grep. Colours are ANSI SGR
codes chosen here, so the cost is a string join per line and the whole output is never held in
memory: ``TextWriter.module`` writes a module's blocks and keeps one summary row per target.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

from .. import units
from ..report.model import MapReport, ModuleReport, OperandReport, OperandRows, TargetReport
from ..report.triage import COST_SORTS, TargetFigures, figures_of, human_bytes, top_targets, totals_of
from .sink import TextSink

_SGR = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "underline": "4",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}

# Lines joined into one write: few enough to keep memory flat on a block of ~10^6 lines, enough
# that the cost of a write call is nothing beside the lines' own.
WRITE_BATCH = 4096

# Colours follow the variable kinds of the spec: dimensions, range and runtime variables apart.
_MAP_TOKENS = re.compile(
    r"(?P<kw>\b(?:floordiv|ceildiv|mod)\b)|(?P<dim>\bd\d+\b)|(?P<rng>\bs\d+\b)|(?P<rt>\brt\d+\b)"
    r"|(?P<dom>\b(?:domain|in)\b)|(?P<empty>KNOWN EMPTY)|(?P<num>(?<![\w.])-?\d+\b)"
)
# keyed by ``Match.lastgroup``: every alternative of _MAP_TOKENS is a named group, so never None
_TOKEN_STYLES: dict[str | None, str] = {
    "kw": "blue",
    "dim": "bold cyan",
    "rng": "bold magenta",
    "rt": "bold yellow",
    "dom": "dim",
    "empty": "bold red",
    "num": "green",
}


class Painter:
    """Wraps text in SGR codes when colour is on; map highlighting memoised per painter."""

    def __init__(self, color: bool):
        self.color = color
        self._codes: dict[str, str] = {}
        self._maps: dict[str, str] = {}

    def __call__(self, text: str, style: str = "") -> str:
        if not self.color or not style or not text:
            return text
        code = self._codes.get(style)
        if code is None:
            code = self._codes[style] = "\x1b[" + ";".join(_SGR[s] for s in style.split()) + "m"
        return f"{code}{text}\x1b[0m"

    def map(self, text: str) -> str:
        if not self.color:
            return text
        hit = self._maps.get(text)
        if hit is None:
            hit = self._maps[text] = _MAP_TOKENS.sub(lambda m: self(m.group(0), _TOKEN_STYLES[m.lastgroup]), text)
        return hit


def _map_lines(p: Painter, m: MapReport, indent: str) -> list[str]:
    if m.text is None:
        return [indent + p("UNKNOWN", "bold red") + p(f"  {m.unknown}", "red")]
    head, sep, domain = m.text.partition(", domain: ")
    lines = [indent + p.map(head.rstrip(","))]
    if sep:
        lines.append(p(indent + "  domain: ", "dim") + p.map(domain))
    return lines


def _extra_lines(p: Painter, key: str, value, indent: str) -> list[str]:
    """An extension's field: its ``summary`` for a dict, one map per line for a list of maps."""
    if isinstance(value, dict) and "summary" in value:
        return [p(f"{indent}{key}: {value['summary']}", "cyan")]
    if isinstance(value, list) and all(isinstance(v, dict) and "map" in v for v in value):
        lines = [p(f"{indent}{key.replace('_', ' ')}:", "cyan")]
        for v in value:
            lines.extend(_map_lines(p, MapReport(v["map"], v.get("unknown")), indent + "  "))
        return lines
    return [p(f"{indent}{key}: {value}", "cyan")]


def _operand_head(p: Painter, row: OperandReport, direction: str, output: int | str) -> str:
    """``row``'s first line, for its entry of ``output``: entries of one kind differ there alone."""
    count = row.distinct
    badge = "no maps (not read)" if count == 0 else "1 map" if count == 1 else f"{count} distinct maps"
    style = "green" if count == 1 and row.known else ("bold red" if count > 1 else "yellow")
    operand = f"{row.operand}"
    if "operand_element" in row.extra:  # an element of a tuple-shaped operand
        operand += f" element {row.extra['operand_element']}"
    arrow = f"output {output} → operand {operand}" if direction == "out2in" else f"operand {operand} → output {output}"
    head = "  " + p(arrow, "bold") + "  " + p(f"%{row.operand_name}", "italic")
    if row.operand_shape:
        head += "  " + p(row.operand_shape, "dim")
    return head + "  " + p(badge, style)


def _operand_body(p: Painter, row: OperandReport) -> list[str]:
    """``row``'s lines after the first: its maps and figures, the same for every entry of its kind."""
    lines = []
    for m in row.maps:
        lines.extend(_map_lines(p, m, "      "))
    for key, value in row.extra.items():
        if key in ("source", "operand_element"):
            continue
        # a GPU verdict is the operand's over the whole fusion: on an output that reads none of
        # it (a horizontal fusion's other outputs), it would describe reads this output never makes
        if key == "coalescing" and row.reads_nothing and isinstance(value, dict) and value.get("target") == "gpu":
            continue
        lines.extend(_extra_lines(p, key, value, "      "))
    return lines


_OUTPUT = "\x00output\x00"  # a head's output while the head of a kind is made: never in HLO text


def _rows_lines(p: Painter, rows: Sequence[OperandReport], direction: str, bar: str) -> Iterator[str]:
    """The lines of ``rows``, one entry after another, each line after ``bar`` (an entry's lines
    may come as one text). Rows stored by kind (``OperandRows``, a whole ENTRY's ~10^6) are
    written from their kinds without making the entries: a kind's lines are made once, around
    the place of the output, and each entry is its output put there."""
    if type(rows) is OperandRows and rows.entries is None:
        kinds: dict[int, tuple[str, str]] = {}
        templates = rows.templates
        for k, output in zip(rows.kind_of, rows.outputs):
            kind = kinds.get(k)
            if kind is None:
                template = templates[k]
                before, after = _operand_head(p, template, direction, _OUTPUT).split(_OUTPUT)
                after += "".join(f"\n{bar}{line}" for line in _operand_body(p, template))
                kind = kinds[k] = (bar + before, after)
            yield f"{kind[0]}{output}{kind[1]}"
        return
    for row in rows:
        yield bar + _operand_head(p, row, direction, row.output)
        for line in _operand_body(p, row):
            yield bar + line


def source_text(t: TargetReport) -> str:
    """``op_name  file:line (function)``, either part possibly empty."""
    return "  ".join(x for x in (t.op_name, t.source_location) if x)


def target_lines(p: Painter, t: TargetReport, width: int) -> Iterator[str]:
    """``t``'s block, line by line (a whole ENTRY's block is ~10^6 lines: never held whole)."""
    title = f"{t.kind} %{t.name}" + (f" ({t.fusion_kind})" if t.fusion_kind else "")
    rule = "─" * max(3, width - len(title) - 5)
    yield (
        p("╭─ ", "dim")
        + p(f"{t.kind} ", "bold")
        + p(f"%{t.name}", "bold cyan")
        + (p(f" ({t.fusion_kind})", "dim") if t.fusion_kind else "")
        + " "
        + p(rule, "dim")
    )
    bar = p("│ ", "dim")
    body: list[str] = []
    where = []
    if t.kind != "computation" and t.computation:
        where.append(f"in %{t.computation}")
    if t.calls:
        where.append(f"calls %{t.calls}")
    where.append("outputs " + ", ".join(s for _, s in t.outputs))
    body.append(p("  ".join(where), "dim"))
    if t.op_name or t.source_location:
        src = p("source: ", "dim")
        if t.op_name:
            src += p(t.op_name, "magenta")
        if t.source_location:
            src += ("  " if t.op_name else "") + p(t.source_location, "underline")
        body.append(src)
    for key, value in t.extra.items():
        if key == "cost":
            body.append(p("cost: ", "bold") + p(value.get("explanation", ""), "cyan"))
            what_if = _fusion_what_if(value)
            if what_if:
                body.append(p("what-if: ", "bold") + p(what_if, "cyan"))
        elif key not in ("source", "verify", "identity"):
            body.append(p(f"{key}: {value}", "cyan"))
    for line in body:
        yield bar + line
    if t.output_to_input:
        yield bar + p("output → input", "bold underline")
        yield from _rows_lines(p, t.output_to_input, "out2in", bar)
    if t.input_to_output:
        yield bar + p("input → output", "bold underline")
        yield from _rows_lines(p, t.input_to_output, "in2out", bar)
    for note in t.notes:
        yield bar + p(f"note: {note}", "yellow")
    yield p("╰─", "dim")


# what the "uncoalesced" count means per backend, for totals over dumps of several
_BAD_OPERANDS = {
    "gpu": "uncoalesced operand(s) (GPU)",
    "cpu": "operand(s) read non-contiguously (CPU)",
    "tpu": "operand(s) walking across tiles (TPU)",
}


def _fusion_what_if(cost: dict) -> str | None:
    """--fusion-candidate's answer (XLA's EstimateRunTimes), which is otherwise only in JSON."""
    unfused, fused = cost.get("time_unfused_us"), cost.get("time_fused_us")
    if unfused is None or fused is None:
        return None
    verdict = "fusing saves" if fused < unfused else "fusing costs"
    return (
        f"{time_text(unfused)} unfused (producer and consumers), {time_text(fused)} fused: "
        f"{verdict} {time_text(abs(unfused - fused))} (XLA's EstimateRunTimes)"
    )


def _amount(n: float | None, unit: str) -> str:
    # None: not computed; negative: XLA's -1 for a figure it cannot count (a custom-call)
    if n is None:
        return "?"
    if n < 0:
        return f"? {unit}".rstrip()
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {prefix}{unit}".rstrip()
    return f"{n:.0f} {unit}".rstrip()


def time_text(us) -> str:
    if us is None:
        return "-"
    return "inf" if us == "inf" else units.time_text(us)


def cost_totals_line(mod: ModuleReport, with_source: bool = False) -> str | None:
    """The module's cost in one line: estimated time, its split by bound, the top targets'
    share, and the module's figures as XLA sums them. ``with_source``: the module's file after its
    name (the before- and after-optimizations dumps of one program share the name)."""
    c = mod.extra.get("cost_totals")
    if not c:
        return None
    name = f"{mod.name} ({mod.source})" if with_source else mod.name
    # the module as jax's cost_analysis() reports it: XLA's generic HloCostAnalysis on every backend
    g = c.get("hlo_cost_analysis") or c
    figures = (
        f"module: {_amount(g.get('flops'), 'FLOP')}, {_amount(g.get('transcendentals'), '')} transcendentals, "
        f"{_amount(g.get('bytes_accessed'), 'B')} accessed (as XLA's HloCostAnalysis sums a module)"
    )
    total = c.get("time_us")
    if total is None:
        if c.get("device"):  # a device, but its model timed none of the targets: each says why
            return f"cost of {name}: no time (no target timed on {c['device']}); {figures}"
        return f"cost of {name}: no time (no device model: --device gives a roofline); {figures}"
    device = c.get("device") or "?"
    why = c.get("device_assumed")
    assumed = f" ({why})" if why and why.startswith("from ") else f" (assumed: {why})" if why else ""
    split = ", ".join(
        f"{100 * t / total:.0f}% {bound}-bound" for bound, t in (c.get("time_by_bound_us") or {}).items() if total
    )
    top = c.get("top_share")
    timed, of = c.get("targets_timed"), c.get("top_share_of")
    # "the top 10 take 100%" of 5 timed targets says nothing: only a real top share is shown
    several = timed is None or of is None or timed > of
    share = f"; the top {of} take {100 * top:.0f}%" if top is not None and several else ""
    spills = f", {c['targets_unbounded']} spilling (inf, not counted)" if c.get("targets_unbounded") else ""
    from ..analyses.cost.target_cost import TRITON_GEMM_UNMODELLED  # the models, only when a cost is shown

    gemms = sum(1 for t in mod.targets if (t.extra.get("cost") or {}).get("model") == TRITON_GEMM_UNMODELLED)
    untimed = f", {gemms} Triton gemm fusion(s) not modelled (not counted)" if gemms else ""
    basis = " from the maps' exact bytes" if c.get("time_uses") == "exact" else ""
    return (
        f"cost of {name}: {time_text(total)} estimated{basis} on {device}{assumed} over "
        f"{c.get('targets_timed')} target(s){spills}{untimed}: {split}{share}; {figures}"
    )


def _table(
    p: Painter, header: list[str], rows: list[list[str]], right: set[int], styles: list[list[str]] | None = None
) -> list[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def cell(i: int, text: str) -> str:
        return text.rjust(widths[i]) if i in right else text.ljust(widths[i])

    lines = ["  ".join(p(cell(i, h), "bold") for i, h in enumerate(header)).rstrip()]
    for k, r in enumerate(rows):
        lines.append("  ".join(p(cell(i, v), styles[k][i] if styles else "") for i, v in enumerate(r)).rstrip())
    return lines


class TextWriter:
    """Streams modules to ``out`` and closes with a summary table and totals.

    ``top``: instead of blocks, one line per target, the ``top`` heaviest by ``sort`` (only
    the figures are kept, so memory stays flat in the number of targets either way).
    """

    def __init__(
        self,
        out: TextSink,
        color: bool,
        width: int = 100,
        several_files: bool = False,
        top: int | None = None,
        sort: str = "bytes",
    ):
        self.out, self.p, self.width = out, Painter(color), width
        self.several_files, self.top, self.sort = several_files, top, sort
        self.rows: list[TargetFigures] = []
        self.cost_lines: list[str] = []  # one per module, written with the top targets
        self.modules = 0
        self._sources: set[str] = set()
        # modules whose targets are written in part (each handed on, to ``module``, once complete)
        self._streamed: dict[int, tuple[ModuleReport, int]] = {}

    def write(self, lines: Iterable[str]) -> None:
        """``lines``, each ended by a newline, written a bounded batch at a time."""
        batch: list[str] = []
        written = False
        for line in lines:
            batch.append(line)
            if len(batch) == WRITE_BATCH:
                batch.append("")
                self.out.write("\n".join(batch))
                if getattr(self.out, "broken", False):  # the reader has gone (``| head``): no more lines
                    return
                batch.clear()
                written = True
        if batch:
            batch.append("")
            self.out.write("\n".join(batch))
        elif not written:  # no line at all: an empty one, as joining an empty list always wrote
            self.out.write("\n")

    def partial(self, mod: ModuleReport) -> None:
        """Write the targets of ``mod`` not written yet (called as each one is analysed)."""
        _, written = self._streamed.get(id(mod), (mod, 0))
        if written == len(mod.targets):
            return
        if written == 0:
            self.modules += 1
            self._sources.add(mod.source)
            if self.top is None:
                self.write([self.p(f"module {mod.name}", "bold") + self.p(f"  {mod.source}", "dim")])
        for t in mod.targets[written:]:
            if self.top is None:
                self.write(target_lines(self.p, t, self.width))
            self.rows.append(figures_of(t, mod))
        self._streamed[id(mod)] = (mod, len(mod.targets))  # the entry keeps ``mod`` alive: ids stay unique
        self.out.flush()

    def module(self, mod: ModuleReport) -> None:
        """``mod`` is complete: write what ``partial`` has not, then forget it."""
        self.partial(mod)
        self._streamed.pop(id(mod), None)
        # the --top listing gathers every module's line at its end, away from the module's header
        line = cost_totals_line(mod, with_source=self.top is not None and self.several_files)
        if line is not None:
            if self.top is None:
                self.write([self.p(line, "bold")])
            else:
                self.cost_lines.append(line)

    def close(self) -> None:
        if not self.rows:
            return
        if self.top is not None:
            self._top_lines(self.top)
            self.write([self.p(line, "bold") for line in self.cost_lines])
        else:
            self._summary()
        self.write([self.p(self.totals(), "bold")])
        self.out.flush()

    def totals(self) -> str:
        t = totals_of(self.rows, len(self._sources))
        what = f"{t.fusions} fusion(s)" + (f", {t.others} other target(s)" if t.others else "")
        bytes_text = (
            "unknown bytes"  # "0 B (some unknown)" when no target's figure is known reads as a sum
            if t.fusions + t.others and not t.bytes_known
            else human_bytes(t.bytes_read) + ("" if t.bytes_complete else " (some unknown)")
        )
        files = f" in {t.files} file(s)" if t.files > 1 else ""
        bad = (
            "operand(s) read non-contiguously by the innermost loop"
            if t.cpu_only
            else "operand(s) whose minor output dimension walks across tiles"
            if t.tpu_only
            else "uncoalesced operand(s)"
        )
        kinds = sorted({r.target for r in self.rows if r.target})
        if not kinds:
            bad_text = ""  # no target has the figure (--direction in2out, --no-analyses): nothing to count
        elif len(kinds) > 1:
            # dumps of several backends: each verdict counted under its own words, never summed
            bad_text = ", ".join(
                f"{sum(r.uncoalesced for r in self.rows if r.target == kind)} {_BAD_OPERANDS.get(kind, kind)}"
                for kind in kinds
            )
        else:
            bad_text = f"{t.uncoalesced} {bad}"
        return (
            f"total: {what}{files}, {bytes_text} read, {t.several_maps} operand(s) read through several maps "
            f"(duplicated reads)" + (f", {bad_text}" if bad_text else "")
        )

    def _columns(self) -> tuple[list[str], set[str]]:
        lead = ["file"] if self.several_files and len(self._sources) > 1 else []
        if self.modules > 1 and not lead:
            lead = ["module"]
        return lead, set(lead)

    def _summary(self) -> None:
        lead, _ = self._columns()
        header = lead + ["target", "kind", "operands", "maps", "several", "unknown", "bytes read"]
        rows, styles = [], []
        for r in self.rows:
            first = [r.source if lead == ["file"] else r.module] if lead else []
            rows.append(
                first
                + [
                    r.name,
                    r.kind,
                    str(r.operands),
                    str(r.maps),
                    str(r.several_maps),
                    str(r.unknown),
                    human_bytes(r.bytes_read),
                ]
            )
            styles.append([""] * (len(first) + 5) + ["yellow" if r.unknown else ""] + [""])
            if r.several_maps:
                styles[-1][len(first) + 4] = "bold red"
        self.write([self.p("summary", "bold underline")])
        self.write(_table(self.p, header, rows, right=set(range(len(lead) + 2, len(header))), styles=styles))

    def _top_lines(self, top: int) -> None:
        lead, _ = self._columns()
        chosen = top_targets(self.rows, top, self.sort)
        title = f"top {len(chosen)} of {len(self.rows)} target(s) by {self.sort}"
        self.write([self.p(title, "bold underline")])
        if self.sort in COST_SORTS:
            header = lead + ["target", "time", "flops", "flops/B", "why", "source"]
            rows = []
            for r in chosen:
                first = [r.source if lead == ["file"] else r.module] if lead else []
                intensity = f"{r.intensity:.2f}" if r.intensity is not None else "-"
                rows.append(first + [r.name, time_text(r.time_us), _amount(r.flops, ""), intensity, r.why, r.where])
            self.write(_table(self.p, header, rows, right={len(lead) + 1, len(lead) + 2, len(lead) + 3}))
            return
        header = lead + ["target", "bytes read", "worst operand", "source"]
        rows = []
        for r in chosen:
            first = [r.source if lead == ["file"] else r.module] if lead else []
            rows.append(first + [r.name, human_bytes(r.bytes_read), r.worst[self.sort], r.where])
        self.write(_table(self.p, header, rows, right={len(lead) + 1}))


def render_text(modules: list[ModuleReport], out: TextSink, color: bool = False, width: int = 100) -> None:
    """Every target's block, module by module, then the summary table (non-streaming callers)."""
    writer = TextWriter(out, color, width, several_files=len({m.source for m in modules}) > 1)
    for mod in modules:
        writer.module(mod)
    writer.close()
