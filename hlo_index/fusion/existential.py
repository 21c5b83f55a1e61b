"""Dropping range variables that only witness a satisfiable side condition.

After a reduction or a dot upstream of a slice or a pad, a composed map can keep a range
variable that no result uses, tied only to constraints of its own:
``(d0)[s0, s1] -> (s0), s1 in [16, 255], s1 mod 32 in [16, 31]``. Range variables are
existential, so when some value of ``s1`` satisfies those constraints the relation is exactly
``(d0)[s0] -> (s0)``, and when none does it is empty. The simplifier keeps such variables; here
they are removed, which lets equal relations reached along different paths get one canonical
form (a training step's weights are otherwise read through dozens of spellings of one map).
Satisfiability is decided by enumerating the variables' box, and only when that is exhaustive;
variables that no constraint ties together are decided apart (a chain of convolutions leaves one
small independent condition per window).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from ..affine import IndexingMap, Interval, const, dim
from ..affine.expr import DIM, RANGE, Expr, replace_variables, variable
from ..context import budgets, current, register_table
from .bound_witnesses import eliminate_bound_witnesses

_DONE = register_table("fusion.existential.done")  # id(map) -> (map, result): identity memo


def _satisfiable(
    group: list[int], range_vars: Sequence[Interval], constraints: Sequence[tuple[Expr, Interval]]
) -> bool | None:
    """True / False when decided exhaustively over the group's box; None when too large."""
    points = 1
    for i in group:
        points *= max(range_vars[i].size, 0)
    if points == 0:
        return False
    limit = budgets().witness_points
    if points > limit:
        return None
    rename = {variable(RANGE, old): variable(DIM, new) for new, old in enumerate(group)}
    probe = _over_box([range_vars[i] for i in group], rename, constraints, 0)
    feasible, _ = probe.enumerate(limit=limit)
    return len(feasible) > 0


def _over_box(
    box: Sequence[Interval], rename: dict[Expr, Expr], constraints: Sequence[tuple[Expr, Interval]], results: int
) -> IndexingMap:
    """``constraints`` as a map over ``box`` (their variables renamed to its dims by ``rename``)
    whose results are its first ``results`` dims: what enumeration decides witnesses on."""
    memo: dict[Expr, Expr] = {}
    return IndexingMap(
        list(box),
        (),
        (),
        tuple(dim(i) for i in range(results)),
        [(replace_variables(e, rename.get, memo), b) for e, b in constraints],
    )


def drop_witness_range_vars(m: IndexingMap) -> IndexingMap:
    """``m`` without range variables that appear in no result and only in constraints among
    themselves, when those constraints are decidably satisfiable (KNOWN EMPTY when they are not);
    bare range-variable constraints folded into the variable's interval, and variables pinned to
    one value replaced by it."""
    if m.is_undefined or m.is_known_empty or not m.range_vars:
        return m
    done: dict[int, tuple[IndexingMap, IndexingMap]] = current().tables[_DONE]
    hit = done.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    out = _drop(m)
    done[id(m)] = (m, out)
    return out


def _pin(m: IndexingMap) -> IndexingMap:
    """Fold ``s in [a, b]`` constraints into ``s``'s interval and substitute single-value ``s``."""
    ranges = list(m.range_vars)
    kept = []
    folded = False
    for e, b in m.constraints:
        if e.kind == RANGE:
            iv = ranges[e.value]
            lo, hi = max(iv.lo, b.lo), min(iv.hi, b.hi)
            if lo > hi:
                return IndexingMap.known_empty(m.num_dims, m.num_results)
            ranges[e.value] = Interval(lo, hi)
            folded = True
        else:
            kept.append((e, b))
    pinned = {variable(RANGE, i): const(iv.lo) for i, iv in enumerate(ranges) if iv.lo == iv.hi}
    if not folded and not pinned:
        return m
    memo: dict[Expr, Expr] = {}
    results = [replace_variables(e, pinned.get, memo) for e in m.results]
    constraints = [(replace_variables(e, pinned.get, memo), b) for e, b in kept]
    return IndexingMap(m.dims, ranges, m.runtime_vars, results, constraints).remove_unused_variables().simplified()


def _drop(m: IndexingMap) -> IndexingMap:
    m = eliminate_bound_witnesses(_pin(m))
    if m.is_known_empty or not m.range_vars or not m.constraints:
        return m
    in_results: set[Expr] = set()
    for e in m.results:
        in_results |= e.variables()
    free = {variable(RANGE, i) for i in range(len(m.range_vars))} - in_results
    if not free:
        return m
    variables = [e.variables() for e, _ in m.constraints]
    changed = True
    while changed and free:  # a variable sharing a constraint with a bound one is bound too
        changed = False
        for vs in variables:
            if vs & free and not vs <= free:
                free -= vs
                changed = True
    if not free:
        return m
    dropped: set[int] = set()  # indices of the constraints shown satisfiable, with their variables
    # one enumeration when the whole box is small enough; else each independent part on its own
    whole_box = 1
    for v in free:
        whole_box *= max(m.range_vars[v.value].size, 0)
    groups = [free] if whole_box <= budgets().witness_points else _components(free, variables)
    for component in groups:
        indices = [k for k, vs in enumerate(variables) if vs and vs <= component]
        group = sorted(v.value for v in component)
        verdict = _satisfiable(group, m.range_vars, [m.constraints[k] for k in indices])
        if verdict is None:
            continue
        if not verdict:
            return IndexingMap.known_empty(m.num_dims, m.num_results)
        dropped.update(indices)
    if not dropped:
        return m
    kept = [c for k, c in enumerate(m.constraints) if k not in dropped]
    return IndexingMap(m.dims, m.range_vars, m.runtime_vars, m.results, kept).remove_unused_variables().simplified()


def _components(free: set[Expr], variables: Sequence[AbstractSet[Expr]]) -> list[set[Expr]]:
    """The free variables that constraints tie together, one set per connected group (each is
    decided on its own box: a product of small boxes is enumerated part by part)."""
    components: list[set[Expr]] = []
    for vs in variables:
        if not vs or not vs <= free:
            continue
        touching = [c for c in components if c & vs]
        merged = set(vs).union(*touching)
        components = [c for c in components if not (c & vs)]
        components.append(merged)
    return components


def drop_dim_witness_range_vars(m: IndexingMap) -> IndexingMap:
    """``m`` without range variables that no result uses and whose constraints, which mention
    only it and dims, some value of it satisfies at every point of those dims' box (decided by
    enumerating that box with the variable's interval: exact, and skipped beyond
    ``Budgets.witness_points``). An unsolved equality often leaves one: ``exists s: f(s) = d_i``
    for an ``f`` onto ``d_i``'s interval (a rotation's ``(s + 64) mod 128``)."""
    if m.is_undefined or m.is_known_empty or not m.range_vars or not m.constraints or m.runtime_vars:
        return m
    in_results: set[Expr] = set()
    for e in m.results:
        in_results |= e.variables()
    dropped: set[int] = set()
    for v in range(len(m.range_vars)):
        w = variable(RANGE, v)
        if w in in_results:
            continue
        mine = [k for k, (e, _) in enumerate(m.constraints) if w in e.variables()]
        others = set().union(*(m.constraints[k][0].variables() for k in mine)) - {w}
        if not mine or any(x.kind != DIM for x in others) or _always_satisfied(m, w, mine, others) is not True:
            continue
        dropped.update(mine)
    if not dropped:
        return m
    kept = [c for k, c in enumerate(m.constraints) if k not in dropped]
    return IndexingMap(m.dims, m.range_vars, (), m.results, kept).remove_unused_variables().simplified()


def _always_satisfied(m: IndexingMap, w: Expr, mine: list[int], dims: set[Expr]) -> bool | None:
    """Whether every point of ``dims``' box has a value of ``w`` meeting constraints ``mine``;
    None when the box is too large to enumerate."""
    order = sorted(dims, key=lambda x: x.value)
    box = [m.dims[x.value] for x in order] + [m.range_vars[w.value]]
    points = 1
    for iv in box:
        points *= max(iv.size, 0)
    if points == 0 or points > budgets().witness_points:
        return None
    rename = {x: dim(i) for i, x in enumerate(order)}
    rename[w] = dim(len(order))
    probe = _over_box(box, rename, [m.constraints[k] for k in mine], len(order))
    _, reached = probe.enumerate(limit=points)
    wanted = 1
    for iv in box[:-1]:
        wanted *= iv.size
    return len({tuple(row) for row in reached.tolist()}) == wanted
