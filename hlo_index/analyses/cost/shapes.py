"""Sizes as XLA's cost analysis counts them (``ShapeUtil::ByteSizeOf`` with 8-byte pointers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from operator import itemgetter

from ...context import current, register_table
from ...hlo.model import ELEMENT_BITS, Shape

POINTER_BYTES = 8
DYNAMIC_SIZE_BYTES = 4  # one s32 per dimension of a dynamic array


def elements(shape: Shape) -> int:
    """``ShapeUtil::ElementsIn`` of an array (a tuple: its first element's, as XLA's callers use it)."""
    if shape.tuple_shapes is not None:
        return elements(shape.tuple_shapes[0]) if shape.tuple_shapes else 0
    return _array_elements(shape)


def _array_elements(shape: Shape) -> int:
    """The elements of an array as XLA's cost analysis counts them: none where a dimension is
    unbounded (``?``: the parser's -1), which XLA's figures for such modules show."""
    return 0 if -1 in shape.dims else shape.num_elements


def elements_recursive(shape: Shape) -> int:
    """``ShapeUtil::ElementsInRecursive``: every array leaf's elements."""
    if shape.tuple_shapes is not None:
        return sum(elements_recursive(s) for s in shape.tuple_shapes)
    return _array_elements(shape)


def element_bytes(element_type: str) -> int:
    """``ByteSizeOfPrimitiveType``: sub-byte types take a byte each unless the layout packs them."""
    bits = ELEMENT_BITS.get(element_type, 0)
    return 0 if bits == 0 else max(1, bits // 8)


# Per analysis context: id(shape) -> (shape, bytes) (the parser shares one object between equal shapes).
_BYTES = register_table("analyses.cost.shapes.bytes")


def shape_bytes(shape: Shape) -> int:
    """Bytes of a buffer: a tuple is its table of pointers; a packed layout (``E(n)``) packs."""
    table = current().tables[_BYTES]
    hit = table.get(id(shape))
    if hit is not None and hit[0] is shape:
        return hit[1]
    size = _shape_bytes(shape)
    table[id(shape)] = (shape, size)
    return size


def shape_bytes_of(shapes: list[Shape]) -> list[int]:
    """``shape_bytes`` of each of ``shapes``, read from the table at once where it has them all
    (its entries keep their shapes alive, so an id found there is the shape's own)."""
    table = current().tables[_BYTES]
    hits = list(map(table.get, map(id, shapes)))
    if None in hits:
        return list(map(shape_bytes, shapes))
    return list(map(_SIZE, hits))


_SIZE = itemgetter(1)


def shape_sizes() -> Callable[[Shape], int]:
    """``shape_bytes`` on the current context's table, looked up once (for a cost that asks for
    thousands of sizes)."""
    table = current().tables[_BYTES]

    def size(shape: Shape) -> int:
        hit = table.get(id(shape))
        if hit is not None and hit[0] is shape:
            return hit[1]
        n = _shape_bytes(shape)
        table[id(shape)] = (shape, n)  # the entry keeps ``shape``: its id stays its
        return n

    return size


def _shape_bytes(shape: Shape) -> int:
    if shape.tuple_shapes is not None:
        return POINTER_BYTES * len(shape.tuple_shapes)
    if shape.element_type in ("token", "opaque"):
        return 0
    n = _array_elements(shape)
    if shape.layout is not None and shape.layout.element_size_bits:
        data = (n * shape.layout.element_size_bits + 7) // 8
    else:
        data = n * element_bytes(shape.element_type)
    # a dynamic array carries its dimensions' sizes beside its data, one s32 per dimension
    # (XLA's CPU and GPU shape sizes: ``ShapeSizeBytes``)
    return data + DYNAMIC_SIZE_BYTES * len(shape.dims) if True in shape.dynamic else data


def leaves(shape: Shape) -> Iterator[Shape]:
    """Every array leaf of a shape, depth first."""
    if shape.tuple_shapes is not None:
        for s in shape.tuple_shapes:
            yield from leaves(s)
    else:
        yield shape
