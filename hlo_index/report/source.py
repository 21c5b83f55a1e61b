"""Each target's ``source`` in JSON: the op name and the code location that created it.

From the instruction's metadata (``op_name``, ``source_file`` / ``source_line``) and the module's
stack-frame tables (``stack_frame_id``: the innermost frame, with its function). One of
``build.TARGET_FIGURES``; a computation (no metadata) gets no ``source``.
"""

from __future__ import annotations

from typing import Any

from ..hlo.model import Computation
from .model import TargetReport


def add_source(report: TargetReport, target: Any, module: Any, options: dict) -> None:
    if isinstance(target, Computation) or getattr(target, "metadata", None) is None:
        return
    loc = module.source_location(target)
    report.extra["source"] = {
        "op_name": target.metadata.op_name or None,
        "op_type": target.metadata.op_type or None,
        "file": loc.file if loc is not None else None,
        "line": loc.line if loc is not None and loc.line else None,
        "function": (loc.function or None) if loc is not None else None,
    }
