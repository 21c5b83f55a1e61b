"""Joining maps that differ only in which output elements they apply to.

Write a map's relation as ``{(d, r) : d ∈ D, r ∈ T(d)}``: ``D`` is the dims box cut by the
constraints that mention dimensions only (``d1 mod 32 in [0, 15]``), ``T(d)`` what the results,
the range variables and every other constraint give at ``d``. Two maps with the same ``T`` (same
range variables, results and other constraints, formula for formula) relate ``D_a ∪ D_b`` to
``T``: one map, provided some dims box and dim-only constraints describe ``D_a ∪ D_b`` exactly.
Such a description is proposed (the hull box with the constraints both maps share, their
intervals joined) and kept only when the three dim sets, enumerated over the dimensions concerned,
prove it equal to the union. Rotary embeddings and attention head splits leave exactly these
pieces: ``d1 in [0, 239], d1 mod 32 in [0, 15]`` and ``d1 in [16, 255], d1 mod 32 in [16, 31]``
reading the same elements are ``d1 in [0, 255]``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from ..affine import IndexingMap, Interval, dim
from ..affine.evaluate import Value, evaluate_expr
from ..affine.expr import DIM, Expr
from ..context import budgets

if TYPE_CHECKING:
    import numpy as np

Constraint = tuple[Expr, Interval]


def is_dim_only(e: Expr) -> bool:
    """``e`` mentions dimensions and nothing else (no range or runtime variable)."""
    variables = e.variables()
    return bool(variables) and all(v.kind == DIM for v in variables)


def split_constraints(m: IndexingMap) -> tuple[tuple[Constraint, ...], tuple[Constraint, ...]]:
    """(dim-only constraints, the others), each in ``m``'s order."""
    dim_only = tuple(c for c in m.constraints if is_dim_only(c[0]))
    others = tuple(c for c in m.constraints if not is_dim_only(c[0]))
    return dim_only, others


def body_key(m: IndexingMap) -> tuple[object, ...]:
    """What two maps must share for their domains to be joined: everything but the dims box and
    the dim-only constraints."""
    return (m.num_dims, m.range_vars, m.results, split_constraints(m)[1])


def dims_used(constraints: Sequence[Constraint]) -> set[int]:
    return {v.value for e, _ in constraints for v in e.variables() if v.kind == DIM}


def domain_mask(
    dims: Sequence[Interval], constraints: Sequence[Constraint], axes: Sequence[int], box: Sequence[Interval]
) -> np.ndarray:
    """Which points of ``box`` (over dimensions ``axes``, last fastest, flattened) lie in the
    domain ``dims`` + dim-only ``constraints``; every constrained dimension must be in ``axes``."""
    import numpy as np

    grids = np.meshgrid(*[np.arange(iv.lo, iv.hi + 1, dtype=np.int64) for iv in box], indexing="ij")
    env: dict[tuple[int, int], Value] = {(DIM, k): g.reshape(-1) for k, g in zip(axes, grids)}
    n = int(np.prod([iv.size for iv in box], dtype=np.int64)) if box else 1
    inside = np.ones(n, dtype=bool)
    for k in axes:
        iv = dims[k]
        inside &= (env[(DIM, k)] >= iv.lo) & (env[(DIM, k)] <= iv.hi)
    memo: dict[Expr, Value] = {}
    for e, iv in constraints:
        value = np.broadcast_to(evaluate_expr(e, env, memo), (n,))
        inside &= (value >= iv.lo) & (value <= iv.hi)
    return inside


def _box_size(box: Sequence[Interval]) -> int:
    size = 1
    for iv in box:
        size *= max(iv.size, 0)
    return size


def same_domains(
    parts: Sequence[tuple[Sequence[Interval], Sequence[Constraint]]],
    whole: tuple[Sequence[Interval], Sequence[Constraint]],
) -> bool | None:
    """True when the domain ``whole`` (dims, dim-only constraints) is exactly the union of the
    ``parts``; None when the dimensions concerned span too many points to list."""
    import numpy as np

    num_dims = len(whole[0])
    axes = set(dims_used(whole[1]))
    for dims, constraints in parts:
        axes |= dims_used(constraints)
        axes |= {k for k in range(num_dims) if dims[k] != whole[0][k]}
    # a dimension outside ``axes`` has one interval everywhere and no constraint on it
    axes_list = sorted(axes)
    box = [whole[0][k] for k in axes_list]
    for dims, _ in parts:
        box = [b.union(dims[k]) for b, k in zip(box, axes_list)]
    if _box_size(box) > budgets().semantic_check_points:
        return None
    union = np.zeros(_box_size(box), dtype=bool)
    for dims, constraints in parts:
        union |= domain_mask(dims, constraints, axes_list, box)
    return bool(np.array_equal(union, domain_mask(whole[0], whole[1], axes_list, box)))


def _joined_constraints(first: Sequence[Constraint], second: Sequence[Constraint]) -> list[Constraint]:
    """The constraints on expressions both lists bound, each interval the hull of the two."""
    bound = dict(second)
    out = []
    for e, iv in first:
        other = bound.get(e)
        if other is not None:
            out.append((e, iv.union(other)))
    return out


def _candidate_domains(
    dims_a: tuple[Interval, ...],
    rules_a: tuple[Constraint, ...],
    dims_b: tuple[Interval, ...],
    rules_b: tuple[Constraint, ...],
    hull: list[Interval],
) -> Iterator[tuple[list[Interval], list[Constraint]]]:
    """Descriptions that may fit ``D_a ∪ D_b``, simplest first: the hull box; the hull with the
    shared constraints joined; the hull with one piece's constraints (a periodic run extended by
    one more period); the hull with a congruence of period ``b``'s offset from ``a`` along the one
    dimension where they differ (heads of an attention split, ``d1 in [0, 1]`` and ``[4, 5]``)."""
    seen: list[list[Constraint]] = []
    joined = _joined_constraints(rules_a, rules_b)
    options: list[list[Constraint]] = [[], joined, list(rules_a), list(rules_b)]
    differing = [k for k, (x, y) in enumerate(zip(dims_a, dims_b)) if x != y]
    if len(differing) == 1:
        k = differing[0]
        first, second = sorted((dims_a[k], dims_b[k]), key=lambda iv: iv.lo)
        period = second.lo - first.lo
        if period > 0 and first.size == second.size and first.size < period:
            lo = first.lo % period
            options.append(
                [*joined, (dim(k).mod(period), Interval(lo, lo + first.size - 1))]
                if lo + first.size <= period
                else joined
            )
    for constraints in options:
        if constraints not in seen:
            seen.append(constraints)
            yield hull, constraints


def domain_join(a: IndexingMap, b: IndexingMap) -> IndexingMap | None:
    """One map whose relation is proved equal to ``a ∪ b`` when the two differ only in their dims
    domain (see the module docstring), else None."""
    if a.runtime_vars or b.runtime_vars or body_key(a) != body_key(b):
        return None
    dims_a, others = split_constraints(a)
    dims_b, _ = split_constraints(b)
    if a.dims == b.dims and dims_a == dims_b:
        return None
    hull = [x.union(y) for x, y in zip(a.dims, b.dims)]
    for dims, constraints in _candidate_domains(a.dims, dims_a, b.dims, dims_b, hull):
        proved = same_domains([(a.dims, dims_a), (b.dims, dims_b)], (dims, constraints))
        if proved is None:
            return None
        if proved:
            return IndexingMap(dims, a.range_vars, (), a.results, (*others, *constraints)).simplified()
    return None
