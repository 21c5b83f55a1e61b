"""Joining maps that differ only in their results' constant terms, in arithmetic progression.

A loop unrolled with its counter folded reads one row per iteration: maps ``r + c_t`` for
``t = 0 .. m-1`` whose constant vectors are ``c_0 + t * delta``, identical otherwise (domain,
range variables, constraints, the rest of every result). Their union is exactly one map with a new
range variable ``t in [0, m-1]`` and results ``r + c_0 + t * delta``: every ``t`` gives one of the
pieces and nothing else. Groups that are not a full progression stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from ...affine import IndexingMap, Interval, RuntimeVar, const, dim, range_var
from ...affine.expr import Expr
from ...context import current, register_table

# What the members of one progression share: dims, range and runtime variables, constraints, and
# the results less their constants.
_Signature: TypeAlias = tuple[
    tuple[Interval, ...],
    tuple[Interval, ...],
    tuple[RuntimeVar, ...],
    tuple[tuple[Expr, Interval], ...],
    tuple[Expr, ...],
]
_Member: TypeAlias = tuple[tuple[int, ...], IndexingMap]  # (result constants, map)


# id(map) -> (map, its split) for the length of one ``join_progressions``: its passes ask again for
# the same maps, once per pass and result coordinate (the entry keeps the map alive, so the id
# stays its; emptied when the call returns, so the pieces of a loop are not kept after it)
_SPLITS = register_table("fusion.loops.joins.splits")


def _split(m: IndexingMap) -> tuple[tuple[Expr, ...], tuple[int, ...]]:
    """``m``'s results less their constant terms, and those constants."""
    memo: dict[int, tuple[IndexingMap, tuple[tuple[Expr, ...], tuple[int, ...]]]] = current().tables[_SPLITS]
    hit = memo.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    stripped: list[Expr] = []
    constants: list[int] = []
    for r in m.results:
        c, _ = r.linear_terms()
        stripped.append(r - const(c) if c else r)
        constants.append(c)
    split = memo[id(m)] = (m, (tuple(stripped), tuple(constants)))
    return split[1]


def _signature(m: IndexingMap, stripped: tuple[Expr, ...]) -> _Signature | None:
    if m.is_undefined or m.is_known_empty or not m.results:
        return None
    return (m.dims, m.range_vars, m.runtime_vars, m.constraints, stripped)


def join_constant_progressions(maps: Sequence[IndexingMap]) -> tuple[IndexingMap, ...]:
    groups: dict[_Signature, list[_Member]] = {}
    order: list[IndexingMap | _Signature] = []
    for m in maps:
        stripped, constants = _split(m)
        key = _signature(m, stripped)
        if key is None:
            order.append(m)
            continue
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((constants, m))
    out: list[IndexingMap] = []
    for entry in order:
        if isinstance(entry, IndexingMap):
            out.append(entry)
            continue
        members = sorted(groups[entry], key=lambda cm: cm[0])
        joined = _joined(entry, members)
        out.extend([joined] if joined is not None else [m for _, m in members])
    return tuple(out)


def _joined(key: _Signature, members: list[_Member]) -> IndexingMap | None:
    if len(members) < 2:
        return None
    first = members[0][0]
    delta = tuple(b - a for a, b in zip(first, members[1][0]))
    if not any(delta):
        return None
    for t, (constants, _) in enumerate(members):
        if constants != tuple(a + t * d for a, d in zip(first, delta)):
            return None
    dims, range_vars, runtime_vars, constraints, stripped = key
    step = range_var(len(range_vars))
    results = [s + const(c) + step * d if d else s + const(c) for s, c, d in zip(stripped, first, delta)]
    return IndexingMap(dims, tuple(range_vars) + (Interval(0, len(members) - 1),), runtime_vars, results, constraints)


# ---- one result coordinate at a time ------------------------------------------------------------


def _join_one_coordinate(maps: Sequence[IndexingMap], i: int) -> tuple[tuple[IndexingMap, ...], bool]:
    """Groups whose members agree everywhere but in result ``i``'s constant, joined where those
    constants form a full progression (a grid of pieces joins one axis per call)."""
    groups: dict[tuple[object, ...], list[_Member]] = {}
    order: list[IndexingMap | tuple[object, ...]] = []
    for m in maps:
        stripped, constants = _split(m)
        signature = _signature(m, stripped)
        if signature is None or i >= len(constants):
            order.append(m)
            continue
        key = (signature, constants[:i], constants[i + 1 :])
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((constants, m))
    out: list[IndexingMap] = []
    changed = False
    for entry in order:
        if isinstance(entry, IndexingMap):
            out.append(entry)
            continue
        members = sorted(groups[entry], key=lambda cm: cm[0])
        joined = _joined(entry[0], members)  # type: ignore[arg-type]  # the signature part of the key
        if joined is not None:
            changed = True
        out.extend([joined] if joined is not None else [m for _, m in members])
    return tuple(out), changed


# ---- one dimension pinned to successive points ------------------------------------------------------


def _skeleton(m: IndexingMap, k: int) -> tuple[object, ...]:
    """What members of one family share: the dims but ``k``, how many range variables, the
    runtime variables, the results less their constants, the constraints' expressions."""
    stripped, _ = _split(m)
    return (
        m.dims[:k] + m.dims[k + 1 :],
        len(m.range_vars),
        m.runtime_vars,
        stripped,
        tuple(e for e, _ in m.constraints),
    )


def _numbers(m: IndexingMap) -> tuple[int, ...]:
    """The integers a family's members differ by: result constants, range and constraint bounds."""
    _, constants = _split(m)
    bounds = [x for b in m.range_vars for x in b] + [x for _, b in m.constraints for x in b]
    return constants + tuple(bounds)


def _pinned_template(
    a: IndexingMap, b: IndexingMap, k: int, p_a: int, step: int, points: Interval
) -> IndexingMap | None:
    """The map over ``d_k in points`` whose restriction to ``d_k = p_a + t * step`` is ``a``'s
    numbers plus ``t`` times (``b``'s less ``a``'s) (``step`` is 1 or -1); None where a
    constraint's two bounds move by different amounts."""
    na, nb = _numbers(a), _numbers(b)
    delta = [y - x for x, y in zip(na, nb)]
    t = (dim(k) - p_a) * step  # the iteration, from d_k
    t_lo, t_hi = sorted(((points.lo - p_a) * step, (points.hi - p_a) * step))
    stripped, constants = _split(a)
    r = len(constants)
    results = [s + const(c) + t * d if d else s + const(c) for s, c, d in zip(stripped, constants, delta[:r])]
    range_vars: list[Interval] = []
    constraints: list[tuple[Expr, Interval]] = []
    for i, iv in enumerate(a.range_vars):
        d_lo, d_hi = delta[r + 2 * i], delta[r + 2 * i + 1]
        hull = Interval(min(iv.lo + t_lo * d_lo, iv.lo + t_hi * d_lo), max(iv.hi + t_lo * d_hi, iv.hi + t_hi * d_hi))
        range_vars.append(hull)
        s = range_var(i)
        if d_lo == d_hi:
            if d_lo:
                constraints.append((s - t * d_lo, iv))
            continue
        for d, bound_lo in ((d_lo, True), (d_hi, False)):
            if not d:
                continue
            # s - d * t over the box, its far side left open to the box's extreme
            lo = min(hull.lo - d * t_lo, hull.lo - d * t_hi)
            hi = max(hull.hi - d * t_lo, hull.hi - d * t_hi)
            constraints.append((s - t * d, Interval(iv.lo, hi) if bound_lo else Interval(lo, iv.hi)))
    base = r + 2 * len(a.range_vars)
    for j, (e, iv) in enumerate(a.constraints):
        d_lo, d_hi = delta[base + 2 * j], delta[base + 2 * j + 1]
        if d_lo != d_hi:
            return None
        constraints.append((e - t * d_lo, iv) if d_lo else (e, iv))
    dims = list(a.dims)
    dims[k] = points
    return IndexingMap(dims, range_vars, a.runtime_vars, results, constraints)


def _pinned(m: IndexingMap, k: int, p: int) -> IndexingMap:
    dims = list(m.dims)
    dims[k] = Interval(p, p)
    return m.with_dims(dims).simplified().remove_unused_variables()


def _normal_key(m: IndexingMap) -> tuple[object, ...]:
    return m.simplified().remove_unused_variables().canonical_key()


def _join_pinned_dim(maps: Sequence[IndexingMap], k: int) -> tuple[tuple[IndexingMap, ...], bool]:
    """Maps that each apply at one point of ``d_k`` (a scan's stacked element: iteration t's at
    ``d_k = t``) joined into one map over those points where one map, restricted to each point,
    is exactly the member there (compared in canonical form; anything else stays as it is)."""
    original, given = maps, len(maps)
    maps = _with_segments_split(maps, k)
    pool: dict[int, dict[tuple[object, ...], int]] = {}  # point -> normal key -> index in maps
    for n, m in enumerate(maps):
        if not _regular(m, k) or not m.dims[k].is_point:
            continue
        pool.setdefault(m.dims[k].lo, {}).setdefault(_normal_key(m), n)
    if len(pool) < 2:
        return tuple(original), False
    used: set[int] = set()
    joined_at: dict[int, IndexingMap] = {}  # first member's index -> the joined map
    points = sorted(pool)
    for p in points:
        for step in (1, -1):
            if p + step not in pool:
                continue
            for n_a in list(pool[p].values()):
                if n_a in used:
                    continue
                a = maps[n_a]
                partners = [
                    n_b
                    for n_b in pool[p + step].values()
                    if n_b not in used and _skeleton(maps[n_b], k) == _skeleton(a, k)
                ]
                for n_b in partners:
                    family = _family(maps, pool, used, a, maps[n_b], k, p, step)
                    if family is not None:
                        joined, members = family
                        used.update(members)
                        joined_at[min(members)] = joined
                        break
    out = [joined_at.get(n, m) for n, m in enumerate(maps) if n in joined_at or n not in used]
    if not joined_at or len(out) >= given:
        return tuple(original), False
    return tuple(out), True


def _with_segments_split(maps: Sequence[IndexingMap], k: int) -> Sequence[IndexingMap]:
    """``maps`` with each map over a short run of ``d_k`` next to a point member split into its
    points (exactly its union), so that a run joined at one iteration extends by the next's."""
    points = {m.dims[k].lo for m in maps if _regular(m, k) and m.dims[k].is_point}
    cap = current().budgets.loop_steps
    out: list[IndexingMap] = []
    for m in maps:
        d = m.dims[k] if _regular(m, k) else None
        if d is None or d.is_point or d.size > cap or not (d.lo - 1 in points or d.hi + 1 in points):
            out.append(m)
            continue
        out.extend(_pinned(m, k, q) for q in range(d.lo, d.hi + 1))
    return out


def _regular(m: IndexingMap, k: int) -> bool:
    return not m.is_undefined and not m.is_known_empty and k < m.num_dims


def _family(
    maps: Sequence[IndexingMap],
    pool: dict[int, dict[tuple[object, ...], int]],
    used: set[int],
    a: IndexingMap,
    b: IndexingMap,
    k: int,
    p: int,
    step: int,
) -> tuple[IndexingMap, list[int]] | None:
    """The template through ``a`` (at ``p``) and ``b`` (at ``p + step``) over the longest run of
    points around them where it restricts to an unused member at every point; it and those
    members, or None."""
    lo = hi = p
    while lo - 1 in pool:
        lo -= 1
    while hi + 1 in pool:
        hi += 1
    for _ in range(2):  # a shorter run changes the hulls: rebuilt and checked once more
        template = _pinned_template(a, b, k, p, step, Interval(lo, hi))
        if template is None:
            return None
        found = {q: pool[q].get(_normal_key(_pinned(template, k, q))) for q in range(lo, hi + 1)}
        ok = {q for q, n in found.items() if n is not None and n not in used}
        if p not in ok or p + step not in ok:
            return None
        run_lo, run_hi = min(p, p + step), max(p, p + step)
        while run_lo - 1 in ok:
            run_lo -= 1
        while run_hi + 1 in ok:
            run_hi += 1
        if (run_lo, run_hi) == (lo, hi):
            return template.simplified(), [found[q] for q in range(lo, hi + 1)]  # type: ignore[misc]
        lo, hi = run_lo, run_hi
    return None


def join_progressions(maps: Sequence[IndexingMap]) -> tuple[IndexingMap, ...]:
    """Every join this module knows, exact each: whole constant vectors in progression, then one
    result coordinate at a time, then members pinned to successive points of one dimension."""
    try:
        return _join_progressions(maps)
    finally:
        current().tables[_SPLITS].clear()


def _join_progressions(maps: Sequence[IndexingMap]) -> tuple[IndexingMap, ...]:
    out = join_constant_progressions(maps)
    if len(out) < 2:
        return out
    for _ in range(2):
        changed = False
        for i in range(max((m.num_results for m in out if not m.is_undefined), default=0)):
            out, c = _join_one_coordinate(out, i)
            changed |= c
        for k in range(max((m.num_dims for m in out if not m.is_undefined), default=0)):
            out, c = _join_pinned_dim(out, k)
            changed |= c
        if not changed:
            break
    return out
