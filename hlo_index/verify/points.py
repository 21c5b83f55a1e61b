"""Point evaluation of indexing maps: what the maps say an element reads (or is read by)."""

from __future__ import annotations

import math

import numpy as np

from ..affine import IndexingMap, Interval, range_var, runtime_var
from ..affine.equalities import solved_variables
from ..affine.evaluate import evaluate_expr, relation_at
from ..affine.expr import (
    CEILDIV,
    DIM,
    DIVISION_KINDS,
    FLOORDIV,
    MOD,
    RANGE,
    SUM,
    Expr,
    ceildiv,
    const,
    floordiv,
    mod,
    replace_variables,
)
from ..context import current
from ..reference import distinct
from .outcome import Skip


def runtime_as_range(m: IndexingMap) -> IndexingMap:
    """The same map with its runtime variables turned into trailing range variables: its read set
    at a point is the union over every feasible runtime value."""
    if not m.runtime_vars:
        return m
    n = len(m.range_vars)
    swap = {runtime_var(i): range_var(n + i) for i in range(len(m.runtime_vars))}
    memo: dict = {}
    return IndexingMap(
        m.dims,
        tuple(m.range_vars) + tuple(rv.interval for rv in m.runtime_vars),
        (),
        [replace_variables(e, swap.get, memo) for e in m.results],
        [(replace_variables(e, swap.get, memo), iv) for e, iv in m.constraints],
    )


def checkable_maps(maps: tuple[IndexingMap, ...], *, large: bool = False) -> list[IndexingMap]:
    """The maps as the checks evaluate them: runtime variables as range variables, range variables
    solved, merged or divided where that reads the same with fewer combinations. A map with more
    than ``verify_range_combinations`` per element skips the check, unless ``large``: the caller
    then decides membership by arithmetic (``gives_pair``) and samples images (``sampled_image``)."""
    out = []
    limit = current().budgets.verify_range_combinations
    for m in maps:
        if m.is_undefined:
            raise Skip(f"map unknown: {m.undefined_reason}")
        if m.is_known_empty:
            continue
        m = runtime_as_range(m)
        if combinations(m) > limit:
            m = merge_summed_range_vars(solve_fixed_range_vars(m))
            if combinations(m) > limit:
                m = merge_quotient_range_vars(m)
            if combinations(m) > limit and not large:
                raise Skip(f"a map has {combinations(m)} range-variable combinations per element")
        out.append(m)
    return out


def too_many_to_list(checkable: list[IndexingMap]) -> bool:
    """Whether an input-to-output image is drawn from rather than listed (``verify_image_points``)."""
    limit = current().budgets.verify_image_points
    return any(combinations(m) > limit for m in checkable)


def sampled_image(checkable: list[IndexingMap], x: tuple, rng, count: int) -> list[tuple]:
    """Up to ``count`` distinct elements the maps give for ``x``, from ``count * 8`` seeded draws
    of range values per map (each kept where the constraints hold), in the order found: the
    images themselves are too large to list. Every element returned is one the maps give."""
    found: dict[tuple, None] = {}
    for m in checkable:
        if len(x) != m.num_dims or not all(b.lo <= v <= b.hi for b, v in zip(m.dims, x)):
            continue
        for _ in range(count * 8):
            env = {(DIM, i): int(v) for i, v in enumerate(x)}
            for k, b in enumerate(m.range_vars):
                env[(RANGE, k)] = rng.randint(b.lo, b.hi)
            memo: dict = {}
            if all(b.lo <= evaluate_expr(e, env, memo) <= b.hi for e, b in m.constraints):
                found[tuple(int(evaluate_expr(e, env, memo)) for e in m.results)] = None
                if len(found) >= count:
                    return list(found)
    return list(found)


def combinations(m: IndexingMap) -> int:
    """Range-variable points ``m`` enumerates per element."""
    count = 1
    for iv in m.range_vars:
        count *= max(iv.size, 1)
    return count


def solve_fixed_range_vars(m: IndexingMap) -> IndexingMap:
    """The same map with each range variable that an equality fixes computed from the others
    (``d0 - s1 in [0, 0]``: a scatter's runtime index, made a range variable, equal to the output
    row): the equality becomes the computed value's range, so the map reads exactly the same at
    every point, enumerated over the remaining variables only."""
    solved = solved_variables(m, range(len(m.constraints)), lambda v: v.kind == RANGE)
    if not solved:
        return m
    values: dict[Expr, Expr] = {}
    for v, c, rest, k in solved:  # v = c * (value - rest); a rest names only variables solved before it
        values[v] = (m.constraints[k][1].lo - replace_variables(rest, values.get, {})) * c
    kept = [k for k in range(len(m.range_vars)) if range_var(k) not in values]
    swap: dict[Expr, Expr] = {range_var(old): range_var(new) for new, old in enumerate(kept)}
    for v, value in values.items():
        swap[v] = replace_variables(value, swap.get, {})  # the values hold only kept variables
    memo: dict = {}
    equalities = {k for _, _, _, k in solved}
    constraints = [
        (replace_variables(e, swap.get, memo), iv) for k, (e, iv) in enumerate(m.constraints) if k not in equalities
    ]
    constraints += [(swap[v], m.range_vars[v.value]) for v, _, _, _ in solved]
    return IndexingMap(
        m.dims,
        tuple(m.range_vars[k] for k in kept),
        m.runtime_vars,
        [replace_variables(e, swap.get, memo) for e in m.results],
        constraints,
    )


def merge_quotient_range_vars(m: IndexingMap) -> IndexingMap:
    """The same map with each range variable that occurs only divided (``s0 floordiv 1572864`` and
    ``(s0 floordiv 768) mod 2048``: a full reduction read through a reshape's digits) replaced by
    its quotient by the divisors' gcd ``g``, over ``[lo floordiv g, hi floordiv g]``: ``s floordiv
    (g * k)`` is ``(s floordiv g) floordiv k`` and ``s floordiv g`` takes every value of that
    interval, so the map reads the same at every point (6,291,456 combinations become 8,192)."""
    expressions = list(m.results) + [e for e, _ in m.constraints]
    for i in range(len(m.range_vars)):
        s = range_var(i)
        divisors: list[int] = []
        if not all(_only_divided(e, s, divisors) for e in expressions) or not divisors:
            continue
        g = math.gcd(*divisors)
        if g == 1:
            continue
        memo: dict = {}
        return merge_quotient_range_vars(
            IndexingMap(
                m.dims,
                tuple(Interval(v.lo // g, v.hi // g) if k == i else v for k, v in enumerate(m.range_vars)),
                m.runtime_vars,
                [_divided_by(e, s, g, memo) for e in m.results],
                [(_divided_by(e, s, g, memo), c) for e, c in m.constraints],
            )
        )
    return m


def _only_divided(e: Expr, s: Expr, divisors: list[int]) -> bool:
    """Whether ``s`` occurs in ``e`` only as ``s floordiv q`` (each ``q`` added to ``divisors``)."""
    if s not in e.variables():
        return True
    if e.kind == FLOORDIV and e.operand == s:
        divisors.append(e.value)
        return True
    if e.kind == SUM:
        return all(_only_divided(atom, s, divisors) for atom, _ in e.terms)
    if e.kind in DIVISION_KINDS:
        return _only_divided(e.operand, s, divisors)
    return False  # s itself


def _divided_by(e: Expr, s: Expr, g: int, memo: dict) -> Expr:
    """``e`` with each ``s floordiv q`` written ``s floordiv (q / g)``: ``s`` stands for its quotient by ``g``."""
    if s not in e.variables():
        return e
    hit = memo.get(e)
    if hit is not None:
        return hit
    if e.kind == FLOORDIV and e.operand == s:
        out = floordiv(s, e.value // g)
    elif e.kind == SUM:
        out = const(e.value)
        for atom, k in e.terms:
            out = out + _divided_by(atom, s, g, memo) * k
    else:
        inner = _divided_by(e.operand, s, g, memo)
        out = {FLOORDIV: floordiv, CEILDIV: ceildiv, MOD: mod}[e.kind](inner, e.value)
    memo[e] = out
    return out


def merge_summed_range_vars(m: IndexingMap) -> IndexingMap:
    """The same map with each pair of range variables that occur only as their sum (equal
    coefficients, outside any division: ``s3 + s4 - 127`` and ``s3 + s4 in [127, 254]``) made one
    variable over the sum's interval, whose every value some pair takes: what the map reads at a
    point is the same, from far fewer combinations (a 255-wide window's taps and offsets)."""
    while True:
        pair = _summed_pair(m)
        if pair is None:
            return m
        i, j = pair
        merged = m.range_vars[i].lo + m.range_vars[j].lo, m.range_vars[i].hi + m.range_vars[j].hi

        def renumber(v: Expr, i: int = i, j: int = j) -> Expr | None:
            if v.kind != RANGE:
                return None
            if v.value == j:
                return const(0)
            return range_var(v.value - 1) if v.value > j else None

        memo: dict = {}
        m = IndexingMap(
            m.dims,
            tuple(merged if k == i else iv for k, iv in enumerate(m.range_vars) if k != j),
            m.runtime_vars,
            [replace_variables(e, renumber, memo) for e in m.results],
            [(replace_variables(e, renumber, memo), iv) for e, iv in m.constraints],
        )


def _summed_pair(m: IndexingMap) -> tuple[int, int] | None:
    """Two range variables ``(i, j)``, ``i < j``, that every expression holds only as ``c * (s_i + s_j)``."""
    expressions = list(m.results) + [e for e, _ in m.constraints]
    n = len(m.range_vars)
    for i in range(n):
        for j in range(i + 1, n):
            si, sj = range_var(i), range_var(j)
            if all(_as_sum(e, si, sj) for e in expressions) and any(si in e.variables() for e in expressions):
                return i, j
    return None


def _as_sum(e: Expr, si: Expr, sj: Expr) -> bool:
    """Whether ``e`` holds ``si`` and ``sj`` only as top-level terms of one coefficient (or neither)."""
    _, terms = e.linear_terms()
    coefficients = dict(terms)
    ci, cj = coefficients.get(si), coefficients.get(sj)
    if ci != cj:
        return False
    return not any((si in atom.variables() or sj in atom.variables()) for atom, _ in terms if atom not in (si, sj))


# Values of a witness range variable tried per point, at most (a larger one is enumerated with the
# others, as before).
_WITNESS_VALUES = 1 << 12


def _witness_split(m: IndexingMap) -> tuple[IndexingMap, list[tuple[int, Interval, list]]]:
    """``m`` without its witness range variables (in no result) whose constraints involve dims
    only besides them, and per such variable (index, interval, those constraints): a point is in
    ``m``'s domain when it is in the smaller map's and, for each, some value satisfies them. The
    smaller map gives the same elements at every point, without enumerating the witnesses
    alongside every other range variable (a window tap that reaches no result multiplies an
    image by the window's size)."""
    in_results = {v.value for e in m.results for v in e.variables() if v.kind == RANGE}
    candidates = [
        j for j, interval in enumerate(m.range_vars) if j not in in_results and interval.size <= _WITNESS_VALUES
    ]
    if not candidates:  # most maps: every range variable reaches a result
        return m, []
    uses = [(e, iv, {(v.kind, v.value) for v in e.variables()}) for e, iv in m.constraints]
    witnesses: dict[int, list] = {}
    for j in candidates:
        mine = [(e, iv, kinds) for e, iv, kinds in uses if (RANGE, j) in kinds]
        if all(kind == DIM or (kind, k) == (RANGE, j) for _, _, kinds in mine for kind, k in kinds):
            witnesses[j] = [(e, iv) for e, iv, _ in mine]
    if not witnesses:
        return m, []
    kept = [j for j in range(len(m.range_vars)) if j not in witnesses]
    rename = {range_var(old): range_var(new) for new, old in enumerate(kept)}
    memo: dict = {}
    theirs = {(e, iv) for cs in witnesses.values() for e, iv in cs}
    smaller = IndexingMap(
        m.dims,
        [m.range_vars[j] for j in kept],
        m.runtime_vars,
        [replace_variables(e, rename.get, memo) for e in m.results],
        [(replace_variables(e, rename.get, memo), iv) for e, iv in m.constraints if (e, iv) not in theirs],
    )
    return smaller, [(j, m.range_vars[j], cs) for j, cs in witnesses.items()]


def _rows_at(m: IndexingMap, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``relation_at(m, points, ())`` as (feasible dims, results), each witness range variable
    checked per point instead of enumerated with the others."""
    smaller, witnesses = _witness_split(m)
    for j, interval, constraints in witnesses:
        if not len(points):
            break
        values = np.arange(interval.lo, interval.hi + 1, dtype=np.int64)
        env = {(DIM, i): np.repeat(points[:, i], len(values)) for i in range(m.num_dims)}
        env[(RANGE, j)] = np.tile(values, len(points))
        keep = np.ones(len(points) * len(values), dtype=bool)
        memo: dict = {}
        for e, iv in constraints:
            value = np.broadcast_to(evaluate_expr(e, env, memo), keep.shape)
            keep &= (value >= iv.lo) & (value <= iv.hi)
        points = points[keep.reshape(len(points), len(values)).any(axis=1)]
    feasible, results = relation_at(smaller, points, ())
    return feasible[:, : m.num_dims], results


def predicted_rows(maps: tuple[IndexingMap, ...], point: tuple, distinct: bool = True) -> np.ndarray:
    """The elements the maps give at ``point`` (union over the maps and every feasible runtime
    value), as distinct rows in ascending order: the order of ``sorted(predicted_read_set())``,
    without making a Python tuple of each (an image can hold every element of the output)."""
    found = []
    width = None
    for m in checkable_maps(maps):
        _, results = _rows_at(m, np.array([point], dtype=np.int64).reshape(1, m.num_dims))
        width = results.shape[1]
        found.append(results)
    if not found:
        return np.zeros((0, len(point) if width is None else width), np.int64)
    rows = np.concatenate(found) if len(found) > 1 else found[0]
    return _distinct_rows(rows) if distinct else rows


def _distinct_rows(rows: np.ndarray) -> np.ndarray:
    if len(rows) < 2 or rows.shape[1] == 0:
        return rows[:1] if len(rows) and rows.shape[1] == 0 else rows
    if len(rows) <= 64:  # small images: Python's set is cheaper than numpy's call overhead
        return np.array(sorted(set(map(tuple, rows.tolist()))), dtype=np.int64)
    # distinct rows in lexicographic order, through one row-major linear index per row (a 1-D
    # sort is far cheaper than np.unique(axis=0)); column by column (a reduction down the
    # columns of a tall row-major array is many times slower than one per column)
    columns = [rows[:, k] for k in range(rows.shape[1])]
    low = [int(c.min()) for c in columns]
    spans = tuple(int(c.max()) - lo + 1 for c, lo in zip(columns, low))
    if float(np.prod(np.array(spans, dtype=np.float64))) >= 2.0**62:
        return np.unique(rows, axis=0)
    linear = np.ravel_multi_index(tuple(c - lo for c, lo in zip(columns, low)), spans)
    if (linear[1:] > linear[:-1]).all():  # an image enumerated in order: already distinct and sorted
        return rows
    linear = np.sort(linear)
    keep = np.empty(len(linear), dtype=bool)
    keep[0] = True
    np.not_equal(linear[1:], linear[:-1], out=keep[1:])
    return np.stack(np.unravel_index(linear[keep], spans), axis=1) + np.array(low, dtype=np.int64)


def predicted_rows_many(
    maps: tuple[IndexingMap, ...], points: list[tuple], distinct: bool = True
) -> dict[tuple, np.ndarray]:
    """:func:`predicted_rows` for several points, with one evaluation of each map for all."""
    if len(points) < 2:
        return {p: predicted_rows(maps, p, distinct) for p in points}
    checkable = checkable_maps(maps)
    if checkable and not any(m.range_vars for m in checkable):
        # at most one element per map and point: plain integers, without numpy's cost per call
        width = checkable[0].num_results
        out = {}
        for p in points:
            images = [image for image in (image_at(m, p) for m in checkable) if image is not None]
            if distinct:
                images = sorted(set(images))
            out[p] = np.array(images, dtype=np.int64).reshape(len(images), width)
        return out
    rank = len(points[0])
    array = np.array(points, dtype=np.int64).reshape(len(points), rank)
    dims, results = [], []
    for m in checkable_maps(maps):
        feasible, got = _rows_at(m, array)
        dims.append(feasible[:, :rank])
        results.append(got)
    out = {}
    if not results:
        return {p: np.zeros((0, 0), np.int64) for p in points}
    dims_all = np.concatenate(dims)
    results_all = np.concatenate(results)
    # rows grouped by the point they belong to, through one linear index per point of the box the
    # points span (every row's dims are one of the points)
    low = array.min(axis=0)
    spans = tuple(int(n) for n in array.max(axis=0) - low + 1)
    if rank == 0 or float(np.prod(np.array(spans, dtype=np.float64))) >= 2.0**62:
        return {p: predicted_rows(maps, p, distinct) for p in points}
    row_keys = np.ravel_multi_index(tuple((dims_all - low).T), spans)
    order = np.argsort(row_keys, kind="stable")
    row_keys, results_all = row_keys[order], results_all[order]
    point_keys = np.ravel_multi_index(tuple((array - low).T), spans)
    starts = np.searchsorted(row_keys, point_keys, "left")
    ends = np.searchsorted(row_keys, point_keys, "right")
    for p, lo, hi in zip(points, starts.tolist(), ends.tolist()):
        rows = results_all[lo:hi]
        out[p] = _distinct_rows(rows) if distinct else rows
    return out


def _images(maps: tuple[IndexingMap, ...], point: tuple):
    """Per checkable map, what it gives at ``point``: ``(map, one element or None, None)`` for a
    map without range variables (plain integers, without numpy's cost per call), else
    ``(map, None, rows)`` with every feasible element as rows."""
    for m in checkable_maps(maps):
        if not m.range_vars:
            yield m, image_at(m, point), None
            continue
        _, results = _rows_at(m, np.array([point], dtype=np.int64).reshape(1, m.num_dims))
        yield m, None, results


def predicted_read_set(maps: tuple[IndexingMap, ...], point: tuple) -> set:
    """Union over the maps (and over every feasible runtime value) of the elements they give."""
    total: set = set()
    for _, image, rows in _images(maps, point):
        if rows is not None:
            total.update(map(tuple, rows.tolist()))
        elif image is not None:
            total.add(image)
    return total


def predicted_linear(maps: tuple[IndexingMap, ...], point: tuple, dims: tuple) -> np.ndarray | None:
    """:func:`predicted_read_set` as sorted distinct row-major linear indices over ``dims`` (the
    form of a reference walk's sets); None when an element given lies outside ``dims``. Each
    map's results are evaluated at the one point over its range-variable box as columns, and
    made linear column by column (no rows, no copies of the point per range point)."""
    if dims:
        try:
            return _linear_by_columns(maps, point, dims)
        except OverflowError:  # a value past int64 in Python's ints: the rows' int64 evaluation
            pass
    pieces = []
    singles = []
    for m, image, rows in _images(maps, point):
        if m.num_results != len(dims):
            return None
        if rows is not None:
            pieces.append(rows)
        elif image is not None:
            singles.append(image)
    if singles:
        pieces.append(np.array(singles, dtype=np.int64).reshape(len(singles), len(dims)))
    if not pieces:
        return np.zeros(0, np.int64)
    rows = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
    if not dims:
        return np.zeros(min(len(rows), 1), np.int64)
    if len(rows) and any(int(c.min()) < 0 or int(c.max()) >= n for c, n in zip(rows.T, dims)):
        return None
    return distinct(np.ravel_multi_index(tuple(rows.T), dims))


def _linear_by_columns(maps: tuple[IndexingMap, ...], point: tuple, dims: tuple) -> np.ndarray | None:
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    pieces = []
    singles = []
    for m in checkable_maps(maps):
        if m.num_results != len(dims):
            return None
        if not m.range_vars:
            image = image_at(m, point)
            if image is not None:
                if not all(0 <= i < n for i, n in zip(image, dims)):
                    return None
                singles.append(sum(i * stride for i, stride in zip(image, strides)))
            continue
        for ranges in _range_chunks(m.range_vars):
            columns = _image_columns(m, point, ranges)
            if not len(columns[0]):
                continue
            if any(int(c.min()) < 0 or int(c.max()) >= n for c, n in zip(columns, dims)):
                return None
            linear = columns[-1]  # its stride is 1
            for c, stride in zip(columns[:-1], strides):
                linear = linear + c * stride
            pieces.append(distinct(linear) if ranges is not m.range_vars else linear)
    if singles:
        pieces.append(np.array(singles, dtype=np.int64))
    if not pieces:
        return np.zeros(0, np.int64)
    return distinct(np.concatenate(pieces) if len(pieces) > 1 else np.array(pieces[0], dtype=np.int64))


_CHUNK = 1 << 20  # range points evaluated at once when a map's image is listed in pieces


def _box_points(ranges: tuple[Interval, ...]) -> int:
    count = 1
    for b in ranges:
        count *= max(b.size, 0)
    return count


def _range_chunks(ranges: tuple[Interval, ...]):
    """``ranges`` itself when its box holds at most ``_CHUNK`` points, else sub-boxes of at most
    that many (the widest variable cut into pieces): a full reduction's 10^7 range points listed
    at once would hold every intermediate column in memory."""
    count = _box_points(ranges)
    if count <= _CHUNK:
        yield ranges
        return
    widest = max(range(len(ranges)), key=lambda k: ranges[k].size)
    rest = count // ranges[widest].size
    step = max(_CHUNK // max(rest, 1), 1)
    lo, hi = ranges[widest].lo, ranges[widest].hi
    for start in range(lo, hi + 1, step):
        piece = list(ranges)
        piece[widest] = Interval(start, min(start + step - 1, hi))
        yield tuple(piece)


def _image_columns(m: IndexingMap, point: tuple, ranges: tuple[Interval, ...] | None = None) -> list[np.ndarray]:
    """Per result of ``m`` (with range variables, no runtime ones), its value at ``point`` for every
    feasible point of the range-variable box (last variable fastest): the columns of
    ``relation_at``'s results at that one point, the point's dims held as plain integers.
    ``ranges``: a sub-box of the range variables' to list instead."""
    if ranges is None:
        ranges = m.range_vars
    count = _box_points(ranges)
    nothing = [np.zeros(0, np.int64) for _ in m.results]
    if any(b.lo > b.hi for b in m.dims) or count == 0:
        return nothing
    env: dict = {}
    for i, (b, x) in enumerate(zip(m.dims, point)):
        if not b.lo <= x <= b.hi:
            return nothing
        env[(DIM, i)] = int(x)
    axes = [np.arange(b.lo, b.hi + 1, dtype=np.int64) for b in ranges]
    if len(axes) == 1:
        env[(RANGE, 0)] = axes[0]
    else:
        for k, grid in enumerate(np.meshgrid(*axes, indexing="ij")):
            env[(RANGE, k)] = grid.reshape(-1)
    memo: dict = {}
    keep = None
    for e, b in m.constraints:
        value = evaluate_expr(e, env, memo)
        ok = (value >= b.lo) & (value <= b.hi)
        if np.ndim(ok) == 0:  # the same for every range point
            if not ok:
                return nothing
            continue
        keep = ok if keep is None else keep & ok
    columns = [np.broadcast_to(evaluate_expr(e, env, memo), (count,)) for e in m.results]
    return [c[keep] if keep is not None else c for c in columns]


def gives_pair(checkable: list[IndexingMap], x: tuple, y: tuple) -> bool | None:
    """Whether one of the maps (``checkable_maps``'s: no runtime variables) sends ``x`` to ``y``,
    decided by one evaluation per map where every range variable is a result of its own (a
    broadcast's, a reduction's): ``y`` then fixes its value. None when some map that might give
    ``y`` has a range variable no result fixes (the caller enumerates)."""
    undecided = False
    for m in checkable:
        if len(m.results) != len(y) or not all(b.lo <= v <= b.hi for b, v in zip(m.dims, x)):
            continue
        env = {(DIM, i): int(v) for i, v in enumerate(x)}
        pinned_ok = True
        for e, want in zip(m.results, y):
            if e.kind == RANGE:
                key = (RANGE, e.value)
                if env.get(key, want) != want:
                    pinned_ok = False
                    break
                env[key] = int(want)
        if not pinned_ok:
            continue
        for e, want in zip(m.results, y):  # then sums of range variables in a mixed radix
            if e.kind == SUM and any(a.kind == RANGE and (RANGE, a.value) not in env for a, _ in e.terms):
                pinned = _pin_mixed_radix(e, int(want), env, m.range_vars)
                if pinned is False:
                    pinned_ok = False
                    break
        if not pinned_ok:
            continue
        if any((RANGE, k) not in env for k in range(len(m.range_vars))):
            found = _through_a_quotient(m, env, y)
            if found is None:
                undecided = True
            elif found:
                return True
            continue
        if _holds(m, env, y):
            return True
    return None if undecided else False


_QUOTIENT_CANDIDATES = 4096  # values of a divided sum tried for one quotient at most


def _through_a_quotient(m: IndexingMap, env: dict, y: tuple) -> bool | None:
    """Whether the map gives ``y`` where a result ``(mixed-radix sum) floordiv q`` holds range
    variables nothing else fixed (``(s0 * 3072 + s1) floordiv 1152``): each of the ``q`` sums with
    that quotient pinned in turn, the whole map checked on it. None where that is not the form."""
    for e, want in zip(m.results, y):
        if e.kind != FLOORDIV or e.operand.kind != SUM or e.value > _QUOTIENT_CANDIDATES:
            continue
        if not any(a.kind == RANGE and (RANGE, a.value) not in env for a, _ in e.operand.terms):
            continue
        for total in range(want * e.value, want * e.value + e.value):
            candidate = dict(env)
            pinned = _pin_mixed_radix(e.operand, total, candidate, m.range_vars)
            if pinned is None:
                return None
            if pinned and all((RANGE, k) in candidate for k in range(len(m.range_vars))):
                if _holds(m, candidate, y):
                    return True
            elif pinned:
                return None  # other range variables still free: not decided here
        return False
    return None


def _holds(m: IndexingMap, env: dict, y: tuple) -> bool:
    """Whether every range variable of ``env`` is in its interval and the constraints hold, and
    the results are ``y``."""
    if not all(b.lo <= env[(RANGE, k)] <= b.hi for k, b in enumerate(m.range_vars)):
        return False
    memo: dict = {}
    return all(b.lo <= evaluate_expr(e, env, memo) <= b.hi for e, b in m.constraints) and all(
        evaluate_expr(e, env, memo) == want for e, want in zip(m.results, y)
    )


def _pin_mixed_radix(e, want: int, env: dict, range_vars) -> bool | None:
    """Fix the range variables of a result ``c + sum(k_i * s_i) + rest`` (``rest`` free of
    unfixed range variables) from its value ``want``, where the coefficients form a mixed radix
    (each larger than what all smaller terms can add: ``s0 * 128 + s1`` with s1 in [0, 127]), so
    at most one choice of the s_i gives ``want``: found greedily. False when none does; None when
    the result is not of that form (nothing fixed)."""
    unknown = []
    rest = e.value
    memo: dict = {}
    for atom, k in e.terms:
        if atom.kind == RANGE and (RANGE, atom.value) not in env:
            unknown.append((k, atom.value))
        elif any(v.kind == RANGE and (RANGE, v.value) not in env for v in atom.variables()):
            return None
        else:
            rest += k * evaluate_expr(atom, env, memo)
    target = want - rest
    if all(k < 0 for k, _ in unknown):  # -k_i * s_i: the same question with both sides negated
        unknown, target = [(-k, v) for k, v in unknown], -target
    if any(k <= 0 for k, _ in unknown):
        return None
    unknown.sort(reverse=True)
    spans = [range_vars[v].hi - range_vars[v].lo for _, v in unknown]
    if any(span < 0 for span in spans):
        return False
    below = 0  # what the smaller terms can add at most
    for (k, _), span in zip(reversed(unknown), reversed(spans)):
        if k <= below:
            return None  # not a mixed radix: several choices may give the same value
        below += k * span
    target -= sum(k * range_vars[v].lo for k, v in unknown)  # offsets from each lower bound
    if target < 0:
        return False
    for (k, v), span in zip(unknown, spans):
        digit = target // k
        if digit > span:
            return False
        env[(RANGE, v)] = range_vars[v].lo + digit
        target -= digit * k
    return target == 0


def image_at(m: IndexingMap, point: tuple) -> tuple | None:
    """The element a map without range (or runtime) variables gives at ``point``; None where the
    point is outside its domain or breaks a constraint (``relation_at``'s answer, for one point)."""
    env = {}
    for i, (b, x) in enumerate(zip(m.dims, point)):
        if not b.lo <= x <= b.hi:
            return None
        env[(DIM, i)] = int(x)
    memo: dict = {}
    for e, b in m.constraints:
        if not b.lo <= evaluate_expr(e, env, memo) <= b.hi:
            return None
    return tuple(int(evaluate_expr(e, env, memo)) for e in m.results)
