"""``check`` findings (fusions reading an operand through several maps) and their three renderings."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from .report import ModuleReport, OperandReport, TargetReport

CHECK_SCHEMA = "hlo-index-check/1"


@dataclass(frozen=True, slots=True)
class Finding:
    source: str
    module: str
    fusion: str
    line: int
    operand: int
    operand_name: str
    output: int
    maps: tuple[str, ...]
    op_name: str
    source_location: str
    kind: str = "several-maps"      # or "verify"
    message_override: str = ""

    @property
    def message(self) -> str:
        if self.message_override:
            return self.message_override
        return (f"fusion '{self.fusion}' reads operand {self.operand} (%{self.operand_name}) "
                f"through {len(self.maps)} distinct maps")

    def to_json(self) -> dict:
        return {"kind": self.kind, "source": self.source, "module": self.module, "fusion": self.fusion,
                "line": self.line, "operand": self.operand, "operand_name": self.operand_name,
                "output": self.output, "maps": list(self.maps), "op_name": self.op_name,
                "source_location": self.source_location, "message": self.message}


def _map_text(row: OperandReport) -> tuple[str, ...]:
    return tuple(m.text if m.text is not None else f"UNKNOWN ({m.unknown})" for m in row.maps)


def _allowed(t: TargetReport, allow: set[str]) -> bool:
    return t.name in allow or (t.calls is not None and t.calls in allow)


def findings(reports: Iterable[ModuleReport], allow: Iterable[str] = ()) -> list[Finding]:
    """Every (fusion, output, operand) read through more than one distinct map, plus verify errors."""
    allow = {a.lstrip("%") for a in allow}
    out = []
    for mod in reports:
        for t in mod.targets:
            if t.kind != "fusion" or _allowed(t, allow):
                continue
            for row in t.output_to_input:
                if row.distinct > 1:
                    out.append(Finding(mod.source, mod.name, t.name, t.line, row.operand, row.operand_name,
                                       row.output, _map_text(row), t.op_name, t.source_location))
        for d in mod.diagnostics:
            if d.severity == "error" and d.message.startswith("verify:"):
                out.append(Finding(mod.source, mod.name, "", d.line, -1, "", -1, (), "", "", "verify", d.message))
    return out


def render_check_text(found: list[Finding], checked: int, console) -> None:
    from rich.text import Text
    for f in found:
        head = Text(f"{f.source}:{f.line}: ", style="bold")
        head.append("error: ", style="bold red")
        head.append(f.message)
        # soft_wrap: a `path:line:` location split over two lines is neither clickable nor greppable.
        console.print(head, soft_wrap=True)
        for m in f.maps:
            from .text import highlight_map
            console.print(Text("    ") + highlight_map(m), soft_wrap=True)
        if f.op_name or f.source_location:
            console.print(Text(f"    from {f.op_name}  {f.source_location}".rstrip(), style="dim"), soft_wrap=True)
    verdict = (f"{len(found)} finding(s) in {checked} fusion(s)" if found
               else f"all {checked} fusion(s) read each operand through one distinct map")
    console.print(Text(verdict, style="bold red" if found else "bold green"))


def render_check_json(found: list[Finding], checked: int) -> str:
    return json.dumps({"schema": CHECK_SCHEMA, "fusions_checked": checked, "ok": not found,
                       "findings": [f.to_json() for f in found]}, indent=1)


def _escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_check_github(found: list[Finding], reports: Iterable[ModuleReport] = ()) -> str:
    """GitHub Actions workflow commands: one ``::error`` annotation per finding, and one per
    unreadable input of ``reports`` (otherwise a CI log shows it only on stderr, unannotated)."""
    lines = []
    for mod in reports:
        if not mod.unreadable:
            continue
        for d in mod.diagnostics:
            if d.severity != "error":
                continue
            props = f"file={_escape(d.path or mod.source, True)}"
            if d.line:
                props += f",line={d.line},col={d.column}"
            props += f",title={_escape('hlo-index: unreadable input', True)}"
            lines.append(f"::error {props}::{_escape(d.message)}")
    for f in found:
        body = f.message + "".join("\n  " + m for m in f.maps)
        if f.source_location:
            body += f"\n  from {f.op_name} {f.source_location}"
        title = "hlo-index: operand read through several maps" if f.kind != "verify" else "hlo-index: verify mismatch"
        props = f"file={_escape(f.source, True)}"
        if f.line:
            props += f",line={f.line}"
        props += f",title={_escape(title, True)}"
        lines.append(f"::error {props}::{_escape(body)}")
    return "\n".join(lines)
