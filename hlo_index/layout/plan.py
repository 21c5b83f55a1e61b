"""The layout pipeline of XLA layouts: minor_to_major order, (repeated) tiles, ``*`` combined dims.

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

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from ..hlo.model import Layout, Shape, Tile
from .arith import add, floordiv, mod, mul


class LayoutError(ValueError):
    """The layout cannot describe the shape (bad permutation, bad tile)."""


@dataclass(frozen=True)
class TileStep:
    """One tile applied to the dims ``in_dims`` (major to minor) of the previous result."""

    in_dims: tuple[int, ...]  # shape this tile sees, after leading 1-dims are added
    lead_ones: int  # 1-dims prepended because the tile is longer than the shape
    untouched: int  # major dims above the tile, kept as they are
    groups: tuple[tuple[int, ...], ...]  # per tiled dim: sizes of the dims folded into it by '*'
    tile: tuple[int, ...]  # tile size per group ('*' removed)

    @property
    def group_sizes(self) -> tuple[int, ...]:
        return tuple(prod(g) for g in self.groups)

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(-(-size // t) for size, t in zip(self.group_sizes, self.tile))

    @property
    def out_dims(self) -> tuple[int, ...]:
        return self.in_dims[: self.untouched] + self.counts + self.tile


@dataclass(frozen=True)
class LayoutPlan:
    """How a (tiled) layout lays a logical array out physically: the dim order, then the tiling steps."""

    logical_dims: tuple[int, ...]
    major_to_minor: tuple[int, ...]  # logical dim at each physical position
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
        raise LayoutError(f"shape {list(shape.dims)} has an unbounded dynamic dim; its memory layout is not static")
    m2m = tuple(layout.minor_to_major)
    if sorted(m2m) != list(range(shape.rank)):
        raise LayoutError(
            f"minor_to_major {{{','.join(map(str, m2m))}}} is not a permutation "
            f"of the {shape.rank} dims of {list(shape.dims)}"
        )
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


def apply_steps(plan: LayoutPlan, index: Sequence[Any], tile_ids: list | None = None) -> list[Any]:
    """Physical coordinates (in ``plan.physical_dims``) of a logical ``index``.

    If ``tile_ids`` is a list, the linear tile number of each step is appended to it.
    """
    coords = [index[p] for p in plan.major_to_minor]
    for step in plan.steps:
        coords = [0] * step.lead_ones + coords
        kept, rest = coords[: step.untouched], coords[step.untouched :]
        counts, inner = [], []
        for group, t in zip(step.groups, step.tile):
            merged = 0
            for size in group:
                merged = add(mul(merged, size), rest.pop(0))
            bound = prod(group)
            counts.append(floordiv(merged, t, bound))
            inner.append(mod(merged, t, bound))
        coords = kept + counts + inner
        if tile_ids is not None:
            outer = step.out_dims[: step.untouched + len(counts)]
            tile_ids.append(linearize(kept + counts, outer))
    return coords


def linearize(coords: Sequence[Any], dims: Sequence[int]) -> Any:
    total, stride = 0, 1
    for c, d in zip(reversed(coords), reversed(dims)):
        total = add(total, mul(c, stride))
        stride *= d
    return total


# ---- what the plan alone tells ---------------------------------------------------------


def physical_element_count(shape: Shape) -> int:
    """Elements the layout occupies in memory, padding included."""
    return layout_plan(shape).physical_element_count


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


def is_tiled(shape: Shape) -> bool:
    return not shape.is_tuple and shape.layout is not None and bool(shape.layout.tiles)
