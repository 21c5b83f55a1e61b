"""Physical offsets as numbers: the layout pipeline run on numpy index arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hlo.model import Shape
from .plan import apply_steps, layout_plan, linearize

if TYPE_CHECKING:
    import numpy as np


def physical_offsets(shape: Shape) -> np.ndarray:
    """Offset of every element, as an int64 array shaped like the logical shape."""
    import numpy as np

    plan = layout_plan(shape)
    index = list(np.indices(shape.dims, dtype=np.int64)) if shape.rank else []
    offsets = linearize(apply_steps(plan, index), plan.physical_dims)
    return np.broadcast_to(np.asarray(offsets, dtype=np.int64), shape.dims).copy()


def layout_cells(shape: Shape, indices: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Offsets of logical ``indices`` (``[n, rank]``, padding positions allowed) and, per tile
    of the layout, the linear number of the tile each index falls in."""
    import numpy as np

    plan = layout_plan(shape)
    index = [indices[:, i].astype(np.int64) for i in range(shape.rank)]
    ids: list = []
    offsets = linearize(apply_steps(plan, index, ids), plan.physical_dims)
    n = (len(indices),)
    return (
        np.broadcast_to(np.asarray(offsets, dtype=np.int64), n).copy(),
        [np.broadcast_to(np.asarray(i, dtype=np.int64), n).copy() for i in ids],
    )
