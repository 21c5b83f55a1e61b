"""Physical maps as indexing maps: the layout pipeline run on affine expressions, and inverted."""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

from ..affine import Expr, IndexingMap, Interval, const, dim
from ..hlo.model import Shape
from .arith import add, floordiv, mod, mul
from .plan import LayoutError, TileStep, apply_steps, layout_plan, linearize


def _expr(x: Any) -> Expr:
    return x if isinstance(x, Expr) else const(int(x))


def physical_offset_map(shape: Shape) -> IndexingMap:
    """Logical index -> linear physical element offset (padding counted)."""
    plan = layout_plan(shape)
    if shape.num_elements == 0:
        return IndexingMap.known_empty(shape.rank, 1)
    index = [dim(i) for i in range(shape.rank)]
    offset = linearize(apply_steps(plan, index), plan.physical_dims)
    return _simplified(IndexingMap.from_shape_dims(shape.dims, [_expr(offset)]))


def physical_to_logical_map(shape: Shape) -> IndexingMap:
    """Linear physical offset -> logical index; constraints leave out the padding."""
    plan = layout_plan(shape)
    total = plan.physical_element_count
    if shape.num_elements == 0:
        return IndexingMap.known_empty(1, shape.rank)
    offset = dim(0)
    coords = _delinearize(offset, plan.physical_dims)
    constraints: list[tuple[Expr, Interval]] = []
    for step in reversed(plan.steps):
        coords = _undo_step(step, coords, constraints)
    logical: list[Expr | None] = [None] * shape.rank
    for position, logical_dim in enumerate(plan.major_to_minor):
        logical[logical_dim] = _expr(coords[position])
    # every slot is set: major_to_minor is a permutation of the logical dimensions
    return _simplified(IndexingMap([Interval(0, total - 1)], [], [], logical, constraints))  # type: ignore[arg-type]


def bitcast_map(out_shape: Shape, in_shape: Shape) -> IndexingMap:
    """Bitcast output logical index -> input logical index, through both full layouts.

    Output elements that land on the input's padding read nothing (constraints exclude them).
    """
    if out_shape.is_tuple or in_shape.is_tuple:
        return IndexingMap.undefined("bitcast of a tuple shape")
    if out_shape.element_bits != in_shape.element_bits:
        return IndexingMap.undefined(
            f"bitcast changes the element width ({in_shape.element_type} -> "
            f"{out_shape.element_type}); one element no longer maps to one element"
        )
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


# ---- inverse pieces --------------------------------------------------------------------


def _delinearize(offset: Expr, dims: Sequence[int]) -> list[Any]:
    coords, total = [], prod(dims)
    for j, d in enumerate(dims):
        stride = prod(dims[j + 1 :])
        quotient = floordiv(offset, stride, total)
        coords.append(mod(quotient, d, total // stride))
    return coords


def _undo_step(step: TileStep, coords: list[Any], constraints: list) -> list[Any]:
    n = len(step.groups)
    kept = coords[: step.untouched]
    counts = coords[step.untouched : step.untouched + n]
    inner = coords[step.untouched + n :]
    rest: list[Any] = []
    for group, t, count, within in zip(step.groups, step.tile, counts, inner):
        size = prod(group)
        merged = add(mul(count, t), within)
        padded = -(-size // t) * t
        if padded > size:  # this dim was padded to whole tiles: keep only real positions
            constraints.append((_expr(merged), Interval(0, size - 1)))
        parts, below = [], 1
        for position in range(len(group) - 1, -1, -1):  # most minor member first
            part = floordiv(merged, below, padded)
            if position > 0:  # the most major member keeps the quotient whole
                part = mod(part, group[position], -(-padded // below))
            parts.append(part)
            below *= group[position]
        rest.extend(reversed(parts))
    return (kept + rest)[step.lead_ones :]


def _simplified(m: IndexingMap) -> IndexingMap:
    return m.simplified() if hasattr(m, "simplified") else m
