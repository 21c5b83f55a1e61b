"""Physical maps of (tiled) XLA layouts: where each logical element lives in memory.

``plan`` turns a layout into its pipeline of steps, ``offsets`` runs it on numbers (numpy),
``maps`` on affine expressions (indexing maps, their inverses, bitcasts). The shape text a
person types for the ``layout`` command is read by ``hlo.shapes`` (its lenient mode).
Imports only ``hlo``, ``affine`` and ``context``.
"""

from __future__ import annotations

from ..hlo.shapes import ShapeTextError, parse_shape_text
from .maps import bitcast_map, physical_offset_map, physical_to_logical_map, to_physical
from .offsets import layout_cells, physical_offsets
from .plan import (
    LayoutError,
    LayoutPlan,
    TileStep,
    is_tiled,
    layout_of,
    layout_plan,
    padded_logical_dims,
    physical_element_count,
)

__all__ = [
    "LayoutError",
    "LayoutPlan",
    "ShapeTextError",
    "TileStep",
    "bitcast_map",
    "is_tiled",
    "layout_cells",
    "layout_of",
    "layout_plan",
    "padded_logical_dims",
    "parse_shape_text",
    "physical_element_count",
    "physical_offset_map",
    "physical_offsets",
    "physical_to_logical_map",
    "to_physical",
]
