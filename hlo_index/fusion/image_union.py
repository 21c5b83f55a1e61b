"""Replacing maps that read the same elements everywhere by one whole-box read.

A map whose results and constraints mention no dimension reads one fixed set ``S`` of operand
elements at every point of its domain ``D`` (its dims box and dim-only constraints): the pattern a
dot or a reduction leaves upstream of it. Several such maps over one domain read ``D × (S_1 ∪ S_2
∪ ...)``; when that union fills its bounding box, one map says it: ``(d...)[s...] -> (s...)`` with
the box as the range variables. The union is computed exactly, by listing each ``S_i``; a result
that is a bare range variable used nowhere else, over one interval in every map, is one
independent coordinate and is left out of the listing (the attention projections of a transformer
read a 256-row weight through ~40 such maps, each a 16-column strip pattern of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..affine import IndexingMap, Interval, range_var
from ..affine.evaluate import Value, distinct_sorted, evaluate_expr
from ..affine.expr import DIM, RANGE, Expr
from ..context import budgets
from .domain_union import split_constraints

if TYPE_CHECKING:
    import numpy as np


def reads_fixed_set(m: IndexingMap) -> bool:
    """``m`` reads the same elements at every point of its domain (no dimension in its results or
    its range-variable constraints; no runtime variable)."""
    if m.is_undefined or m.is_known_empty or m.runtime_vars:
        return False
    _, others = split_constraints(m)
    return all(v.kind != DIM for e in (*m.results, *(c for c, _ in others)) for v in e.variables())


def domain_key(m: IndexingMap) -> tuple[object, ...]:
    return (m.dims, split_constraints(m)[0], m.num_results)


def _free_coordinate(m: IndexingMap, k: int) -> Interval | None:
    """The interval of result ``k`` when it is a bare range variable that nothing else uses."""
    r = m.results[k]
    if r.kind != RANGE:
        return None
    for j, other in enumerate(m.results):
        if j != k and r in other.variables():
            return None
    if any(r in c.variables() for c, _ in m.constraints):
        return None
    return m.range_vars[r.value]


def _image(m: IndexingMap, coords: Sequence[int], limit: int) -> np.ndarray | None:
    """The distinct values of results ``coords`` over ``m``'s range variables and constraints
    (rows), or None when the range variables concerned span more than ``limit`` points."""
    import numpy as np

    _, constraints = split_constraints(m)  # the dim-only ones are the domain's, not the image's
    used = sorted(
        {v.value for k in coords for v in m.results[k].variables()}
        | {v.value for c, _ in constraints for v in c.variables()}
    )
    size = 1
    for j in used:
        size *= max(m.range_vars[j].size, 0)
    if size > limit:
        return None
    grids = np.meshgrid(
        *[np.arange(m.range_vars[j].lo, m.range_vars[j].hi + 1, dtype=np.int64) for j in used], indexing="ij"
    )
    env: dict[tuple[int, int], Value] = {(RANGE, j): g.reshape(-1) for j, g in zip(used, grids)}
    n = size
    memo: dict[Expr, Value] = {}
    keep = np.ones(n, dtype=bool)
    for e, iv in constraints:
        value = np.broadcast_to(evaluate_expr(e, env, memo), (n,))
        keep &= (value >= iv.lo) & (value <= iv.hi)
    columns = [np.broadcast_to(evaluate_expr(m.results[k], env, memo), (n,))[keep] for k in coords]
    return np.stack(columns, axis=1) if columns else np.zeros((int(keep.sum()), 0), np.int64)


def whole_box_of(maps: Sequence[IndexingMap]) -> IndexingMap | None:
    """One map equal to the union of ``maps`` (each ``reads_fixed_set``, all with one
    ``domain_key``) when their images fill their bounding box, else None."""
    import numpy as np

    first = maps[0]
    num_results = first.num_results
    free: dict[int, Interval] = {}
    for k in range(num_results):
        intervals = {_free_coordinate(m, k) for m in maps}
        if len(intervals) == 1:
            (only,) = intervals
            if only is not None:
                free[k] = only
    coords = [k for k in range(num_results) if k not in free]
    limit = budgets().semantic_check_points
    images = []
    for m in maps:
        image = _image(m, coords, limit)
        if image is None:
            return None
        images.append(image)
    rows = np.concatenate(images, axis=0)
    if len(rows) == 0:
        return None
    if not coords:  # every map reads the box of its free coordinates whole
        return _box_reader(first, [free[k] for k in range(num_results)])
    lo, hi = rows.min(axis=0), rows.max(axis=0)
    spans = hi - lo + 1
    total = 1
    for s in spans:
        total *= int(s)
    if total > limit:
        return None
    strides = np.cumprod(np.concatenate([[1], spans[:0:-1]]))[::-1].astype(np.int64)
    if len(distinct_sorted((rows - lo) @ strides)) != total:
        return None
    box = [
        free[k] if k in free else Interval(int(lo[coords.index(k)]), int(hi[coords.index(k)]))
        for k in range(num_results)
    ]
    return _box_reader(first, box)


def _box_reader(like: IndexingMap, box: Sequence[Interval]) -> IndexingMap:
    """``like``'s domain reading ``box`` whole at every point."""
    dim_only, _ = split_constraints(like)
    return IndexingMap(like.dims, box, (), [range_var(k) for k in range(len(box))], dim_only).simplified()
