"""Rich text output of analysis reports: one panel per target, a summary table at the end."""
from __future__ import annotations

from typing import Iterable

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .report import MapReport, ModuleReport, OperandReport, TargetReport

# Colours follow the variable kinds of the spec: dimensions, range and runtime variables apart.
_MAP_STYLES = (
    (r"(?<![\w.])-?\d+\b", "green"),
    (r"\bd\d+\b", "bold cyan"),
    (r"\bs\d+\b", "bold magenta"),
    (r"\brt\d+\b", "bold yellow"),
    (r"\b(floordiv|ceildiv|mod)\b", "blue"),
    (r"\b(domain|in)\b", "dim"),
    (r"KNOWN EMPTY", "bold red"),
)


def highlight_map(text: str) -> Text:
    """An XLA map with its dimension, range and runtime variables and keywords coloured."""
    out = Text(text)
    for pattern, style in _MAP_STYLES:
        out.highlight_regex(pattern, style)
    return out


def _map_lines(m: MapReport, indent: str) -> list[Text]:
    if m.text is None:
        return [Text(indent) + Text("UNKNOWN", style="bold red") + Text(f"  {m.unknown}", style="red")]
    head, sep, domain = m.text.partition(", domain: ")
    lines = [Text(indent) + highlight_map(head.rstrip(","))]
    if sep:
        lines.append(Text(indent + "  domain: ", style="dim") + highlight_map(domain))
    return lines


def _operand_block(row: OperandReport, direction: str) -> list[Text]:
    count = row.distinct
    badge = ("no maps (not read)" if count == 0 else
             "1 map" if count == 1 else f"{count} distinct maps")
    style = "green" if count == 1 and row.known else ("bold red" if count > 1 else "yellow")
    arrow = f"output {row.output} → operand {row.operand}" if direction == "out2in" else \
        f"operand {row.operand} → output {row.output}"
    head = Text("  ")
    head.append(arrow, style="bold")
    head.append(f"  %{row.operand_name}", style="italic")
    if row.operand_shape:
        head.append(f"  {row.operand_shape}", style="dim")
    head.append("  ")
    head.append(badge, style=style)
    lines = [head]
    for m in row.maps:
        lines.extend(_map_lines(m, "      "))
    for key, value in row.extra.items():
        lines.extend(_extra_lines(key, value, "      "))
    return lines


def _extra_lines(key: str, value, indent: str) -> list[Text]:
    """An extension's field: its ``summary`` for a dict, one map per line for a list of maps."""
    if isinstance(value, dict) and "summary" in value:
        return [Text(f"{indent}{key}: {value['summary']}", style="cyan")]
    if isinstance(value, list) and all(isinstance(v, dict) and "map" in v for v in value):
        label = key.replace("_", " ")
        lines = [Text(f"{indent}{label}:", style="cyan")]
        for v in value:
            lines.extend(_map_lines(MapReport(v["map"], v.get("unknown")), indent + "  "))
        return lines
    return [Text(f"{indent}{key}: {value}", style="cyan")]


def _hanging(line: Text) -> Padding:
    """``line`` with its leading spaces turned into padding, so wrapped parts keep its indentation."""
    width = len(line.plain) - len(line.plain.lstrip(" "))
    return Padding(line[width:], (0, 0, 0, width))


def target_panel(t: TargetReport) -> Panel:
    title = Text()
    title.append(f"{t.kind} ", style="bold")
    title.append(f"%{t.name}", style="bold cyan")
    if t.fusion_kind:
        title.append(f" ({t.fusion_kind})", style="dim")
    lines: list[Text] = []
    where = []
    if t.kind != "computation" and t.computation:
        where.append(f"in %{t.computation}")
    if t.calls:
        where.append(f"calls %{t.calls}")
    where.append("outputs " + ", ".join(s for _, s in t.outputs))
    lines.append(Text("  ".join(where), style="dim"))
    if t.op_name or t.source_location:
        src = Text("source: ", style="dim")
        if t.op_name:
            src.append(t.op_name, style="magenta")
        if t.source_location:
            src.append(("  " if t.op_name else "") + t.source_location, style="underline")
        lines.append(src)
    for key, value in t.extra.items():
        lines.append(Text(f"{key}: {value}", style="cyan"))
    if t.output_to_input:
        lines.append(Text("output → input", style="bold underline"))
        for row in t.output_to_input:
            lines.extend(_operand_block(row, "out2in"))
    if t.input_to_output:
        lines.append(Text("input → output", style="bold underline"))
        for row in t.input_to_output:
            lines.extend(_operand_block(row, "in2out"))
    for note in t.notes:
        lines.append(Text(f"note: {note}", style="yellow"))
    return Panel(Group(*(_hanging(line) for line in lines)), title=title, title_align="left", expand=True)


def _counts(t: TargetReport) -> tuple[int, int, int, int]:
    rows = t.output_to_input or t.input_to_output
    maps = sum(r.distinct for r in rows)
    several = sum(1 for r in rows if r.distinct > 1)
    unknown = sum(1 for r in rows for m in r.maps if m.text is None)
    return len(rows), maps, several, unknown


def summary_table(modules: Iterable[ModuleReport]) -> Table:
    modules = [m for m in modules if m.targets]
    several_modules = len(modules) > 1   # one module: its name is already printed above
    table = Table(title="summary", title_justify="left")
    columns = (("module", "left"),) if several_modules else ()
    for col, justify in columns + (("target", "left"), ("kind", "left"), ("operands", "right"),
                                   ("maps", "right"), ("several", "right"), ("unknown", "right")):
        # Names are identifiers to copy: folded when too long, never cut with an ellipsis; the
        # short columns never wrap, so the names get all the room left.
        is_name = col in ("module", "target")
        table.add_column(col, justify=justify, overflow="fold", no_wrap=not is_name)
    for mod in modules:
        for t in mod.targets:
            n, maps, several, unknown = _counts(t)
            table.add_row(*((mod.name,) if several_modules else ()), t.name, t.kind, str(n), str(maps),
                          Text(str(several), style="bold red" if several else ""),
                          Text(str(unknown), style="yellow" if unknown else ""))
    return table


def render_text(modules: list[ModuleReport], console: Console) -> None:
    """Every target's panel, module by module, then the summary table."""
    for mod in modules:
        console.print(Text(f"module {mod.name}", style="bold") + Text(f"  {mod.source}", style="dim"),
                      soft_wrap=True)   # a long path stays one line (and copy-pasteable)
        for t in mod.targets:
            console.print(target_panel(t))
    if any(m.targets for m in modules):
        console.print(summary_table(modules))
