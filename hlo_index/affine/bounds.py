"""Value ranges of expressions over a domain, computed once per node and cached.

A :class:`Domain` holds the bounds of every variable of one map. ``domain.bounds(e)`` looks the
node up in a memo keyed by the (uniqued) node, so the sub-expressions shared between results,
constraints and simplifier rewrites are each ranged once; a node is never re-walked.

``mod`` gets its own rule (exact when the operand stays within one period, else ``[0, c-1]``):
expressing it as ``x - c*(x floordiv c)`` would lose the correlation and give a huge range.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..context import _ACTIVE, current, register_table, remember
from .expr import CONST, DIM, FLOORDIV, MOD, RANGE, RUNTIME, SUM, VARIABLE_KINDS, Expr
from .interval import Interval, make_interval

# Memos shared by every Domain with the same variable bounds (maps composed along a chain or
# simplified again keep their dims): domain key -> (bounds memo, simplification memo). Per
# analysis context, at most ``Budgets.shared_domains`` domains.
_SHARED = register_table("affine.bounds.domain_memos")


def clear_domain_memos() -> None:
    current().tables[_SHARED].clear()


class Domain:
    """Variable bounds of one map plus the per-node bounds memo (shared by equal domains)."""

    __slots__ = ("dims", "range_vars", "runtime_vars", "_memo", "by_kind", "simplified_memo")

    def __init__(
        self, dims: Sequence[Interval], range_vars: Sequence[Interval] = (), runtime_vars: Sequence[Interval] = ()
    ) -> None:
        self.dims = dims = tuple(dims)
        self.range_vars = range_vars = tuple(range_vars)
        self.runtime_vars = runtime_vars = tuple(runtime_vars)
        # variable kind -> the intervals of that kind, by index
        self.by_kind = {DIM: dims, RANGE: range_vars, RUNTIME: runtime_vars}
        key = (dims, range_vars, runtime_vars)
        ctx = _ACTIVE.get() or current()
        shared = ctx.tables[_SHARED]
        memos = shared.get(key)
        if memos is None:
            memos = remember(shared, key, ({}, {}), ctx.budgets.shared_domains)
        self._memo: dict[Expr, Interval] = memos[0]
        # node -> its simplified form over this domain (used by simplify.Simplifier)
        self.simplified_memo: dict[Expr, Expr] = memos[1]

    def variable_bounds(self, var: Expr) -> Interval:
        intervals = self.by_kind[var.kind]
        if var.value >= len(intervals):
            raise IndexError(f"variable {var} is not declared in this domain")
        return intervals[var.value]

    def bounds(self, e: Expr) -> Interval:
        kind = e.kind
        if kind in VARIABLE_KINDS:  # a tuple lookup, cheaper than the memo's
            try:
                return self.by_kind[kind][e.value]
            except IndexError:
                return self.variable_bounds(e)  # raises, naming the variable
        found = self._memo.get(e)
        if found is not None:
            return found
        if kind == CONST:
            found = make_interval(e.value, e.value)
        elif kind == SUM:
            lo = hi = e.value
            for atom, k in e.terms:
                b = self.bounds(atom)
                if k > 0:
                    lo += k * b.lo
                    hi += k * b.hi
                else:
                    lo += k * b.hi
                    hi += k * b.lo
            found = make_interval(lo, hi)
        elif kind == FLOORDIV:
            found = self.bounds(e.operand).floordiv(e.value)
        elif kind == MOD:
            found = self.bounds(e.operand).mod(e.value)
        else:
            found = self.bounds(e.operand).ceildiv(e.value)
        self._memo[e] = found
        return found
