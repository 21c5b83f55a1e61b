"""Diagnostics: ``path:line:col: error: message`` plus the source line and a caret."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .model import Diagnostic


class ParseError(Exception):
    """Text that is not a usable HLO module. ``diagnostic`` is the first problem, ``diagnostics`` all."""

    def __init__(self, diagnostic: Diagnostic, diagnostics: Sequence[Diagnostic] = ()):
        super().__init__(format_diagnostic(diagnostic))
        self.diagnostic = diagnostic
        self.diagnostics = list(diagnostics) or [diagnostic]


def error(message: str, line: int = 0, column: int = 0, path: str = "", source_line: str = "") -> Diagnostic:
    return Diagnostic("error", message, line, column, source_line, path)


def with_source(diagnostic: Diagnostic, text: str, path: str) -> Diagnostic:
    """Fill in the path and the offending line's text from the whole source text."""
    source_line = diagnostic.source_line
    if not source_line and diagnostic.line > 0:
        source_line = line_of(text, diagnostic.line)
    return replace(diagnostic, path=diagnostic.path or path, source_line=source_line)


def line_of(text: str, line: int) -> str:
    """Text of 1-based line ``line`` (without its newline); '' if out of range."""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    end = text.find("\n", start)
    return (text[start:] if end < 0 else text[start:end]).rstrip("\r")


def format_diagnostic(d: Diagnostic) -> str:
    """``path:line:col: severity: message``, then the source line and a caret under the column."""
    where = d.path or "<input>"
    if d.line:
        where += f":{d.line}:{d.column}"
    out = f"{where}: {d.severity}: {d.message}"
    if d.source_line:
        shown = d.source_line.replace("\t", " ")
        col = max(d.column, 1)
        if len(shown) > 200:  # keep the caret visible on the huge lines real dumps have
            start = max(0, col - 100)
            shown = ("..." if start else "") + shown[start : start + 200]
            col = col - start + (3 if start else 0)
        out += f"\n{shown}\n{' ' * (col - 1)}^"
    return out


def line_column_of(data: bytes, offset: int) -> tuple[int, int]:
    """1-based (line, column) of byte ``offset`` in ``data``."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data.count(b"\n", 0, offset) + 1, offset - line_start + 1
