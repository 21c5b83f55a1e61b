"""Evaluation of maps: at a point, vectorised with numpy over a whole domain, read sets, and
brute-force semantic equality."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from .expr import CEILDIV, CONST, DIM, FLOORDIV, MOD, RANGE, RUNTIME, SUM, Expr
from .indexing_map import IndexingMap
from .interval import Interval

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# One value of an expression: at one point, or at many points at once (int64 arrays); numpy is
# imported by the functions that evaluate over arrays, so a run that never does skips its import.
Value: TypeAlias = "int | npt.NDArray[np.int64]"
Env: TypeAlias = dict[tuple[int, int], Value]
# Evaluation at one point stays in ints; at many points it is arrays (or ints where constant).
_V = TypeVar("_V", int, Value)


def _check_regular(m: IndexingMap) -> None:
    if m.is_undefined:
        raise ValueError(f"cannot evaluate an UNDEFINED map ({m.undefined_reason})")


def evaluate_expr(e: Expr, env: dict[tuple[int, int], _V], memo: dict[Expr, _V]) -> _V:
    """Value of ``e``; ``env`` maps ``(kind, index)`` to an int or a numpy int64 array."""
    found = memo.get(e)
    if found is not None:
        return found
    kind = e.kind
    value: _V
    if kind == CONST:
        value = e.value
    elif kind == SUM:
        value = e.value
        for atom, k in e.terms:
            value = value + k * evaluate_expr(atom, env, memo)
    elif kind == FLOORDIV:
        value = evaluate_expr(e.operand, env, memo) // e.value
    elif kind == MOD:
        value = evaluate_expr(e.operand, env, memo) % e.value
    elif kind == CEILDIV:
        value = -((-evaluate_expr(e.operand, env, memo)) // e.value)
    else:
        value = env[(kind, e.value)]
    memo[e] = value
    return value


Column: TypeAlias = "int | list[int]"


def evaluate_columns(e: Expr, env: dict[tuple[int, int], Column], memo: dict[Expr, Column]) -> Column:
    """Value of ``e`` at many points as a Python list, one value per point (an int where it is
    the same at every point); ``env`` maps ``(kind, index)`` to such columns, all of one length.
    A node costs one pass over the points: a few thousand points cost less than importing numpy."""
    found = memo.get(e)
    if found is not None:
        return found
    kind = e.kind
    value: Column
    if kind == CONST:
        value = e.value
    elif kind == SUM:
        value = e.value
        for atom, k in e.terms:
            term = evaluate_columns(atom, env, memo)
            if isinstance(term, int):
                value = value + k * term if isinstance(value, int) else [v + k * term for v in value]
            elif isinstance(value, int):
                value = [value + k * t for t in term]
            else:
                value = [v + k * t for v, t in zip(value, term)]
    elif kind in (FLOORDIV, MOD, CEILDIV):
        operand = evaluate_columns(e.operand, env, memo)
        c = e.value
        if isinstance(operand, int):
            value = operand // c if kind == FLOORDIV else operand % c if kind == MOD else -(-operand // c)
        elif kind == FLOORDIV:
            value = [v // c for v in operand]
        elif kind == MOD:
            value = [v % c for v in operand]
        else:
            value = [-(-v // c) for v in operand]
    else:
        value = env[(kind, e.value)]
    memo[e] = value
    return value


def as_column(value: Column, n: int) -> list[int]:
    """A column of ``n`` values (an int stands for the same value at every point)."""
    return [value] * n if isinstance(value, int) else value


def _env(dims: Sequence[int], range_vals: Sequence[int], runtime_vals: Sequence[int]) -> Env:
    env: Env = {(DIM, i): v for i, v in enumerate(dims)}
    env.update({(RANGE, i): v for i, v in enumerate(range_vals)})
    env.update({(RUNTIME, i): v for i, v in enumerate(runtime_vals)})
    return env


def evaluate_point(
    m: IndexingMap, dims: Sequence[int], range_vals: Sequence[int] = (), runtime_vals: Sequence[int] = ()
) -> tuple[int, ...]:
    """Results at one point (no domain check)."""
    _check_regular(m)
    if m.is_known_empty:
        raise ValueError("cannot evaluate a KNOWN EMPTY map")
    env = _env([int(v) for v in dims], [int(v) for v in range_vals], [int(v) for v in runtime_vals])
    memo: dict[Expr, Value] = {}
    return tuple(int(evaluate_expr(e, env, memo)) for e in m.results)


def _default_runtime(m: IndexingMap, runtime_vals: Sequence[int] | None) -> list[int]:
    if runtime_vals is None:
        return [v.interval.lo for v in m.runtime_vars]
    return [int(v) for v in runtime_vals]


def _grid(intervals: Sequence[Interval]) -> np.ndarray:
    """All points of a box, shape [n, len(intervals)], last coordinate fastest."""
    import numpy as np

    if not intervals:
        return np.zeros((1, 0), dtype=np.int64)
    axes = [np.arange(b.lo, b.hi + 1, dtype=np.int64) for b in intervals]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([a.reshape(-1) for a in mesh], axis=1)


def _sample_box(intervals: Sequence[Interval], count: int, seed: int) -> np.ndarray:
    import numpy as np

    rng = np.random.default_rng(seed)
    columns = [rng.integers(b.lo, b.hi + 1, size=count, dtype=np.int64) for b in intervals]
    points = np.stack(columns, axis=1) if columns else np.zeros((count, 0), dtype=np.int64)
    return np.unique(points, axis=0)


def dim_points(m: IndexingMap, limit: int, seed: int) -> np.ndarray:
    """Every point of the dims box, or a seeded uniform sample when the dims x range-vars box
    exceeds ``limit`` candidates."""
    range_size = 1
    for b in m.range_vars:
        range_size *= max(b.size, 0)
    dim_size = 1
    for b in m.dims:
        dim_size *= max(b.size, 0)
    if dim_size * max(range_size, 1) <= limit:
        return _grid(m.dims)
    count = max(1, limit // max(range_size, 1))
    return _sample_box(m.dims, min(count, dim_size), seed)


def relation_at(
    m: IndexingMap, points: np.ndarray, runtime_vals: Sequence[int], range_points: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For the given dim points: ``(feasible dims+range points, results)`` as int64 arrays.
    Every range-variable point is tried unless ``range_points`` gives the ones to try."""
    import numpy as np

    n_dims = m.num_dims
    n_range = len(m.range_vars)
    width = n_dims + n_range
    outside = any(not v.interval.contains(x) for v, x in zip(m.runtime_vars, runtime_vals))
    if m.is_known_empty or outside or any(b.lo > b.hi for b in m.dims + m.range_vars):
        return np.zeros((0, width), np.int64), np.zeros((0, m.num_results), np.int64)
    inside = np.ones(len(points), dtype=bool)
    for i, b in enumerate(m.dims):
        inside &= (points[:, i] >= b.lo) & (points[:, i] <= b.hi)
    points = points[inside]
    ranges = _grid(m.range_vars) if range_points is None else range_points
    full = np.concatenate([np.repeat(points, len(ranges), axis=0), np.tile(ranges, (len(points), 1))], axis=1)
    env: Env = {(DIM, i): full[:, i] for i in range(n_dims)}
    env.update({(RANGE, i): full[:, n_dims + i] for i in range(n_range)})
    env.update({(RUNTIME, i): v for i, v in enumerate(runtime_vals)})
    memo: dict[Expr, Value] = {}
    keep = np.ones(len(full), dtype=bool)
    for e, b in m.constraints:
        value = np.broadcast_to(evaluate_expr(e, env, memo), (len(full),))
        keep &= (value >= b.lo) & (value <= b.hi)
    results = [np.broadcast_to(evaluate_expr(e, env, memo), (len(full),))[keep] for e in m.results]
    out = np.stack(results, axis=1) if results else np.zeros((int(keep.sum()), 0), np.int64)
    return full[keep], out.astype(np.int64)


def enumerate_map(
    m: IndexingMap, runtime_vals: Sequence[int] | None = None, limit: int = 1 << 20, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    _check_regular(m)
    if m.is_known_empty:
        return np.zeros((0, 0), np.int64), np.zeros((0, m.num_results), np.int64)
    return relation_at(m, dim_points(m, limit, seed), _default_runtime(m, runtime_vals))


def read_set(
    m: IndexingMap, dim_point: Sequence[int], runtime_vals: Sequence[int] | None = None
) -> set[tuple[int, ...]]:
    import numpy as np

    _check_regular(m)
    if m.is_known_empty:
        return set()
    point = np.array([list(dim_point)], dtype=np.int64).reshape(1, m.num_dims)
    _, results = relation_at(m, point, _default_runtime(m, runtime_vals))
    return {tuple(int(v) for v in row) for row in results}


def relation_rows(
    m: IndexingMap, points: np.ndarray, runtime_vals: Sequence[int], range_points: np.ndarray | None = None
) -> set[tuple[int, ...]]:
    """The set of ``(dims..., results...)`` rows, range variables projected away."""
    import numpy as np

    feasible, results = relation_at(m, points, runtime_vals, range_points)
    rows = np.concatenate([feasible[:, : m.num_dims], results], axis=1)
    return set(map(tuple, np.unique(rows, axis=0).tolist())) if len(rows) else set()


def semantically_equal(a: IndexingMap, b: IndexingMap, limit: int = 1 << 18, seed: int = 0) -> bool:
    """Brute-force comparison of the relations ``{(dims, results)}`` (range variables projected
    away), per runtime assignment.

    Exhaustive, hence a proof, when the union of both dims boxes times the range-variable box
    holds at most ``limit`` points and there are at most 64 runtime assignments. Beyond that it
    is a *bounded* check with a fixed ``seed``: uniformly sampled dims points (and, when the
    range-variable box alone exceeds ``limit``, sampled range points, so witnesses outside the
    sample are missed), and runtime assignments made of every corner, the midpoints and 16
    random ones. ``True`` then means no difference was found."""
    if a.is_undefined or b.is_undefined:
        return a.is_undefined and b.is_undefined and a.undefined_reason == b.undefined_reason
    if a.is_known_empty and b.is_known_empty:
        return True
    if a.is_known_empty or b.is_known_empty:
        regular = b if a.is_known_empty else a
        return not _has_feasible_point(regular, limit, seed)
    if a.num_dims != b.num_dims or a.num_results != b.num_results or len(a.runtime_vars) != len(b.runtime_vars):
        return False
    if not a.runtime_vars and box_points(a) <= LISTED_IN_PYTHON and box_points(b) <= LISTED_IN_PYTHON:
        return relation_on_lists(a) == relation_on_lists(b)
    import numpy as np

    box = [da.union(db) for da, db in zip(a.dims, b.dims)]
    probe = IndexingMap(box, a.range_vars if len(a.range_vars) >= len(b.range_vars) else b.range_vars)
    points = dim_points(probe, limit, seed)
    range_a, range_b = _range_sample(a, limit, seed), _range_sample(b, limit, seed)
    for runtime in _runtime_assignments(a, b, seed=seed):
        feasible_a, results_a = relation_at(a, points, runtime, range_a)
        feasible_b, results_b = relation_at(b, points, runtime, range_b)
        if not same_row_sets(
            np.concatenate([feasible_a[:, : a.num_dims], results_a], axis=1),
            np.concatenate([feasible_b[:, : b.num_dims], results_b], axis=1),
        ):
            return False
    return True


# A map whose domain box holds at most this many points is listed on Python lists: a few
# thousand points cost less than importing numpy (~75 ms), which a small module may never need.
LISTED_IN_PYTHON = 1 << 12


def box_points(m: IndexingMap) -> int:
    """The points of ``m``'s domain box (dims times range variables), constraints aside."""
    size = 1
    for b in (*m.dims, *m.range_vars):
        size *= max(b.size, 0)
    return size


def relation_on_lists(m: IndexingMap, runtime_vals: Sequence[int] = ()) -> set[tuple[int, ...]]:
    """The rows ``(dims..., results...)`` of a regular, not KNOWN EMPTY map, range variables
    projected away, runtime variables at ``runtime_vals``: every point of its domain box evaluated
    on Python lists (for small boxes: see ``LISTED_IN_PYTHON``)."""
    intervals = [*m.dims, *m.range_vars]
    if any(b.size <= 0 for b in intervals):
        return set()
    points = list(itertools.product(*[range(b.lo, b.hi + 1) for b in intervals]))
    n = len(points)
    columns = list(zip(*points)) if intervals else []
    env: dict[tuple[int, int], Column] = {(RUNTIME, i): int(v) for i, v in enumerate(runtime_vals)}
    for i in range(m.num_dims):
        env[(DIM, i)] = list(columns[i])
    for i in range(len(m.range_vars)):
        env[(RANGE, i)] = list(columns[m.num_dims + i])
    memo: dict[Expr, Column] = {}
    keep = [True] * n
    for e, b in m.constraints:
        value = as_column(evaluate_columns(e, env, memo), n)
        keep = [ok and b.lo <= x <= b.hi for ok, x in zip(keep, value)]
    dims = [as_column(env[(DIM, i)], n) for i in range(m.num_dims)]
    results = [as_column(evaluate_columns(e, env, memo), n) for e in m.results]
    return (
        {row for row, ok in zip(zip(*dims, *results), keep) if ok}
        if dims or results
        else ({()} if any(keep) else set())
    )


def same_row_sets(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two int64 arrays of equal width hold the same set of rows (``relation_rows``'
    comparison). Rows become one int64 key each, row-major over the columns' joint ranges, when
    those fit: a 1-D sort (``distinct_sorted``) is far cheaper than ``np.unique(axis=0)``."""
    import numpy as np

    if not len(a) or not len(b) or a.shape[1] == 0:
        return (len(a) > 0) == (len(b) > 0)
    both = np.concatenate([a, b], axis=0)
    lo, hi = both.min(axis=0), both.max(axis=0)
    spans = [high - low + 1 for high, low in zip(hi.tolist(), lo.tolist())]
    total = 1
    for span in spans:
        total *= span
    if total >= 1 << 62:
        return bool(np.array_equal(np.unique(a, axis=0), np.unique(b, axis=0)))
    strides = [1] * len(spans)
    for k in range(len(spans) - 2, -1, -1):
        strides[k] = strides[k + 1] * spans[k + 1]
    weights = np.asarray(strides, dtype=np.int64)
    return bool(np.array_equal(distinct_sorted((a - lo) @ weights), distinct_sorted((b - lo) @ weights)))


def _range_sample(m: IndexingMap, limit: int, seed: int) -> np.ndarray | None:
    """None (every range point) when the range box fits ``limit``, else a seeded sample."""
    size = 1
    for b in m.range_vars:
        size *= max(b.size, 0)
    return None if size <= limit else _sample_box(m.range_vars, limit, seed)


def _runtime_assignments(
    a: IndexingMap, b: IndexingMap, max_count: int = 64, seed: int = 0, random_count: int = 16
) -> list[tuple[int, ...]]:
    import numpy as np

    boxes = [va.interval.union(vb.interval) for va, vb in zip(a.runtime_vars, b.runtime_vars)]
    total = 1
    for box in boxes:
        total *= box.size
    if total <= max_count:
        return list(itertools.product(*[range(box.lo, box.hi + 1) for box in boxes]))
    chosen = set(itertools.product(*[sorted({box.lo, box.hi, (box.lo + box.hi) // 2}) for box in boxes]))
    rng = np.random.default_rng(seed)
    for _ in range(random_count):
        chosen.add(tuple(int(rng.integers(box.lo, box.hi + 1)) for box in boxes))
    return sorted(chosen)


def _has_feasible_point(m: IndexingMap, limit: int, seed: int = 0) -> bool:
    points = dim_points(m, limit, seed)
    range_points = _range_sample(m, limit, seed)
    for runtime in _runtime_assignments(m, m, seed=seed):
        if len(relation_at(m, points, runtime, range_points)[0]):
            return True
    return False


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: numpy's hashing ``unique`` is several times slower
    here). Values within a span not much wider than their count (an operand's linear indices,
    read densely) are marked in a table instead: linear time, no sort."""
    import numpy as np

    if len(values) < 2:
        return values
    if len(values) >= _MARK_AT_LEAST:
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < _MARK_SPAN_PER_VALUE * len(values):
            marked = np.zeros(hi - lo + 1, dtype=bool)
            marked[values - lo] = True
            return np.flatnonzero(marked) + lo
    ordered = np.sort(values)
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


_MARK_AT_LEAST = 1 << 12  # below, a sort is as cheap as allocating the table
_MARK_SPAN_PER_VALUE = 8  # table cells per value at most (a sort is O(n log n), the table O(span))
