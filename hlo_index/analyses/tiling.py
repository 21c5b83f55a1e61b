"""Tile propagation: the tile each operand must provide for one output tile.

An output tile has sizes ``s_i`` and strides ``k_i`` (default 1): tile ``(t_0, ...)`` covers the
output points ``d_i = t_i * s_i * k_i + e_i * k_i`` with ``e_i in [0, s_i - 1]``. We compose the
operand's map with that substitution (``IndexingMap.compose``), simplify, and read each result
as ``offset(t, runtime) + sum_j c_j * e_j + sum_s c_s * s`` (range variables such as a reduced
dim join the element offsets). The operand tile is then: offsets = the map
``(t_0, ...) -> offset + the smallest element term``, per operand dim a size (the number of
values the element terms take) and a stride (their spacing). It is *not* a tile, with the
reason, when an element offset sits inside a floordiv / mod (the map splits the tile), when
two element offsets mix in one operand dim without forming an even progression, when one
output dim feeds two operand dims (a diagonal), or when a start is a gathered index (it
changes from element to element).

Several maps of one operand (a concatenate reading it twice, a pad) give one tile each and
``union_tile`` their bounding tile, saying whether the maps fill it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from math import prod

import numpy as np

from ..affine import IndexingMap, Interval, dim
from ..affine.evaluate import distinct_sorted
from ..affine.expr import RANGE, RUNTIME, Expr
from .forms import offending_division, split_linear

PER_ELEMENT_RUNTIME = "batch position"  # how the op rules describe a gathered start


@dataclass(frozen=True)
class MapTile:
    is_tile: bool
    reason: str
    offsets: IndexingMap | None = None  # tile index -> operand offsets
    sizes: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    notes: tuple[str, ...] = field(default=())
    # XLA's form of the same tile: the offset of the element the tile's first element reads
    # and signed strides (negative where a reverse walks the operand backwards)
    first_offsets: IndexingMap | None = None
    signed_strides: tuple[int, ...] | None = None

    def to_json(self) -> dict:
        return {
            "is_tile": self.is_tile,
            "reason": self.reason,
            "offsets": str(self.offsets) if self.offsets is not None else None,
            "sizes": list(self.sizes) if self.sizes is not None else None,
            "strides": list(self.strides) if self.strides is not None else None,
            "notes": list(self.notes),
            "first_offsets": str(self.first_offsets) if self.first_offsets is not None else None,
            "signed_strides": list(self.signed_strides) if self.signed_strides is not None else None,
        }


class TileError(ValueError):
    """The requested output tile does not fit the output shape."""


def tile_counts(
    output_dims: Sequence[int], sizes: Sequence[int], strides: Sequence[int] | None = None
) -> tuple[int, ...]:
    strides = tuple(strides or (1,) * len(sizes))
    if len(sizes) != len(output_dims) or len(strides) != len(output_dims):
        raise TileError(
            f"the tile has {len(sizes)} sizes / {len(strides)} strides but the output "
            f"has {len(output_dims)} dims {list(output_dims)}"
        )
    for i, (_d, s, k) in enumerate(zip(output_dims, sizes, strides)):
        # A tile larger than its dim is a padded tile (XLA allows it): the part past the end of
        # the dim reads nothing, which the tile map's bound constraints express.
        if s < 1 or k < 1:
            raise TileError(f"tile size {s} with stride {k} on output dim {i}: sizes and strides must be positive")
    return tuple(-(-max(d, 1) // (s * k)) for d, s, k in zip(output_dims, sizes, strides))


def tile_map(output_dims: Sequence[int], sizes: Sequence[int], strides: Sequence[int] | None = None) -> IndexingMap:
    """``(t_0.., e_0..) -> (t_i * s_i * k_i + e_i * k_i)``: tile index and element offset to output."""
    strides = tuple(strides or (1,) * len(sizes))
    counts = tile_counts(output_dims, sizes, strides)
    r = len(sizes)
    domain = [Interval(0, n - 1) for n in counts] + [Interval(0, s - 1) for s in sizes]
    results = [dim(i) * (sizes[i] * strides[i]) + dim(r + i) * strides[i] for i in range(r)]
    constraints = [
        (results[i], Interval(0, output_dims[i] - 1)) for i in range(r) if output_dims[i] % (sizes[i] * strides[i])
    ]
    return IndexingMap(domain, [], [], results, constraints)


def propagate(
    m: IndexingMap, output_dims: Sequence[int], sizes: Sequence[int], strides: Sequence[int] | None = None
) -> MapTile:
    """The operand tile one map needs for the output tile ``sizes`` / ``strides``."""
    if m.is_undefined:
        return MapTile(False, f"undefined map: {m.undefined_reason}")
    if m.is_known_empty:
        return MapTile(False, "the output reads nothing of this operand")
    r = len(sizes)
    composed = m.compose(tile_map(output_dims, sizes, strides)).simplified()
    elements = frozenset(dim(r + i) for i in range(r))
    composed, elements = _split_elements(composed, elements)
    ranges = frozenset(v for e in composed.results for v in e.variables() if v.kind == RANGE)
    movable = elements | ranges
    offsets, out_sizes, out_strides, notes = [], [], [], []
    firsts, signed = [], []
    seen: dict = {}
    for k, expr in enumerate(composed.results):
        split = split_linear(expr, movable)
        if split is None:
            return MapTile(False, _split_reason(m, k, expr, elements, sizes))
        rest, coeffs = split
        gathered = [
            v
            for v in rest.variables()
            if v.kind == RUNTIME and PER_ELEMENT_RUNTIME in composed.runtime_vars[v.value].description
        ]
        if gathered:
            what = composed.runtime_vars[gathered[0].value].description
            return MapTile(
                False,
                f"operand dim {k} starts at a gathered index ({what}): it "
                f"changes from element to element, so the reads are not a tile",
            )
        for v in coeffs:
            if v in elements and coeffs[v]:
                if v in seen:
                    j = v.value - r
                    return MapTile(
                        False,
                        f"output dim {j} feeds operand dims {seen[v]} and {k} (a diagonal): the reads are not a tile",
                    )
                seen[v] = k
        terms = [(v, c) for v, c in coeffs.items() if c]
        low, size, stride, why = _progression(composed, terms, r)
        if why:
            return MapTile(False, f"operand dim {k}: {why}")
        offsets.append(rest + low)
        out_sizes.append(size)
        out_strides.append(stride)
        first, step = _signed(composed, terms, low, stride, size)
        firsts.append(rest + first)
        signed.append(step)
    tile_only = []
    for expr, interval in composed.constraints:
        if expr.variables() & movable:
            notes.append(f"tiles are clipped where {expr} leaves [{interval.lo}, {interval.hi}]")
        elif expr.variables() & frozenset(dim(i) for i in range(r)):
            # a condition on the tile index alone: tiles outside it read nothing
            tile_only.append((expr, interval))
            notes.append(f"tiles where {expr} leaves [{interval.lo}, {interval.hi}] read nothing")
    for i, (n, size, k) in enumerate(zip(output_dims, sizes, strides or (1,) * r)):
        if (size - 1) * k + 1 > n:
            notes.append(
                f"padded tile: output dim {i} has {n} elements, the tile {size}; XLA masks "
                f"the padding, which reads nothing"
            )
    # a tile-only condition may name a range variable no result uses (a padded window's position:
    # the tile reads where some position is in bounds); it stays existential, declared as in the map
    quantified = any(v.kind == RANGE for expr, _ in tile_only for v in expr.variables())
    tile_ranges = composed.range_vars if quantified else []
    offset_map = IndexingMap(composed.dims[:r], tile_ranges, composed.runtime_vars, offsets, tile_only)
    offset_map = offset_map.simplified()
    first_map = IndexingMap(composed.dims[:r], tile_ranges, composed.runtime_vars, firsts, tile_only).simplified()
    return MapTile(
        True, "a tile", offset_map, tuple(out_sizes), tuple(out_strides), tuple(notes), first_map, tuple(signed)
    )


def propagate_with_range_tiles(
    m: IndexingMap,
    output_dims: Sequence[int],
    sizes: Sequence[int],
    range_sizes: Sequence[int],
    strides: Sequence[int] | None = None,
) -> MapTile:
    """Like ``propagate``, with the map's range variables (a dot's contracted dims, a reduce's
    reduced dims) tiled too, as XLA's ``SymbolicTileAnalysis`` tiles a dot's K: range variable
    ``i`` is cut into tiles of ``range_sizes[i]`` and the tile index gains one dim per range
    variable (after the output dims)."""
    if m.is_undefined or m.is_known_empty or not m.range_vars:
        return propagate(m, output_dims, sizes, strides)
    if len(range_sizes) != len(m.range_vars):
        raise TileError(
            f"the map has {len(m.range_vars)} range variables ("
            + ", ".join(f"s{i} in [{iv.lo}, {iv.hi}]" for i, iv in enumerate(m.range_vars))
            + f") but {len(range_sizes)} range tile sizes were given"
        )
    if any(iv.lo != 0 for iv in m.range_vars):
        return MapTile(False, "a range variable does not start at 0: its tiles are not defined")
    as_dims = m.convert_range_vars_to_dims()
    extra = [iv.size for iv in m.range_vars]
    all_strides = tuple(strides or (1,) * len(sizes)) + (1,) * len(extra)
    return propagate(as_dims, tuple(output_dims) + tuple(extra), tuple(sizes) + tuple(range_sizes), all_strides)


def _signed(composed: IndexingMap, terms, low: int, stride: int, size: int):
    """(offset read by the tile's first element, signed stride): a single element offset with a
    negative coefficient (a reverse) walks the operand from its high end down."""
    if len(terms) == 1 and size > 1:
        ((v, c),) = terms
        iv = _bounds(composed, v, 0)
        if c < 0:
            return c * iv.lo, c
        return c * iv.lo, c
    return low, stride


def _split_elements(composed: IndexingMap, elements: frozenset):
    """Where an element offset ``e`` (range ``[0, n-1]``) sits inside ``floordiv c`` / ``mod c``
    with ``c`` dividing ``n``, write ``e = c * q + e'`` (``e'`` in ``[0, c-1]``, a new dim ``q``):
    an expanding reshape then reads a tile of the expanded dims instead of failing."""
    for _ in range(4 * len(elements)):
        target = None
        for expr in composed.results:
            atom = offending_division(expr, elements)
            if atom is not None:
                found = atom.operand.variables() & elements
                if len(found) != 1:
                    return composed, elements
                target = (next(iter(found)), atom.value)
                break
        if target is None:
            return composed, elements
        v, c = target
        size = composed.dims[v.value].size
        if size % c or c >= size or composed.dims[v.value].lo != 0:
            return composed, elements
        n = composed.num_dims
        domain = list(composed.dims)
        domain[v.value] = Interval(0, c - 1)
        domain.append(Interval(0, size // c - 1))
        results = [dim(i) for i in range(n)]
        results[v.value] = dim(v.value) + dim(n) * c
        composed = composed.compose(IndexingMap(domain, [], [], results, ())).simplified()
        elements = elements | {dim(n)}
    return composed, elements


def _bounds(composed: IndexingMap, v, r: int) -> Interval:
    return composed.range_vars[v.value] if v.kind == RANGE else composed.dims[v.value]


def _progression(composed: IndexingMap, terms, r: int):
    """(lowest value, count, spacing, failure) of ``sum c * v`` over the variables' ranges."""
    if not terms:
        return 0, 1, 1, ""
    if len(terms) == 1:
        ((v, c),) = terms
        iv = _bounds(composed, v, r)
        return min(c * iv.lo, c * iv.hi), iv.size, abs(c), ""
    grids = np.meshgrid(
        *[np.arange(_bounds(composed, v, r).lo, _bounds(composed, v, r).hi + 1) for v, _ in terms], indexing="ij"
    )
    if prod(g.size for g in grids[:1]) > 1 << 22:
        return 0, 0, 0, "too many element offsets mix here to check"
    values = distinct_sorted(sum(c * g for (_, c), g in zip(terms, grids)).reshape(-1))
    steps = np.diff(values)
    if len(values) > 1 and not np.all(steps == steps[0]):
        names = ", ".join(_name(v, r) for v, _ in terms)
        return 0, 0, 0, f"{names} mix into uneven positions, not a strided range"
    return int(values[0]), len(values), int(steps[0]) if len(values) > 1 else 1, ""


def _name(v, r: int) -> str:
    if v.kind == RANGE:
        return f"range variable s{v.value}"
    return f"output dim {v.value - r}" if v.value < 2 * r else "a split output dim"


def _split_reason(m: IndexingMap, k: int, expr, elements, sizes) -> str:
    """Which division of the original map cuts which output dim's tile."""
    for j, size in enumerate(sizes):
        atom = offending_division(m.results[k], frozenset([dim(j)]))
        if atom is not None and size > 1:
            return f"{atom} splits the tile of size {size} along dim {j} (operand dim {k} = {m.results[k]})"
    atom = offending_division(expr, elements)
    return f"operand dim {k} = {m.results[k]}: {atom} splits the tile"


# ---- several maps: the bounding tile of their union ------------------------------------------


@dataclass(frozen=True)
class UnionTile:
    """The smallest strided box holding every map's tile, per output tile.

    ``exact`` is True when the maps together read every element of that box (checked on the
    first tile); otherwise the box over-approximates the union.
    """

    tile: MapTile
    maps: int
    exact: bool | None = None

    def to_json(self) -> dict:
        return {"union_of_maps": self.maps, "exact": self.exact, **self.tile.to_json()}


def union_tile(tiles: Sequence[MapTile]) -> UnionTile | None:
    """The bounding tile across several maps' tiles of one operand (None for fewer than two).

    Per operand dim the maps' offsets must differ by constants (then the box starts at the
    lowest, its stride is the gcd of the strides and of the shifts); otherwise the reason.
    """
    from math import gcd

    tiles = list(tiles)
    if len(tiles) < 2:
        return None
    for k, t in enumerate(tiles):
        if not t.is_tile:
            return UnionTile(MapTile(False, f"map {k} is not a tile ({t.reason}), so neither is the union"), len(tiles))
    boxes = [_box(t) for t in tiles]
    base = boxes[0][0]
    for t_offsets, _, _ in boxes:
        if t_offsets.dims != base.dims:
            ranges = "; ".join(
                f"map {k}: " + ", ".join(f"d{i} in [{iv.lo}, {iv.hi}]" for i, iv in enumerate(u.dims))
                for k, (u, _, _) in enumerate(boxes)
            )
            return UnionTile(
                MapTile(
                    False,
                    f"the maps read different tiles ({ranges}): each tile reads "
                    f"through some of them, so their own tiles apply and no "
                    f"single bounding tile does",
                ),
                len(tiles),
            )
        if [rv.interval for rv in t_offsets.runtime_vars] != [rv.interval for rv in base.runtime_vars]:
            return UnionTile(MapTile(False, "the maps' tile offsets use different runtime values"), len(tiles))
    offsets: list[Expr] = []
    sizes: list[int] = []
    strides: list[int] = []
    notes: list[str] = []
    for k, e0 in enumerate(base.results):
        shifts = []
        for m, (t_offsets, _, _) in enumerate(boxes):
            diff = t_offsets.results[k] - e0
            if not diff.is_constant:
                return UnionTile(
                    MapTile(
                        False,
                        f"operand dim {k}: map {m}'s offset {t_offsets.results[k]} "
                        f"differs from map 0's {e0} by {diff}, which changes "
                        f"from tile to tile: no single bounding tile",
                    ),
                    len(tiles),
                )
            shifts.append(diff.constant_value)
        lo = min(shifts)
        hi = max(c + (t_sizes[k] - 1) * t_strides[k] for c, (_, t_sizes, t_strides) in zip(shifts, boxes))
        step = 0
        for c, (_, t_sizes, t_strides) in zip(shifts, boxes):
            step = gcd(step, c - lo)
            if t_sizes[k] > 1:
                step = gcd(step, t_strides[k])
        step = step or 1
        offsets.append(e0 + lo)
        sizes.append((hi - lo) // step + 1)
        strides.append(step)
    for t in tiles:
        notes.extend(n for n in t.notes if n not in notes)
    offset_map = IndexingMap(base.dims, [], base.runtime_vars, offsets, ()).simplified()
    tile = MapTile(
        True,
        f"bounding tile of the union of {len(tiles)} maps' tiles",
        offset_map,
        tuple(sizes),
        tuple(strides),
        tuple(notes),
    )
    return UnionTile(tile, len(tiles), _covers(tiles, tile))


def _box(t: MapTile) -> tuple[IndexingMap, tuple[int, ...], tuple[int, ...]]:
    """Offsets, sizes and strides of ``t``, which is a tile."""
    assert t.offsets is not None and t.sizes is not None and t.strides is not None, t.reason
    return t.offsets, t.sizes, t.strides


def _covers(tiles: Sequence[MapTile], box: MapTile) -> bool | None:
    """Whether the maps' tiles fill the bounding box, on tile 0 (None when too big to check)."""
    box_offsets, box_sizes, box_strides = _box(box)
    if prod(box_sizes) > 1 << 20:
        return None
    origin = (0,) * box_offsets.num_dims
    runtime = [rv.interval.lo for rv in box_offsets.runtime_vars]
    start = np.asarray(box_offsets.evaluate(origin, (), runtime), dtype=np.int64)
    covered = np.zeros(box_sizes, dtype=bool)
    for t in tiles:
        t_offsets, t_sizes, t_strides = _box(t)
        first = np.asarray(t_offsets.evaluate(origin, (), runtime), dtype=np.int64)
        index = tuple(
            slice((f - s) // b, (f - s) // b + (n - 1) * (st // b) + 1, max(st // b, 1))
            for f, s, b, n, st in zip(first, start, box_strides, t_sizes, t_strides)
        )
        covered[index] = True
    return bool(covered.all())
