"""A direct reader of the common shape of HLO text, over the lexer's tokens, without an LALR table.

Nearly every file is a header, computations with flat signatures, and instructions (most of them
runs of common instructions, one token per run). This reader follows exactly the grammar's rules
for that subset (``grammar/hlo.lark``) and hands each rule's children, as the grammar orders them,
to the same builder callbacks the LALR parser calls; so where it accepts, the model is the one the
grammar gives. Anything else (a full signature, a header-less module, several modules in one span)
it declines with :class:`Declined`, and then the grammar parses the text: it alone words syntax
errors and decides what is valid outside this subset.
"""

from __future__ import annotations

from typing import Any

from .lexer import FLAT_HEADER, Source, Token, scan_value, tokenize


class Declined(Exception):
    """The text is outside the subset this reader takes (or not valid): the grammar reads it."""


_END = Token("$END", "")


class _Tokens:
    """The lexer's tokens with one of lookahead, ``$END`` at the end."""

    __slots__ = ("_next", "end", "header", "text", "tok")

    def __init__(self, source: Source):
        self.text = source.text
        self.end = source.end if source.end >= 0 else len(source.text)
        self.restart(source.start)

    def restart(self, pos: int) -> None:
        """Go on with the tokens from ``pos`` (where a token ends: no bracket open, no run of
        instructions begun). Where a computation's header starts there (``FLAT_HEADER``, what
        follows a deferred body), its NAME token is made from that match (``header``), and the
        lexer started only if a token after it is asked for."""
        header = self.header = FLAT_HEADER.match(self.text, pos, self.end)
        if header is not None:
            self.tok = Token("NAME", header.group("NAME"), header.start("NAME"))
            self._next = self._resume
            return
        self._next = tokenize(Source(self.text, pos, self.end)).__next__
        self.advance()

    def _resume(self) -> Token:
        """The token after the header's NAME, from the lexer."""
        assert self.header is not None
        self._next = tokenize(Source(self.text, self.header.start("rest"), self.end)).__next__
        return self._next()

    def advance(self) -> Token:
        try:
            self.tok = self._next()
        except StopIteration:
            self.tok = _END
        return self.tok

    def take_run(self, kind: str, into: list[Any]) -> Token:
        """Append the current token and those after it while they are of ``kind`` (attributes,
        tables); returns the first token of another kind."""
        tok = self.tok
        while tok.type == kind:
            into.append(tok)
            tok = self.advance()
        return tok


def read_module(source: Source, builder: Any) -> list[Any]:
    """``start: module`` for one module's text: what the builder's ``modules`` callback returns."""
    ts = _Tokens(source)
    tok = ts.tok
    if tok.type != "HLOMODULE":
        raise Declined
    children: list[Any] = [tok]
    tok = ts.advance()
    if tok.type != "NAME":
        raise Declined
    children.append(tok)
    ts.advance()
    ts.take_run("ATTR", children)
    tok = ts.take_run("TABLE", children)
    while tok.type in ("NAME", "ENTRY"):
        children.append(_computation(ts, builder))
        tok = ts.tok
    if tok.type != "$END":
        raise Declined
    return builder.modules([builder.module(children)])  # type: ignore[no-any-return]


def read_body(source: Source, builder: Any) -> list[Any]:
    """``start: body`` (the instructions of an inline computation)."""
    ts = _Tokens(source)
    children: list[Any] = []
    while ts.tok.type != "$END":
        children.append(_instruction(ts, builder))
    return builder.body(children)  # type: ignore[no-any-return]


def read_shape(source: Source, builder: Any) -> Any:
    """``start: shape``."""
    ts = _Tokens(source)
    shape = _shape(ts, builder)
    if ts.tok.type != "$END":
        raise Declined
    return shape


def _computation(ts: _Tokens, builder: Any) -> Any:
    tok = ts.tok
    if tok.type == "NAME":
        header = ts.header
        if header is None or header.start("NAME") != tok.start_pos:
            header = FLAT_HEADER.match(ts.text, tok.start_pos or 0, ts.end)
        if header is not None:
            return _flat_computation(ts, builder, tok, header)
    children: list[Any] = []
    if tok.type == "ENTRY":
        children.append(tok)
        tok = ts.advance()
    if tok.type != "NAME":
        raise Declined
    children.append(tok)
    tok = ts.advance()
    flat = tok.type == "SIGNATURE"
    if flat:
        children.append(builder.signature([tok]))
        tok = ts.advance()
    elif tok.type == "_LPAR":
        children.append(_signature(ts, builder))
    tok = ts.take_run("ATTR", children)
    if tok.type != "_LBRACE":
        raise Declined
    return _body(ts, builder, children, (tok.start_pos or 0) + 1, flat and children[0].type != "ENTRY")


def _flat_computation(ts: _Tokens, builder: Any, name: Token, header: Any) -> Any:
    """``_computation`` where its NAME token is followed by a flat signature and the body's '{'
    (``header``: their match): the tokens those would be, read in one match (a GPU dump has
    thousands of fused computations, most of them deferred bodies that are otherwise not looked
    at)."""
    signature = Token("SIGNATURE", header.group("SIGNATURE"), header.start("SIGNATURE"))
    return _body(ts, builder, [name, builder.signature([signature])], header.end(), True)


def _body(ts: _Tokens, builder: Any, children: list[Any], brace: int, deferrable: bool) -> Any:
    """A computation's body from just after its '{' at ``brace``, its closing '}' and the
    attributes after it, added to ``children`` (its header's); a body the builder reads later
    (``hlo.deferred``, where ``deferrable``) is skipped to its closing brace."""
    close = builder.body_close(ts.text, brace, ts.end, deferrable)
    if close is not None:
        ts.restart(close + 1)
    else:
        ts.restart(brace)
        while ts.tok.type != "_RBRACE":
            children.append(_instruction(ts, builder))
        ts.advance()
    ts.take_run("ATTR", children)
    return builder.computation(children)


def _signature(ts: _Tokens, builder: Any) -> Any:
    """``_LPAR [parameter (_COMMA parameter)*] _RPAR _ARROW shape``, ``parameter: NAME _COLON? shape``."""
    children: list[Any] = []
    tok = ts.advance()
    if tok.type == "_RPAR":
        children.append(None)
    else:
        while True:
            if tok.type != "NAME":
                raise Declined
            name = tok
            if ts.advance().type == "_COLON":
                ts.advance()
            children.append(builder.parameter([name, _shape(ts, builder)]))
            tok = ts.tok
            if tok.type == "_RPAR":
                break
            if tok.type != "_COMMA":
                raise Declined
            tok = ts.advance()
    if ts.advance().type != "_ARROW":
        raise Declined
    ts.advance()
    children.append(_shape(ts, builder))
    return builder.signature(children)


def _instruction(ts: _Tokens, builder: Any) -> Any:
    tok = ts.tok
    kind = tok.type
    if kind == "INSTRS":
        ts.advance()
        return builder.instruction([tok])
    children: list[Any] = [tok]
    if kind == "INSTR":
        tok = ts.advance()
    elif kind in ("DEF", "ROOT_DEF"):
        tok = ts.advance()
        if tok.type == "SHAPE":
            children.append(tok)
            tok = ts.advance()
        elif tok.type in ("_LPAR", "_BUFFER"):
            children.append(_result_shape(ts, builder))
            tok = ts.tok
        if tok.type != "OPCALL":
            raise Declined
        children.append(tok)
        tok = ts.advance()
    else:
        raise Declined
    ts.take_run("ATTR", children)
    return builder.instruction(children)


def _result_shape(ts: _Tokens, builder: Any) -> Any:
    """A tuple or buffer result shape, read as one text (through the builder's memo of such texts:
    a dump writes the same few many times); the tokens go on after it."""
    tok = ts.tok
    start = tok.start_pos or 0
    try:
        end = scan_value(ts.text, start + len(tok.value), 1, ts.end)  # just after the matching ')'
    except ValueError:
        raise Declined from None
    shape = builder.composite_shape(ts.text[start:end])
    ts.restart(end)
    return shape


def _shape(ts: _Tokens, builder: Any) -> Any:
    """``?shape``: an array, tuple or buffer shape, through the builder's shape callbacks."""
    tok = ts.tok
    kind = tok.type
    if kind == "SHAPE":
        ts.advance()
        return builder.array_shape([tok])
    if kind == "_BUFFER":
        ts.advance()
        inner = _shape(ts, builder)
        if ts.tok.type != "_RPAR":
            raise Declined
        ts.advance()
        return builder.buffer_shape([inner])
    if kind != "_LPAR":
        raise Declined
    tok = ts.advance()
    if tok.type == "_RPAR":
        ts.advance()
        return builder.tuple_shape([None])
    items = []
    while True:
        items.append(_shape(ts, builder))
        tok = ts.tok
        if tok.type == "_RPAR":
            ts.advance()
            return builder.tuple_shape(items)
        if tok.type != "_COMMA":
            raise Declined
        ts.advance()
