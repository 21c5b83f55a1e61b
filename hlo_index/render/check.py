"""``check`` findings (fusions reading an operand through several maps), baselines, and their renderings.

A finding has a rule ``code`` (``finding_kinds.RULES``) and an ``identity`` that survives
recompiles (no instruction names in it). A baseline file lists the identities of accepted
findings with their counts (a transformer repeats the same fusion per layer); only findings
beyond the baseline's count for their identity are *new*.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Iterable, Optional

from .finding_kinds import DEFAULT_SELECT, RULES
from .report import ModuleReport, TargetReport

CHECK_SCHEMA = "hlo-index-check/1"
BASELINE_SCHEMA = "hlo-index-baseline/1"


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
    code: str = "HI001"
    identity: str = ""

    @property
    def message(self) -> str:
        if self.message_override:
            return self.message_override
        return (f"fusion '{self.fusion}' reads operand {self.operand} (%{self.operand_name}) "
                f"through {len(self.maps)} distinct maps")

    @property
    def rule(self) -> str:
        return RULES[self.code][0]

    def to_json(self) -> dict:
        return {"code": self.code, "rule": self.rule, "identity": self.identity,
                "kind": self.kind, "source": self.source, "module": self.module, "fusion": self.fusion,
                "line": self.line, "operand": self.operand, "operand_name": self.operand_name,
                "output": self.output, "maps": list(self.maps), "op_name": self.op_name,
                "source_location": self.source_location, "message": self.message}


def _map_text(row) -> tuple[str, ...]:
    return tuple(m.text if m.text is not None else f"UNKNOWN ({m.unknown})" for m in row.maps)


def _bare(name: str) -> str:
    return name[1:] if name.startswith("%") else name


def _allowed_by(t: TargetReport, allow: Iterable[str]) -> list[str]:
    names = (t.name,) if t.calls is None else (t.name, t.calls)
    return [a for a in allow if any(n == _bare(a) or fnmatchcase(n, _bare(a)) for n in names)]


def code_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """Like a linter: a code is on when some ``select`` prefix matches it and no longer-or-equal
    ``ignore`` prefix does (``ALL`` selects every code)."""
    picked = [len(s) for s in select if s == "ALL" or code.startswith(s)]
    dropped = [len(s) for s in ignore if s == "ALL" or code.startswith(s)]
    return bool(picked) and (not dropped or max(picked) > max(dropped))


def findings(reports: Iterable[ModuleReport], allow: Iterable[str] = (),
             select: Iterable[str] = DEFAULT_SELECT, ignore: Iterable[str] = (),
             used_allow: Optional[set] = None) -> list[Finding]:
    """Every selected finding: (fusion, output, operand) read through several maps, plus verify errors.
    ``used_allow`` (if given) collects the ``allow`` patterns that exempted something."""
    allow, select, ignore = list(allow), list(select), list(ignore)
    out = []
    for mod in reports:
        for t in mod.targets:
            if t.kind != "fusion":
                continue
            rows = [row for row in t.output_to_input if row.distinct > 1]
            if not rows:
                continue
            exempt = _allowed_by(t, allow)
            if exempt:
                if used_allow is not None:
                    used_allow.update(exempt)
                continue
            for row in rows:
                info = row.extra.get("finding") or {}
                code = info.get("code", "HI001")
                if not code_selected(code, select, ignore):
                    continue
                out.append(Finding(mod.source, mod.name, t.name, t.line, row.operand, row.operand_name,
                                   row.output, _map_text(row), t.op_name, t.source_location,
                                   code=code, identity=info.get("identity", "")))
        if code_selected("HI900", select, ignore):
            for d in mod.diagnostics:
                if d.severity == "error" and d.message.startswith("verify:"):
                    out.append(Finding(mod.source, mod.name, "", d.line, -1, "", -1, (), "", "", "verify",
                                       d.message, code="HI900"))
    return out


# ---- baseline ------------------------------------------------------------------------------

def baseline_document(found: list[Finding]) -> dict:
    counts = Counter(f.identity for f in found if f.identity)
    first: dict[str, Finding] = {}
    for f in found:
        if f.identity:
            first.setdefault(f.identity, f)
    entries = [{"identity": i, "count": counts[i], "code": first[i].code,
                "example": f"{first[i].fusion} operand {first[i].operand}",
                "source_location": first[i].source_location}
               for i in sorted(counts)]
    return {"schema": BASELINE_SCHEMA, "findings": entries}


class BaselineError(ValueError):
    pass


def read_baseline(path: str) -> Counter:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise BaselineError(f"{path}: error: cannot read the baseline: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: error: not a baseline file: {exc.msg}") from None
    if not isinstance(doc, dict) or doc.get("schema") != BASELINE_SCHEMA:
        raise BaselineError(f"{path}: error: not a baseline file (expected schema {BASELINE_SCHEMA!r}; "
                            "write one with 'hlo-index check --write-baseline FILE')")
    return Counter({e["identity"]: int(e.get("count", 1)) for e in doc.get("findings", [])})


def new_findings(found: list[Finding], baseline: Counter) -> list[Finding]:
    """Findings beyond the baseline's count for their identity (verify mismatches are always new)."""
    left = Counter(baseline)
    out = []
    for f in found:
        if f.identity and left[f.identity] > 0:
            left[f.identity] -= 1
        else:
            out.append(f)
    return out


# ---- rendering -----------------------------------------------------------------------------

def render_check_text(found: list[Finding], checked: int, painter, baselined: int = 0) -> list[str]:
    p = painter
    lines = []
    for f in found:
        where = f"{f.source}:{f.line}: " if f.line else f"{f.source}: "
        tail = f"  [{f.rule}, id {f.identity}]" if f.identity else ""
        lines.append(p(where, "bold") + p(f"{f.code} ", "bold red") + f.message + p(tail, "dim"))
        for m in f.maps:
            lines.append("    " + p.map(m))
        if f.op_name or f.source_location:
            lines.append(p(f"    from {f.op_name}  {f.source_location}".rstrip(), "dim"))
    known = f" ({baselined} known from the baseline)" if baselined else ""
    verdict = (f"{len(found)} finding(s) in {checked} fusion(s){known}" if found
               else f"no new finding in {checked} fusion(s){known}" if baselined
               else f"all {checked} fusion(s) read each operand through one distinct map")
    lines.append(p(verdict, "bold red" if found else "bold green"))
    return lines


def render_check_json(found: list[Finding], checked: int, baselined: int = 0) -> str:
    return json.dumps({"schema": CHECK_SCHEMA, "fusions_checked": checked, "ok": not found,
                       "baselined": baselined, "findings": [f.to_json() for f in found]}, indent=1)


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
        title = f"hlo-index {f.code}: " + ("operand read through several maps" if f.kind != "verify"
                                           else "verify mismatch")
        props = f"file={_escape(f.source, True)}"
        if f.line:
            props += f",line={f.line}"
        props += f",title={_escape(title, True)}"
        lines.append(f"::error {props}::{_escape(body)}")
    return "\n".join(lines)
