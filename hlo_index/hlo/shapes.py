"""Shape and layout text → ``Shape`` / ``Layout``: the one reader of shape text, in two modes.

* Dump mode (``parse_array_shape``, ``read_array_shape``): what the HLO parser reads, exactly
  as XLA prints it; memoised per analysis context (real dumps repeat few shapes); a
  ``ShapeError`` carries the offset the parser turns into a ``file:line:col`` diagnostic.
* Lenient mode (``parse_shape_text``): shape text typed by a person (the ``layout`` command's
  SHAPE), read character by character so that every error names its column
  (``ShapeTextError``). It accepts what the dumps print and what the tiled-layout spec writes:
  any case for the element type (``F32``), tiles with or without the ``T`` (``{1,0:(2,2)}``),
  repeated tiles (``T(8,128)(2,1)``), ``*`` in tiles, ``E(n)`` element size, ``S(n)`` memory
  space; other suffixes are kept raw. Dynamic dims ``<=N`` are read as their bound.

Both build the same ``Shape``/``Layout``/``Tile`` records, so a shape typed either way
compares equal (``tests/hlo/test_shape_text.py``).
"""

from __future__ import annotations

import re

from ..context import current, register_table
from .model import ELEMENT_BITS, Layout, Shape, Tile

INT64_MAX = (1 << 63) - 1
UNBOUNDED_DIM = -1  # dims value stored for a ``?`` (unbounded dynamic) dimension

_SHAPE = re.compile(r"([a-z][a-z0-9]*)\s*\[([^\]]*)\](?:\s*\{([^{}]*)\})?\Z")  # blanks as XLA's lexer skips
_DIM = re.compile(r"\s*(<=)?\s*(\d+|\?)\s*\Z")
_SUFFIX = re.compile(r"([A-Z]+|#|\*)((?:\([^()]*\))+)")
_GROUP = re.compile(r"\(([^()]*)\)")

SHAPES_MEMO = _SHAPES = register_table("hlo.shapes.parsed")  # text -> Shape, per analysis context


class ShapeError(ValueError):
    """A shape that is well-formed text but not a valid shape (e.g. an unknown element type);
    ``offset`` is where in the shape text the problem starts."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


def read_array_shape(text: str, memo: dict[str, Shape]) -> Shape:
    """``parse_array_shape`` with the context's shape memo already in hand (the parser reads
    one per instruction and looks it up once per module)."""
    shape = memo.get(text)
    return shape if shape is not None else parse_array_shape(text)


def parse_array_shape(text: str) -> Shape:
    """``f32[4,<=8,?]{2,1,0:T(8,128)}`` → Shape; raises ShapeError with a one-line reason."""
    ctx = current()
    cache: dict[str, Shape] = ctx.tables[_SHAPES]
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
    if dims_text.strip() and not ELEMENT_BITS[element_type]:
        # a token or an opaque value holds no elements (XLA's parser fails a check on token[2])
        raise ShapeError(f"{element_type} takes no dimensions: {text!r}", m.start(2))
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
        raise ShapeError(f"layout {{{text}}} is not a permutation of the {rank} dimensions of {shape_text!r}", offset)
    suffix_offset = offset + len(m2m_text) + 1 + len(suffix_text) - len(suffix_text.lstrip())
    tiles: tuple[Tile, ...] = ()
    element_size = memory_space = None
    raw: list[str] = []
    pos = 0
    suffix_text = suffix_text.strip()
    while pos < len(suffix_text):
        s = _SUFFIX.match(suffix_text, pos)
        if s is None:
            raise ShapeError(
                f"malformed layout suffix {suffix_text[pos:]!r} in shape {shape_text!r}", suffix_offset + pos
            )
        key, groups = s.groups()
        try:
            if key == "T":
                tiles = tuple(Tile(_tile_dims(g)) for g in _GROUP.findall(groups))
            elif key == "E":
                element_size = int(groups[1:-1])
            elif key == "S":
                memory_space = int(groups[1:-1])
            elif key == "P":
                raise ShapeError(
                    f"Layout has physical shape, but is not for a sparse array: {shape_text!r}", suffix_offset + pos
                )
            else:
                if key == "D" and any(
                    t.strip().rstrip("+~") not in ("D", "C", "S", "H") for t in groups[1:-1].split(",") if t.strip()
                ):
                    raise ShapeError("expected a DimLevelType abbreviation (D, C, or S)", suffix_offset + pos)
                raw.append(s.group())
        except ShapeError:
            raise
        except ValueError:
            raise ShapeError(
                f"malformed layout suffix {s.group()!r} in shape {shape_text!r}", suffix_offset + pos
            ) from None
        pos = s.end()
    return Layout(m2m, tiles, element_size, memory_space, "".join(raw))


def _tile_dims(group: str) -> tuple[int, ...]:
    if not group.strip():
        return ()
    return tuple(Tile.COMBINED if x.strip() == "*" else int(x) for x in group.split(","))


def tuple_shape(elements: list[Shape]) -> Shape:
    return Shape("tuple", tuple_shapes=tuple(elements))


def has_unbounded_dim(shape: Shape) -> bool:
    """Whether ``shape`` (or an element of it) has an unbounded dynamic dimension (``?``)."""
    if shape.tuple_shapes is not None:
        return any(map(has_unbounded_dim, shape.tuple_shapes))
    return UNBOUNDED_DIM in shape.dims


def compatible(a: Shape, b: Shape) -> bool:
    """Whether ``a`` and ``b`` have the same element types and dims, tuple element by tuple element
    (XLA's "compatible" shapes: layouts are not compared)."""
    ta, tb = a.tuple_shapes, b.tuple_shapes
    if ta is not None or tb is not None:
        return ta is not None and tb is not None and len(ta) == len(tb) and all(map(compatible, ta, tb))
    return a.element_type == b.element_type and a.dims == b.dims


def buffer_shape(inner: Shape) -> Shape:
    """``b(s32[2])``: the array ``inner`` as a buffer (XLA allows only arrays there)."""
    if inner.is_tuple or inner.buffer:
        raise ShapeError(f"a buffer shape holds an array, not {inner}")
    return Shape(inner.element_type, inner.dims, inner.dynamic, inner.layout, buffer=True)


# ---- lenient mode: shape text typed by a person ---------------------------------------------


class ShapeTextError(ValueError):
    """Bad shape text; ``column`` is 1-based."""

    def __init__(self, message: str, text: str, column: int):
        super().__init__(message)
        self.message, self.text, self.column = message, text, column

    def display(self) -> str:
        """The message, the text and a caret under the offending column."""
        return f"error: {self.message} (column {self.column})\n  {self.text}\n  {' ' * (self.column - 1)}^"


def parse_shape_text(text: str) -> Shape:
    return _Reader(text).shape()


class _Reader:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def fail(self, message: str, pos: int | None = None) -> ShapeTextError:
        return ShapeTextError(message, self.text, (self.pos if pos is None else pos) + 1)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str, what: str) -> None:
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "the end"
            raise self.fail(f"expected '{char}' {what}, found {found}")
        self.pos += 1

    def integer(self, what: str) -> int:
        self.skip_space()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        if start == self.pos:
            found = repr(self.text[start]) if start < len(self.text) else "the end"
            raise self.fail(f"expected {what}, found {found}", start)
        return int(self.text[start : self.pos])

    def shape(self) -> Shape:
        self.skip_space()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isalnum():
            self.pos += 1
        element_type = self.text[start : self.pos].lower()
        if not element_type:
            raise self.fail("expected an element type such as f32", start)
        if element_type not in ELEMENT_BITS or element_type in ("token", "opaque"):
            raise self.fail(f"unknown element type '{self.text[start : self.pos]}'", start)
        self.expect("[", "after the element type")
        dims, dynamic = self.dims()
        layout = None
        if self.peek() == "{":
            layout = self.layout(len(dims))
        if self.peek():
            raise self.fail(f"unexpected {self.peek()!r} after the shape")
        return Shape(element_type, tuple(dims), tuple(dynamic), layout)

    def dims(self) -> tuple[list[int], list[bool]]:
        dims: list[int] = []
        dynamic: list[bool] = []
        if self.peek() == "]":
            self.pos += 1
            return dims, dynamic
        while True:
            bounded = self.text.startswith("<=", self.pos)
            if bounded:
                self.pos += 2
            dims.append(self.integer("a dimension size"))
            dynamic.append(bounded)
            if self.peek() == "]":
                self.pos += 1
                return dims, dynamic
            self.expect(",", "or ']' between dimensions")

    def layout(self, rank: int) -> Layout:
        self.expect("{", "")
        start = self.pos
        minor_to_major: list[int] = []
        while self.peek() not in (":", "}", ""):
            if minor_to_major:
                self.expect(",", "between layout dimensions")
            at = self.pos
            value = self.integer("a dimension number")
            if value >= rank or value in minor_to_major:
                raise self.fail(
                    f"dimension {value} is out of range or repeated in minor_to_major of a rank-{rank} shape", at
                )
            minor_to_major.append(value)
        if len(minor_to_major) != rank and (minor_to_major or (rank and self.peek() != ":")):
            raise self.fail(f"minor_to_major lists {len(minor_to_major)} dimensions but the shape has {rank}", start)
        tiles: list[Tile] = []
        element_bits = memory_space = None
        raw: list[str] = []
        if self.peek() == ":":
            self.pos += 1
            while self.peek() not in ("}", ""):
                kind_start = self.pos
                while self.pos < len(self.text) and (self.text[self.pos].isalpha() or self.text[self.pos] == "#"):
                    self.pos += 1
                kind = self.text[kind_start : self.pos]
                if self.peek() != "(":
                    raise self.fail("expected '(' to open a layout suffix such as T(8,128)")
                if kind in ("", "T"):
                    while self.peek() == "(":
                        tiles.append(self.tile())
                elif kind in ("E", "S"):
                    self.expect("(", "")
                    value = self.integer("a number")
                    self.expect(")", f"to close {kind}(")
                    element_bits, memory_space = (value, memory_space) if kind == "E" else (element_bits, value)
                else:
                    raw.append(kind + self.raw_group())
        self.expect("}", "to close the layout")
        return Layout(tuple(minor_to_major), tuple(tiles), element_bits, memory_space, "".join(raw))

    def tile(self) -> Tile:
        self.expect("(", "")
        sizes: list[int] = []
        while True:
            if self.peek() == "*":
                self.pos += 1
                sizes.append(Tile.COMBINED)
            else:
                at = self.pos
                size = self.integer("a tile size or '*'")
                if size == 0:
                    raise self.fail("a tile size must be positive", at)
                sizes.append(size)
            if self.peek() == ")":
                self.pos += 1
                break
            self.expect(",", "or ')' in the tile")
        if sizes[-1] == Tile.COMBINED:
            raise self.fail(
                "'*' combines a dimension with the next more minor one, so it cannot be a tile's last entry",
                self.pos - 2,
            )
        return Tile(tuple(sizes))

    def raw_group(self) -> str:
        start, depth = self.pos, 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                return self.text[start : self.pos]
        raise self.fail("unclosed '(' in a layout suffix", start)
