"""HLO text → typed graph: parse, load (files, .gz, stdin, dump directories), validate, print."""

from __future__ import annotations

from .diagnostics import ParseError, format_diagnostic
from .loader import LoadResult, hlo_files_in, iter_load, load, load_path, read_text
from .model import (
    Computation,
    ConvDimLabels,
    Diagnostic,
    Instruction,
    Layout,
    Metadata,
    Module,
    PadDim,
    Shape,
    SliceDim,
    SourceLocation,
    Tile,
    WindowDim,
)
from .parser import parse_shape, parse_syntax
from .printer import format_computation, format_instruction, format_module
from .shape_format import format_shape
from .validate import link

__all__ = [
    "parse_module_text",
    "parse_modules_text",
    "parse_shape",
    "parse_syntax",
    "link",
    "load",
    "load_path",
    "LoadResult",
    "ParseError",
    "format_diagnostic",
    "format_module",
    "format_computation",
    "format_instruction",
    "format_shape",
    "hlo_files_in",
    "iter_load",
    "read_text",
    "Module",
    "Computation",
    "Instruction",
    "Shape",
    "Layout",
    "Tile",
    "Metadata",
    "SourceLocation",
    "SliceDim",
    "PadDim",
    "WindowDim",
    "ConvDimLabels",
    "Diagnostic",
]


def parse_modules_text(text: str, source: str = "<string>") -> list[Module]:
    """Every module in ``text``, linked and validated; raises ParseError on the first unusable one."""
    from .loader import parse_checked

    modules = []
    for result in parse_checked(text, source):
        if result.module is None:
            raise ParseError(result.diagnostics[0], result.diagnostics)
        modules.append(result.module)
    return modules


def parse_module_text(text: str, source: str = "<string>") -> Module:
    """The single module in ``text`` (the first one if there are several); raises ParseError."""
    return parse_modules_text(text, source)[0]
