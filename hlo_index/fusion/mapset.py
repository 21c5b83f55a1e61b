"""Sets of indexing maps for one value: the union of its access patterns.

A set is an immutable tuple of distinct maps in arrival order (the traversal that fills it is
deterministic, so the result never depends on hash order); tuples let a value that passes through
an elementwise op share its set with the op's operand instead of copying it. Maps are told apart
by canonical (simplified, structural) equality as they arrive, and by a bounded brute-force check
when the set is finalised. KNOWN EMPTY is kept only while no non-empty map exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..affine import IndexingMap
from ..context import budget_reason, budgets, current, register_table, remember
from .merge import compact_maps, merge_maps
from .semantic import dedupe_semantically
from .subsume import drop_equal_box_readers

# Budgets (hlo_index.context.Budgets): above ``semantic_check_points`` candidate points (dims x
# range vars) a semantic comparison would only be a sample, which cannot prove two maps equal;
# such maps stay distinct (the conservative answer). Beyond ``maps_per_value`` distinct maps for
# one value (whole training-step ENTRY computations, where a weight reaches the root along
# thousands of paths) the set becomes one UNDEFINED map: listing them would neither finish nor
# help anyone read the output.


def _overflow_reason(limit: int) -> str:
    return budget_reason("maps_per_value", limit, f"more than {limit} distinct access patterns reach this value")


def is_overflow(m: IndexingMap) -> bool:
    return m.is_undefined and (m.undefined_reason or "").startswith("budget maps_per_value=")


Maps = tuple[IndexingMap, ...]


def _add(maps: list[IndexingMap], m: IndexingMap, keys: set[tuple[object, ...]] | None = None) -> bool:
    """Add ``m`` to the normalised list ``maps`` in place; False when nothing changed. ``keys``,
    when given, holds the canonical keys of ``maps`` (kept up to date)."""
    if is_overflow(m) and not (maps and is_overflow(maps[0])):
        maps[:] = [m]  # an overflowed set absorbs every other: the union is unknown
        if keys is not None:
            keys.clear()
        return True
    if maps:
        first = maps[0]
        if m.is_known_empty or is_overflow(first):
            return False
        if first.is_known_empty:
            maps[0] = m
            if keys is not None:
                keys.clear()
                keys.add(m.canonical_key())
            return True
    elif m.is_known_empty:
        maps.append(m)
        if keys is not None:
            keys.add(m.canonical_key())
        return True
    for known in maps:  # the same object arrives again and again: no key needed
        if known is m:
            return False
    key = m.canonical_key()
    if keys is None:
        if any(known.canonical_key() == key for known in maps):
            return False
    elif key in keys:
        return False
    else:
        keys.add(key)
    maps.append(m)
    limit = budgets().maps_per_value
    if len(maps) > limit:
        # many paths often read one union that fewer maps describe exactly (pieces of one
        # formula over adjacent domains, paths inside a whole-box read): compact before giving up
        compacted = compact_maps(dedupe_semantically(tuple(maps)))
        maps[:] = compacted if len(compacted) <= limit else [IndexingMap.undefined(_overflow_reason(limit))]
        if keys is not None:
            keys.clear()
            keys.update(k.canonical_key() for k in maps if not is_overflow(k))
    return True


def union(a: Maps, b: Maps) -> Maps:
    """The set of maps in ``a`` or ``b`` (``a``'s order first); ``a`` itself when ``b`` adds nothing."""
    if a is b or not b:
        return a
    if not a:
        return b
    if is_overflow(a[0]):
        return a
    maps = list(a)
    keys = None
    changed = False
    for m in b:
        if any(known is m for known in maps):
            continue
        if keys is None and len(maps) > 2:  # one key per map, not one comparison per pair
            keys = {known.canonical_key() for known in maps}
        changed |= _add(maps, m, keys)
    return tuple(maps) if changed else a


def distinct(maps: Iterable[IndexingMap]) -> Maps:
    out: list[IndexingMap] = []
    keys: set[tuple[object, ...]] = set()
    for m in maps:
        _add(out, m, keys)
    return tuple(out)


class MapSet:
    """A growing set of distinct maps (the tuple functions above, with a mutable face)."""

    __slots__ = ("_maps",)

    def __init__(self, maps: Iterable[IndexingMap] = ()) -> None:
        self._maps: list[IndexingMap] = []
        for m in maps:
            _add(self._maps, m)

    def add(self, m: IndexingMap) -> None:
        _add(self._maps, m)

    def update(self, maps: Iterable[IndexingMap]) -> None:
        for m in maps:
            _add(self._maps, m)

    def __iter__(self) -> Iterator[IndexingMap]:
        return iter(self._maps)

    def __len__(self) -> int:
        return len(self._maps)

    def __bool__(self) -> bool:
        return bool(self._maps)

    def finalized(self) -> Maps:
        """The distinct maps, with semantically equal ones (proved on the whole domain) merged."""
        return finalize(tuple(self._maps))


def compaction_threshold() -> int:
    """Sets of more maps than this (an eighth of ``maps_per_value``) are compacted: rewritten by
    every exact merge rule (``merge.compact_maps``) rather than only joined pairwise. Smaller sets
    are shown as they are, piece by piece as XLA lists them."""
    return max(1, budgets().maps_per_value // 8)


def finalize(maps: Maps) -> Maps:
    """A finished value's set: semantically equal maps dropped, then provably joinable maps merged
    (a set past ``compaction_threshold`` compacted); one tuple object per sequence of map objects
    (``shared``)."""
    if len(maps) < 2:
        return maps if maps == () else shared(maps)  # one empty tuple in CPython: nothing to share
    maps = drop_equal_box_readers(dedupe_semantically(maps))
    return shared(compact_maps(maps) if len(maps) > compaction_threshold() else merge_maps(maps))


def finalize_each(sets: Iterable[Maps]) -> list[Maps]:
    """``[finalize(maps) for maps in sets]``. A whole ENTRY's result holds ~10^5 sets, nearly all of
    one map: those are shared here with the table looked up once."""
    ctx = current()
    table = ctx.tables[_SHARED]
    limit = ctx.budgets.operand_figures
    return [_shared_in(table, limit, maps) if len(maps) == 1 else finalize(maps) for maps in sets]


# Per analysis context: the ids of a set's map objects -> the first tuple of exactly those objects
# (kept, so the ids stay unique). Distinct fused computations mostly reach their parameters through
# the same few shared maps (identities), each wrapped in a tuple of its own; one object per set
# lets the per-operand figures and the JSON writer, which memoise by identity, hit.
_SHARED = register_table("fusion.mapset.shared")


def shared(maps: Maps) -> Maps:
    """The tuple of the same map objects in the same order seen first in this context."""
    ctx = current()
    return _shared_in(ctx.tables[_SHARED], ctx.budgets.operand_figures, maps)


def _shared_in(table: dict[tuple[int, ...], Maps], limit: int, maps: Maps) -> Maps:
    key = tuple(map(id, maps))
    hit = table.get(key)
    return remember(table, key, maps, limit) if hit is None else hit
