"""Joining maps that repeat one pattern at a fixed stride: the pieces of a per-head split.

Slicing every head of a ``[rows, heads*2h]`` value in two and concatenating the halves swapped (a
rotary embedding) reads it through one map per half of every head: over ``d1 in [2hj, 2hj+h-1]``
the results ``r + 2hj``, for ``j = 0 .. heads-1``. Pieces that agree in everything but dimension
``k``'s interval and the constant terms of their results, whose intervals have one size and start
at ``lo + j*P`` and whose constants grow by ``j*c``, are one map over the hull:

    results ``r + ((d_k - lo) floordiv P) * c``, constraint ``(d_k - lo) mod P in [0, size - 1]``

(the constraint dropped when the pieces touch, ``size == P``). For a point of piece ``j``,
``(d_k - lo) floordiv P`` is ``j`` and the constraint holds; between pieces it fails: the relation
is exactly the union, whatever the pieces' formulas are, since only their domains and constants
differ. A run is taken only as long as the stride and the step hold.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..affine import IndexingMap, Interval, const, dim
from ..affine.expr import Expr
from ..context import current, register_table

# Per analysis context: id(map) -> (map, its signature per dimension), the map kept. A set past
# ``maps_per_value`` is compacted again after each map it gains: its maps are asked again.
_SIGNATURES = register_table("fusion.progression.signatures")


def _split_constant(e: Expr) -> tuple[Expr, int]:
    constant, _ = e.linear_terms()
    return (e - const(constant) if constant else e), constant


_Signatures = tuple[tuple[object, ...] | None, ...]


def _signatures(m: IndexingMap, memo: dict[int, tuple[IndexingMap, _Signatures]]) -> _Signatures:
    """Per dimension ``k``: what pieces of one run along ``k`` share (all but dimension ``k``'s
    interval and result constants); None for every ``k`` when ``m`` cannot be a piece."""
    hit = memo.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    signatures: _Signatures
    if m.is_undefined or m.is_known_empty or m.runtime_vars:
        signatures = (None,) * m.num_dims
    else:
        stripped = tuple(_split_constant(r)[0] for r in m.results)
        signatures = tuple(
            (
                k,
                m.dims[k].size,
                tuple(iv for j, iv in enumerate(m.dims) if j != k),
                m.range_vars,
                m.constraints,
                stripped,
            )
            for k in range(m.num_dims)
        )
    memo[id(m)] = (m, signatures)
    return signatures


def _joined_run(run: Sequence[IndexingMap], k: int, stride: int, steps: tuple[int, ...]) -> IndexingMap:
    first = run[0]
    lo, size = first.dims[k].lo, first.dims[k].size
    offset = (dim(k) - const(lo)) if lo else dim(k)
    which = offset.floordiv(stride)
    results = [r + which * c if c else r for r, c in zip(first.results, steps)]
    constraints = list(first.constraints)
    if size < stride:
        constraints.append((offset.mod(stride), Interval(0, size - 1)))
    dims = list(first.dims)
    dims[k] = Interval(lo, run[-1].dims[k].hi)
    return IndexingMap(dims, first.range_vars, (), results, constraints).simplified()


def _runs(
    pieces: list[tuple[int, IndexingMap]], k: int
) -> Iterator[tuple[list[tuple[int, IndexingMap]], int, tuple[int, ...]]]:
    """Maximal runs (length >= 2) of pieces, sorted by their start along ``k``, with one stride
    (at least the pieces' size) and one step per result constant."""
    pieces = sorted(pieces, key=lambda p: p[1].dims[k].lo)
    size = pieces[0][1].dims[k].size
    start = 0
    while start < len(pieces) - 1:
        a, b = pieces[start][1], pieces[start + 1][1]
        stride = b.dims[k].lo - a.dims[k].lo
        steps = tuple(_split_constant(rb)[1] - _split_constant(ra)[1] for ra, rb in zip(a.results, b.results))
        end = start + 1
        if stride >= size:
            while end + 1 < len(pieces):
                c, d = pieces[end][1], pieces[end + 1][1]
                if (
                    d.dims[k].lo - c.dims[k].lo != stride
                    or tuple(_split_constant(rd)[1] - _split_constant(rc)[1] for rc, rd in zip(c.results, d.results))
                    != steps
                ):
                    break
                end += 1
            yield pieces[start : end + 1], stride, steps
            start = end + 1
        else:
            start += 1


def join_progressions(maps: list[IndexingMap]) -> list[IndexingMap] | None:
    """``maps`` with every run of stride-repeated pieces replaced by one map (at the slot of the
    run's first member in ``maps``); None when there is no run."""
    replaced: dict[int, IndexingMap | None] = {}
    memo = current().tables[_SIGNATURES]
    signatures = [_signatures(m, memo) for m in maps]
    for k in range(maps[0].num_dims if maps else 0):
        groups: dict[tuple[object, ...], list[tuple[int, IndexingMap]]] = {}
        for slot, m in enumerate(maps):
            if slot in replaced:
                continue
            sig = signatures[slot][k] if m.num_dims > k else None
            if sig is not None:
                groups.setdefault(sig, []).append((slot, m))
        for pieces in groups.values():
            if len(pieces) < 2 or len({m.dims[k].lo for _, m in pieces}) < len(pieces):
                continue
            for run, stride, steps in _runs(pieces, k):
                if any(slot in replaced for slot, _ in run):
                    continue
                slots = sorted(slot for slot, _ in run)
                replaced[slots[0]] = _joined_run([m for _, m in run], k, stride, steps)
                replaced.update((slot, None) for slot in slots[1:])
    if not replaced:
        return None
    return [joined for slot, m in enumerate(maps) if (joined := replaced.get(slot, m)) is not None]
