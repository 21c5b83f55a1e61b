"""Build small HLO graphs in code (tests, rewrites) without going through text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import Instruction, Layout, Shape


def array_shape(element_type: str, dims: Sequence[int], minor_to_major: Sequence[int] | None = None) -> Shape:
    dims = tuple(dims)
    m2m = tuple(minor_to_major) if minor_to_major is not None else tuple(range(len(dims) - 1, -1, -1))
    return Shape(element_type, dims, (False,) * len(dims), Layout(m2m))


def tuple_shape(*shapes: Shape) -> Shape:
    return Shape("tuple", tuple_shapes=tuple(shapes))


def parameter(number: int, shape: Shape, name: str | None = None) -> Instruction:
    return Instruction(name or f"p{number}", "parameter", shape, (), parameter_number=number)


def instruction(
    opcode: str, shape: Shape, operands: Sequence[Instruction | Shape] = (), name: str | None = None, **attrs: Any
) -> Instruction:
    """An instruction whose operands are given instructions, or fresh parameters for bare shapes."""
    resolved = tuple(op if isinstance(op, Instruction) else parameter(i, op) for i, op in enumerate(operands))
    return Instruction(
        name or opcode.replace("-", "_"),
        opcode,
        shape,
        tuple(o.name for o in resolved),
        attrs=dict(attrs),
        operands=resolved,
    )
