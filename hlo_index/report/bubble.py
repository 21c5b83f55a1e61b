"""``bubble``'s report: every slice/reshape pair of HLO modules and MLIR functions, with its verdict."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class BubbleModule:
    kind: str  # "hlo" | "mlir"
    name: str  # the module's name; for MLIR, the file shown
    chains: list  # analyses.reorder / mlir chains, in order
    source: str = ""  # the file it was read from ("<stdin>" for -)


@dataclass(slots=True)
class BubbleReport:
    modules: list[BubbleModule] = field(default_factory=list)
    diagnostics: list[str] = field(default_factory=list)  # formatted, in input order
    failed: bool = False  # some input could not be read


def bubble_report(paths: tuple[str, ...], input_kind: str = "auto") -> BubbleReport:
    """Analyse each path (a directory counts as its HLO and MLIR files; ``-`` is stdin);
    ``input_kind`` ``auto`` takes ``*.mlir`` files and text that is MLIR as MLIR."""
    from ..analyses.reorder import analyse_module
    from ..hlo import format_diagnostic
    from ..hlo.diagnostics import ParseError
    from ..hlo.loader import hlo_files_in, parse_checked, read_text
    from ..mlir import MlirError, analyse_mlir_text, looks_like_mlir

    report = BubbleReport()
    files = []
    for path in paths:
        if path != "-" and os.path.isdir(path):
            found = sorted(set(hlo_files_in(path)) | set(_mlir_files_in(path)))
            if not found:  # as analyze says of a directory without modules
                report.diagnostics.append(f"{path}: error: no HLO or MLIR modules found in directory")
                report.failed = True
            files.extend(found)
        else:
            files.append(path)
    for path in files:
        display = "<stdin>" if path == "-" else path
        try:
            text = read_text(path)
        except ParseError as e:
            report.diagnostics.append(format_diagnostic(e.diagnostic))
            report.failed = True
            continue
        is_mlir = input_kind == "mlir" or (input_kind == "auto" and (path.endswith(".mlir") or looks_like_mlir(text)))
        if is_mlir:
            try:
                report.modules.append(BubbleModule("mlir", display, analyse_mlir_text(text, display), display))
            except MlirError as e:
                report.diagnostics.append(format_diagnostic(e.diagnostic))
                report.failed = True
            continue
        for result in parse_checked(text, display):
            if result.module is None:
                report.failed = True
                # path:line:col, the source line and a caret
                for d in result.diagnostics[:1] or ():
                    report.diagnostics.append(format_diagnostic(d))
                if not result.diagnostics:
                    report.diagnostics.append(f"{display}: error: could not be read")
                continue
            report.modules.append(BubbleModule("hlo", result.module.name, analyse_module(result.module), display))
    return report


def _mlir_files_in(directory: str) -> list[str]:
    return [
        os.path.join(root, name) for root, _, names in os.walk(directory) for name in names if name.endswith(".mlir")
    ]


def rewrite_path(module: str, chain, rewrite_dir: str) -> str | None:
    """Where an HLO chain's rewritten module goes under ``rewrite_dir`` (None: no rewrite)."""
    if chain.rewrite_parts is None:
        return None
    safe = lambda s: re.sub(r"[^A-Za-z0-9_.-]", "_", s)  # noqa: E731
    return os.path.join(rewrite_dir, f"{safe(module)}.{safe(chain.computation)}.{safe(chain.reshape)}.hlo")
