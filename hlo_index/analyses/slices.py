"""Slice parameters shared by the reorder (bubble) analysis: the start / size / stride of a slice
or dynamic slice (constant offsets clamped as XLA does, runtime ones marked), and the verdict
exception that ends a pair's analysis early."""

from __future__ import annotations

from dataclasses import dataclass

from ..hlo.model import Instruction, SliceDim

SLICE_OPS = ("slice", "dynamic-slice")
SLICE_THEN_RESHAPE = "slice_then_reshape"
RESHAPE_THEN_SLICE = "reshape_then_slice"


class Verdict(Exception):
    """A pair's verdict reached before the maps are compared (illegal or unprovable)."""

    def __init__(self, verdict: str, reason: str):
        super().__init__(reason)
        self.verdict, self.reason = verdict, reason


@dataclass(frozen=True)
class SliceSpec:
    """Start, size and stride per dim of a slice or dynamic slice."""

    starts: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    runtime: tuple[bool, ...]  # offset only known at run time


def constant_int(instr: Instruction) -> int | None:
    values = instr.literal_values()
    if values is None or values.size != 1 or values.dtype.kind not in "biu":
        return None
    return int(values.flat[0])


def slice_of(instr: Instruction) -> SliceSpec:
    source = instr.operands[0].shape.dims
    if instr.opcode == "slice":
        dims = instr.attr("slice")
        return SliceSpec(
            tuple(d.start for d in dims), tuple(instr.shape.dims), tuple(d.stride for d in dims), (False,) * len(dims)
        )
    sizes = tuple(instr.attr("dynamic_slice_sizes") or instr.shape.dims)
    starts, runtime = [], []
    for i, offset in enumerate(instr.operands[1:]):
        value = constant_int(offset)
        if value is None and source[i] != sizes[i]:
            starts.append(0)
            runtime.append(True)
        else:  # XLA clamps the offset into [0, dim - size]
            starts.append(min(max(value or 0, 0), source[i] - sizes[i]))
            runtime.append(False)
    return SliceSpec(tuple(starts), sizes, (1,) * len(sizes), tuple(runtime))


def slice_text(s: SliceSpec, runtime: dict | None = None) -> str:
    """``[0:8, rt:rt+4]``: a runtime offset shows as ``rt`` (``8*rt`` when scaled)."""
    runtime = runtime or {}

    def rt(i: int) -> str:
        factor = runtime[i][1]
        return "rt" if factor == 1 else f"{factor}*rt"

    return (
        "["
        + ", ".join(
            (f"{rt(i)}:{rt(i)}+{n}" if i in runtime else f"{a}:{a + (n - 1) * k + 1}" + (f":{k}" if k != 1 else ""))
            for i, (a, n, k) in enumerate(zip(s.starts, s.sizes, s.strides))
        )
        + "]"
    )


def slice_dims(s: SliceSpec) -> tuple[SliceDim, ...]:
    return tuple(SliceDim(a, a + (n - 1) * k + 1, k) for a, n, k in zip(s.starts, s.sizes, s.strides))
