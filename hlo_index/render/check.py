"""``check``'s findings as text, as JSON (schema ``hlo-index-check/1``) and as GitHub annotations."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from ..report.check import Finding
from ..report.model import ModuleReport

CHECK_SCHEMA = "hlo-index-check/1"


def render_check_text(
    found: list[Finding], checked: int, painter, baselined: int = 0, unselected: Mapping[str, int] | None = None
) -> list[str]:
    """The findings, then the verdict; ``unselected``: how many findings of each code the
    selection leaves out (said with a pass, which would otherwise read as "nothing else")."""
    p = painter
    lines = []
    for f in found:
        where = f"{f.source}:{f.line}: " if f.line else f"{f.source}: "
        tail = f"  [{f.rule}, id {f.identity}]" if f.identity else ""
        lines.append(p(where, "bold") + p(f"{f.code} ", "bold red") + f.message + p(tail, "dim"))
        lines.extend("    " + p.map(m) for m in f.maps)
        if f.op_name or f.source_location:
            lines.append(p(f"    from {f.op_name}  {f.source_location}".rstrip(), "dim"))
    known = f" ({baselined} known from the baseline)" if baselined else ""
    verdict = (
        f"{len(found)} finding(s) in {checked} fusion(s){known}"
        if found
        else f"no new finding in {checked} fusion(s){known}"
        if baselined
        else f"all {checked} fusion(s) read each operand through one distinct map"
        if checked and not unselected
        else f"no selected finding in {checked} fusion(s); not selected: "
        + ", ".join(f"{n} {code}" for code, n in sorted(unselected.items()))
        + " (--select ALL lists them)"
        if checked and unselected
        # "all 0 fusion(s) ..." would read as a pass over something: say nothing was checked
        else "no fusion to check (check reads fusions; analyze gives a module without them as a whole)"
    )
    lines.append(p(verdict, "bold red" if found else "bold green"))
    return lines


def render_check_json(
    found: list[Finding], checked: int, baselined: int = 0, unselected: Mapping[str, int] | None = None
) -> str:
    return json.dumps(
        {
            "schema": CHECK_SCHEMA,
            "fusions_checked": checked,
            "ok": not found,
            "baselined": baselined,
            "findings": [f.to_json() for f in found],
            "not_selected": dict(sorted((unselected or {}).items())),
        },
        indent=1,
    )


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
        title = f"hlo-index {f.code}: " + (
            "operand read through several maps" if f.kind != "verify" else "verify mismatch"
        )
        props = f"file={_escape(f.source, True)}"
        if f.line:
            props += f",line={f.line}"
        props += f",title={_escape(title, True)}"
        lines.append(f"::error {props}::{_escape(body)}")
    return "\n".join(lines)
