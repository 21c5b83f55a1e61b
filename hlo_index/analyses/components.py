"""Independent pieces of a map, evaluated one at a time so no enumeration multiplies sizes.

Variables (dims and range variables) that never share a result or a constraint vary
independently, so a map's read set is the Cartesian product of the read sets of its
*components* (the groups of results and constraints connected by shared variables), and its
feasible point count is the product of theirs. ``(d0, d1) -> (d0 floordiv 128, d0 mod 128, d1)``
is two components of 512 and 1024 points instead of one of 524,288.

Each component is enumerated exactly when its box has at most ``budget`` points (with Python
lists when it is small, with numpy else),
else evaluated on a seeded uniform sample of ``sample`` points: its distinct count is then a
lower bound, with an upper bound from interval reasoning (the product of each result's value
range); when the two meet, the count is exact anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import compress, pairwise, product
from math import prod
from typing import TYPE_CHECKING

from ..affine import IndexingMap, Interval, const, dim, range_var
from ..affine.bounds import Domain
from ..affine.digits import split_digit_variables
from ..affine.equalities import solved_variables
from ..affine.evaluate import as_column, distinct_sorted, evaluate_columns, evaluate_expr
from ..affine.expr import FLOORDIV, MOD, Expr
from ..context import current, register_table

if TYPE_CHECKING:
    import numpy as np

# Points enumerated or materialised by the figures of this analysis context: callers charge a
# budget with the work a figure actually did (``spent_points()`` before and after).
_WORK = register_table("analyses.components.points", lambda: [0])


CALL_POINTS = 1 << 12  # a component's fixed cost (grids, expression walks), in points


def charge(points: int) -> None:
    current().tables[_WORK][0] += points


def spent_points() -> int:
    return current().tables[_WORK][0]


@dataclass(frozen=True)
class Component:
    """One independent piece of a map: its results' distinct rows (or their count) and its points."""

    results: tuple[int, ...]  # result positions this component produces
    # distinct in-bounds result rows [k, len(results)], sorted (an array, or tuples where a small
    # grid was walked without numpy); None: not listed (or ``box``)
    listed: np.ndarray | tuple[tuple[int, ...], ...] | None
    points: int  # feasible points (an estimate when not ``points_exact``)
    points_exact: bool
    distinct_exact: bool
    upper: int  # upper bound on the distinct count
    count: int | None = None  # distinct count when ``values`` is None
    # the rows are every point of this box, once, in row-major order: listed only when asked for
    # (most callers want the count alone, and a box of a reshape's digits can hold 10^6 rows)
    box: tuple[int, ...] | None = None
    start: tuple[int, ...] | None = None  # the box's first row (None: the origin)

    @cached_property
    def values(self) -> np.ndarray | None:
        """The distinct in-bounds result rows ``[k, len(results)]``; None: not listed."""
        if self.box is None and not isinstance(self.listed, tuple):
            return self.listed
        import numpy as np

        if self.box is None:  # rows a small grid listed as tuples
            return np.array(self.listed, dtype=np.int64).reshape(len(self.listed or ()), len(self.results))
        box, start = self.box, self.start or (0,) * len(self.box)
        axes = [
            np.broadcast_to(
                np.arange(lo, lo + d, dtype=np.int64).reshape([-1 if j == i else 1 for j in range(len(box))]), box
            )
            for i, (d, lo) in enumerate(zip(box, start))
        ]
        return np.stack([a.reshape(-1) for a in axes], axis=1)

    @property
    def listed_count(self) -> int | None:
        """How many rows ``values`` lists (None: not listed), without listing them."""
        if self.box is not None:
            return prod(self.box)
        return None if self.listed is None else len(self.listed)

    @property
    def distinct(self) -> int:
        listed = self.listed_count
        if listed is not None:
            return listed
        assert self.count is not None, "a component without listed values carries its count"
        return self.count

    def linear(self, strides: Sequence[int]) -> np.ndarray:
        """``values @ strides`` (``strides`` one per result), in the order of ``values``."""
        import numpy as np

        if self.box is not None:  # the box's axes weighted and summed: no rows listed
            box, start = self.box, self.start or (0,) * len(self.box)
            linear = np.zeros([1] * len(box), dtype=np.int64)
            for i, (d, lo, s) in enumerate(zip(box, start, strides)):
                linear = linear + (np.arange(lo, lo + d, dtype=np.int64) * s).reshape(
                    [-1 if j == i else 1 for j in range(len(box))]
                )
            return np.broadcast_to(linear, box).reshape(-1)
        values = self.values
        assert values is not None  # callers check ``listed_count`` first
        if not len(values):
            return np.zeros(0, dtype=np.int64)
        return values @ np.asarray(strides, dtype=np.int64)


@dataclass(frozen=True)
class Decomposition:
    """A map as independent components; its counts are products of theirs."""

    components: tuple[Component, ...]
    free_points: int  # product of the sizes of variables used nowhere

    @property
    def points(self) -> int:
        return self.free_points * prod(c.points for c in self.components)

    @property
    def points_exact(self) -> bool:
        return all(c.points_exact for c in self.components)

    @property
    def distinct(self) -> int:
        if any(c.points == 0 for c in self.components):
            return 0
        return prod(c.distinct for c in self.components)

    @property
    def distinct_upper(self) -> int:
        if any(c.points == 0 and c.points_exact for c in self.components):
            return 0
        return prod(c.upper for c in self.components)

    @property
    def distinct_exact(self) -> bool:
        return (self.distinct == 0 and self.points_exact) or all(c.distinct_exact for c in self.components)


def _variables(m: IndexingMap) -> list[Expr]:
    return [dim(i) for i in range(m.num_dims)] + [range_var(i) for i in range(len(m.range_vars))]


def decompose(
    m: IndexingMap, operand_dims: Sequence[int] | None, *, budget: int, seed: int = 0, sample: int | None = None
) -> Decomposition:
    """Components of ``m`` (no runtime variables), each evaluated exactly or by sampling.

    Result rows outside ``operand_dims`` are dropped from ``values`` (they read nothing) but
    their points still count. ``operand_dims=None``: only point counts are wanted (no values).
    """
    if m.runtime_vars:
        raise ValueError("decompose needs a map without runtime variables")
    if sample is None:
        sample = current().budgets.component_sample_points
    # a flat index read through its digits becomes one variable per digit: the same points and
    # rows, but what reads one digit no longer shares a component with what reads another
    m = split_digit_variables(m)
    variables = _variables(m)
    parent = {v: v for v in variables}

    def find(v):
        while parent[v] is not v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    result_vars = [e.variables() for e in m.results]
    constraint_vars = [e.variables() for e, _ in m.constraints]
    for group in result_vars + constraint_vars:
        members = list(group)
        for other in members[1:]:
            a, b = find(members[0]), find(other)
            if a is not b:
                parent[b] = a
    constant_ok = all(iv.contains(e.constant_value) for (e, iv), vs in zip(m.constraints, constraint_vars) if not vs)
    groups: dict = {}
    for k, vs in enumerate(result_vars):
        if vs:
            groups.setdefault(find(next(iter(vs))), ([], []))[0].append(k)
    for k, vs in enumerate(constraint_vars):
        if vs:
            groups.setdefault(find(next(iter(vs))), ([], []))[1].append(k)
    used = {find(v) for v in groups}
    free = prod(m.variable_interval(v).size for v in variables if find(v) not in used)
    components = []
    for k, vs in enumerate(result_vars):
        if not vs:  # one row, [value], where it lies inside the dim
            value = m.results[k].constant_value
            inside = operand_dims is None or 0 <= value < operand_dims[k]
            components.append(Component((k,), None, 1, True, True, int(inside), box=(int(inside),), start=(value,)))
    domain = Domain(m.dims, m.range_vars)
    for root, (results, constraints) in groups.items():
        members = [v for v in variables if find(v) is root]
        components.append(_evaluate(m, members, results, constraints, operand_dims, domain, budget, sample, seed))
    if not constant_ok:
        import numpy as np

        empty = Component((), np.zeros((0, 0), np.int64), 0, True, True, 0)
        components.append(empty)
    return Decomposition(tuple(components), free)


def _evaluate(
    m: IndexingMap, members, results, constraints, operand_dims, domain: Domain, budget: int, sample: int, seed: int
) -> Component:
    intervals = [m.variable_interval(v) for v in members]
    candidates = prod(iv.size for iv in intervals)
    if not constraints and len(results) == 1 and operand_dims is not None:
        span = _contiguous_values(m.results[results[0]], members, intervals)
        if span is not None:  # every value of an interval: the part inside the dim is read (a box)
            lo, hi = max(span[0], 0), min(span[1], int(operand_dims[results[0]]) - 1)
            count = max(hi - lo + 1, 0)
            charge(CALL_POINTS)
            return Component(tuple(results), None, candidates, True, True, count, box=(count,), start=(lo,))
        if candidates > budget:
            radix = _mixed_radix(m.results[results[0]], members, intervals, operand_dims[results[0]], domain)
            if radix is not None:
                return Component(tuple(results), None, candidates, True, True, radix, count=radix)
    if operand_dims is None and not constraints:  # points only, and every point is feasible
        charge(CALL_POINTS)
        return Component(tuple(results), None, candidates, True, True, 0, count=0)
    if len(constraints) == 1 and (operand_dims is None or not results):
        points = _points_in_one_linear_constraint(m.constraints[constraints[0]], members, intervals)
        if points is not None:
            charge(CALL_POINTS)
            if operand_dims is None:
                return Component(tuple(results), None, points, True, True, 0, count=0)
            row: tuple = ((),) if points else ()  # constraints only: whether anything is read
            return Component((), row, points, True, True, len(row))
    # variables an equality fixes are computed, not enumerated: the box they leave is what is
    # walked (exactly when it fits the budget), so a thin diagonal of a huge box is not sampled
    solved = (
        solved_variables(m, constraints, set(members).__contains__, limit=len(members) - 1)
        if candidates > min(budget, _ENUMERATED_IN_PYTHON)
        else ()
    )
    if solved:
        fixed = {v for v, _, _, _ in solved}
        enumerated = [(v, iv) for v, iv in zip(members, intervals) if v not in fixed]
        candidates = prod(iv.size for _, iv in enumerated)
    else:
        enumerated = list(zip(members, intervals))
    exhaustive = candidates <= budget
    grid = tuple(iv.size for _, iv in enumerated) if exhaustive else (sample,)
    n = prod(grid)
    box_possible = not constraints and results and operand_dims is not None
    if not exhaustive and box_possible:
        # a box is known exactly however large: no sample is drawn (nor charged)
        box = _digit_box(m, members, intervals, results, operand_dims, domain)
        if box is not None:
            charge(CALL_POINTS)
            return Component(tuple(results), None, candidates, True, True, prod(box), box=box)
    charge(n * max(1, len(results) + len(constraints)) + CALL_POINTS)
    if exhaustive and box_possible:
        box = _digit_box(m, members, intervals, results, operand_dims, domain)
        if box is not None:  # every point of the box, once: what the enumeration below finds
            return Component(tuple(results), None, n, True, True, prod(box), box=box)
    if exhaustive and n <= _ENUMERATED_IN_PYTHON:
        return _evaluate_in_python(m, enumerated, grid, solved, constraints, results, operand_dims)
    import numpy as np

    if exhaustive:
        # the box as a grid, each variable along its own axis: expressions broadcast, so a term
        # of one variable costs its size, not the box's; flattened (C order) it is the box in
        # row-major order, last variable fastest
        columns = [
            np.arange(iv.lo, iv.hi + 1, dtype=np.int64).reshape([-1 if j == i else 1 for j in range(len(grid))])
            for i, (_, iv) in enumerate(enumerated)
        ]
    else:
        rng = np.random.default_rng(seed)
        columns = [rng.integers(iv.lo, iv.hi + 1, size=sample, dtype=np.int64) for _, iv in enumerated]
    env = {(v.kind, v.value): col for (v, _), col in zip(enumerated, columns)}
    memo: dict = {}
    keep = np.ones(grid, dtype=bool)
    for v, coefficient, rest, k in solved:
        e, iv = m.constraints[k]
        value = coefficient * (iv.lo - evaluate_expr(rest, env, memo))
        env[(v.kind, v.value)] = value
        bounds = m.variable_interval(v)
        keep &= (value >= bounds.lo) & (value <= bounds.hi)
    used = {k for _, _, _, k in solved}
    for k in constraints:
        if k in used:  # holds by construction
            continue
        e, iv = m.constraints[k]
        value = evaluate_expr(e, env, memo)
        keep &= (value >= iv.lo) & (value <= iv.hi)
    feasible = int(keep.sum())
    points = feasible if exhaustive else round(candidates * feasible / n)
    if operand_dims is None:
        return Component(tuple(results), np.zeros((0, len(results)), np.int64), points, exhaustive, True, 0)
    if not results:  # constraints only: they decide whether anything is read at all
        one = np.zeros((1 if feasible else 0, 0), dtype=np.int64)
        return Component((), one, points, exhaustive, exhaustive or feasible > 0, len(one) if exhaustive else 1)
    dims = tuple(int(operand_dims[k]) for k in results)
    linear = _linear_in_bounds(
        [np.asarray(evaluate_expr(m.results[k], env, memo)) for k in results],
        dims,
        keep if feasible < n else None,
        grid,
    )
    if len(linear):
        values = np.stack(np.unravel_index(distinct_sorted(linear), dims), axis=1).astype(np.int64)
    else:
        values = np.zeros((0, len(results)), dtype=np.int64)
    if exhaustive:
        return Component(tuple(results), values, points, True, True, len(values))
    upper = min(candidates, _value_range_product(m, results, constraints, operand_dims, domain))
    upper = max(upper, len(values))
    return Component(tuple(results), values, points, False, len(values) == upper, upper)


_ENUMERATED_IN_PYTHON = 1 << 13  # a grid this small is walked on Python lists: numpy's import costs more


def _evaluate_in_python(m: IndexingMap, enumerated, grid, solved, constraints, results, operand_dims) -> Component:
    """``_evaluate``'s exhaustive walk of ``grid`` on Python lists: the same points, rows and order."""
    n = prod(grid)
    env: dict = {}
    before = 1
    for i, (v, iv) in enumerate(enumerated):
        after = n // (before * grid[i]) if n else 0
        env[(v.kind, v.value)] = [x for x in range(iv.lo, iv.hi + 1) for _ in range(after)] * before
        before *= grid[i]
    memo: dict = {}
    keep = [True] * n
    for v, coefficient, rest, k in solved:
        e, iv = m.constraints[k]
        value = as_column(evaluate_columns(rest, env, memo), n)
        value = [coefficient * (iv.lo - x) for x in value]
        env[(v.kind, v.value)] = value
        bounds = m.variable_interval(v)
        keep = [ok and bounds.lo <= x <= bounds.hi for ok, x in zip(keep, value)]
    used = {k for _, _, _, k in solved}
    for k in constraints:
        if k in used:  # holds by construction
            continue
        e, iv = m.constraints[k]
        value = as_column(evaluate_columns(e, env, memo), n)
        keep = [ok and iv.lo <= x <= iv.hi for ok, x in zip(keep, value)]
    points = sum(keep)
    if operand_dims is None:
        return Component(tuple(results), (), points, True, True, 0)
    if not results:  # constraints only: they decide whether anything is read at all
        row: tuple = ((),) if points else ()
        return Component((), row, points, True, True, len(row))
    dims = tuple(int(operand_dims[k]) for k in results)
    columns = [as_column(evaluate_columns(m.results[k], env, memo), n) for k in results]
    rows: Iterable[tuple[int, ...]] = compress(zip(*columns), keep)
    if any(n and (min(c) < 0 or max(c) >= d) for c, d in zip(columns, dims)):
        rows = (r for r in rows if all(0 <= x < d for x, d in zip(r, dims)))
    listed = tuple(sorted(set(rows)))  # lexicographic: row-major, as the numpy walk lists them
    return Component(tuple(results), listed, points, True, True, len(listed))


_LOOPED_POINTS = 1 << 12  # the most outer points ``_points_in_one_linear_constraint`` loops over


def _points_in_one_linear_constraint(constraint: tuple[Expr, Interval], members, intervals) -> int | None:
    """The points of the members' box where a constraint linear in plain members holds, or None
    (not linear, or too many points to loop over): the member of the widest range is solved
    for, as an interval at each point of the others (a diagonal ``d2 - d3 in [0, 0]`` of a
    2048 x 2048 box is 2048 steps, not 4 M points), or, where its coefficient is +-1 and one
    other member remains, summed in closed form (``_band_points``)."""
    e, bounds = constraint
    interval_of = dict(zip(members, intervals))
    constant, terms = e.linear_terms()
    if not terms or any(atom not in interval_of for atom, _ in terms) or len({a for a, _ in terms}) != len(terms):
        return None
    solved, c = max(terms, key=lambda t: interval_of[t[0]].size)
    if c == 0:
        return None
    others = [(atom, k) for atom, k in terms if atom is not solved]
    free = prod(iv.size for v, iv in interval_of.items() if all(v is not atom for atom, _ in terms))
    low, high = bounds.lo - constant, bounds.hi - constant
    if c < 0:  # c * y in [low - rest, high - rest]  <=>  -c * y in [rest - high, rest - low]
        c, low, high = -c, -high, -low
        others = [(atom, -k) for atom, k in others]
    y = interval_of[solved]
    if c == 1 and len(others) == 1:  # a band of a plane: summed in closed form, however wide
        (x_atom, k) = others[0]
        x = interval_of[x_atom]
        return _band_points(x.lo, x.hi, k, low, high, y.lo, y.hi) * free
    if prod(interval_of[atom].size for atom, _ in others) > _LOOPED_POINTS:
        return None
    count = 0
    for values in product(*[range(interval_of[atom].lo, interval_of[atom].hi + 1) for atom, _ in others]):
        rest = sum(k * v for (_, k), v in zip(others, values))
        first = max(-((rest - low) // c), y.lo)  # ceil((low - rest) / c)
        last = min((high - rest) // c, y.hi)
        if last >= first:
            count += last - first + 1
    return count * free


def _band_points(a: int, b: int, k: int, low: int, high: int, ylo: int, yhi: int) -> int:
    """The points (x, y) of ``[a, b] x [ylo, yhi]`` with ``y + k x`` in ``[low, high]``: the sum
    over x of the length of ``[low - k x, high - k x]`` clamped to ``[ylo, yhi]``. Each clamp
    switches side at most once: ``[a, b]`` is cut where one may, into runs on which the length is
    linear in x, each summed as an arithmetic series over the x where it is positive."""
    cuts = {a, b + 1}
    if k:
        for t in (high - yhi, low - ylo):  # where k x crosses t, a clamp changes side
            for x in (t // k, t // k + 1):
                if a < x <= b:
                    cuts.add(x)
    bounds = sorted(cuts)
    total = 0
    for start, stop in pairwise(bounds):  # the run [start, stop - 1]: each clamp on one side
        upper_slope, upper = (-k, high) if high - k * start <= yhi else (0, yhi)
        lower_slope, lower = (-k, low) if low - k * start >= ylo else (0, ylo)
        slope, offset = upper_slope - lower_slope, upper - lower + 1  # length = offset + slope x
        first, last = start, stop - 1
        if slope > 0:
            first = max(first, -((offset - 1) // slope))  # offset + slope x >= 1
        elif slope < 0:
            last = min(last, (offset - 1) // -slope)
        elif offset < 1:
            continue
        if last >= first:
            n = last - first + 1
            total += n * offset + slope * (first + last) * n // 2
    return total


def _contiguous_values(e: Expr, members, intervals) -> tuple[int, int] | None:
    """``(lo, hi)`` when ``e`` takes every integer of ``[lo, hi]`` and no other value over the
    members' box; else None (not decided). It does when ``e`` is a constant plus a sum of atoms,
    each a member or a member ``floordiv`` a positive constant (every member in exactly one atom,
    so the atoms vary independently, each over an interval), whose coefficients' magnitudes,
    sorted, start at 1 and each exceed by at most 1 what the smaller terms span: each new term
    then shifts an interval by steps no longer than the interval, leaving no gap.
    ``d2 * 64 + d3 + 768`` over ``d2 in [0, 11], d3 in [0, 63]`` takes ``[768, 1535]``;
    ``s0 + s1`` over ``[0, 3]`` and ``[0, 12]`` takes ``[0, 15]`` (each value not equally often)."""
    if any(iv.is_empty for iv in intervals):
        return None  # no point: nothing is read (the enumeration says so)
    interval_of = dict(zip(members, intervals))
    constant, terms = e.linear_terms()
    lo = hi = constant
    seen: set = set()
    steps: list[tuple[int, int]] = []  # (|coefficient|, the atom's span)
    for atom, c in terms:
        divisor = 1
        if atom.kind == FLOORDIV and atom.value > 0:
            divisor, atom = atom.value, atom.operand
        iv = interval_of.get(atom)
        if iv is None or atom in seen:
            return None
        seen.add(atom)
        a_lo, a_hi = iv.lo // divisor, iv.hi // divisor
        lo += min(c * a_lo, c * a_hi)
        hi += max(c * a_lo, c * a_hi)
        steps.append((abs(c), a_hi - a_lo))
    if len(seen) != len(members):
        return None
    reach = 0  # the terms so far take every value of [0, reach] (shifted to start at 0)
    for c, span in sorted(steps):
        if span and c > reach + 1:
            return None
        reach += c * span
    return lo, hi


def _linear_in_bounds(
    columns: list[np.ndarray], dims: tuple[int, ...], keep: np.ndarray | None, grid: tuple[int, ...]
) -> np.ndarray:
    """Row-major linear indices (over ``dims``) of the rows ``columns`` give at the points of
    ``grid`` (columns broadcast to it), flattened, kept where ``keep`` (None: every point) and
    inside ``dims``. Columns whose min and max lie inside their dim are not compared element by
    element."""
    import numpy as np

    if prod(grid) == 0:
        return np.zeros(0, dtype=np.int64)
    inside = keep
    for column, d in zip(columns, dims):
        if int(column.min()) < 0 or int(column.max()) >= d:
            fits = (column >= 0) & (column < d)
            inside = fits if inside is None else inside & fits
    linear = columns[-1]
    stride = dims[-1]
    for column, d in zip(reversed(columns[:-1]), reversed(dims[:-1])):
        linear = linear + column * stride
        stride *= d
    flat = np.broadcast_to(linear, grid).reshape(-1)
    return flat if inside is None else flat[np.broadcast_to(inside, grid).reshape(-1)]


def _digit_box(m: IndexingMap, members, intervals, results, operand_dims, domain: Domain) -> tuple[int, ...] | None:
    """The box ``[0, n)`` per result (inside the results' operand dims) when the results read every
    point of it, each as often; else None. Two forms, neither enumerated:

    * the mixed-radix digits of one sum: the reshapes and transposes of a fusion read through
      ``((L floordiv a) mod b)`` digits of one linear index ``L = sum c_v * v``. When the
      coefficients make ``L`` take each value of ``[0, N)`` exactly once (sorted, each is the
      product of the sizes below it, all from 0) and the digits, sorted by divisor, are a
      complete mixed radix of ``N`` from the least divisor ``P`` up whose radices are the
      results' dims or inside them (the top one a floordiv, or a mod that never wraps), ``L`` ->
      digits reads every point of the box of the radices ``P`` times (once for ``P = 1``: a
      bijection), ``(s0 floordiv 2, s0 mod 2)`` over ``s0 in [0, 31]`` the ``[16, 2]`` corner of
      a ``[16, 8]`` operand;
    * any results inside their dims whose row-major index over those dims simplifies to such an
      ``L`` with ``N`` the box's size (``(d0 * 6 + s0 floordiv 192, s0 mod 192)`` over
      ``[3072, 192]`` is ``d0 * 1152 + s0``), or to a sum of digits of the variables that takes
      each value of ``[0, N)`` equally often (``_dense_over_digits``): row-major order is a
      bijection between the box and ``[0, N)``, so the results take every point of the box,
      each as often.
    """
    return _digits_of_one_sum(m, members, intervals, results, operand_dims) or _row_major_box(
        m, members, intervals, results, operand_dims, domain
    )


def _digits_of_one_sum(m: IndexingMap, members, intervals, results, operand_dims) -> tuple[int, ...] | None:
    """The first form of ``_digit_box``."""
    from .forms import split_linear

    digits: list[tuple[int, int | None, int]] = []  # (divisor a, radix b or None for the top digit, operand dim)
    common: Expr | None = None
    for k in results:
        e = m.results[k]
        radix = None
        if e.kind == MOD:
            radix, e = e.value, e.operand
        divisor = 1
        if e.kind == FLOORDIV:
            divisor, e = e.value, e.operand
        if common is None:
            common = e
        elif e != common:
            return None
        digits.append((divisor, radix, int(operand_dims[k])))
    if common is None:
        return None
    total = _dense_sum(split_linear(common, frozenset(members)), members, intervals)
    if total is None:
        return None
    order = sorted(range(len(digits)), key=lambda i: digits[i][0])
    # digits below the least divisor are not read: each value of ``L floordiv place`` comes
    # ``place`` times, and its digits are the box's (a broadcast's read of its source)
    place = digits[order[0]][0]
    if total % place:
        return None
    radices = [0] * len(digits)
    for n, i in enumerate(order):
        divisor, radix, operand_dim = digits[i]
        if divisor != place:
            return None
        if radix is None:  # a floordiv without mod: the top digit only
            if n != len(order) - 1:
                return None
            radix = -(-total // divisor)
        # each digit takes [0, radix): inside its operand dim, all of it or its start
        if radix > operand_dim:
            return None
        radices[i] = radix
        place *= radix
    if place != total:
        return None
    return tuple(radices)


def _dense_sum(split: tuple[Expr, dict] | None, members, intervals) -> int | None:
    """``N`` when ``split`` (``split_linear``'s ``(rest, coefficients)``) is a sum over every
    member taking each value of ``[0, N)`` exactly once (``_dense``); else None."""
    if split is None or not split[0].is_constant or set(split[1]) != set(members):
        return None
    return _dense(split[0].constant_value, [(split[1][v], iv) for v, iv in zip(members, intervals)])


def _dense(constant: int, terms: list[tuple[int, Interval]]) -> int | None:
    """``N`` when ``constant + sum c * x`` over the terms' (coefficient, values of ``x``) takes
    each value of ``[0, N)`` exactly once: sorted, each coefficient is the number of values the
    smaller terms take, and the least value is 0. Else None."""
    low, size = constant, 1
    for c, iv in sorted(terms, key=lambda t: t[0]):
        if c != size:
            return None
        low += c * iv.lo
        size *= iv.size
    return size if low == 0 else None


def _row_major_box(m: IndexingMap, members, intervals, results, operand_dims, domain: Domain) -> tuple[int, ...] | None:
    """The second form of ``_digit_box``."""

    dims = tuple(int(operand_dims[k]) for k in results)
    if prod(iv.size for iv in intervals) % prod(dims):  # each point of the box as often, or not the box
        return None
    for k, size in zip(results, dims):
        bounds = domain.bounds(m.results[k])
        if bounds.lo < 0 or bounds.hi > size - 1:
            return None
    index: Expr = const(0)
    stride = 1
    for k, size in zip(reversed(results), reversed(dims)):
        index = index + m.results[k] * stride
        stride *= size
    # simplified over the map's own variables and their ranges (the floordiv / mod digits fold)
    linear = IndexingMap(m.dims, m.range_vars, (), (index,)).simplified()
    if linear.is_undefined:
        return None
    total = _dense_over_digits(linear.results[0], members, intervals)
    return dims if total is not None and total == stride else None


def _dense_over_digits(e: Expr, members, intervals) -> int | None:
    """``N`` when ``e`` is a sum of the members and of their digits ``v floordiv c`` and
    ``v mod c`` (``v`` from 0, its size a multiple of ``c``, a member in no other form) that takes
    each value of ``[0, N)`` equally often: read as variables of their own, the digits and the
    plain members make a dense sum (``_dense``), and each member maps onto its digits evenly
    (onto both a bijection, onto one of them ``c`` or ``size / c`` to one). Else None.

    ``d0 mod 2048 + s0 * 2048 + (d0 floordiv 2048) * 1572864`` over ``d0 in [0, 8191]``,
    ``s0 in [0, 767]`` is one: a transpose's index with ``d0`` split around ``s0``."""
    constant, terms = e.linear_terms()
    interval_of = dict(zip(members, intervals))
    forms: dict[Expr, set] = {}  # member -> the forms it takes: "plain", (FLOORDIV, c), (MOD, c)
    atoms: list[tuple[int, Interval]] = []  # (coefficient, the atom's values)
    for atom, c in terms:
        if atom in interval_of:
            forms.setdefault(atom, set()).add("plain")
            atoms.append((c, interval_of[atom]))
            continue
        if atom.kind not in (FLOORDIV, MOD) or atom.operand not in interval_of:
            return None
        v, divisor = atom.operand, atom.value
        iv = interval_of[v]
        if divisor <= 0 or iv.lo != 0 or iv.size % divisor:
            return None
        forms.setdefault(v, set()).add((atom.kind, divisor))
        atoms.append((c, Interval(0, (iv.size // divisor if atom.kind == FLOORDIV else divisor) - 1)))
    if set(forms) != set(members):
        return None
    for used in forms.values():
        if "plain" in used and len(used) > 1:
            return None
        if len({form[1] for form in used if form != "plain"}) > 1:
            return None  # digits of two different divisors
    return _dense(constant, atoms)


def _mixed_radix(e: Expr, members, intervals, operand_dim: int, domain: Domain) -> int | None:
    """Distinct values of ``sum c_v * v + k`` when it is injective because its coefficients form
    a mixed radix (sorted by size, each at least the span of all smaller terms, as a collapsing
    reshape's ``d0 * 4096 + d1``) and every value lands inside the operand dim; else None."""
    from .forms import split_linear

    split = split_linear(e, frozenset(members))
    if split is None or not split[0].is_constant:
        return None
    coefficients = split[1]
    if set(coefficients) != set(members) or any(c == 0 for c in coefficients.values()):
        return None
    if domain.bounds(e).intersect(Interval(0, operand_dim - 1)) != domain.bounds(e):
        return None
    terms = sorted((abs(coefficients[v]), iv.size) for v, iv in zip(members, intervals))
    span = 0  # largest value the smaller terms reach above their minimum
    for c, size in terms:
        if c <= span:
            return None
        span += c * (size - 1)
    return prod(size for _, size in terms)


def _value_range_product(m: IndexingMap, results, constraints, operand_dims, domain: Domain) -> int:
    """Upper bound on distinct rows: each result's value range, narrowed by a constraint on the
    very same expression and by the operand's bounds."""
    narrowing = {m.constraints[k][0]: m.constraints[k][1] for k in constraints}
    total = 1
    for k in results:
        e = m.results[k]
        iv = domain.bounds(e).intersect(Interval(0, operand_dims[k] - 1))
        if e in narrowing:
            iv = iv.intersect(narrowing[e])
        total *= max(0, iv.size)
    return total


def linear_indices(dec: Decomposition, operand_dims: Sequence[int], limit: int) -> np.ndarray | None:
    """Row-major linear indices of every distinct element the decomposition reads (the outer sum
    of each component's contribution), or None when there are more than ``limit``."""
    import numpy as np

    if dec.distinct > limit:
        return None
    strides = [prod(operand_dims[k + 1 :]) for k in range(len(operand_dims))]
    total = np.zeros(1, dtype=np.int64)
    if any(c.listed_count is None for c in dec.components):
        return None
    if any(not c.results and c.points == 0 for c in dec.components):
        # a constraint no point meets: nothing is read; charged as the products up to it would be
        charge_linear_indices(dec, limit)
        return np.zeros(0, dtype=np.int64)
    for c in dec.components:
        if not c.results:
            if c.points == 0:
                return np.zeros(0, dtype=np.int64)
            continue
        part = c.linear([strides[k] for k in c.results])
        total = np.add.outer(total, part).reshape(-1)
        charge(len(total))
    return total


def lists_indices(dec: Decomposition, limit: int) -> bool:
    """Whether ``linear_indices(dec, ..., limit)`` lists the indices (is not None)."""
    return dec.distinct <= limit and all(c.listed_count is not None for c in dec.components)


def charge_linear_indices(dec: Decomposition, limit: int) -> None:
    """Charge the points ``linear_indices(dec, ..., limit)`` would, without listing the indices
    (a caller that needs only their count: the budgets then run out exactly where they would)."""
    if dec.distinct > limit or any(c.listed_count is None for c in dec.components):
        return
    count = 1
    for c in dec.components:
        if not c.results:
            if c.points == 0:
                return
            continue
        listed = c.listed_count
        assert listed is not None  # checked above
        count *= listed
        charge(count)
