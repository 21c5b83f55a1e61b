"""The ``diff --format json`` document (schema ``hlo-index-diff/1``, ``schemas/diff.json``).

Fusions in module order (NEW's, then those only OLD has); ``time_us`` appears only where a cost
model gave times; ``output`` in a change only for a fusion with several outputs.
"""

from __future__ import annotations

import json

from ..report.diff import Change, DiffReport, FusionDiff, ModuleDiff, SideTotals

DIFF_SCHEMA = "hlo-index-diff/1"


def _change(c: Change) -> dict:
    out = {"kind": c.kind, "operand": c.operand, "old": c.old, "new": c.new}
    if c.output is not None:
        out["output"] = c.output
    return out


def _fusion(f: FusionDiff, has_cost: bool) -> dict:
    out: dict[str, object] = {
        "status": f.status,
        "old": f.old.name if f.old is not None else None,
        "new": f.new.name if f.new is not None else None,
        "matched_by": f.matched_by,
        "changes": [_change(c) for c in f.changes],
        "bytes_read": {
            "old": f.old.bytes_read if f.old is not None else None,
            "new": f.new.bytes_read if f.new is not None else None,
        },
    }
    if has_cost:
        out["time_us"] = {
            "old": f.old.time_us if f.old is not None else None,
            "new": f.new.time_us if f.new is not None else None,
        }
    return out


def _totals(t: SideTotals, has_cost: bool) -> dict:
    out: dict[str, object] = {"fusions": t.fusions, "bytes_read": t.bytes_read}
    if has_cost:
        out["time_us"] = t.time_us
    return out


def _module(m: ModuleDiff, has_cost: bool) -> dict:
    return {
        "name": m.name,
        "old": m.old_path,
        "new": m.new_path,
        "fusions": [_fusion(f, has_cost) for f in m.fusions],
        "totals": {"old": _totals(m.old_totals, has_cost), "new": _totals(m.new_totals, has_cost)},
    }


def diff_document(report: DiffReport) -> dict:
    return {"schema": DIFF_SCHEMA, "modules": [_module(m, report.has_cost) for m in report.modules]}


def render_diff_json(report: DiffReport) -> str:
    return json.dumps(diff_document(report), indent=1)
