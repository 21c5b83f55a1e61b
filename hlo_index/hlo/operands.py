"""Operand lists as XLA's parser reads them (``ParseOperands`` in ``hlo_parser.cc``).

    operands ::= '(' [operand (',' operand)*] ')'
    operand  ::= [shape] name                       a reference to an instruction
              |  [shape] opcode operands            a nested instruction (no attributes)

The common case (names only, perhaps with shapes) never gets here: ``attributes.operand_names``
reads it with one regex. This reader is for operand text with parentheses, which may be a tuple
shape, a tiled layout ``T(8,128)`` or a nested instruction such as
``sqrt(f32[10] broadcast(f32[] parameter(0)))``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..context import current, register_table

_BLANK = re.compile(r"(?:\s+|/\*.*?\*/)*", re.DOTALL)
_WORD = re.compile(r"%?[A-Za-z_][\w.\-]*")
_ARRAY_SHAPE = re.compile(r"[a-z][a-z0-9]*\s*\[[^\]]*\](?:\s*\{(?=\s*[\d:])[^{}]*\})?")
MAX_DEPTH = 64
# A plain operand list "[shape] name, [shape] name": checked whole by one pattern, then its
# (shape, name) pairs found by another (one call each, not one per operand).
_PLAIN = rf"(?:{_ARRAY_SHAPE.pattern}\s+)?{_WORD.pattern}"
_PLAIN_LIST = re.compile(rf"\s*{_PLAIN}\s*(?:,\s*{_PLAIN}\s*)*")
_SHAPED_OPERAND = re.compile(rf"(?:({_ARRAY_SHAPE.pattern})\s+)?({_WORD.pattern})")


@dataclass
class NestedInstruction:
    """``[shape] opcode(operands)`` written in place of an operand name."""

    opcode: str
    shape_text: str | None  # None: to be inferred
    operands: list[Operand] = field(default_factory=list)
    literal: str | None = None  # constant(...) / parameter(...) argument text
    offset: int = 0  # where the nested instruction starts in the operand text


class NamedOperand(str):
    """An operand name; ``shape_text`` is the shape written before it (None if none). The name is
    empty for XLA's single-instruction form ``add(f32[2], f32[2])``: operands known only by shape."""

    shape_text: str | None = None


def _named(name: str, shape_text: str | None) -> NamedOperand:
    op = NamedOperand(name)
    op.shape_text = shape_text
    return op


Operand = NamedOperand | NestedInstruction


class OperandSyntaxError(ValueError):
    def __init__(self, message: str, offset: int):
        super().__init__(message)
        self.offset = offset


class _Reader:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def blank(self) -> None:
        self.pos = _BLANK.match(self.text, self.pos).end()  # type: ignore[union-attr]  # matches the empty string

    def peek(self) -> str:
        self.blank()
        return self.text[self.pos : self.pos + 1]

    def shape(self) -> str | None:
        """The text of a shape at the cursor (array, tuple or buffer), or None if there is none."""
        self.blank()
        start = self.pos
        text = self.text
        m = _ARRAY_SHAPE.match(text, start)
        if m:
            self.pos = m.end()
            return text[start : m.end()]
        if text.startswith("(", start) or (text.startswith("b", start) and _after_blank(text, start + 1) == "("):
            # a tuple or buffer shape: balanced parentheses holding only shapes
            save = self.pos
            if text[start] == "b":
                self.pos = text.index("(", start)
            self.pos += 1
            depth_ok = self._shape_list()
            if depth_ok and self.peek() == ")":
                self.pos += 1
                return text[start : self.pos]
            self.pos = save
        return None

    def _shape_list(self) -> bool:
        if self.peek() == ")":
            return True
        while True:
            if self.shape() is None:
                return False
            if self.peek() != ",":
                return True
            self.pos += 1

    def operand(self, depth: int) -> Operand:
        if depth > MAX_DEPTH:
            raise OperandSyntaxError(f"operands nested deeper than {MAX_DEPTH}", self.pos)
        self.blank()
        start = self.pos
        shape = self.shape()
        if shape is not None and self.peek() in (",", ")"):
            return _named("", shape)
        self.blank()
        word = _WORD.match(self.text, self.pos)
        if word is None:
            raise OperandSyntaxError("expected an operand name or a nested instruction", self.pos)
        self.pos = word.end()
        if self.peek() != "(":
            return _named(word.group().removeprefix("%"), shape)
        opcode = word.group()
        self.pos += 1
        nested = NestedInstruction(opcode, shape, offset=start)
        if opcode in ("constant", "parameter"):
            close = _matching_paren(self.text, self.pos)
            nested.literal = self.text[self.pos : close].strip()
            self.pos = close + 1
            return nested
        nested.operands = self.operands(depth + 1)
        return nested

    def operands(self, depth: int) -> list[Operand]:
        """Operands up to and including the closing ')'."""
        out: list[Operand] = []
        if self.peek() == ")":
            self.pos += 1
            return out
        while True:
            out.append(self.operand(depth))
            c = self.peek()
            self.pos += 1
            if c == ")":
                return out
            if c != ",":
                raise OperandSyntaxError("expected ',' or ')' after an operand", self.pos - 1)


def _after_blank(text: str, pos: int) -> str:
    pos = _BLANK.match(text, pos).end()  # type: ignore[union-attr]  # matches the empty string
    return text[pos : pos + 1]


def _matching_paren(text: str, pos: int) -> int:
    depth = 1
    i = pos
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1) + 1 if '"' in text[i + 1 :] else n
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise OperandSyntaxError("unclosed '('", pos)


# one operand "(tuple shape) name": a dump's get-tuple-element, the same few tuple shapes many times
_TUPLE_OPERAND = re.compile(rf"\s*(\(.*\))\s*({_WORD.pattern})\s*", re.DOTALL)
_TUPLE_SHAPES = register_table("hlo.operands.tuple_shapes")  # tuple shape text -> read whole by the reader


def _whole_shape(text: str) -> bool:
    memo: dict[str, bool] = current().tables[_TUPLE_SHAPES]
    known = memo.get(text)
    if known is None:
        known = memo[text] = _Reader(text).shape() == text
    return known


def parse_operands(inner: str) -> list[Operand]:
    """The operands in ``inner`` (the text between an opcode's parentheses)."""
    single = _TUPLE_OPERAND.fullmatch(inner)
    if single is not None and _whole_shape(single.group(1)):  # what the reader gives, without reading it again
        return [_named(single.group(2).removeprefix("%"), single.group(1))]
    reader = _Reader(inner + ")")
    out = reader.operands(0)
    reader.blank()
    if reader.pos != len(inner) + 1:
        raise OperandSyntaxError("unexpected text after the operands", reader.pos)
    return out


def written_operands(inner: str) -> list[tuple[str, str | None]]:
    """``(name, shape text or None)`` of each named operand, in order: what ``parse_operands`` gives
    for them. A plain list (``f32[8]{0} %a, %b``: no parentheses, no comments; nearly every operand
    list of a dump) is read with one pattern per operand, the reader's own; anything else goes
    through the reader."""
    if "(" not in inner and "/*" not in inner and _PLAIN_LIST.fullmatch(inner):
        return [(name.removeprefix("%"), shape or None) for shape, name in _SHAPED_OPERAND.findall(inner)]
    return [(str(op), op.shape_text) for op in parse_operands(inner) if type(op) is not NestedInstruction and op]


def has_nested_instruction(operands: list[Operand]) -> bool:
    return any(type(o) is NestedInstruction for o in operands)
