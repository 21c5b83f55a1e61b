"""An ordered set of indexing maps for one operand: the union of its access patterns.

Maps are deduplicated by canonical (simplified, structural) equality as they arrive, and by a
bounded brute-force check when the set is finalised. Insertion order is kept: the traversal that
fills a set is deterministic, so the result never depends on hash order.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from ..affine import IndexingMap

# Above this many candidate points (dims x range vars) a semantic comparison would only be a
# sample, which cannot prove two maps equal; such maps stay distinct (the conservative answer).
SEMANTIC_CHECK_LIMIT = 1 << 14
# Beyond this many distinct maps for one value (whole training-step ENTRY computations, where a
# weight reaches the root along thousands of paths) the set becomes one UNDEFINED map: listing
# them would neither finish nor help anyone read the output.
MAX_MAPS_PER_VALUE = 64


class MapSet:
    """Distinct maps in arrival order; KNOWN EMPTY is dropped as soon as a non-empty map exists."""

    __slots__ = ("_maps", "_empty", "_overflow")

    def __init__(self, maps: Iterable[IndexingMap] = ()) -> None:
        self._maps: dict[IndexingMap, None] = {}
        self._empty: IndexingMap | None = None
        self._overflow = False
        for m in maps:
            self.add(m)

    def add(self, m: IndexingMap) -> None:
        if m.is_known_empty:
            if self._empty is None:
                self._empty = m
            return
        for known in self._maps:   # the same object arrives again and again: skip hashing it
            if known is m:
                return
        if self._overflow:
            return
        if m not in self._maps:
            self._maps[m] = None
            if len(self._maps) > MAX_MAPS_PER_VALUE:
                self._overflow = True
                self._maps = {IndexingMap.undefined(
                    f"more than {MAX_MAPS_PER_VALUE} distinct access patterns reach this value"): None}

    def update(self, maps: Iterable[IndexingMap]) -> None:
        for m in maps:
            self.add(m)

    def __iter__(self) -> Iterator[IndexingMap]:
        if self._maps:
            return iter(self._maps)
        return iter(() if self._empty is None else (self._empty,))

    def __len__(self) -> int:
        return len(self._maps) or (0 if self._empty is None else 1)

    def __bool__(self) -> bool:
        return bool(self._maps) or self._empty is not None

    def finalized(self) -> tuple[IndexingMap, ...]:
        """The distinct maps, with semantically equal ones (proved on the whole domain) merged."""
        return dedupe_semantically(tuple(self))


def domain_size(m: IndexingMap) -> int:
    n = 1
    for iv in (*m.dims, *m.range_vars):
        n *= max(iv.size, 0)
    for rv in m.runtime_vars:
        n *= max(rv.interval.size, 0)
    return n


def _comparable(a: IndexingMap, b: IndexingMap) -> bool:
    return (not a.is_undefined and not b.is_undefined and not a.is_known_empty and not b.is_known_empty
            and a.num_dims == b.num_dims and a.num_results == b.num_results
            and tuple(a.dims) == tuple(b.dims)
            and domain_size(a) <= SEMANTIC_CHECK_LIMIT and domain_size(b) <= SEMANTIC_CHECK_LIMIT)


def dedupe_semantically(maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
    """Drop every map that is, on its whole (small) domain, the same relation as an earlier one."""
    if len(maps) < 2:
        return maps
    kept: list[IndexingMap] = []
    for m in maps:
        if any(_comparable(k, m) and k.semantically_equal(m, limit=SEMANTIC_CHECK_LIMIT) for k in kept):
            continue
        kept.append(m)
    return tuple(kept)
