"""The order of a shape's dimensions in memory: what every target's figures start from, in a
module of its own so that a CPU or TPU figure does not import the GPU emitters' models."""

from __future__ import annotations

from ..hlo.model import Shape


def physical_order(shape: Shape) -> tuple[int, ...]:
    """Logical dims from major to minor in memory (default layout: row major)."""
    if shape.layout is not None and shape.layout.minor_to_major and len(shape.layout.minor_to_major) == shape.rank:
        return tuple(reversed(shape.layout.minor_to_major))
    return tuple(range(shape.rank))


def minor_nontrivial(shape: Shape) -> int | None:
    """The most minor dimension in memory with more than one element (None: there is none)."""
    for d in reversed(physical_order(shape)):
        if shape.dims[d] > 1:
            return d
    return None
