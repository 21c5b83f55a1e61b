"""Independent numpy model of XLA layouts, read straight off the spec's pad-reshape-transpose text.

No formulas: the array of element numbers is physically moved (transposed into memory order,
reshaped to fold ``*`` dims, padded to whole tiles, split, transposed so in-tile dims go last)
and finally read out flat. It shares nothing with ``hlo_index.layout``, which it checks.
"""

from __future__ import annotations

import numpy as np

from ..hlo.model import Shape
from . import within_reference_budget

PADDING = -1


def physical_memory(shape: Shape) -> np.ndarray:
    """The flat memory image: each slot holds the row-major logical element number, or -1."""
    dims = tuple(shape.dims)
    layout = shape.layout
    minor_to_major = (
        tuple(layout.minor_to_major) if layout and layout.minor_to_major else tuple(range(len(dims) - 1, -1, -1))
    )
    tiles = tuple(layout.tiles) if layout else ()
    size = int(np.prod(dims, dtype=np.int64))
    within_reference_budget(size, f"the {size} elements of a {shape} laid out")
    memory = np.arange(size, dtype=np.int64).reshape(dims)
    memory = np.transpose(memory, tuple(reversed(minor_to_major)))
    for tile in tiles:
        memory = _apply_tile(memory, list(tile.dims))
    return memory.reshape(-1)


def _apply_tile(array: np.ndarray, tile: list[int]) -> np.ndarray:
    while array.ndim < len(tile):  # a tile longer than the array sees leading 1-dims
        array = array[np.newaxis]
    head = array.ndim - len(tile)
    # Fold each '*' dim into the next more minor one: a row-major reshape does exactly that.
    shape, sizes, pending = list(array.shape[:head]), [], 1
    for extent, size in zip(array.shape[head:], tile):
        pending *= extent
        if size != -1:
            shape.append(pending)
            sizes.append(size)
            pending = 1
    array = array.reshape(shape)
    # Pad every tiled dim up to whole tiles.
    widths = [(0, 0)] * head + [(0, (-extent) % size) for extent, size in zip(shape[head:], sizes)]
    array = np.pad(array, widths, constant_values=PADDING)
    # Split each tiled dim into (tile count, tile size) ...
    split = list(array.shape[:head])
    for extent, size in zip(array.shape[head:], sizes):
        split += [extent // size, size]
    array = array.reshape(split)
    # ... and move every tile-size dim to the minor end, keeping their order.
    n = len(sizes)
    order = list(range(head)) + [head + 2 * i for i in range(n)] + [head + 2 * i + 1 for i in range(n)]
    return np.transpose(array, order)


def reference_offsets(shape: Shape) -> np.ndarray:
    """Offset of every logical element, shaped like the logical shape."""
    memory = physical_memory(shape)
    offsets = np.full(int(np.prod(shape.dims, dtype=np.int64)), -1, dtype=np.int64)
    real = memory != PADDING
    offsets[memory[real]] = np.nonzero(real)[0]
    return offsets.reshape(shape.dims)
