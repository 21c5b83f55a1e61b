"""Array shape and layout text → ``Shape`` / ``Layout`` (cached: real dumps repeat few shapes)."""
from __future__ import annotations

import re

from ..context import current, register_table
from .model import ELEMENT_BITS, Layout, Shape, Tile

INT64_MAX = (1 << 63) - 1
UNBOUNDED_DIM = -1   # dims value stored for a ``?`` (unbounded dynamic) dimension

_SHAPE = re.compile(r"([a-z][a-z0-9]*)\s*\[([^\]]*)\](?:\s*\{([^{}]*)\})?\Z")   # blanks as XLA's lexer skips
_DIM = re.compile(r"\s*(<=)?\s*(\d+|\?)\s*\Z")
_SUFFIX = re.compile(r"([A-Z]+|#|\*)((?:\([^()]*\))+)")
_GROUP = re.compile(r"\(([^()]*)\)")

SHAPES_MEMO = _SHAPES = register_table("hlo.shapes.parsed")   # text -> Shape, per analysis context


class ShapeError(ValueError):
    """A shape that is well-formed text but not a valid shape (e.g. an unknown element type);
    ``offset`` is where in the shape text the problem starts."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def parse_array_shape(text: str) -> Shape:
    """``f32[4,<=8,?]{2,1,0:T(8,128)}`` → Shape; raises ShapeError with a one-line reason."""
    ctx = current()
    cache = ctx.tables[_SHAPES]
    shape = cache.get(text)
    if shape is None:
        shape = _parse_array_shape(text)
        if len(cache) < ctx.budgets.parse_memo_entries:
            cache[text] = shape
    return shape


def _parse_array_shape(text: str) -> Shape:
    m = _SHAPE.match(text)
    if m is None:
        raise ShapeError(f"malformed shape {text!r}")
    element_type, dims_text, layout_text = m.groups()
    if element_type not in ELEMENT_BITS:
        raise ShapeError(f"unknown element type {element_type!r} in shape {text!r}", 0)
    dims: list[int] = []
    dynamic: list[bool] = []
    if dims_text.strip():
        part_offset = m.start(2)
        for part in dims_text.split(","):
            d = _DIM.match(part)
            if d is None:
                where = part_offset + len(part) - len(part.lstrip())
                raise ShapeError(f"malformed dimension {part.strip()!r} in shape {text!r}", where)
            part_offset += len(part) + 1
            if d.group(2) == "?":
                dims.append(UNBOUNDED_DIM)
                dynamic.append(True)
                continue
            size = int(d.group(2))
            if size > INT64_MAX:
                raise ShapeError(f"dimension {size} does not fit in int64 in shape {text!r}")
            dims.append(size)
            dynamic.append(d.group(1) is not None)
    count = 1
    for size in dims:
        count *= max(size, 1)
    if count > INT64_MAX:
        raise ShapeError(f"shape {text!r} has {count} elements, more than int64 can count")
    layout = None if layout_text is None else parse_layout(layout_text, len(dims), text, m.start(3))
    return Shape(element_type, tuple(dims), tuple(dynamic), layout)


def parse_layout(text: str, rank: int, shape_text: str = "", offset: int = 0) -> Layout:
    """The inside of a layout's braces: ``1,0:T(8,128)(2,1)E(4)S(1)`` (``offset``: where it starts
    in ``shape_text``, for error positions)."""
    m2m_text, _, suffix_text = text.partition(":")
    try:
        m2m = tuple(int(x) for x in m2m_text.split(",")) if m2m_text.strip() else ()
    except ValueError:
        raise ShapeError(f"malformed layout {{{text}}} in shape {shape_text!r}", offset) from None
    if m2m and sorted(m2m) != list(range(rank)):
        raise ShapeError(f"layout {{{text}}} is not a permutation of the {rank} dimensions of {shape_text!r}",
                         offset)
    suffix_offset = offset + len(m2m_text) + 1 + len(suffix_text) - len(suffix_text.lstrip())
    tiles: tuple[Tile, ...] = ()
    element_size = memory_space = None
    raw: list[str] = []
    pos = 0
    suffix_text = suffix_text.strip()
    while pos < len(suffix_text):
        s = _SUFFIX.match(suffix_text, pos)
        if s is None:
            raise ShapeError(f"malformed layout suffix {suffix_text[pos:]!r} in shape {shape_text!r}",
                             suffix_offset + pos)
        key, groups = s.groups()
        try:
            if key == "T":
                tiles = tuple(Tile(_tile_dims(g)) for g in _GROUP.findall(groups))
            elif key == "E":
                element_size = int(groups[1:-1])
            elif key == "S":
                memory_space = int(groups[1:-1])
            elif key == "P":
                raise ShapeError(f"Layout has physical shape, but is not for a sparse array: {shape_text!r}",
                                 suffix_offset + pos)
            else:
                if key == "D" and any(t.strip().rstrip("+~") not in ("D", "C", "S", "H")
                                      for t in groups[1:-1].split(",") if t.strip()):
                    raise ShapeError("expected a DimLevelType abbreviation (D, C, or S)", suffix_offset + pos)
                raw.append(s.group())
        except ShapeError:
            raise
        except ValueError:
            raise ShapeError(f"malformed layout suffix {s.group()!r} in shape {shape_text!r}",
                             suffix_offset + pos) from None
        pos = s.end()
    return Layout(m2m, tiles, element_size, memory_space, "".join(raw))


def _tile_dims(group: str) -> tuple[int, ...]:
    if not group.strip():
        return ()
    return tuple(Tile.COMBINED if x.strip() == "*" else int(x) for x in group.split(","))


def tuple_shape(elements: list[Shape]) -> Shape:
    return Shape("tuple", tuple_shapes=tuple(elements))


def buffer_shape(inner: Shape) -> Shape:
    """``b(s32[2])``: the array ``inner`` as a buffer (XLA allows only arrays there)."""
    if inner.is_tuple or inner.buffer:
        raise ShapeError(f"a buffer shape holds an array, not {inner}")
    return Shape(inner.element_type, inner.dims, inner.dynamic, inner.layout, buffer=True)
