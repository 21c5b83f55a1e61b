"""``check --format sarif``: the findings with the finding-kinds table and the tool's version."""

from __future__ import annotations

import json


def sarif_text(found, selected) -> str:
    """SARIF of ``found``; ``selected`` is every selected finding before the baseline (for the ranks)."""
    from importlib.metadata import PackageNotFoundError, version

    from ..render.sarif import sarif_document
    from ..report.finding_kinds import DEFAULT_SELECT, RULES

    try:
        tool_version = version("hlo-index")
    except PackageNotFoundError:
        tool_version = "0"
    return json.dumps(sarif_document(found, RULES, DEFAULT_SELECT, tool_version, ranked=selected), indent=1)
