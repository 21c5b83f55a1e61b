"""Where the start indices of dynamic-slice, dynamic-update-slice, gather and scatter come from.

A start known only at runtime is a runtime variable whose interval is its feasible range after
XLA's handling: dynamic-slice, dynamic-update-slice and gather clamp starts into
``[0, dim - size]``; scatter skips a window whose start lies outside that range. A start that
comes from a ``constant`` (uniform over the batch) or an ``iota`` is folded into the map.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..affine import Expr, Interval, RuntimeVar, const, runtime_var
from ..hlo.model import Instruction

if TYPE_CHECKING:
    import numpy as np

KnownStart = tuple[Expr, int, int]  # expression, smallest and largest value


def constant_values(op: Instruction) -> np.ndarray | None:
    """The elements of an integer (or pred) ``constant`` operand as int64, shaped like it, or None."""
    import numpy as np

    values = op.literal_values()
    if values is None or values.dtype.kind not in "biu":
        return None
    ints: np.ndarray = values.astype(np.int64)
    return ints


def known_start(
    indices: Instruction, index_vector_dim: int, component: int, batch_exprs: Sequence[Expr]
) -> KnownStart | None:
    """Start component ``component`` when the indices operand is a constant or an iota.

    ``batch_exprs`` are the expressions of the indices' batch coordinates (its dims other than
    ``index_vector_dim``, in order) in the map being built.
    """
    rank = indices.shape.rank
    if indices.opcode == "iota":
        axis = indices.attr("iota_dimension", 0)
        if axis == index_vector_dim and index_vector_dim < rank:
            return const(component), component, component
        position = axis if axis < index_vector_dim else axis - 1
        return batch_exprs[position], 0, indices.shape.dims[axis] - 1
    if indices.opcode != "constant":
        return None  # before numpy's import (~40 ms): most indices are computed at run time
    import numpy as np

    values = constant_values(indices)
    if values is None:
        return None
    vectors = values[..., None] if index_vector_dim == rank else np.moveaxis(values, index_vector_dim, -1)
    column = vectors[..., component]
    if column.size == 0 or not (column == column.flat[0]).all():
        return None
    value = int(column.flat[0])
    return const(value), value, value


class Starts:
    """Builds start expressions, allocating runtime variables for the ones not known statically.

    A start known statically (an iota) that is in range for some positions and clamped for others
    is exact as pieces: ``choice`` picks one piece per such start (in the order they are met);
    ``arity`` records how many pieces each had and ``constraints`` the domain of the chosen ones.
    """

    def __init__(self, choice: tuple[int, ...] = ()) -> None:
        self.runtime: list[RuntimeVar] = []
        self.never_valid = False  # scatter: a folded start that is always out of bounds
        self.choice = choice
        self.arity: list[int] = []
        self.constraints: list[tuple[Expr, Interval]] = []

    def runtime_start(self, max_start: int, description: str) -> Expr:
        self.runtime.append(RuntimeVar(Interval(0, max_start), description))
        return runtime_var(len(self.runtime) - 1)

    def clamped(self, known: KnownStart | None, max_start: int, description: str) -> Expr:
        """Gather / dynamic slices: out-of-range starts are clamped."""
        if known is not None:
            expr, lo, hi = known
            if lo >= 0 and hi <= max_start:
                return expr
            if lo == hi:
                return const(min(max(lo, 0), max_start))
            return self._clamped_piece(expr, lo, hi, max_start)
        return self.runtime_start(max_start, description)

    def _clamped_piece(self, expr: Expr, lo: int, hi: int, max_start: int) -> Expr:
        """clamp(expr, 0, max_start) as pieces: expr where it is in range, 0 below, max_start above."""
        pieces = []
        if lo <= max_start and hi >= 0:
            pieces.append((expr, Interval(max(lo, 0), min(hi, max_start))))
        if lo < 0:
            pieces.append((const(0), Interval(lo, min(hi, -1))))
        if hi > max_start:
            pieces.append((const(max_start), Interval(max(lo, max_start + 1), hi)))
        k = len(self.arity)
        self.arity.append(len(pieces))
        value, interval = pieces[self.choice[k] if k < len(self.choice) else 0]
        self.constraints.append((expr, interval))
        return value

    def skipped(self, known: KnownStart | None, max_start: int, description: str) -> Expr:
        """Scatter: out-of-range windows are dropped. A runtime start is a variable even where only
        one start is in range: the window lands only when the index takes that value."""
        if known is not None:
            expr, lo, hi = known
            if lo >= 0 and hi <= max_start:
                return expr
            if lo == hi:
                self.never_valid = True
                return const(0)
        return self.runtime_start(max_start, description)


def in_range(expr: Expr, size: int) -> tuple[Expr, Interval]:
    return expr, Interval(0, size - 1)
