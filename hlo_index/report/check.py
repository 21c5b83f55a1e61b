"""``check`` findings (fusions reading an operand through several maps) and baselines.

A finding has a rule ``code`` (``finding_kinds.RULES``) and an ``identity`` that survives
recompiles (no instruction names in it). A baseline file lists the identities of accepted
findings with their counts (a transformer repeats the same fusion per layer); only findings
beyond the baseline's count for their identity are *new*.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from .finding_kinds import DEFAULT_SELECT, RULES
from .model import ModuleReport, TargetReport

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
    kind: str = "several-maps"  # or "verify"
    message_override: str = ""
    code: str = "HI001"
    identity: str = ""

    @property
    def message(self) -> str:
        if self.message_override:
            return self.message_override
        return (
            f"fusion '{self.fusion}' reads operand {self.operand} (%{self.operand_name}) "
            f"through {len(self.maps)} distinct maps"
        )

    @property
    def rule(self) -> str:
        return RULES[self.code][0]

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "rule": self.rule,
            "identity": self.identity,
            "kind": self.kind,
            "source": self.source,
            "module": self.module,
            "fusion": self.fusion,
            "line": self.line,
            "operand": self.operand,
            "operand_name": self.operand_name,
            "output": self.output,
            "maps": list(self.maps),
            "op_name": self.op_name,
            "source_location": self.source_location,
            "message": self.message,
        }


def _map_text(row) -> tuple[str, ...]:
    return tuple(m.text if m.text is not None else f"UNKNOWN ({m.unknown})" for m in row.maps)


def _bare(name: str) -> str:
    return name.removeprefix("%")


def _allowed_by(t: TargetReport, allow: Iterable[str]) -> list[str]:
    names = (t.name,) if t.calls is None else (t.name, t.calls)
    return [a for a in allow if any(n == _bare(a) or fnmatchcase(n, _bare(a)) for n in names)]


def code_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """Like a linter: a code is on when some ``select`` prefix matches it and no longer-or-equal
    ``ignore`` prefix does (``ALL`` selects every code)."""
    picked = [len(s) for s in select if s == "ALL" or code.startswith(s)]
    dropped = [len(s) for s in ignore if s == "ALL" or code.startswith(s)]
    return bool(picked) and (not dropped or max(picked) > max(dropped))


def findings(
    reports: Iterable[ModuleReport],
    allow: Iterable[str] = (),
    select: Iterable[str] = DEFAULT_SELECT,
    ignore: Iterable[str] = (),
    used_allow: set | None = None,
) -> list[Finding]:
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
                out.append(
                    Finding(
                        mod.source,
                        mod.name,
                        t.name,
                        t.line,
                        row.operand,
                        row.operand_name,
                        row.output,
                        _map_text(row),
                        t.op_name,
                        t.source_location,
                        code=code,
                        identity=info.get("identity", ""),
                    )
                )
        if code_selected("HI900", select, ignore):
            out.extend(
                Finding(mod.source, mod.name, "", d.line, -1, "", -1, (), "", "", "verify", d.message, code="HI900")
                for d in mod.diagnostics
                if d.severity == "error" and d.message.startswith("verify:")
            )
    return out


def fusions_checked(reports: Iterable[ModuleReport]) -> int:
    """How many fusions the findings were looked for in."""
    return sum(1 for m in reports for t in m.targets if t.kind == "fusion")


# ---- baseline ------------------------------------------------------------------------------


def baseline_document(found: list[Finding]) -> dict:
    counts = Counter(f.identity for f in found if f.identity)
    first: dict[str, Finding] = {}
    for f in found:
        if f.identity:
            first.setdefault(f.identity, f)
    entries = [
        {
            "identity": i,
            "count": counts[i],
            "code": first[i].code,
            "example": f"{first[i].fusion} operand {first[i].operand}",
            "source_location": first[i].source_location,
        }
        for i in sorted(counts)
    ]
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
        raise BaselineError(
            f"{path}: error: not a baseline file (expected schema {BASELINE_SCHEMA!r}; "
            "write one with 'hlo-index check --write-baseline FILE')"
        )
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
