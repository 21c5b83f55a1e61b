"""Affine indexing maps: expressions, intervals, ``IndexingMap``, compose, simplify, text form.

This package knows nothing of HLO. See docs/CONTRACTS.md (``hlo_index.affine``).
"""
from __future__ import annotations

from .expr import (Expr, NonAffineError, ceildiv, const, dim, floordiv, mod, range_var,
                   runtime_var)
from .bounds import clear_domain_memos as _clear_domain_memos
from .expr import clear_intern_table as _clear_intern_table
from .indexing_map import IndexingMap
from .interval import Interval, RuntimeVar
from .text import MapSyntaxError, parse_expr, parse_map

__all__ = [
    "Expr", "NonAffineError", "dim", "range_var", "runtime_var", "const", "floordiv", "ceildiv",
    "mod", "Interval", "RuntimeVar", "IndexingMap", "parse_map", "parse_expr", "MapSyntaxError",
    "clear_caches",
]


def clear_caches() -> None:
    """Empty every intern table and memo, so that the next timings are cold.

    Expressions built before the call stay valid and compare equal (by structure) to new ones."""
    _clear_intern_table()
    _clear_domain_memos()
    from .simplify import _DIGIT_VIEWS, _DIVISORS

    _DIVISORS.clear()
    _DIGIT_VIEWS.clear()
