"""Physical maps of XLA layouts: minor_to_major order, (repeated) tiles, ``*`` combined dims.

A layout is applied as a pipeline (the spec's "pad, reshape, transpose" description):

1. the logical dims are put in physical order, major to minor (``minor_to_major`` reversed);
2. each tile, in turn, is aligned with the minor-most dims of the previous result: a ``*``
   entry folds that dim into the next more minor one (``d_i * d_{i-1}``), then every tiled
   dim ``D`` with tile size ``t`` splits into a tile count ``ceil(D / t)`` and an in-tile
   index ``t``; the counts go before all in-tile indices. Dims above the tile stay as they
   are; a tile longer than the shape sees extra leading dims of size 1;
3. the final coordinates are linearised row-major. Padding is every offset no logical
   element reaches.

The same pipeline runs on plain ints, numpy arrays (vectorised offsets) and affine
expressions (the indexing maps), so the maps and the numbers can never disagree.
Element width (sub-byte ``E(n)`` included) never changes element offsets.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Sequence

import numpy as np

from .affine import Expr, IndexingMap, Interval, const, dim
from .hlo.model import Layout, Shape, Tile


class LayoutError(ValueError):
    """The layout cannot describe the shape (bad permutation, bad tile)."""


# ---- the layout as a plan of index-type-independent steps ------------------------------

@dataclass(frozen=True)
class TileStep:
    """One tile applied to the dims ``in_dims`` (major to minor) of the previous result."""

    in_dims: tuple[int, ...]            # shape this tile sees, after leading 1-dims are added
    lead_ones: int                      # 1-dims prepended because the tile is longer than the shape
    untouched: int                      # major dims above the tile, kept as they are
    groups: tuple[tuple[int, ...], ...]  # per tiled dim: sizes of the dims folded into it by '*'
    tile: tuple[int, ...]               # tile size per group ('*' removed)

    @property
    def group_sizes(self) -> tuple[int, ...]:
        return tuple(prod(g) for g in self.groups)

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(-(-size // t) for size, t in zip(self.group_sizes, self.tile))

    @property
    def out_dims(self) -> tuple[int, ...]:
        return self.in_dims[:self.untouched] + self.counts + self.tile


@dataclass(frozen=True)
class LayoutPlan:
    logical_dims: tuple[int, ...]
    major_to_minor: tuple[int, ...]     # logical dim at each physical position
    steps: tuple[TileStep, ...]

    @property
    def physical_dims(self) -> tuple[int, ...]:
        """Dims of the final (padded, tiled) array, linearised row-major."""
        if self.steps:
            return self.steps[-1].out_dims
        return tuple(self.logical_dims[p] for p in self.major_to_minor)

    @property
    def physical_element_count(self) -> int:
        return prod(self.physical_dims)


def layout_of(shape: Shape) -> Layout:
    """The shape's layout, or XLA's default (major-to-minor) one when it has none."""
    if shape.is_tuple:
        raise LayoutError("a tuple shape has no single layout; pick one element")
    if shape.layout is not None and (shape.layout.minor_to_major or shape.rank == 0):
        return shape.layout
    tiles = shape.layout.tiles if shape.layout is not None else ()
    return Layout(minor_to_major=tuple(range(shape.rank - 1, -1, -1)), tiles=tiles)


def layout_plan(shape: Shape) -> LayoutPlan:
    layout = layout_of(shape)
    if any(d < 0 for d in shape.dims):
        raise LayoutError(f"shape {list(shape.dims)} has an unbounded dynamic dim; "
                          f"its memory layout is not static")
    m2m = tuple(layout.minor_to_major)
    if sorted(m2m) != list(range(shape.rank)):
        raise LayoutError(f"minor_to_major {{{','.join(map(str, m2m))}}} is not a permutation "
                          f"of the {shape.rank} dims of {list(shape.dims)}")
    major_to_minor = tuple(reversed(m2m))
    current = tuple(shape.dims[p] for p in major_to_minor)
    steps = []
    for tile in layout.tiles:
        step = _tile_step(current, tile)
        steps.append(step)
        current = step.out_dims
    return LayoutPlan(tuple(shape.dims), major_to_minor, tuple(steps))


def _tile_step(dims: tuple[int, ...], tile: Tile) -> TileStep:
    t = tuple(tile.dims)
    if not t:
        raise LayoutError("empty tile")
    for size in t:
        if size != Tile.COMBINED and size < 1:
            raise LayoutError(f"tile size {size} must be positive or '*'")
    if t[-1] == Tile.COMBINED:
        raise LayoutError("'*' needs a more minor dim to combine with; it cannot be last")
    lead = max(0, len(t) - len(dims))
    dims = (1,) * lead + dims
    untouched = len(dims) - len(t)
    groups, sizes, pending = [], [], []
    for d, size in zip(dims[untouched:], t):
        pending.append(d)
        if size != Tile.COMBINED:
            groups.append(tuple(pending))
            sizes.append(size)
            pending = []
    return TileStep(dims, lead, untouched, tuple(groups), tuple(sizes))


# ---- index arithmetic that works on ints, numpy arrays and affine expressions ----------

def _is_zero(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and x == 0


def _add(a: Any, b: Any) -> Any:
    if _is_zero(a):
        return b
    if _is_zero(b):
        return a
    if isinstance(a, int) and isinstance(b, Expr):
        return b + a
    return a + b


def _mul(x: Any, c: int) -> Any:
    if c == 1 or _is_zero(x):
        return x
    if c == 0:
        return 0
    return x * c


def _floordiv(x: Any, c: int, bound: int) -> Any:
    """``x floordiv c`` for ``0 <= x < bound``."""
    if c == 1:
        return x
    if bound <= c:
        return 0
    return x.floordiv(c) if isinstance(x, Expr) else x // c


def _mod(x: Any, c: int, bound: int) -> Any:
    """``x mod c`` for ``0 <= x < bound``."""
    if c == 1:
        return 0
    if bound <= c:
        return x
    return x.mod(c) if isinstance(x, Expr) else x % c


def _apply_steps(plan: LayoutPlan, index: Sequence[Any],
                 tile_ids: list | None = None) -> list[Any]:
    """Physical coordinates (in ``plan.physical_dims``) of a logical ``index``.

    If ``tile_ids`` is a list, the linear tile number of each step is appended to it.
    """
    coords = [index[p] for p in plan.major_to_minor]
    for step in plan.steps:
        coords = [0] * step.lead_ones + coords
        kept, rest = coords[:step.untouched], coords[step.untouched:]
        counts, inner = [], []
        for group, t in zip(step.groups, step.tile):
            merged = 0
            for size in group:
                merged = _add(_mul(merged, size), rest.pop(0))
            bound = prod(group)
            counts.append(_floordiv(merged, t, bound))
            inner.append(_mod(merged, t, bound))
        coords = kept + counts + inner
        if tile_ids is not None:
            outer = step.out_dims[:step.untouched + len(counts)]
            tile_ids.append(_linearize(kept + counts, outer))
    return coords


def _linearize(coords: Sequence[Any], dims: Sequence[int]) -> Any:
    total, stride = 0, 1
    for c, d in zip(reversed(coords), reversed(dims)):
        total = _add(total, _mul(c, stride))
        stride *= d
    return total


def _expr(x: Any) -> Expr:
    return x if isinstance(x, Expr) else const(int(x))


# ---- public API ------------------------------------------------------------------------

def physical_element_count(shape: Shape) -> int:
    """Elements the layout occupies in memory, padding included."""
    return layout_plan(shape).physical_element_count


def physical_offset_map(shape: Shape) -> IndexingMap:
    """Logical index -> linear physical element offset (padding counted)."""
    plan = layout_plan(shape)
    if shape.num_elements == 0:
        return IndexingMap.known_empty(shape.rank, 1)
    index = [dim(i) for i in range(shape.rank)]
    offset = _linearize(_apply_steps(plan, index), plan.physical_dims)
    return _simplified(IndexingMap.from_shape_dims(shape.dims, [_expr(offset)]))


def physical_to_logical_map(shape: Shape) -> IndexingMap:
    """Linear physical offset -> logical index; constraints leave out the padding."""
    plan = layout_plan(shape)
    total = plan.physical_element_count
    if shape.num_elements == 0:
        return IndexingMap.known_empty(1, shape.rank)
    offset = dim(0)
    coords, constraints = _delinearize(offset, plan.physical_dims), []
    for step in reversed(plan.steps):
        coords = _undo_step(step, coords, constraints)
    logical = [None] * shape.rank
    for position, logical_dim in enumerate(plan.major_to_minor):
        logical[logical_dim] = _expr(coords[position])
    return _simplified(IndexingMap([Interval(0, total - 1)], [], [], logical, constraints))


def physical_offsets(shape: Shape) -> np.ndarray:
    """Offset of every element, as an int64 array shaped like the logical shape."""
    plan = layout_plan(shape)
    index = list(np.indices(shape.dims, dtype=np.int64)) if shape.rank else []
    offsets = _linearize(_apply_steps(plan, index), plan.physical_dims)
    return np.broadcast_to(np.asarray(offsets, dtype=np.int64), shape.dims).copy()


def layout_cells(shape: Shape, indices: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Offsets of logical ``indices`` (``[n, rank]``, padding positions allowed) and, per tile
    of the layout, the linear number of the tile each index falls in."""
    plan = layout_plan(shape)
    index = [indices[:, i].astype(np.int64) for i in range(shape.rank)]
    ids: list = []
    offsets = _linearize(_apply_steps(plan, index, ids), plan.physical_dims)
    n = (len(indices),)
    return (np.broadcast_to(np.asarray(offsets, dtype=np.int64), n).copy(),
            [np.broadcast_to(np.asarray(i, dtype=np.int64), n).copy() for i in ids])


def padded_logical_dims(shape: Shape) -> tuple[int, ...]:
    """Logical dims grown to whole first-level tiles, where that padding has logical positions.

    Only dims the first tile splits directly (not folded by ``*``) grow; the rest keep their
    size. Used to draw the padding the way the spec's figures do.
    """
    plan = layout_plan(shape)
    dims = list(shape.dims)
    if not plan.steps or shape.num_elements == 0:
        return tuple(dims)
    step = plan.steps[0]
    tile_position = 0
    for group, t in zip(step.groups, step.tile):
        if len(group) == 1:
            physical = step.untouched + tile_position - step.lead_ones
            if physical >= 0:
                logical = plan.major_to_minor[physical]
                dims[logical] = -(-dims[logical] // t) * t
        tile_position += len(group)
    return tuple(dims)


def bitcast_map(out_shape: Shape, in_shape: Shape) -> IndexingMap:
    """Bitcast output logical index -> input logical index, through both full layouts.

    Output elements that land on the input's padding read nothing (constraints exclude them).
    """
    if out_shape.is_tuple or in_shape.is_tuple:
        return IndexingMap.undefined("bitcast of a tuple shape")
    if out_shape.element_bits != in_shape.element_bits:
        return IndexingMap.undefined(
            f"bitcast changes the element width ({in_shape.element_type} -> "
            f"{out_shape.element_type}); one element no longer maps to one element")
    try:
        forward = physical_offset_map(out_shape)
        inverse = physical_to_logical_map(in_shape)
    except LayoutError as err:
        return IndexingMap.undefined(f"bitcast through an invalid layout: {err}")
    if forward.is_known_empty or inverse.is_known_empty:
        return IndexingMap.known_empty(out_shape.rank, in_shape.rank)
    return _simplified(inverse.compose(forward))


def to_physical(indexing_map: IndexingMap, operand_shape: Shape) -> IndexingMap:
    """Compose a map into an operand's logical index space with the operand's layout.

    The result maps the same domain to the operand's linear physical element offset.
    """
    if indexing_map.is_undefined:
        return indexing_map
    if indexing_map.is_known_empty:
        return IndexingMap.known_empty(indexing_map.num_dims, 1)
    try:
        offsets = physical_offset_map(operand_shape)
    except LayoutError as err:
        return IndexingMap.undefined(f"operand layout is invalid: {err}")
    if offsets.is_known_empty:
        return IndexingMap.known_empty(indexing_map.num_dims, 1)
    return _simplified(offsets.compose(indexing_map))


def is_tiled(shape: Shape) -> bool:
    return not shape.is_tuple and shape.layout is not None and bool(shape.layout.tiles)


# ---- inverse pieces --------------------------------------------------------------------

def _delinearize(offset: Expr, dims: Sequence[int]) -> list[Any]:
    coords, total = [], prod(dims)
    for j, d in enumerate(dims):
        stride = prod(dims[j + 1:])
        quotient = _floordiv(offset, stride, total)
        coords.append(_mod(quotient, d, total // stride))
    return coords


def _undo_step(step: TileStep, coords: list[Any], constraints: list) -> list[Any]:
    n = len(step.groups)
    kept = coords[:step.untouched]
    counts = coords[step.untouched:step.untouched + n]
    inner = coords[step.untouched + n:]
    rest: list[Any] = []
    for group, t, count, within in zip(step.groups, step.tile, counts, inner):
        size = prod(group)
        merged = _add(_mul(count, t), within)
        padded = -(-size // t) * t
        if padded > size:   # this dim was padded to whole tiles: keep only real positions
            constraints.append((_expr(merged), Interval(0, size - 1)))
        parts, below = [], 1
        for position in range(len(group) - 1, -1, -1):   # most minor member first
            part = _floordiv(merged, below, padded)
            if position > 0:   # the most major member keeps the quotient whole
                part = _mod(part, group[position], -(-padded // below))
            parts.append(part)
            below *= group[position]
        rest.extend(reversed(parts))
    return (kept + rest)[step.lead_ones:]


def _simplified(m: IndexingMap) -> IndexingMap:
    return m.simplified() if hasattr(m, "simplified") else m
