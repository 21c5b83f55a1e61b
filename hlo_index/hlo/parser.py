"""HLO text → typed ``Module`` objects: the grammar ``grammar/hlo.lark``, read by ``reader.py`` where
the text is of the common shape and by Lark's LALR parser otherwise (and for every syntax error).

Both call the same builder (``_ModelBuilder``) with each rule's children, as Lark does with an inline
transformer (``transformer=`` with ``parser="lalr"``), so no parse tree is built: each rule
directly yields model objects. Positions come from the tokens. Lark is imported only when the
reader declines a text.
"""

from __future__ import annotations

import gc
import re
import threading
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from itertools import pairwise
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from ..context import current, register_table
from . import attributes as A  # noqa: N812  short: read on nearly every line of the builder
from . import collectives
from .asyncwrap import AsyncSugarError, async_sugar, desugar_module
from .diagnostics import ParseError, error, with_source
from .lexer import (
    ARRAY_SHAPE,
    ARRAY_SHAPE_TEXT,
    FAST_ATTR,
    FLAT_TUPLE_SHAPE_TEXT,
    I_ARGS,
    I_ATTRS,
    I_INSTR,
    I_KEY,
    I_NAME,
    I_OP,
    I_ROOT,
    I_SHAPE,
    I_VALUE,
    SIGNATURE_PARAMETER_SHAPE,
    InstrRun,
    InstrToken,
    LexError,
    LineIndex,
    RawAttr,
    Source,
    Token,
    instr_token,
    line_column,
    scan_value,
)
from .model import Computation, DeferredComputation, Diagnostic, Instruction, Metadata, Module, Shape
from .opcodes import XLA_OPCODES
from .operands import NestedInstruction, Operand, OperandSyntaxError, parse_operands, written_operands
from .reader import read_body, read_module, read_shape
from .shapes import SHAPES_MEMO as _SHAPES
from .shapes import ShapeError, buffer_shape, compatible, parse_array_shape, read_array_shape, tuple_shape

if TYPE_CHECKING:
    from lark.exceptions import UnexpectedToken

MAX_INLINE_DEPTH = 64
MAX_TUPLE_DEPTH = 256
UNKNOWN_SHAPE = Shape("unknown")  # an instruction written without a result shape

# A rule's children: tokens and the values its sub-rules' callbacks returned, as the grammar orders them.
Children = list[Any]
# What a position comes from: a token, an INSTRS entry's match (turned into a token where a message
# needs one), or a bare text offset.
Anchor: TypeAlias = "Token | re.Match[str] | _At"
# tuple and buffer shape text -> Shape, per analysis context (a dump writes the same few many times)
_COMPOSITE_SHAPES = register_table("hlo.parser.composite_shapes")
# (opcode, the text of a common instruction's attributes before its last one) -> their (name, typed
# value) pairs, per analysis context: a dump repeats a few such texts (", dimensions={0}, to_apply=%r")
# on many instructions, and the typed values are shared, never changed.
_LEADING_ATTRIBUTES = register_table("hlo.parser.leading_attributes")
# What the builder reads per instruction: the analysis context's memos (shape text -> Shape, metadata
# text -> Metadata, leading attributes as above) and the current computation's ``OperandTexts``
# (None inside an inline computation).
Memos = tuple[
    dict[str, Shape],
    dict[str, Metadata],
    dict[tuple[str, str], tuple[tuple[str, Any], ...]],
    "OperandTexts | None",
]


class OperandTexts(dict[str, str]):
    """The common instructions of the computation being read so far, by name: the text an operand
    naming each is written with in a dump (``f32[8,128]{1,0} %name``). An operand list written
    exactly so is checked as it is read (``_written_as_defined``), instead of shape by shape after
    the module is read: XLA writes nearly every list so, and a GPU dump writes ~50,000."""

    __slots__ = ()

    def define(self, name: str, shape_text: str) -> None:
        if name in self:  # a name defined twice: which one an operand names is link's to say
            _state.duplicates = True
        self[name] = f"{shape_text} %{name}"


def _written_as_defined(names: tuple[str, ...], inner: str, defined: OperandTexts) -> bool:
    """Whether the operand list ``inner`` is, text for text, the operands ``names`` as their
    definitions so far in this computation write them (with XLA's ``/*index=5*/`` every fifth)."""
    try:
        if len(names) <= 5:
            return ", ".join(map(defined.__getitem__, names)) == inner
        return (
            ", ".join([f"/*index={k}*/{defined[n]}" if k % 5 == 0 and k else defined[n] for k, n in enumerate(names)])
            == inner
        )
    except KeyError:  # an operand not defined before it in this computation: checked afterwards
        return False


def _keep_shaped(instr: Instruction, inner: str, defined: OperandTexts | None) -> None:
    """``instr``'s operand list ``inner``, written with shapes, kept for the checks after the module
    is read (``_check_written_operand_shapes``) and for the single-instruction form; marked checked
    where it is written as its operands were defined (``defined``: None inside an inline computation)."""
    _state.shaped.append((instr, inner))
    if defined is not None and _written_as_defined(instr.operand_names, inner, defined):
        _state.prechecked.add(id(instr))


class _Failure(Exception):
    """A semantic problem found while building the model, pinned to a token."""

    def __init__(self, message: str, token: Anchor | None, offset: int = 0):
        # offset: characters from the token's start to the offending text
        super().__init__(message)
        self.message, self.token, self.offset = message, token, offset


class _Signature:
    __slots__ = ("parameters", "result")

    def __init__(self, parameters: list[tuple[str, Shape]], result: Shape):
        self.parameters, self.result = parameters, result


_FAST_ATTR = re.compile(FAST_ATTR, re.ASCII | re.DOTALL).finditer  # read as the lexer reads it
_PERCENT_NAMES = A.PERCENT_NAME.findall  # the names of an operand list written with its %s
_PARAMETER_SHAPES = SIGNATURE_PARAMETER_SHAPE.findall  # the shape texts of a flat signature
_ARRAY_SHAPES = ARRAY_SHAPE.findall  # the element texts of a tuple of array shapes
_OPCODE = attrgetter("opcode")
_state = threading.local()  # inline computations found during the current parse
# A body whose text holds one of these is read at once where bodies may be deferred: what a whole
# module's scan looks for (its fusions, ``Module.fusions``; the backend's markers,
# ``analyses.gpu_target``; async computations shared, ``checks``) is then never in a deferred
# body, and such scans skip them.
_READ_NOW = ("fusion(", "custom_call_target", "backend_config", "async-start")


def _pending() -> list[Computation]:
    pending = getattr(_state, "pending", None)
    if pending is None:
        pending = _state.pending = []
        _state.depth = 0
    return pending


def _reset_module_state() -> None:
    """Per-module parse state: inline computations found so far, names given to nested
    instructions, instructions whose operands carry shapes (with that operand text)."""
    _state.pending = []
    _state.depth = 0
    _state.anon = {}
    _state.shaped = []
    _state.defined = OperandTexts()
    _state.prechecked = set()  # ids of the instructions of ``shaped`` whose operand list was written as defined
    _state.duplicates = False


def _anon_name(opcode: str) -> str:
    """A fresh name for a nested instruction, as XLA's name uniquer gives: ``add.anon``, ``add.anon.1``."""
    anon = getattr(_state, "anon", None)
    if anon is None:
        anon = _state.anon = {}
    base = f"{opcode}.anon"
    n = anon.get(base, 0)
    anon[base] = n + 1
    return base if n == 0 else f"{base}.{n}"


def _split_attrs(tok: Token) -> list[tuple[str, str]]:
    """(name, raw value) pairs of an ATTR token."""
    if type(tok) is RawAttr:
        key, _, value = tok.value[1:].strip().partition("=")
        return [(key.strip(), value.strip())]
    return [m.groups() for m in _FAST_ATTR(tok.value)]  # type: ignore[misc]  # both groups always match


def _inner_offset(call_tok: Token, inner: str) -> int:
    """Where the operand text ``inner`` starts in ``call_tok``: a whole common instruction (its
    match says) or an opcode with its operands."""
    if type(call_tok) is InstrToken:
        return call_tok.match.start(I_ARGS) - call_tok.match.start(I_INSTR)
    return call_tok.value.index(inner) if inner in call_tok.value else 0


def _name(token: Token) -> str:
    v: str = token.value
    return v[1:] if v[0] == "%" else v


class _ModelBuilder:
    """Callbacks named after grammar rules; each returns a model object."""

    # ---- shapes ----
    def array_shape(self, c: Children) -> Shape:
        tok = c[0]
        try:
            return parse_array_shape(tok.value)
        except ShapeError as e:
            raise _Failure(str(e), tok, e.offset) from None

    def buffer_shape(self, c: Children) -> Shape:
        try:
            return buffer_shape(c[0])
        except ShapeError as e:
            raise _Failure(str(e), None) from None

    def composite_shape(self, text: str) -> Shape:
        """A tuple or buffer shape's whole text (the direct reader's result shapes)."""
        return _shape_from_text(text)

    def tuple_shape(self, c: Children) -> Shape:
        if len(c) == 1 and c[0] is None:
            return tuple_shape([])
        return tuple_shape(c)

    # ---- instructions ----
    def instruction(self, c: Children) -> Instruction | list[Instruction]:
        first = c[0]
        kind = type(first)
        if kind is InstrRun:  # a run of common instructions: a list, flattened by the enclosing rule
            out: list[Instruction] = []
            common = self._common
            memos = _parse_memos()  # looked up once per run, not per instruction
            for entry in first.entries:
                instr = common(entry, None, c, memos)
                if type(instr) is list:
                    out.extend(instr)
                else:
                    out.append(instr)  # type: ignore[arg-type]  # not a list: one instruction
            return out
        if kind is InstrToken:
            return self._common(first.match, first, c, _parse_memos())
        head = first.value
        is_root = first.type == "ROOT_DEF"
        name = head[:-1].strip()
        pos = first.start_pos
        if is_root:
            name = name[4:].lstrip()
            pos += head.index(name)
        shape = c[1]
        i = 2
        if type(shape) is Shape:
            pass
        elif shape.type == "SHAPE":
            try:
                shape = parse_array_shape(shape.value)
            except ShapeError as e:
                raise _Failure(str(e), shape, e.offset) from None
        else:
            shape, i = UNKNOWN_SHAPE, 1
        call_tok = c[i]
        call = call_tok.value
        paren = call.index("(")
        built = self._build(is_root, name, pos, shape, call[:paren], call[paren + 1 : -1], call_tok, c, i + 1)
        if i == 2 and not _state.depth:  # the result shape's text, as operands naming it write it
            instr = built[-1] if isinstance(built, list) else built
            _state.defined.define(instr.name, _state.text[first.start_pos + len(head) : call_tok.start_pos].strip())
        return built

    def _common(
        self, entry: re.Match[str], tok: InstrToken | None, c: Children, memos: Memos
    ) -> Instruction | list[Instruction]:
        """One common instruction: its match ``entry`` (of an INSTR token, or of an INSTRS run:
        ``tok`` None, made only where an error or an inline body needs it); ``c[1:]`` are its
        ATTR tokens. ``memos``: see :data:`Memos`."""
        root, name, shape_text, opcode, inner, key, value = entry.group(
            I_ROOT, I_NAME, I_SHAPE, I_OP, I_ARGS, I_KEY, I_VALUE
        )
        shapes, metadata, leading, defined = memos
        shape = shapes.get(shape_text)
        if shape is None:
            if shape_text[0] == "(":  # a tuple result shape, through the memo of such texts
                shape = _shape_from_text(shape_text)
            else:
                try:
                    shape = parse_array_shape(shape_text)
                except ShapeError as e:
                    offset = entry.start(I_SHAPE) - entry.start(I_INSTR) + e.offset
                    raise _Failure(str(e), instr_token(entry), offset) from None
        pos = entry.start(I_NAME)
        at = tok or entry  # what positions are taken from: an entry becomes a token where one is needed
        # Most instructions name their operands plainly (with their shapes or not) and have no
        # attributes but the ones their match holds: built here; anything else by _build.
        names: tuple[str, ...] | None = None
        if len(c) == 1 and opcode not in {"parameter", "constant"}:
            if "(" not in inner:
                if "%" in inner:
                    found = _PERCENT_NAMES(inner)
                    if "[" in inner or len(found) == inner.count(",") + 1:
                        names = tuple(found)
                elif not inner:
                    names = ()
            elif defined is not None and "%" in inner:
                # tuple-shaped operands (a get-tuple-element's) written exactly as they were
                # defined: no nested instruction can hide in that text
                written = tuple(_PERCENT_NAMES(inner))
                if _written_as_defined(written, inner, defined):
                    names = written
        built: Instruction | list[Instruction]
        try:
            if names is not None:
                if name[0] == "%":
                    name = name[1:]
                # line holds the text offset until _finish_module turns it into line and column
                built = instr = Instruction(name, opcode, shape, names, {}, None, root is not None, pos)
                if "[" in inner:
                    _keep_shaped(instr, inner, defined)
            elif opcode == "parameter" and len(c) == 1 and inner.isascii() and inner.isdigit():
                # a dump's most common instruction after its fusions' own: what _build makes of it
                built = instr = Instruction(
                    name[1:] if name[0] == "%" else name, opcode, shape, (), {}, None, root is not None, pos
                )
                instr.parameter_number = int(inner)
            else:
                built = self._build(root is not None, name, pos, shape, opcode, inner, at, c, 1)
                # with a nested instruction in the operands (rare), the instruction itself comes last
                instr = built[-1] if isinstance(built, list) else built
            if defined is not None:
                defined.define(instr.name, shape_text)
            if key is not None:
                attrs = instr.attrs
                key_pos = entry.start(I_KEY)
                offset = entry.start(I_ATTRS)
                start = entry.start(I_INSTR)
                if key_pos - offset > 3:  # attributes before the last one (", k=v" is the shortest)
                    text = entry.string
                    end = text.rfind(",", offset, key_pos)
                    section = (opcode, text[offset:end])
                    pairs = leading.get(section) if not attrs else None
                    if pairs is not None:
                        attrs.update(pairs)
                    else:
                        self._leading_attributes(instr, attrs, entry, at, offset, end, section, leading)
                known = metadata.get(value) if key == "metadata" else None
                if known is not None:
                    instr.metadata = known
                else:
                    self._attribute(instr, attrs, key, value, at, key_pos - start)
                if opcode == "compare" and "type" in attrs:
                    attrs["comparison_type"] = attrs["type"]
        except _Failure as failure:
            if failure.token is entry:
                failure.token = instr_token(entry)
            raise
        return built

    def _leading_attributes(
        self,
        instr: Instruction,
        attrs: dict[str, Any],
        entry: re.Match[str],
        at: Token | re.Match[str],
        offset: int,
        end: int,
        section: tuple[str, str],
        leading: dict[tuple[str, str], tuple[tuple[str, Any], ...]],
    ) -> None:
        """A common instruction's attributes before its last one, read; kept for the next
        instruction with the same text when they are attributes only (no metadata, no inline
        computation) and nothing else was in ``attrs``."""
        start = entry.start("INSTR")
        text = entry.string
        empty = not attrs
        inline = len(_pending())
        for m in _FAST_ATTR(text, offset, end):
            self._attribute(instr, attrs, m.group(1), m.group(2), at, m.start(1) - start)
        if empty and instr.metadata is None and len(_pending()) == inline:
            ctx = current()
            if len(leading) < ctx.budgets.parse_memo_entries:
                leading[section] = tuple(attrs.items())

    def _build(
        self,
        is_root: bool,
        name: str,
        pos: int,
        shape: Shape,
        opcode: str,
        inner: str,
        call_tok: Token | re.Match[str],
        c: Children,
        first_attr: int,
    ) -> Instruction | list[Instruction]:
        if name[0] == "%":
            name = name[1:]
        # line holds the text offset until _finish_module turns it into line and column
        instr = Instruction(name, opcode, shape, (), {}, None, is_root, pos)
        nested: list[Instruction] | None = None  # instructions written inside the operands (rare)
        try:
            if opcode == "parameter":
                instr.parameter_number = int(inner)
            elif opcode == "constant":
                instr.literal = inner.strip()
                if inner.count("{") != inner.count("}"):
                    raise _Failure(f"unterminated '{{' in the literal of %{name}", call_tok)
            elif "(" in inner:  # a tuple shape, a tiled layout or a nested instruction
                if type(call_tok) is re.Match:  # an entry of an INSTRS run
                    call_tok = instr_token(call_tok)
                base = (call_tok.start_pos or 0) + _inner_offset(call_tok, inner)
                nested = []
                instr.operand_names = self._operands(parse_operands(inner), base, nested)
            elif inner:
                instr.operand_names = A.operand_names(inner)
            if "[" in inner:
                _keep_shaped(instr, inner, None if _state.depth else _state.defined)
        except OperandSyntaxError as e:
            assert isinstance(call_tok, Token)  # raised after the match became a token
            raise _Failure(
                f"malformed operands of %{name}: {e}",
                call_tok,
                _inner_offset(call_tok, inner) + e.offset,
            ) from None
        except ValueError:
            raise _Failure(f"malformed operands of %{name}: {inner.strip()[:60]!r}", call_tok) from None
        if len(c) > first_attr:
            attrs = instr.attrs
            for tok in c[first_attr:]:
                if type(tok) is RawAttr:
                    s = tok.value
                    eq = s.index("=")
                    self._attribute(instr, attrs, s[1:eq].strip(), s[eq + 1 :].strip(), tok, eq + 1)
                else:
                    for m in _FAST_ATTR(tok.value):
                        self._attribute(instr, attrs, m.group(1), m.group(2), tok, m.start(1))
            if opcode == "compare" and "type" in attrs:
                attrs["comparison_type"] = attrs["type"]
        if nested:
            nested.append(instr)
            return nested  # the enclosing rule flattens it
        return instr

    def _operands(self, operands: list[Operand], base: int, nested: list[Instruction]) -> tuple[str, ...]:
        """Names of ``operands``; each nested instruction becomes an instruction of its own (added
        to ``nested`` after its own nested operands, so definitions come before uses)."""
        names = []
        for op in operands:
            if type(op) is not NestedInstruction:
                names.append(str(op) or "_")  # "_": known by shape alone (single-instruction form)
                continue
            shape = UNKNOWN_SHAPE
            if op.shape_text is not None:
                try:
                    shape = _shape_from_text(op.shape_text)
                except Exception as e:  # noqa: BLE001  any failure of the nested parse is a malformed nested shape
                    raise OperandSyntaxError(f"bad shape {op.shape_text!r} ({type(e).__name__})", op.offset) from None
            child = Instruction(_anon_name(op.opcode), op.opcode, shape, (), {}, None, False, base + op.offset)
            if op.opcode == "parameter":
                try:
                    child.parameter_number = int(op.literal or "")
                except ValueError:
                    raise OperandSyntaxError(f"bad parameter number {op.literal!r}", op.offset) from None
            elif op.opcode == "constant":
                child.literal = op.literal
            else:
                child.operand_names = self._operands(op.operands, base, nested)
            nested.append(child)
            names.append(child.name)
        return tuple(names)

    def _attribute(
        self, instr: Instruction, attrs: dict[str, Any], key: str, value: str, tok: Token | re.Match[str], offset: int
    ) -> None:
        try:
            if key == "metadata":
                instr.metadata = A.metadata(value)
            elif key in A.CALLEE_ROLES:
                attrs[key] = self._callees(key, value, instr, tok, offset)
            elif key == "replica_groups":  # raw text stays under its own key (printed back as written)
                attrs["replica_groups_typed"] = collectives.replica_groups(value)
                attrs[key] = value
            elif key == "source_target_pairs":  # checked here, typed on use: Instruction.source_target_pairs()
                collectives.source_target_pairs(value)
                attrs[key] = value
            else:
                attrs[key] = A.typed_attribute(key, value, instr.opcode)
        except ValueError as e:
            raise _Failure(
                f"invalid attribute {key} of %{instr.name}: {e}", tok, offset if type(tok) is not RawAttr else 0
            ) from None

    def _callees(
        self, role: str, value: str, instr: Instruction, tok: Token | re.Match[str], offset: int
    ) -> str | tuple[str, ...]:
        names = A.callee_names(value)
        if names is None or (value.lstrip().startswith("{") and role not in A.MULTI_CALLEE_ROLES):
            # a role of one computation takes a name or an inline body: braces hold a body, as for XLA
            if type(tok) is re.Match:  # an entry of an INSTRS run: the inline body is read from a token
                tok = instr_token(tok)
            brace = tok.value.index("{", offset)
            if role in A.MULTI_CALLEE_ROLES:  # {{ body }, %name, { body }}: each item a name or a body
                names = self._callee_list(f"{instr.name}.{role}", tok, brace)
            else:
                end = len(tok.value.rstrip()) - 1
                names = (self._inline_computation(f"{instr.name}.{role}", tok, brace, end).name,)
        if role in A.MULTI_CALLEE_ROLES or len(names) != 1:
            return names
        return names[0]

    def _callee_list(self, name: str, tok: Token, brace: int) -> tuple[str, ...]:
        text = tok.value
        names: list[str] = []
        i = brace + 1
        while True:
            while i < len(text) and text[i].isspace():
                i += 1
            if i >= len(text):
                raise _Failure("unterminated list of computations", tok, brace)
            if text[i] == "}":
                return tuple(names)
            if text[i] == "{":
                close = scan_value(text, i + 1, depth=1) - 1
                names.append(self._inline_computation(f"{name}.{len(names)}", tok, i, close).name)
                i = close + 1
            else:
                j = i
                while j < len(text) and text[j] not in ",}" and not text[j].isspace():
                    j += 1
                names.append(text[i:j].lstrip("%"))
                i = j
            while i < len(text) and text[i].isspace():
                i += 1
            if i < len(text) and text[i] == ",":
                i += 1

    def _inline_computation(self, name: str, tok: Token, brace: int, close: int) -> Computation:
        """Parse ``{ instructions }`` written in place of a computation name (braces at ``brace`` and
        ``close`` in the token's text)."""
        pending = _pending()
        assert tok.start_pos is not None  # the lexer positions every token
        if _state.depth >= MAX_INLINE_DEPTH:
            raise _Failure(f"inline computations nested deeper than {MAX_INLINE_DEPTH}", tok)
        _state.depth += 1
        try:
            start = tok.start_pos + brace + 1
            end = tok.start_pos + close
            source = Source(_state.text, start, end)
            # the reader's failure ends the whole module's reading: the grammar then reads it all
            instructions = (
                read_body(source, _BUILDER) if getattr(_state, "fast", False) else _lark().parse(source, start="body")
            )
        finally:
            _state.depth -= 1
        taken = {c.name for c in pending}
        unique, n = name, 0
        while unique in taken:  # same-named instructions in two computations, each with an inline body
            n += 1
            unique = f"{name}.{n}"
        comp = Computation(unique, instructions, line=tok.start_pos + brace)
        pending.append(comp)
        return comp

    def body(self, c: Children) -> list[Instruction]:
        return _flatten(c)

    # ---- computations ----
    def parameter(self, c: Children) -> tuple[str, Shape]:
        return (_name(c[0]), c[1])

    def signature(self, c: Children) -> _Signature:
        if len(c) == 1 and isinstance(c[0], Token):  # flat: kept raw, parameters carry the shapes
            tok = c[0]
            arrow = tok.value.rindex("->")
            shapes = current().tables[_SHAPES]
            # The parameters' shapes are read only to reject what XLA rejects, where XLA does: at
            # the signature. A shape in the memo was read already (most are: a computation's
            # parameter instructions and its callers' operands write the same shapes).
            if not all(map(shapes.__contains__, _PARAMETER_SHAPES(tok.value, 0, arrow))):
                for m in SIGNATURE_PARAMETER_SHAPE.finditer(tok.value, 0, arrow):
                    try:
                        read_array_shape(m.group(1), shapes)
                    except ShapeError as e:
                        raise _Failure(str(e), tok, m.start(1) + e.offset) from None
            try:
                result = _shape_from_text(tok.value[arrow + 2 :])
            except Exception:  # noqa: BLE001  an unreadable result shape is left unknown, as when none is written
                result = UNKNOWN_SHAPE
            return _Signature([], result)
        params = [p for p in c[:-1] if p is not None]
        return _Signature(params, c[-1])

    def body_close(self, text: str, start: int, end: int, deferrable: bool) -> int | None:
        """Where the body that starts at ``start`` closes, when it is to be read later (``defer``
        bodies: a computation's with a flat signature, not the ENTRY's, with none of ``_READ_NOW``
        in its text, closed by a ``}`` at the start of a line); None: read it now. With ``defer``
        bodies, every body's extent is kept (``DeferredBodies.lines_of``)."""
        bodies = getattr(_state, "defer", None)
        if bodies is None:
            return None
        close = text.find("\n}", start, end)
        if close < 0:
            return None
        close += 1
        later = deferrable and not any(text.find(word, start, close) >= 0 for word in _READ_NOW)
        _state.body = (start, close, later)
        return close if later else None

    def computation(self, c: Children) -> Computation:
        if not _state.depth:
            _state.defined = OperandTexts()  # the next computation's names are its own
        i = 0
        is_entry = c[0].type == "ENTRY"
        if is_entry:
            i = 1
        name_tok = c[i]
        comp = Computation(_name(name_tok), is_entry=is_entry, line=name_tok.start_pos)
        body, later = getattr(_state, "body", None), False
        if body is not None:
            _state.body = None
            start, close, later = body
            if later:
                comp.__class__ = DeferredComputation
                del comp.instructions, comp.root, comp.parameters, comp.by_name, comp.operands_above
            _state.defer.found(comp, start, close, later)
        instructions = [] if later else comp.instructions
        for item in c[i + 1 :]:
            if type(item) is Instruction:
                instructions.append(item)
            elif type(item) is list:  # an instruction with nested operand instructions
                instructions.extend(item)
            elif type(item) is _Signature:
                if item.result is not UNKNOWN_SHAPE:
                    comp.result_shape = item.result
            elif isinstance(item, Token):  # ATTR, e.g. execution_thread="host"
                for key, value in _split_attrs(item):
                    if key == "execution_thread":
                        comp.execution_thread = A.unquote(value)
        return comp

    # ---- modules ----
    def module(self, c: Children) -> Module:
        module = Module(_name(c[1]))
        tables: dict[str, str] = {}
        for item in c[2:]:
            if isinstance(item, Computation):  # deferred ones too
                module.computations.append(item)
            elif item.type == "ATTR":
                module.attrs.update(_split_attrs(item))
            else:  # TABLE
                tables[item.value.split(None, 1)[0]] = item.value
        if tables:
            module.stack_frames = A.stack_frames(tables)
        bodies = getattr(_state, "defer", None)
        if bodies is not None and bodies.pending():
            module.deferred = bodies
        _finish_module(module)
        return module

    def modules(self, c: Children) -> list[Module]:
        return c

    def anonymous_instruction(self, c: Children) -> Instruction | list[Instruction]:
        shape, call_tok = c[0], c[1]
        if type(shape) is not Shape:
            try:
                shape = parse_array_shape(shape.value)
            except ShapeError as e:
                raise _Failure(str(e), shape, e.offset) from None
        call = call_tok.value
        paren = call.index("(")
        opcode = call[:paren]
        return self._build(True, opcode, call_tok.start_pos, shape, opcode, call[paren + 1 : -1], call_tok, c, 2)

    def instructions_module(self, c: Children) -> list[Module]:
        instructions = _flatten(c)
        instructions[:0] = _parameters_for_shaped_operands(instructions)
        first = instructions[0]
        comp = Computation("main", instructions, is_entry=True, line=first.line)
        module = Module("")
        module.computations.append(comp)
        line, column = _state.lines(first.line)
        module.diagnostics.append(
            Diagnostic(
                "note",
                "no HloModule header and no computation: the instructions are read as one ENTRY computation",
                line,
                column,
            )
        )
        _finish_module(module)
        module.name = comp.name
        return [module]

    def headerless_module(self, c: Children) -> list[Module]:
        module = Module("")
        module.computations.extend(c)
        _finish_module(module)
        module.name = module.entry.name if module.entry else "module"
        return [module]


def _parse_memos() -> Memos:
    """What the builder reads per instruction (see :data:`Memos`)."""
    tables = current().tables
    defined = None if _state.depth else _state.defined
    return tables[_SHAPES], tables[A.METADATA_MEMO], tables[_LEADING_ATTRIBUTES], defined


def _shape_from_text(text: str) -> Shape:
    """The shape ``text`` holds, as the grammar's ``shape`` rule reads it: one array shape (most
    of them: operand shapes written on every instruction, computation results) through the shape
    memo, anything else (tuples, buffers) by a nested parse."""
    m = ARRAY_SHAPE_TEXT.match(text)
    if m is None:
        ctx = current()
        memo: dict[str, Shape] = ctx.tables[_COMPOSITE_SHAPES]
        shape = memo.get(text)
        if shape is None:
            if FLAT_TUPLE_SHAPE_TEXT.match(text):
                # a tuple of array shapes (a GPU dump's ENTRY writes ~150 distinct ones, some of
                # 70 elements): each element through the array shapes' memo, as the reader would
                with suppress(ShapeError):  # else the reader's way words it
                    shape = tuple_shape([parse_array_shape(t) for t in _ARRAY_SHAPES(text)])
            if shape is None:
                try:
                    shape = cast(Shape, read_shape(Source(text), _BUILDER))
                except Exception:  # noqa: BLE001  the grammar reads what the reader declines, and words the error
                    shape = cast(Shape, _lark().parse(Source(text), start="shape"))
            if len(memo) < ctx.budgets.parse_memo_entries:
                memo[text] = shape
        return shape
    try:
        return parse_array_shape(m.group(1))
    except ShapeError as e:  # what the grammar's array_shape callback raises
        raise _Failure(str(e), None, e.offset) from None


def _parameters_for_shaped_operands(instructions: list[Instruction]) -> list[Instruction]:
    """XLA's single-instruction form: an operand never defined but written with a shape becomes a
    parameter (named as written, or ``_N`` when only its shape is given), numbered in order of use."""
    defined = {i.name for i in instructions}
    params: list[Instruction] = []
    for instr, inner in _state.shaped:
        try:
            operands = parse_operands(inner)
        except OperandSyntaxError:
            continue
        if len(operands) != len(instr.operand_names):
            continue
        names = list(instr.operand_names)
        for k, op in enumerate(operands):
            if type(op) is NestedInstruction or op.shape_text is None:
                continue
            name = str(op) or f"_{len(params)}"
            if name in defined:
                continue
            try:
                shape = _shape_from_text(op.shape_text)
            except Exception:  # noqa: BLE001  an unreadable shape makes no parameter; the operand stays unresolved
                continue
            param = Instruction(name, "parameter", shape, (), {}, None, False, instr.line)
            param.parameter_number = len(params)
            params.append(param)
            defined.add(name)
            names[k] = name
        instr.operand_names = tuple(names)
    return params


class _At:
    """A text position standing in for a token in a _Failure."""

    def __init__(self, pos: int):
        self.start_pos = pos


def _check_written_operand_shapes(module: Module) -> None:
    """XLA's parser checks an operand written with a shape (``add(f32[2] %a, ...)``) against the
    shape of the instruction it names. The lists written as their operands are defined were found
    so as they were read (``OperandTexts``), unless a computation defines a name twice."""
    by_comp: dict[str, dict[str, Instruction]] = {}
    comp_of: dict[int, Computation] | None = None
    prechecked = set() if _state.duplicates else _state.prechecked
    if len(prechecked) == len(_state.shaped):  # every list written as defined (ids are distinct)
        return
    written_shapes: dict[str, Shape | None] = {}  # a dump writes few distinct shape texts, many times
    # (written text, operand's shape) pairs found compatible: operands' shapes are shared objects
    # (the shape memo), so a dump has few distinct pairs
    agreeing: set[tuple[str, int]] = set()
    kept: list[Shape] = []  # the shapes whose ids are in ``agreeing``
    for instr, inner in _state.shaped:
        if id(instr) in prechecked:
            continue
        if comp_of is None:
            comp_of = {id(i): comp for comp in module.read_computations() for i in comp.instructions}
        owner = comp_of.get(id(instr))
        if owner is None:
            continue
        names = by_comp.get(owner.name)
        if names is None:
            names = by_comp[owner.name] = {i.name: i for i in owner.instructions}
        try:
            listed = written_operands(inner)
        except OperandSyntaxError:
            continue
        if "(" not in inner:  # (a list with nested instructions was read by the reader already)
            # the names as the reader reads them: a hand-written list may name some operands with %
            # and some without, which the names read at the instruction miss
            every = tuple(name for name, _ in listed)
            if every != instr.operand_names and len(every) >= len(instr.operand_names):
                instr.operand_names = every
        operands = [(name, shape) for name, shape in listed if shape is not None]
        for name, shape_text in operands:
            target = names.get(name)
            if target is None or (shape_text, id(target.shape)) in agreeing or target.shape.element_type == "unknown":
                continue
            if shape_text in written_shapes:
                written = written_shapes[shape_text]
            else:
                try:
                    written = _shape_from_text(shape_text)
                except Exception:  # noqa: BLE001  an unreadable written shape is not checked
                    written = None
                written_shapes[shape_text] = written
            if written is None:
                continue
            if compatible(written, target.shape):
                agreeing.add((shape_text, id(target.shape)))
                kept.append(target.shape)
            else:
                raise _Failure(
                    f"The declared operand shape {written} of %{instr.name} is not compatible with the "
                    f"shape of the operand instruction %{target.name}, {target.shape}",
                    _At(instr.line),
                )


def _flatten(items: Children) -> list[Instruction]:
    out: list[Instruction] = []
    for item in items:
        if type(item) is list:
            out.extend(item)
        else:
            out.append(item)
    return out


def _finish_module(module: Module) -> None:
    # XLA's convention: without an ENTRY marker the last computation written out is the entry
    # (not an inline or async-wrapped one this parser adds).
    last_written = module.computations[-1] if module.computations else None
    pending = _pending()
    if pending:
        module.computations.extend(pending)
        pending.clear()
    if _state.shaped:
        _check_written_operand_shapes(module)
    # what only the checks above read: not kept alive through the analyses that follow
    _state.shaped = []
    _state.prechecked = set()
    opcodes: set[str] = set()
    for comp in module.read_computations():
        opcodes.update(map(_OPCODE, comp.instructions))
    if any(async_sugar(op) for op in opcodes if op not in XLA_OPCODES):
        desugar_module(module)
    entry = None
    line_column = _state.lines
    for comp in module.computations:
        comp.module = module
        comp.line, comp.column = line_column(comp.line)
        if type(comp) is not DeferredComputation:
            _place(comp.instructions, line_column.newlines)
        if comp.is_entry:
            entry = comp
    if entry is None and last_written is not None:
        entry = last_written
        entry.is_entry = True
    module.entry = entry
    if module.stack_frames:
        _resolve_source_locations(module)


def _place(instructions: list[Instruction], newlines: Sequence[int]) -> None:
    """Each instruction's text offset (kept in ``line`` while reading) as its line and column."""
    for instr in instructions:  # LineIndex inlined: one call per instruction less
        pos = instr.line
        i = bisect_right(newlines, pos - 1)
        instr.line = i + 1
        instr.column = pos - newlines[i - 1] if i else pos + 1


def _resolve_source_locations(module: Module, computations: Iterable[Computation] | None = None) -> None:
    """Fill metadata source_file/line from the stack-frame tables (innermost frame), in
    ``computations`` (every read one by default)."""
    from dataclasses import replace

    frames = module.stack_frames
    resolved: dict[int, tuple[Metadata, Metadata]] = {}
    for comp in module.read_computations() if computations is None else computations:
        for instr in comp.instructions:
            md = instr.metadata
            if md is None or not md.stack_frame_id or md.source_file:
                continue
            # by identity (the parser shares one Metadata per text; the entry keeps ``md`` alive):
            # cheaper than the dataclass's hash
            hit = resolved.get(id(md))
            if hit is None:
                frame = frames.get(md.stack_frame_id)
                hit = resolved[id(md)] = (
                    md,
                    md if frame is None else replace(md, source_file=frame.file, source_line=frame.line),
                )
            instr.metadata = hit[1]


_BUILDER = _ModelBuilder()
_LARK: list[Any] = []  # the LALR parser, made on first use


def _lark() -> Any:
    """Lark's LALR parser over the grammar, with this package's lexer and builder."""
    if not _LARK:
        from .lalr import lalr_parser

        _LARK.append(lalr_parser(_BUILDER))
    return _LARK[0]


def _syntax_errors() -> tuple[type[Exception], ...]:
    """What a parse raises for text that is not valid HLO (Lark is imported by then)."""
    from lark.exceptions import UnexpectedInput

    return (LexError, _Failure, AsyncSugarError, UnexpectedInput)


_TERMINAL_NAMES = {
    "HLOMODULE": "'HloModule'",
    "ENTRY": "'ENTRY'",
    "ROOT": "'ROOT'",
    "NAME": "a name",
    "DEF": "'%name ='",
    "ROOT_DEF": "'ROOT %name ='",
    "INSTR": "an instruction",
    "INSTRS": "an instruction",
    "SHAPE": "a shape",
    "OPCALL": "an opcode with operands",
    "ATTR": "', attribute=value'",
    "TABLE": "a stack-frame table",
    "_LPAR": "'('",
    "_RPAR": "')'",
    "_COMMA": "','",
    "_LBRACE": "'{'",
    "_RBRACE": "'}'",
    "_COLON": "':'",
    "_EQUAL": "'='",
    "_ARROW": "'->'",
    "$END": "end of input",
    "SIGNATURE": "a signature",
}


def _describe(token: Token) -> str:
    if token.type == "$END":
        return "end of input"
    text = str(token.value)
    if len(text) > 40:
        text = text[:37] + "..."
    return (
        f"{_TERMINAL_NAMES.get(token.type, token.type)} {text!r}"
        if token.type in ("NAME", "SHAPE", "OPCALL", "ATTR", "TABLE", "DEF", "ROOT_DEF", "INSTR", "INSTRS")
        else f"{text!r}"
    )


def _expected(exc: UnexpectedToken) -> str:
    expected = sorted({_TERMINAL_NAMES.get(t, t) for t in exc.expected})  # INSTR and INSTRS read alike
    if len(expected) > 1:
        return ", ".join(expected[:-1]) + " or " + expected[-1]
    return expected[0] if expected else "nothing"


def _syntax_diagnostic(exc: Exception, text: str, start: int = 0, end: int = -1) -> Diagnostic:
    """The diagnostic for a problem in ``text[start:end]`` (positions are file-absolute)."""
    from lark.exceptions import UnexpectedInput, UnexpectedToken

    if end < 0:
        end = len(text)
    if isinstance(exc, (LexError, AsyncSugarError)):
        return error(exc.message, *line_column(text, exc.pos))
    if isinstance(exc, _Failure):
        anchor = exc.token
        assert not isinstance(anchor, re.Match)  # a builder turns a match into a token before the failure leaves it
        if not anchor:
            return error(exc.message, 0, 0)
        return error(exc.message, *line_column(text, (anchor.start_pos or 0) + exc.offset))
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END" and not text[start:end].strip():
            return error("empty input: expected an HloModule", *line_column(text, start))
        if tok.type == "$END":
            # point just after the module's last text, on a real line (the caret needs one)
            at = max(len(text[:end].rstrip()), start)
            return error(f"unexpected end of input; expected {_expected(exc)}", *line_column(text, at))
        return error(f"unexpected {_describe(tok)}; expected {_expected(exc)}", *line_column(text, tok.start_pos or 0))
    if isinstance(exc, UnexpectedInput):
        return error(str(exc).splitlines()[0], getattr(exc, "line", 0) or 0, getattr(exc, "column", 0) or 0)
    return error(f"{type(exc).__name__}: {exc}")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: a big parse allocates ~10^5 long-lived objects and
    would otherwise pay for repeated full collections (~20% of the parse time)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def module_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each module's text: a new one begins at every line that starts with
    ``HloModule`` (after blanks) outside the strings and comments of the text above, so a broken
    module never hides the ones after it. Text before the first header joins the first module."""
    starts: list[int] = []
    indented: list[int] = []  # headers after blanks: a module only if no header starts a line (a string
    find = text.find  # value may hold a whole indented module, e.g. origin_recovery_table)
    pos = find("HloModule")
    while pos >= 0:
        line_start = text.rfind("\n", 0, pos) + 1
        after = text[pos + 9 : pos + 10]
        # str.find + a look around is ~10x faster than a multiline regex over a 5 MB dump
        # (a name may begin with the word, "HloModule.1": a header has a blank or line end after it)
        if not text[line_start:pos].strip(" \t") and not (after.isalnum() or (after and after in "_.-")):
            (starts if line_start == pos else indented).append(line_start)
        pos = find("HloModule", pos + 9)
    if not starts:
        starts = indented
    if len(starts) > 1:  # rare: most texts hold one module
        starts = _outside_strings(text, starts)
    bounds = [0, *starts[1:], len(text)]
    return list(pairwise(bounds))


# Text in which every string and comment that opens also closes (a "/" that opens no comment is
# read on); where such a run stops short of its end, a string or comment opens that does not close
# before it.
_CLOSED_RUN = re.compile(
    r"""(?:[^"'/]+|"[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*'|/\*.*?\*/|//[^\n]*|/(?![*/]))*""",
    re.DOTALL,
)
_STRING_OR_COMMENT = re.compile(
    r""""[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*'|/\*.*?\*/""",
    re.DOTALL,
)


def _outside_strings(text: str, starts: list[int]) -> list[int]:
    """The first of ``starts`` and those after it that lie outside every string and block comment
    (a multi-line backend_config or frontend attribute may hold a line starting with ``HloModule``).
    A string left open to the end of the text is no string: the header after it still begins a
    module. Each character is read once, from the first header on."""
    kept = [starts[0]]
    pos = starts[0]  # read up to here; outside any string
    for start in starts[1:]:
        if start < pos:  # inside the string that the last one was found in
            continue
        run = _CLOSED_RUN.match(text, pos, start)
        if run is not None and run.end() < start:
            opened = _STRING_OR_COMMENT.match(text, run.end())
            if opened is not None:  # it closes past the header: the header is inside it
                pos = opened.end()
                continue
        kept.append(start)
        pos = start
    return kept


def parse_syntax_each(text: str, source: str = "<string>", defer: Any = None) -> list[Module | ParseError]:
    """Parse every module of ``text`` on its own (without linking, see ``validate.link``): a
    Module, or the ParseError of that module's first syntax problem, per module span.

    ``defer``: what keeps bodies to read later (``hlo.deferred.DeferredBodies``): called with the
    text, its line index and the current analysis context, it is told each body the direct reader
    finds (``found``) and becomes the ``deferred`` of a module that has bodies not read."""
    _state.text = text
    _state.lines = LineIndex(text)
    _state.defer = None if defer is None else defer(text, _state.lines, current())
    _state.body = None
    out: list[Module | ParseError] = []
    try:
        with gc_paused():
            _parse_spans(text, source, out)
    finally:
        _state.defer = _state.body = None
    return out


class DeferredReadError(Exception):
    """A deferred body that does not read as an eager read would have read it (the caller reads
    the whole text again, eagerly: that read words any error)."""


def read_deferred_body(start: int, close: int, text: str, lines: LineIndex) -> list[Instruction]:
    """The instructions of the computation body ``text[start:close]``, read as
    the eager read reads them (positions, metadata), in the analysis context current at the read
    (the caller's: the parse memos then share objects as one read does). Raises DeferredReadError
    where a body is not clean (as ``_check_written_operand_shapes`` finds) or needs what only a
    whole-module read gives (inline computations, nested instructions' names, shapes to infer,
    async sugar)."""
    _reset_module_state()
    _state.text, _state.lines, _state.fast, _state.defer, _state.body = text, lines, True, None, None
    try:
        instructions: list[Instruction] = read_body(Source(text, start, close), _BUILDER)
        if (
            _state.pending
            or _state.anon
            or any(i.shape is UNKNOWN_SHAPE for i in instructions)
            or any(async_sugar(op) for op in set(map(_OPCODE, instructions)) if op not in XLA_OPCODES)
        ):
            raise DeferredReadError
        if _state.shaped:  # the operand lists not written as defined, checked as a whole read checks them
            alone = Module("")
            alone.computations.append(Computation("", instructions))
            _check_written_operand_shapes(alone)
    except DeferredReadError:
        raise
    except Exception:  # noqa: BLE001  declined, invalid or worse: the eager read decides, and words it
        raise DeferredReadError from None
    finally:
        _state.text = _state.lines = None
        _reset_module_state()
    _place(instructions, lines.newlines)
    return instructions


def resolve_source_locations(module: Module, computation: Computation) -> None:
    """``computation``'s metadata given their stack-frame locations, as a read of the module gives."""
    if module.stack_frames:
        _resolve_source_locations(module, (computation,))


def _parse_spans(text: str, source: str, out: list[Module | ParseError]) -> None:
    try:
        for start, end in module_spans(text):
            try:
                modules = _parse_module_text(Source(text, start, end))
            except RecursionError:
                out.append(
                    ParseError(with_source(error("input nested too deeply", *line_column(text, start)), text, source))
                )
                continue
            except Exception as e:
                if not isinstance(e, _syntax_errors()):
                    raise
                out.append(ParseError(with_source(_syntax_diagnostic(e, text, start, end), text, source)))
                continue
            for m in modules:
                m.source = source
            out.extend(modules)
    finally:
        _state.pending = []
        _state.text = _state.lines = None


def _parse_module_text(source: Source) -> list[Module]:
    """The modules of one module span: read directly when the text is of the common shape, else
    (and to word any error) by the grammar, from a fresh start."""
    _reset_module_state()
    _state.fast = True
    try:
        return cast("list[Module]", read_module(source, _BUILDER))
    except Exception:  # noqa: BLE001  declined or invalid: the grammar decides, and words the error
        pass
    finally:
        _state.fast = False
    _reset_module_state()
    _state.defer = _state.body = None  # the grammar reads every body now
    return cast("list[Module]", _lark().parse(source, start="start"))


def parse_syntax(text: str, source: str = "<string>") -> list[Module]:
    """Parse text into modules without linking operands (see ``validate.link``).

    Raises ParseError for the first module with a syntax problem.
    """
    modules = []
    for item in parse_syntax_each(text, source):
        if isinstance(item, ParseError):
            raise item
        modules.append(item)
    return modules


def parse_shape(text: str) -> Shape:
    """A shape as HLO writes it: ``f32[8,<=4]{1,0:T(8,128)}``, ``(s32[], (f32[2]))``, ``token[]``.

    Raises ParseError whose diagnostic has the 1-based line and column of the problem.
    """
    _reset_module_state()
    try:
        return cast(Shape, read_shape(Source(text), _BUILDER))
    except Exception:  # noqa: BLE001  declined or invalid: the grammar decides, and words the error
        pass
    from lark.exceptions import UnexpectedInput, UnexpectedToken

    try:
        return cast(Shape, _lark().parse(Source(text), start="shape"))
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            d = error(
                "empty shape" if not text.strip() else "shape ends too early (unclosed '(')",
                *line_column(text, len(text.rstrip())),
            )
        else:
            d = error(f"unexpected {_describe(tok)} in a shape", *line_column(text, tok.start_pos or 0))
        raise ParseError(with_source(d, text, "<shape>")) from None
    except (LexError, _Failure, UnexpectedInput) as e:
        raise ParseError(with_source(_syntax_diagnostic(e, text), text, "<shape>")) from None
    except RecursionError:
        raise ParseError(with_source(error("shape nested too deeply", 1, 1), text, "<shape>")) from None
