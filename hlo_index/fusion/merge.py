"""Joining maps whose union is provably one map.

A concatenate of two single-column pieces of one operand reads it through
``(d0, d1) -> (d0, 0), d1 in [0, 0]`` and ``(d0, d1) -> (d0, 1), d1 in [1, 1]``: two maps, each
valid on one value of ``d1``, whose union is the single access pattern ``(d0, d1) -> (d0, d1)``.
A candidate join is proposed for two maps that agree everywhere except on one dimension's interval
(adjacent or overlapping) and, for single-value intervals, on results that differ by a constant
(interpolated linearly along that dimension). A candidate is kept only when it is proved equal to
the union of the two: symbolically when both maps have the same formula (same results, or results
differing by a constant over two adjacent single values, interpolated), else by brute force over
the whole (bounded) domain; otherwise both maps stay. ``merge_maps`` does only this.

``compact_maps``, for sets too big to show or compose as they are (a weight that reaches a
training step's gradient along hundreds of paths), also applies the rules of the sibling modules,
each exact by construction or by enumeration: ``domain_union`` (one formula over two domains),
``progression`` (pieces repeated at a stride), ``image_union`` (fixed read sets that fill a box) and
``subsume`` (maps inside a whole-box read dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeAlias

from ..affine import IndexingMap, Interval, const, dim
from ..affine.evaluate import distinct_sorted
from ..affine.expr import Expr
from ..context import budgets, current, register_table
from .domain_union import domain_join
from .image_union import domain_key, reads_fixed_set, whole_box_of
from .progression import join_progressions
from .semantic import dedupe_semantically, differ_at_probes, domain_size
from .subsume import drop_inside_free_positions, drop_subsumed

if TYPE_CHECKING:
    import numpy as np

Maps = tuple[IndexingMap, ...]
RowsMemo: TypeAlias = dict[int, tuple[IndexingMap, "np.ndarray | None"]]  # id(map) -> (map, its rows)
Joiner: TypeAlias = Callable[[IndexingMap, IndexingMap, RowsMemo], "IndexingMap | None"]


def _rows(m: IndexingMap, memo: RowsMemo) -> np.ndarray | None:
    """Every (dims..., results...) row of ``m`` (with repeats), or None when the domain is too
    large to list; memoised per map object for one ``merge_maps`` call."""
    import numpy as np

    hit = memo.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    limit = budgets().semantic_check_points
    rows = None
    if domain_size(m) <= limit:
        points, results = m.enumerate(limit=limit)
        rows = np.concatenate([points[:, : m.num_dims], results], axis=1).astype(np.int64, copy=False)
    memo[id(m)] = (m, rows)
    return rows


def _same_relation(union_parts: list[np.ndarray], whole: np.ndarray) -> bool:
    """The set of rows of ``whole`` equals the union of the parts' row sets."""
    import numpy as np

    union = np.concatenate(union_parts, axis=0)
    if union.shape[1] == 0:
        return (len(union) > 0) == (len(whole) > 0)
    both = np.concatenate([union, whole], axis=0)
    lo, hi = both.min(axis=0), both.max(axis=0)
    spans = (hi - lo + 1).astype(object)
    total = 1
    for s in spans:
        total *= int(s)
    if total < (1 << 62):  # one int64 key per row: 1-D unique is far cheaper than row-wise
        strides = np.cumprod(np.concatenate([[1], (hi - lo + 1)[:0:-1]]))[::-1].astype(np.int64)
        union_keys = distinct_sorted((union - lo) @ strides)
        whole_keys = distinct_sorted((whole - lo) @ strides)
    else:
        union_keys = np.unique(union, axis=0)
        whole_keys = np.unique(whole, axis=0)
    return union_keys.shape == whole_keys.shape and bool(np.array_equal(union_keys, whole_keys))


def _mergeable(a: IndexingMap, b: IndexingMap) -> bool:
    return (
        not a.is_undefined
        and not b.is_undefined
        and not a.is_known_empty
        and not b.is_known_empty
        and not a.runtime_vars
        and not b.runtime_vars
        and a.num_dims == b.num_dims
        and a.num_results == b.num_results
        and a.range_vars == b.range_vars
        and a.constraints == b.constraints
    )


def _candidates(a: IndexingMap, b: IndexingMap) -> Iterator[tuple[IndexingMap, bool]]:
    """Maps that may equal ``a ∪ b`` (unproved): either map's results over the joined interval
    (one piece extends the other), or, for two single values, the line through their results."""
    if not _mergeable(a, b):
        return
    differing = [k for k, (x, y) in enumerate(zip(a.dims, b.dims)) if x != y]
    if len(differing) != 1:  # none: same domain, only the results differ, which is no join
        return
    k = differing[0]
    ia, ib = a.dims[k], b.dims[k]
    if ia.lo > ib.lo:
        a, b, ia, ib = b, a, ib, ia
    if ib.lo > ia.hi + 1:  # a gap between the two intervals
        return
    dims = list(a.dims)
    dims[k] = Interval(ia.lo, max(ia.hi, ib.hi))
    for results, proved in _result_choices(a, b, k, ia, ib):
        yield IndexingMap(dims, a.range_vars, (), results, a.constraints).simplified(), proved


def _result_choices(
    a: IndexingMap, b: IndexingMap, k: int, ia: Interval, ib: Interval
) -> Iterator[tuple[tuple[Expr, ...], bool]]:
    """(results, proved): ``proved`` when the join is exact by construction. Both maps have the
    same range variables and constraints and differ in dimension ``k``'s interval only, and the
    two intervals touch or overlap: the same formula over both is that formula over their union;
    results differing by a constant ``c`` over two single values ``l < l'`` are
    ``r + (d_k - l) * c / (l' - l)`` there, which gives ``r`` at ``l`` and ``r + c`` at ``l'``."""
    if a.results == b.results:
        yield a.results, True
        return
    yield a.results, False
    yield b.results, False
    if ia.size != 1 or ib.size != 1:
        return
    step = ib.lo - ia.lo
    results: list[Expr] = []
    for ra, rb in zip(a.results, b.results):
        diff = rb - ra
        if not diff.is_constant or diff.constant_value % step:
            return
        slope = diff.constant_value // step
        results.append(ra if slope == 0 else ra + (dim(k) - const(ia.lo)) * slope)
    yield tuple(results), True


def join(a: IndexingMap, b: IndexingMap, memo: RowsMemo | None = None) -> IndexingMap | None:
    """One map whose relation is proved equal to the union of ``a``'s and ``b``'s, or None."""
    memo = {} if memo is None else memo
    for merged, proved in _candidates(a, b):
        if merged.is_known_empty or merged.is_undefined:
            continue
        if proved:
            return merged
        # the candidate extends one piece's formula over the other's interval: a probe of the
        # other piece's box where they differ refutes it without enumerating anything
        if differ_at_probes(merged, b, b.dims) or differ_at_probes(merged, a, a.dims):
            continue
        first, second = _rows(a, memo), _rows(b, memo)
        if first is None or second is None:
            return None
        whole = _rows(merged, memo)
        if whole is not None and _same_relation([first, second], whole):
            return merged
    return None


def _candidate_for_join(m: IndexingMap) -> bool:
    # no size limit: symbolic joins need no enumeration (``_rows`` refuses big domains itself)
    return not m.is_undefined and not m.is_known_empty and not m.runtime_vars


def _bucket(m: IndexingMap) -> tuple[object, ...]:
    """Maps that may join share this (both kinds of join keep range variables and arity)."""
    return (m.num_dims, m.num_results, m.range_vars)


def _join_pairwise(work: list[IndexingMap], joiner: Joiner, memo: RowsMemo) -> bool:
    """One sweep of every provable pairwise join among the joinable maps of ``work`` (in place: a
    join keeps its first map's slot, so the order stays deterministic); True when one was made.
    ``joiner(a, b, memo)`` gives the joined map or None. Only maps of one bucket can join."""
    buckets: dict[tuple[object, ...], list[tuple[int, IndexingMap]]] = {}
    for k, m in enumerate(work):
        if _candidate_for_join(m):
            buckets.setdefault(_bucket(m), []).append((k, m))
    survivors: dict[int, IndexingMap] = {}
    joined = False
    for slots in buckets.values():
        if len(slots) > 1 and _join_bucket(slots, joiner, memo):
            joined = True
        survivors.update(slots)
    if joined:
        work[:] = [
            survivors.get(k, m) if _candidate_for_join(m) else m
            for k, m in enumerate(work)
            if k in survivors or not _candidate_for_join(m)
        ]
    return joined


def _join_bucket(slots: list[tuple[int, IndexingMap]], joiner: Joiner, memo: RowsMemo) -> bool:
    """Apply every provable pairwise join among the (slot, map) pairs ``slots`` (in place, the
    first map's slot kept); True when one was made."""
    joined = False
    i = 0
    while i < len(slots):
        j = i + 1
        while j < len(slots):
            merged = joiner(slots[i][1], slots[j][1], memo)
            if merged is not None and not merged.is_known_empty:
                slots[i] = (slots[i][0], merged)
                del slots[j]
                joined = True
            else:
                j += 1
        i += 1
    return joined


def _join_or_domain_join(a: IndexingMap, b: IndexingMap, memo: RowsMemo) -> IndexingMap | None:
    return join(a, b, memo) or domain_join(a, b)


# Per analysis context, identity memos (the maps kept): id(map) -> (map, its group among fixed-set
# readers, None when it reads no fixed set); ids of a group's maps -> (the maps, their whole box or
# None). A set past ``maps_per_value`` is compacted again after each map it gains: its maps and
# groups are asked again.
_BOX_GROUPS = register_table("fusion.merge.box_groups")
_WHOLE_BOXES = register_table("fusion.merge.whole_boxes")


def _fill_boxes(maps: list[IndexingMap]) -> list[IndexingMap] | None:
    """``maps`` with every group of fixed-set readers over one domain whose images fill a box
    replaced by that one whole-box read (at the group's first slot); None when none does."""
    groups: dict[tuple[object, ...], list[int]] = {}
    memo: dict[int, tuple[IndexingMap, tuple[object, ...] | None]] = current().tables[_BOX_GROUPS]
    for k, m in enumerate(maps):
        hit = memo.get(id(m))
        if hit is None or hit[0] is not m:
            hit = memo[id(m)] = (m, domain_key(m) if reads_fixed_set(m) else None)
        if hit[1] is not None:
            groups.setdefault(hit[1], []).append(k)
    replaced: dict[int, IndexingMap | None] = {}
    boxes: dict[tuple[int, ...], tuple[list[IndexingMap], IndexingMap | None]] = current().tables[_WHOLE_BOXES]
    for positions in groups.values():
        if len(positions) < 2:
            continue
        group = [maps[k] for k in positions]
        key = tuple(map(id, group))
        found = boxes.get(key)
        if found is None or any(a is not b for a, b in zip(found[0], group)):
            found = boxes[key] = (group, whole_box_of(group))
        whole = found[1]
        if whole is not None:
            replaced[positions[0]] = whole
            replaced.update((k, None) for k in positions[1:])
    if not replaced:
        return None
    return [kept for k, m in enumerate(maps) if (kept := replaced.get(k, m)) is not None]


# Per analysis context: the structural key of a set (canonical keys, runtime descriptions) ->
# its merged form, or None when nothing merges. The sets of a training step's values repeat
# (gpt12: ~140 distinct ones among ~8000 finalised).
_MERGED = register_table("fusion.merge.merged")


def _set_key(maps: Maps) -> tuple[object, ...]:
    return tuple((m.canonical_key(), tuple(v.description for v in m.runtime_vars)) for m in maps)


def merge_maps(maps: Maps) -> Maps:
    """``maps`` with every provable pairwise join applied until none is left (first map's slot
    kept, so the order stays deterministic). Sets presented as they are: a concatenate's pieces
    over disjoint outputs stay apart as XLA keeps them, joined only where one formula covers them."""
    if len(maps) < 2 or sum(map(_candidate_for_join, maps)) < 2:
        return maps
    work = list(maps)
    memo: RowsMemo = {}
    joined = False
    while len(work) > 1 and _join_pairwise(work, join, memo):
        joined = True
    if not joined:
        return maps
    return dedupe_semantically(tuple(work))


def compact_maps(maps: Maps) -> Maps:
    """``maps`` rewritten into as few maps as the exact rules allow: pairwise joins, domain unions,
    stride-repeated pieces, whole-box images and maps inside a box reader dropped, until none
    applies (deterministic order: a join keeps its first map's slot, a drop the others' order).
    For sets too big to present or compose as they are (``mapset.compaction_threshold``)."""
    if len(maps) < 2:
        return maps
    memo: dict[tuple[object, ...], Maps | None] = current().tables[_MERGED]
    key = _set_key(maps)
    if key in memo:
        found = memo[key]
        return maps if found is None else found
    merged = _compact_maps(maps)
    memo[key] = None if merged is maps else merged
    return merged


def _compact_maps(maps: Maps) -> Maps:
    work = list(maps)
    memo: RowsMemo = {}
    changed_any = False
    changed = True
    while changed and len(work) > 1:
        changed = _join_pairwise(work, _join_or_domain_join, memo)
        repeated = join_progressions(work)
        if repeated is not None:
            work = repeated
            changed = True
        boxed = _fill_boxes(work)
        if boxed is not None:
            work = boxed
            changed = True
        pruned = drop_inside_free_positions(drop_subsumed(tuple(work)))
        if len(pruned) < len(work):
            work = list(pruned)
            changed = True
        changed_any |= changed
    if not changed_any:
        return maps
    return dedupe_semantically(_canonically_distinct(work))


def _canonically_distinct(maps: list[IndexingMap]) -> Maps:
    """``maps`` without later canonical duplicates (a join may rebuild a map the set holds)."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for m in maps:
        key = m.canonical_key()
        if key not in seen:
            seen.add(key)
            out.append(m)
    return tuple(out)
