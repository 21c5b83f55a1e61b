"""Arithmetic that runs alike on ints, numpy index arrays and affine expressions.

The layout pipeline is written once over these, so the offsets it computes as numbers and the
indexing maps it builds as expressions can never disagree. Each folds the trivial cases (a
factor of 1, a bound within the divisor) so that the expressions stay small.
"""

from __future__ import annotations

import sys
from typing import Any

from ..affine import Expr


def is_zero(x: Any) -> bool:
    if isinstance(x, int):
        return x == 0
    numpy = sys.modules.get("numpy")  # a numpy integer exists only once numpy is imported
    return numpy is not None and isinstance(x, numpy.integer) and x == 0


def add(a: Any, b: Any) -> Any:
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    if isinstance(a, int) and isinstance(b, Expr):
        return b + a
    return a + b


def mul(x: Any, c: int) -> Any:
    if c == 1 or is_zero(x):
        return x
    if c == 0:
        return 0
    return x * c


def floordiv(x: Any, c: int, bound: int) -> Any:
    """``x floordiv c`` for ``0 <= x < bound``."""
    if c == 1:
        return x
    if bound <= c:
        return 0
    return x.floordiv(c) if isinstance(x, Expr) else x // c


def mod(x: Any, c: int, bound: int) -> Any:
    """``x mod c`` for ``0 <= x < bound``."""
    if c == 1:
        return 0
    if bound <= c:
        return x
    return x.mod(c) if isinstance(x, Expr) else x % c
