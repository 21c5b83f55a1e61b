"""One concrete group through the HLO reorder engine (``analyses/reorder.py``): the MLIR ops
become HLO slice / reshape instructions, so the verdict and the swapped pair come from the
same indexing maps as for HLO."""

from __future__ import annotations

from dataclasses import dataclass

from ..analyses import reorder
from ..analyses.slices import Verdict
from ..hlo import build
from ..hlo.model import Instruction, SliceDim
from .pairs import SLICE_FIRST


@dataclass(frozen=True)
class Concrete:
    """A group with every quantity known: x -> slice -> reshape -> z (slice-first) or
    x -> reshape to y -> slice (reshape-first)."""

    order: str
    x: tuple[int, ...]
    y: tuple[int, ...]
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    z: tuple[int, ...]  # slice-first: reshape result; reshape-first: the slice sizes


@dataclass(frozen=True)
class Outcome:
    verdict: str  # legal | illegal | unprovable
    reason: str
    new_dims: tuple[int, ...] | None = None  # slice-first: reshaped source; reshape-first: the box
    new_slice: tuple[tuple[int, int, int], ...] | None = None  # (offset, size, stride) per dim


def _slice_dims(offsets, sizes, strides):
    return tuple(SliceDim(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offsets, sizes, strides))


def run(c: Concrete) -> Outcome:
    shape = lambda dims: build.array_shape("f32", dims)  # noqa: E731
    x = build.parameter(0, shape(c.x), name="x")
    try:
        if c.order == SLICE_FIRST:
            first = build.instruction(
                "slice", shape(c.sizes), [x], name="s", slice=_slice_dims(c.offsets, c.sizes, c.strides)
            )
            second = build.instruction("reshape", shape(c.z), [first], name="r")
        else:
            first = build.instruction("reshape", shape(c.y), [x], name="r")
            second = build.instruction(
                "slice", shape(c.sizes), [first], name="s", slice=_slice_dims(c.offsets, c.sizes, c.strides)
            )
        verdict, reason, swapped = reorder.decide_swap(first, second, c.order)
    except Verdict as v:
        return Outcome(v.verdict, v.reason)
    except (ValueError, ZeroDivisionError) as e:
        return Outcome("unprovable", str(e))
    new_first, new_second = swapped[0], swapped[1]
    sliced = new_second if c.order == SLICE_FIRST else new_first
    dims = tuple(new_first.shape.dims)
    spec = tuple((d.start, n, d.stride) for d, n in zip(sliced.attr("slice"), sliced.shape.dims))
    return Outcome(verdict, reason, dims, spec)


def compare(c: Concrete, new_dims, new_slice) -> str | None:
    """None when the given swapped pair reads what the original reads, else the first output
    element where they differ (from the maps, as ``bubble`` compares them)."""
    shape = lambda dims: build.array_shape("f32", dims)  # noqa: E731
    x = build.parameter(0, shape(c.x), name="x")
    offs, sizes, strides = zip(*new_slice)
    orig: tuple[Instruction, ...]
    new: tuple[Instruction, ...]
    if c.order == SLICE_FIRST:
        orig = (build.instruction("slice", shape(c.sizes), [x], slice=_slice_dims(c.offsets, c.sizes, c.strides)),)
        orig = orig + (build.instruction("reshape", shape(c.z), [orig[0]]),)
        new = (build.instruction("reshape", shape(new_dims), [x]),)
        new = new + (build.instruction("slice", shape(sizes), [new[0]], slice=_slice_dims(offs, sizes, strides)),)
    else:
        orig = (build.instruction("reshape", shape(c.y), [x]),)
        orig = orig + (
            build.instruction("slice", shape(c.sizes), [orig[0]], slice=_slice_dims(c.offsets, c.sizes, c.strides)),
        )
        new = (build.instruction("slice", shape(sizes), [x], slice=_slice_dims(offs, sizes, strides)),)
        new = new + (build.instruction("reshape", shape(c.sizes), [new[0]]),)
    same, why = reorder.same_maps(reorder.pair_map(*orig), reorder.pair_map(*new))
    return None if same else why
