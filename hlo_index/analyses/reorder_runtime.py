"""Runtime (dynamic-slice) offsets in the reorder analysis: where each goes in the swapped slice,
how a merged dim's offset is scaled, and the swapped dynamic slice with its offset operands.

The verdict still comes from the maps: ``in_original_runtime_vars`` writes the swapped map's
runtime variables as the original ones (scaled), so both orders are compared over the same
runtime values.
"""

from __future__ import annotations

from math import prod

from ..affine import IndexingMap
from ..hlo import build
from ..hlo.model import Instruction
from .slices import SLICE_THEN_RESHAPE, SliceSpec, Verdict, slice_dims


def new_slice_instruction(
    operand: Instruction, shape, new_slice: SliceSpec, moved: dict, original: Instruction, name: str
) -> tuple[Instruction, list[Instruction]]:
    """The swapped slice: a plain slice, or (runtime offsets carried over) a dynamic slice
    taking the original offset operands in their new dims and ``s32`` constants elsewhere."""
    if not moved:
        return build.instruction("slice", shape, [operand], name=name, slice=slice_dims(new_slice)), []
    if any(k != 1 for k in new_slice.strides):
        raise Verdict(
            "unprovable", "the swapped slice needs a stride, which a dynamic slice with runtime offsets cannot express"
        )
    constants: dict[int, Instruction] = {}
    products: list[Instruction] = []

    def constant(value: int) -> Instruction:
        if value not in constants:
            constants[value] = Instruction(
                f"{name}.offset{value}".replace("-", "m"),
                "constant",
                build.array_shape("s32", ()),
                (),
                literal=str(value),
            )
        return constants[value]

    offsets = []
    for k, start in enumerate(new_slice.starts):
        if k not in moved:
            offsets.append(constant(start))
            continue
        dim, factor = moved[k]
        offset = original.operands[1 + dim]
        if factor != 1:  # the offset of a merged dim, scaled to the flattened dim
            offset = build.instruction(
                "multiply", offset.shape, [offset, constant(factor)], name=f"{name}.offset{k}.scaled"
            )
            products.append(offset)
        offsets.append(offset)
    instr = build.instruction(
        "dynamic-slice", shape, [operand, *offsets], name=name, dynamic_slice_sizes=tuple(new_slice.sizes)
    )
    return instr, list(constants.values()) + products


def runtime_dims(spec: SliceSpec, groups, order: str):
    """Where runtime offsets go in the swapped slice: ``({new dim: (original dim, 1)}, scaled)``.

    In a dim the reshape leaves alone the offset carries over. Slice-then-reshape may also
    merge a runtime dim with inner dims (``[T,8,32] -> dynamic-slice [1,8,32] -> [8,32]``, a scan
    step): the swapped slice then needs the offset scaled by the inner size; ``scaled`` lists
    those ``(dim, group src, group dst)``, resolved once the swapped shape is known.
    """
    moved, scaled = {}, []
    for src, dst in groups:
        sliced, other = (src, dst) if order == SLICE_THEN_RESHAPE else (dst, src)
        runtime = [i for i in sliced if spec.runtime[i]]
        if not runtime:
            continue
        if len(src) == 1 and len(dst) == 1:
            moved[other[0]] = (sliced[0], 1)
        elif order == SLICE_THEN_RESHAPE and len(runtime) == 1:
            scaled.append((runtime[0], src, dst))
        else:
            raise Verdict(
                "unprovable",
                f"the runtime offset of dim {runtime[0]} lies in dims the "
                f"reshape merges or splits: the swapped slice would need "
                f"a scaled offset, whose alignment the maps cannot show",
            )
    return moved, scaled


def scaled_offset(r: int, src, dst, x_dims, spec: SliceSpec, new_dims, new_slice: SliceSpec) -> dict:
    """``{new dim: (r, factor)}``: a runtime offset ``o`` of merged dim ``r`` moves the flattened
    group by ``o * S`` (``S`` the size of the group's dims inside ``r``), i.e. dim ``j`` of the
    reshaped group by ``o * S / W_j`` (``W_j`` its row size). It must fit in one new dim starting at
    0, and clamp the same way (the new dim's room is ``factor`` times the old one's)."""
    inner = prod(x_dims[e] for e in src[src.index(r) + 1 :])
    why = f"the runtime offset of dim {r} moves the merged dims by multiples of {inner}"
    for j in dst:
        row = prod(new_dims[e] for e in dst[dst.index(j) + 1 :])
        if new_dims[j] > 1 and inner % row == 0:
            factor = inner // row
            room, old_room = new_dims[j] - new_slice.sizes[j], x_dims[r] - spec.sizes[r]
            if new_slice.starts[j] != 0 or room != factor * old_room:
                break
            return {j: (r, factor)}
    raise Verdict("unprovable", f"{why}, which no single dim of the swapped slice takes with the same clamping")


def in_original_runtime_vars(new: IndexingMap, orig: IndexingMap, moved: dict, spec: SliceSpec) -> IndexingMap:
    """``new`` with each runtime variable written as the original one it stands for
    (times its scale), so the two maps are compared over the same runtime values."""
    from ..affine.expr import RUNTIME, replace_variables, runtime_var

    runtime_axes = [i for i, r in enumerate(spec.runtime) if r]
    new_axes = sorted(moved)
    if len(new.runtime_vars) != len(new_axes) or len(orig.runtime_vars) != len(runtime_axes):
        raise Verdict("unprovable", "the runtime offsets did not come out one variable per dim")
    target = {}
    for n, k in enumerate(new_axes):
        dim, factor = moved[k]
        target[n] = runtime_var(runtime_axes.index(dim)) * factor

    def replace(v):
        return target[v.value] if v.kind == RUNTIME else None

    memo: dict = {}
    return IndexingMap(
        new.dims,
        new.range_vars,
        orig.runtime_vars,
        [replace_variables(e, replace, memo) for e in new.results],
        [(replace_variables(e, replace, memo), iv) for e, iv in new.constraints],
    ).simplified()
