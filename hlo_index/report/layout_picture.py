"""``layout``'s report: the logical grid with each element's linear offset, as in the spec's figures.

Each cell has its offset (or padding, added to fill whole tiles), its first-level tile and its
last-level (nested) tile; the palette size is chosen so touching tiles never share a colour.
``render.layout_picture`` draws it as Rich text and as SVG. Rank > 2 has one grid per leading
index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..hlo.model import Shape
from ..layout import layout_cells, padded_logical_dims, physical_element_count, physical_offset_map, physical_offsets

# The most colours a picture cycles through (``render.layout_picture.TILE_COLOURS``).
PALETTE_LIMIT = 11


@dataclass
class Grid:
    """One 2-D slice of the picture; ``offsets`` is -1 where the cell is padding."""

    title: str
    offsets: np.ndarray  # [rows, cols]
    tile: np.ndarray  # first-level tile number per cell (-1: untiled layout)
    nested: np.ndarray | None  # last-level tile number, when the layout has >1 tile
    row_start: int = 0


@dataclass
class LayoutPicture:
    shape_text: str
    map_text: str
    physical_elements: int
    real_elements: int
    grids: list[Grid] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    colours: int = 1


OFFSETS_LIMIT = 65536  # the most elements whose offsets are listed one by one (JSON)


def _digits(k: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    """Index ``k`` of a row-major walk over ``dims``."""
    out = []
    for d in reversed(dims):
        k, r = divmod(k, d)
        out.append(r)
    return tuple(reversed(out))


def build_picture(shape: Shape, max_grids: int = 8, max_rows: int = 64, max_cols: int = 32) -> LayoutPicture:
    """Cell data for the picture, capped at ``max_grids`` grids of ``max_rows`` x ``max_cols``."""
    picture = LayoutPicture(
        str(shape), str(physical_offset_map(shape)), physical_element_count(shape), shape.num_elements
    )
    if shape.num_elements == 0:
        picture.notes.append("the shape has no elements")
        return picture
    padded = padded_logical_dims(shape)
    logical = tuple(shape.dims)
    # Work in a rank >= 2 view: leading (grid) dims, then rows and cols.
    view = (1,) * max(0, 2 - shape.rank) + padded
    real = (1,) * max(0, 2 - shape.rank) + logical
    lead_dims, rows, cols = real[:-2], min(view[-2], max_rows), min(view[-1], max_cols)
    if view[-2] > max_rows or view[-1] > max_cols:
        picture.notes.append(f"each grid shows its first {rows} rows and {cols} columns of {view[-2]} x {view[-1]}")
    total_grids = math.prod(lead_dims)
    # the first grids in row-major order, digit by digit (a product of ranges would build each range)
    leads = [_digits(k, lead_dims) for k in range(min(max_grids, total_grids))]
    if total_grids > len(leads):
        listed = " (--format json lists every offset)" if shape.num_elements <= OFFSETS_LIMIT else ""
        picture.notes.append(f"{total_grids - len(leads)} more grids not shown{listed}")
    rr, cc = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    for lead in leads:
        points = np.stack([np.full(rr.size, v) for v in lead] + [rr.ravel(), cc.ravel()], axis=1)
        points = points[:, max(0, 2 - shape.rank) :]  # back to the shape's own rank
        offsets, tiles = layout_cells(shape, points.astype(np.int64))
        inside = (
            np.all(points < np.array(logical, dtype=np.int64), axis=1)
            if shape.rank
            else np.ones(len(points), dtype=bool)
        )
        offsets = np.where(inside, offsets, -1).reshape(rows, cols)
        first = tiles[0].reshape(rows, cols) if tiles else np.full((rows, cols), -1)
        nested = tiles[-1].reshape(rows, cols) if len(tiles) > 1 else None
        title = _grid_title(shape.rank, lead)
        picture.grids.append(Grid(title, offsets, first, nested))
    picture.colours = _palette_size([g.tile for g in picture.grids])
    return picture


def _grid_title(rank: int, lead: tuple[int, ...]) -> str:
    if rank <= 2:
        return ""
    return "[" + ", ".join([str(v) for v in lead] + [":", ":"]) + "]"


def _palette_size(tiles: list[np.ndarray]) -> int:
    """Smallest palette (cycling by tile number) where touching tiles never share a colour."""
    for size in range(2, PALETTE_LIMIT + 1):
        clash = False
        for t in tiles:
            for a, b in ((t[:, 1:], t[:, :-1]), (t[1:, :], t[:-1, :])):
                differ = a != b
                if np.any((a % size == b % size) & differ):
                    clash = True
        if not clash:
            return size
    return PALETTE_LIMIT


@dataclass(frozen=True, slots=True)
class LayoutOffsets:
    shape_text: str
    map_text: str
    physical_elements: int
    offsets: list | None  # every element's offset (nested lists); None above the limit asked


def layout_offsets(shape: Shape, limit: int = OFFSETS_LIMIT) -> LayoutOffsets:
    """Every element's physical offset, unless the shape has more than ``limit`` elements."""
    offsets = physical_offsets(shape).tolist() if shape.num_elements <= limit else None
    return LayoutOffsets(str(shape), str(physical_offset_map(shape)), physical_element_count(shape), offsets)
