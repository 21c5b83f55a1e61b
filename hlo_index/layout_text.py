"""Shape text typed by a person (``f32[3,5]{1,0:T(2,2)}``) -> ``Shape``, with column-exact errors.

Accepts what HLO dumps print and what the tiled-layout spec writes: any case for the element
type (``F32``), tiles with or without the ``T`` (``{1,0:(2,2)}``), repeated tiles
(``T(8,128)(2,1)``), ``*`` in tiles, ``E(n)`` element size, ``S(n)`` memory space; other
suffixes are kept raw. Dynamic dims ``<=N`` are read as their bound.
"""
from __future__ import annotations

from .hlo.model import ELEMENT_BITS, Layout, Shape, Tile


class ShapeTextError(ValueError):
    """Bad shape text; ``column`` is 1-based."""

    def __init__(self, message: str, text: str, column: int):
        super().__init__(message)
        self.message, self.text, self.column = message, text, column

    def display(self) -> str:
        """The message, the text and a caret under the offending column."""
        return (f"error: {self.message} (column {self.column})\n  {self.text}\n"
                f"  {' ' * (self.column - 1)}^")


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
        return int(self.text[start:self.pos])

    def shape(self) -> Shape:
        self.skip_space()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isalnum():
            self.pos += 1
        element_type = self.text[start:self.pos].lower()
        if not element_type:
            raise self.fail("expected an element type such as f32", start)
        if element_type not in ELEMENT_BITS or element_type in ("token", "opaque"):
            raise self.fail(f"unknown element type '{self.text[start:self.pos]}'", start)
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
                raise self.fail(f"dimension {value} is out of range or repeated in "
                                f"minor_to_major of a rank-{rank} shape", at)
            minor_to_major.append(value)
        if len(minor_to_major) != rank and (minor_to_major or rank and self.peek() != ":"):
            raise self.fail(f"minor_to_major lists {len(minor_to_major)} dimensions but the "
                            f"shape has {rank}", start)
        tiles: list[Tile] = []
        element_bits = memory_space = None
        raw: list[str] = []
        if self.peek() == ":":
            self.pos += 1
            while self.peek() not in ("}", ""):
                kind_start = self.pos
                while self.pos < len(self.text) and (self.text[self.pos].isalpha()
                                                      or self.text[self.pos] == "#"):
                    self.pos += 1
                kind = self.text[kind_start:self.pos]
                if self.peek() != "(":
                    raise self.fail("expected '(' to open a layout suffix such as T(8,128)")
                if kind in ("", "T"):
                    while self.peek() == "(":
                        tiles.append(self.tile())
                elif kind in ("E", "S"):
                    self.expect("(", "")
                    value = self.integer("a number")
                    self.expect(")", f"to close {kind}(")
                    element_bits, memory_space = (value, memory_space) if kind == "E" else \
                        (element_bits, value)
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
            raise self.fail("'*' combines a dimension with the next more minor one, so it "
                            "cannot be a tile's last entry", self.pos - 2)
        return Tile(tuple(sizes))

    def raw_group(self) -> str:
        start, depth = self.pos, 0
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                return self.text[start:self.pos]
        raise self.fail("unclosed '(' in a layout suffix", start)
