"""Affine indexing maps: expressions, intervals, ``IndexingMap``, compose, simplify, text form.

This package knows nothing of HLO. See docs/CONTRACTS.md (``hlo_index.affine``).
"""

from __future__ import annotations

from .expr import Expr, NonAffineError, ceildiv, const, dim, floordiv, mod, range_var, runtime_var
from .indexing_map import IndexingMap
from .interval import Interval, RuntimeVar
from .text import MapSyntaxError, parse_expr, parse_map

__all__ = [
    "Expr",
    "NonAffineError",
    "dim",
    "range_var",
    "runtime_var",
    "const",
    "floordiv",
    "ceildiv",
    "mod",
    "Interval",
    "RuntimeVar",
    "IndexingMap",
    "parse_map",
    "parse_expr",
    "MapSyntaxError",
    "clear_caches",
]


def clear_caches() -> None:
    """Empty every table of the current analysis context (``hlo_index.context``), so that the
    next timings are cold. Expressions built before the call stay valid and compare equal (by
    structure) to new ones."""
    from ..context import current

    current().clear()
