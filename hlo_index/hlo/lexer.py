"""Tokenizer for HLO text: one compiled master regex feeding Lark's LALR parser.

Lark's own lexer is ~10x slower on big dumps, so this lexer does the lexical work and hands the
parser few, coarse tokens: a whole array shape (``f32[8,128]{1,0:T(8,128)}``), an opcode with its
raw parenthesised operand text (``add(%a, %b)``), and a whole attribute with its leading comma
(``, metadata={op_name="x" ...}``) are one token each. Their insides are interpreted later by
small cached functions (``shapes.py``, ``attributes.py``).
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_right
from collections.abc import Iterator
from typing import NamedTuple

# Where Python's re has them (3.11+), runs and repetitions are possessive ("*+"): each one here stops
# before a character that the run excludes and that the next item needs (a quote, bracket, '=', a
# blank), so giving characters back could never let the rest match, and re skips the bookkeeping
# of backtracking into them (~25% of the time of matching an instruction). Same matches either way.
_P = "+" if sys.version_info >= (3, 11) else ""
# Strings and bracketed runs are written as "unrolled loops" (a run of plain characters, then
# any number of (special piece, plain run)): Python's re is ~3x slower with a per-character alternation.
_STRING_UNROLLED = (
    r'(?:"[^"\\]*(?:\\.[^"\\]*)*"'
    r"|'[^'\\]*(?:\\.[^'\\]*)*')"
)
# A string whose closing quote has no backslash before it (nearly every string of a dump) is read
# first as a run of "not the quote": Python's re runs a one-character exclusion ~10x faster than a
# class. The unrolled form, which reads escapes, is tried only where that one cannot match (a quote
# after a backslash comes first): the forms never match the same text, so a failing match is not
# retried once per form and string (exponential in the strings of an unterminated one's tail).
_STRING = rf"""(?:"[^"]*{_P}(?<!\\)"|'[^']*{_P}(?<!\\)'|(?="[^"]*\\"|'[^']*\\'){_STRING_UNROLLED})"""
_FLAT_BRACES = rf"""\{{[^{{}}"'\n]*{_P}(?:{_STRING}[^{{}}"'\n]*{_P})*{_P}\}}"""
_FLAT_ARGS = rf"""[^()"'\n]*{_P}(?:{_STRING}[^()"'\n]*{_P})*{_P}"""  # flat operand text, strings allowed
# Operand text with parentheses nested at most two deep: tuple shapes of operands (a dump's
# get-tuple-element writes its operand's whole tuple shape), tiled layouts. Deeper text is
# brace-counted by scan_value.
_ARGS = rf"{_FLAT_ARGS}(?:\((?:{_FLAT_ARGS}(?:\({_FLAT_ARGS}\){_FLAT_ARGS})*{_P})\){_FLAT_ARGS})*{_P}"
_ATTR_NAME = rf"[A-Za-z_][\w.\-]*{_P}"
_NAME = rf"%[\w.\-]+{_P}|[A-Za-z_][\w.\-]*{_P}"
# XLA's lexer skips blanks and newlines between the element type, the dimensions and the layout; a
# '{' after the dimensions opens a layout only when an integer or ':' follows it (else it opens a body).
_SHAPE = rf"[a-z][a-z0-9]*{_P}\s*{_P}\[[^\]]*{_P}\](?:\s*\{{(?=\s*[\d:])[^{{}}]*{_P}\}})?"
# the whole text is one array shape, as the lexer reads a SHAPE token (blanks around allowed)
ARRAY_SHAPE_TEXT = re.compile(rf"\s*({_SHAPE})\s*\Z", re.ASCII)
# the whole text is a tuple of array shapes, as a dump writes one (XLA's "/*index=5*/" before every
# fifth element), and each of its elements (``findall``)
FLAT_TUPLE_SHAPE_TEXT = re.compile(
    rf"\s*\(\s*(?:{_SHAPE}\s*(?:,\s*(?:/\*index=\d+\*/)?{_SHAPE}\s*)*)?\)\s*\Z", re.ASCII
)
ARRAY_SHAPE = re.compile(_SHAPE, re.ASCII)
# a parameter is "name: shape" or, as XLA also reads it, "name shape"
_PARAM = rf"\s*(?:{_NAME})(?::\s*|\s+){_SHAPE}"
# each parameter's shape in a flat signature (group 1)
SIGNATURE_PARAMETER_SHAPE = re.compile(rf"(?:{_NAME})(?::\s*|\s+)({_SHAPE})", re.ASCII)
# One attribute whose value is flat braces, a bare word or a string: the common, fast case. The
# value's forms start with different characters; the two common ones come first (a string's form
# is not a single character test, so each value tried before it would pay for it).
FAST_ATTR = rf""",\s*{_P}({_ATTR_NAME})=\s*{_P}({_FLAT_BRACES}|[^\s,{{}}()\[\]"']+{_P}|{_STRING})(?=[\s,)}}]|$)"""
# A metadata attribute whose value is flat braces, its value (group 1): as FAST_ATTR reads one.
METADATA_ATTR = re.compile(rf""",\s*{_P}metadata=\s*{_P}({_FLAT_BRACES})(?=[\s,)}}]|$)""", re.ASCII)
# The same with named groups, for an instruction's attributes: a group in a repetition keeps its
# last capture, so the last attribute (most often the long metadata) comes out of the one match
# and is not scanned a second time when the attributes are read.
_LAST_ATTR = FAST_ATTR.replace(f"({_ATTR_NAME})", f"(?P<ikey>{_ATTR_NAME})", 1).replace(
    f"=\\s*{_P}(", f"=\\s*{_P}(?P<ivalue>", 1
)

# A tuple result shape on one line, parentheses nested at most two deep (a tuple of tuples, tiled
# layouts in a tuple): a GPU dump's multi-output fusions, async collectives and custom calls write
# one on ~10% of their ENTRY's instructions. Deeper ones are read token by token.
_TUPLE_SHAPE = rf"\([^()\n]*{_P}(?:\([^()\n]*{_P}\)[^()\n]*{_P})*{_P}\)"

# The common instruction "[ROOT] %name = f32[..]{..} opcode(operands), fast attributes" (or a
# tuple result shape in place of the array shape).
_INSTR = (
    rf"(?P<iroot>ROOT[ \t]+)?(?P<iname>{_NAME})[ \t]*{_P}=[ \t]*{_P}(?P<ishape>{_SHAPE}|{_TUPLE_SHAPE})[ \t]+{_P}"
    rf"(?P<iop>[a-z][\w.\-]*{_P})\((?P<iargs>{_ARGS})\)(?P<iattrs>(?:{_LAST_ATTR})*{_P})"
)

# A flat signature as one token "(p: f32[2], q: s32[]) -> f32[2]"; the blanks after a comma are
# _PARAM's own (a "\s*" of the comma's too would give each comma two ways to read one blank, and a
# broken parameter far down a long signature 2^n ways to fail)
_SIGNATURE = rf"\((?:{_PARAM}(?:,(?:\s*/\*index=\d+\*/)?{_PARAM})*)?\)\s*->\s*(?:{_SHAPE}|\([^()\n]*\))"

# Leading blanks are part of every match; the named group that matched is the token.
# Order matters: the first alternative that matches wins.
_MASTER = re.compile(
    r"\s*(?:"
    # the common instruction "[ROOT] %name = f32[..]{..} opcode(operands), fast attributes" as one
    # token; first, so that its groups have the numbers they have in _NEXT_INSTR (it starts with no ',',
    # so it never matches where the attribute alternatives do)
    rf"(?P<INSTR>{_INSTR})"
    rf"|(?P<ATTRS>(?:{FAST_ATTR})+)"  # one or more fast attributes, one token
    rf"|(?P<ATTR_SLOW>,\s*{_ATTR_NAME}=\s*)"  # any other value: brace-counted by scan_value
    rf"|(?P<DEF>(?:ROOT\s+)?(?:{_NAME})\s*=)"  # "ROOT %name =" / "%name ="
    rf"|(?P<SHAPE>{_SHAPE})"
    r"|(?P<BUFFER>b\()"  # a buffer shape "b(s32[2])"
    rf"|(?P<OPCALL>[a-z][\w.\-]*\({_ARGS}\))"
    r"|(?P<OPCALL_SLOW>[a-z][\w.\-]*\()"
    r"|(?P<TABLE>(?:FileNames|FunctionNames|FileLocations|StackFrames)[ \t]*(?:\r?\n[ \t]*\d+[ \t][^\n]*)*)"
    rf"|(?P<NAME>{_NAME}):?"  # XLA's "name:" (a computation or parameter name) is a name too
    r"|(?P<COMMENT>/\*.*?\*/|//[^\n]*)"
    rf"|(?P<SIGNATURE>{_SIGNATURE})"  # a whole flat signature
    r"|(?P<ARROW>->)"
    r"|(?P<PUNCT>[=(),{}:])"
    r"|(?P<END>\Z))",
    re.DOTALL | re.ASCII,  # ASCII classes, as XLA's lexer reads names and blanks (and a table lookup per character)
)
# The next token when it is a common instruction (the master's earlier alternatives start with
# ',', so where this matches the master matches the same): most of a dump is runs of these,
# read in a tight loop.
_NEXT_INSTR = re.compile(rf"\s*(?P<INSTR>{_INSTR})", re.DOTALL | re.ASCII)
# A computation's header as a dump writes one, "%name (p: f32[2]) -> f32[2] {": the NAME and
# SIGNATURE tokens and the '{' that the master pattern reads there, in one match (no alternative
# before NAME matches a '%' name without '=', none before SIGNATURE starts with '('). ``rest``:
# where the tokens after the NAME start.
FLAT_HEADER = re.compile(
    rf"\s*(?P<NAME>%[\w.\-]+{_P}):?(?P<rest>\s*(?P<SIGNATURE>{_SIGNATURE})\s*\{{)", re.DOTALL | re.ASCII
)
# The numbers of a common instruction's groups, the same in both patterns: the parser reads an
# instruction's parts by number (a group read by name costs a lookup of the name).
I_INSTR, I_ROOT, I_NAME, I_SHAPE, I_OP, I_ARGS, I_ATTRS, I_KEY, I_VALUE = (
    _NEXT_INSTR.groupindex[name]
    for name in ("INSTR", "iroot", "iname", "ishape", "iop", "iargs", "iattrs", "ikey", "ivalue")
)
assert all(_MASTER.groupindex[name] == number for name, number in _NEXT_INSTR.groupindex.items())

_STRING_RE = re.compile(_STRING_UNROLLED)
_VALUE_STOP = re.compile(r'[{}()\[\]"\',\n]')
# What changes nothing inside brackets: other characters (',' and newlines included) and flat
# [...] / {...} groups (a dimension list, a layout), skipped in one match, not one step each.
_FLAT_IN_BRACKETS = re.compile(
    rf"""(?:[^{{}}()\[\]"']+{_P}|\[[^{{}}()\[\]"']*{_P}\]|\{{[^{{}}()\[\]"']*{_P}\}})*{_P}"""
)
_PUNCT_TYPES = {"(": "_LPAR", ")": "_RPAR", ",": "_COMMA", "{": "_LBRACE", "}": "_RBRACE", ":": "_COLON", "=": "_EQUAL"}
_KEYWORDS = {"HloModule": "HLOMODULE", "ENTRY": "ENTRY", "ROOT": "ROOT"}
_OPEN = "{(["
_CLOSE = "})]"
MAX_NESTING = 256  # tuple shapes deeper than this are not real HLO; refusing keeps recursion bounded


class Token(str):
    """A token as Lark's parser reads it (``type``, ``value``, positions): the text itself, with its
    kind. Defined here so that reading the common text needs no import of Lark."""

    __slots__ = ("type", "value", "start_pos", "line", "column", "end_line", "end_column", "end_pos")
    type: str
    value: str
    start_pos: int | None
    line: int | None
    column: int | None
    end_line: int | None
    end_column: int | None
    end_pos: int | None

    def __new__(cls, type_: str, value: str, start_pos: int | None = None) -> Token:
        tok = str.__new__(cls, value)
        tok.type, tok.value, tok.start_pos = type_, value, start_pos
        tok.line = tok.column = tok.end_line = tok.end_column = tok.end_pos = None
        return tok


class InstrToken(Token):
    """An INSTR token; ``match`` is its match of the common-instruction pattern (groups ``iname``,
    ``ishape``, ``iop``, ``iargs``, ``iattrs``, and ``ikey``/``ivalue`` for the last fast
    attribute), read by the parser."""

    __slots__ = ("match",)
    match: re.Match[str]


class InstrRun(Token):
    """An INSTRS token: consecutive common instructions, ``entries`` = their matches (as an INSTR
    token's ``match``); the token's own text is the first instruction's (what an error message
    quotes)."""

    __slots__ = ("entries",)
    entries: list[re.Match[str]]


def instr_token(entry: re.Match[str]) -> InstrToken:
    """The INSTR token of one entry of an :class:`InstrRun`."""
    value = entry.group("INSTR")
    tok = str.__new__(InstrToken, value)
    tok.type, tok.value, tok.start_pos, tok.match = "INSTR", value, entry.start("INSTR"), entry
    tok.line = tok.column = tok.end_line = tok.end_column = tok.end_pos = None
    return tok


def _run_token(entries: list[re.Match[str]]) -> InstrRun:
    value = entries[0].group("INSTR")
    tok = str.__new__(InstrRun, value)
    tok.type, tok.value, tok.start_pos, tok.entries = "INSTRS", value, entries[0].start("INSTR"), entries
    tok.line = tok.column = tok.end_line = tok.end_column = tok.end_pos = None
    return tok


class RawAttr(Token):
    """An ATTR token holding exactly one attribute whose value needed bracket counting."""


class LexError(Exception):
    """A character sequence that starts no HLO token (or an unterminated bracket) at ``pos``."""

    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.message, self.pos = message, pos


class Source(NamedTuple):
    """The part ``text[start:end]`` of a file's text to tokenize; token positions stay file-absolute."""

    text: str
    start: int = 0
    end: int = -1


def line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based (line, column) of ``text[pos]``."""
    line_start = text.rfind("\n", 0, pos) + 1
    return text.count("\n", 0, pos) + 1, pos - line_start + 1


class LineIndex:
    """Fast pos → (line, column) for many positions in one text."""

    def __init__(self, text: str):
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def __call__(self, pos: int) -> tuple[int, int]:
        i = bisect_right(self.newlines, pos - 1)
        return i + 1, pos - (self.newlines[i - 1] + 1 if i else 0) + 1


# "mesh['a'=2,'b'=4], device_ids=(...) {'a'}": the comma before device_ids is inside the value
_MESH_DEVICE_IDS = re.compile(r",\s*device_ids=")


def scan_value(text: str, pos: int, depth: int = 0, n: int = -1) -> int:
    """End of a raw attribute value starting at ``pos`` (brackets counted, strings skipped).

    With ``depth=0`` the value ends at a top-level ``,``/newline or an unmatched closing
    bracket; with ``depth=1`` (just after an opening bracket) it ends after the matching one.
    """
    search = _VALUE_STOP.search
    skip = _FLAT_IN_BRACKETS.match
    if n < 0:
        n = len(text)
    i = pos
    start_depth = depth
    while True:
        if depth:
            i = skip(text, i, n).end()  # type: ignore[union-attr]  # it matches at least nothing
        m = search(text, i, n)
        if m is None:
            if depth > start_depth or start_depth:
                raise ValueError("unterminated bracket")
            return n
        j = m.start()
        c = text[j]
        if c in {'"', "'"}:
            s = _STRING_RE.match(text, j, n)
            if s is None:
                raise ValueError("unterminated string")
            i = s.end()
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            if depth == 0:
                return j
            depth -= 1
            if depth == 0 and start_depth:
                return j + 1
        elif depth == 0:  # ',' or newline at top level
            return j
        i = j + 1


def tokenize(source: Source) -> Iterator[Token]:
    """Yield Lark tokens (with ``start_pos``; lines are computed only where needed).

    Consecutive common instructions come as one INSTRS token (one parser step for the run, not
    one per instruction); an instruction followed by attributes that needed bracket counting
    stays an INSTR token, since those ATTR tokens belong to it.
    """
    text, pos, n = source
    if n < 0:
        n = len(text)
    match = _MASTER.match
    next_instr = _NEXT_INSTR.match
    str_new = str.__new__
    depth = 0
    run: list[re.Match[str]] = []  # common instructions read and not yet handed out
    tok: Token
    while True:
        m = match(text, pos, n)
        if m is None:
            while text[pos] in " \t\r\n":
                pos += 1
            raise LexError(f"unexpected character {text[pos]!r}", pos)
        kind: str = m.lastgroup  # type: ignore[assignment]  # every alternative is a named group
        end = m.end()
        start = m.start(kind)
        if kind == "INSTR":
            while m is not None:  # the parser reads each match's groups: nothing copied here
                run.append(m)
                pos = m.end()
                m = next_instr(text, pos, n)
            continue
        if kind == "COMMENT":
            pos = end
            continue
        if run:
            if kind in {"ATTRS", "ATTR_SLOW"}:  # the last instruction's own attributes
                last = run.pop()
                if run:
                    yield _run_token(run)
                yield instr_token(last)
            else:
                yield _run_token(run)
            run = []
        if kind in {"ATTR_SLOW", "OPCALL_SLOW"}:
            try:
                end = scan_value(text, end, 0 if kind == "ATTR_SLOW" else 1, n)
                if kind == "ATTR_SLOW" and text.startswith("mesh[", m.end()):
                    ids = _MESH_DEVICE_IDS.match(text, end, n)
                    if ids is not None:  # a mesh's device_ids belong to the mesh: one value
                        end = scan_value(text, ids.end(), 0, n)
            except ValueError as e:
                raise LexError(f"{e} in {m.group(kind).lstrip(', ')[:40]!r}...", start) from None
            value = text[start:end]
            if kind == "ATTR_SLOW":
                tok = str_new(RawAttr, value)
                kind = "ATTR"
            else:
                tok = str_new(Token, value)
                kind = "OPCALL"
        elif kind == "END":
            return
        else:
            value = m.group(kind)
            if kind == "ATTRS":
                kind = "ATTR"
            elif kind == "DEF":
                if value.startswith("ROOT") and value[4:5].isspace() and value[4:].strip() != "=":
                    kind = "ROOT_DEF"
            elif kind == "NAME":
                kind = _KEYWORDS.get(value, "NAME")
            elif kind == "PUNCT":
                kind = _PUNCT_TYPES[value]
                if value == "(":
                    depth += 1
                    if depth > MAX_NESTING:
                        raise LexError(f"parentheses nested deeper than {MAX_NESTING}", start)
                elif value == ")":
                    depth -= 1
            elif kind == "ARROW":
                kind = "_ARROW"
            elif kind == "BUFFER":
                kind = "_BUFFER"
                depth += 1
            tok = str_new(Token, value)
        tok.type = kind
        tok.value = value
        tok.start_pos = start
        tok.line = tok.column = tok.end_line = tok.end_column = tok.end_pos = None
        yield tok
        pos = end
