"""The text form of maps: printer and parser for XLA's indexing-map syntax, and an MLIR
``affine_map<...>`` printer.

Syntax (print -> parse is the identity)::

    (d0, d1)[s0]{rt0} -> (d0 floordiv 8, s0 + rt0), domain: d0 in [0, 31], d1 in [0, 7],
        s0 in [0, 3], rt0 in [0, 9], d0 mod 2 in [0, 0]

``[]`` / ``{}`` are omitted when there are no range / runtime variables; constraints follow the
variable bounds in the map's (deterministic) order. Special maps print as ``KNOWN EMPTY`` and
``UNDEFINED: <reason>``; ``(d0, d1) -> (3 results): KNOWN EMPTY`` also reads as KNOWN EMPTY and
keeps the dimension and result counts (``m.to_string(known_empty_arity=True)`` prints it). The
parser also accepts the spec's juxtaposed products (``16d0``), custom variable names declared in
the header, multi-line text, a trailing ``is_simplified: true|false`` field (ignored), XLA's newer
``/`` for ``floordiv`` and negative floordiv/ceildiv divisors (``x / -3`` reads as ``(-x) floordiv 3``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .expr import CEILDIV, CONST, DIM, FLOORDIV, MOD, RANGE, RUNTIME, SUM, Expr, NonAffineError, variable
from .interval import Interval
from .text_reader import read_expr, read_map

if TYPE_CHECKING:
    from .indexing_map import IndexingMap

_PREFIX = {DIM: "d", RANGE: "s", RUNTIME: "rt"}
_OPERATOR = {FLOORDIV: "floordiv", CEILDIV: "ceildiv", MOD: "mod"}


class MapSyntaxError(ValueError):
    """Unreadable map text; ``column`` is 1-based, ``text`` the offending input."""

    def __init__(self, message: str, text: str, column: int) -> None:
        super().__init__(f"{message} at column {column}")
        self.message = message
        self.text = text
        self.column = column

    def caret_display(self) -> str:
        """The offending line with a caret under the column (for CLI diagnostics)."""
        line_start = self.text.rfind("\n", 0, self.column - 1) + 1
        line_end = self.text.find("\n", self.column - 1)
        line = self.text[line_start : None if line_end < 0 else line_end]
        return f"{line}\n{' ' * (self.column - 1 - line_start)}^"


# ------------------------------------------------------------------------------- printer
def _var_name(e: Expr, names: Callable[[Expr], str] | None) -> str:
    if names is not None:
        return names(e)
    return f"{_PREFIX[e.kind]}{e.value}"


def format_expr(e: Expr, names: Callable[[Expr], str] | None = None) -> str:
    """XLA/MLIR style text of an expression. ``names(var) -> str`` overrides variable names."""
    kind = e.kind
    if kind == CONST:
        return str(e.value)
    if kind == SUM:
        parts: list[str] = []
        for atom, k in e.terms:
            text = _format_atom(atom, names, parenthesize=abs(k) != 1)
            if not parts:
                if k == 1:
                    parts.append(text)
                elif k == -1:
                    parts.append("-" + _format_atom(atom, names, parenthesize=True))
                else:
                    parts.append(f"{text} * {k}")
            elif k == 1:
                parts.append(f" + {text}")
            elif k == -1:
                parts.append(f" - {text}")
            elif k > 0:
                parts.append(f" + {text} * {k}")
            else:
                parts.append(f" - {text} * {-k}")
        if e.value > 0:
            parts.append(f" + {e.value}")
        elif e.value < 0:
            parts.append(f" - {-e.value}")
        return "".join(parts)
    return _format_atom(e, names, parenthesize=False)


def _format_atom(e: Expr, names: Callable[[Expr], str] | None, parenthesize: bool) -> str:
    kind = e.kind
    if kind == CONST:
        return str(e.value) if e.value >= 0 or not parenthesize else f"({e.value})"
    if kind in _PREFIX:
        return _var_name(e, names)
    if kind == SUM:
        return f"({format_expr(e, names)})"
    operand = e.operand
    inner = format_expr(operand, names)
    if operand.kind == SUM or operand.kind in _OPERATOR:
        inner = f"({inner})"
    text = f"{inner} {_OPERATOR[kind]} {e.value}"
    return f"({text})" if parenthesize else text


def format_map(m: IndexingMap, field_separator: str = ", ", known_empty_arity: bool = False) -> str:
    """XLA text of ``m``. KNOWN EMPTY prints as XLA does, without its dimension and result
    counts, unless ``known_empty_arity``: ``(d0, d1) -> (3 results): KNOWN EMPTY`` (parsed back
    by :func:`parse_map` with the counts)."""
    if m.is_undefined:
        return f"UNDEFINED: {m.undefined_reason}"
    if m.is_known_empty:
        if not known_empty_arity:
            return "KNOWN EMPTY"
        dims = ", ".join(f"d{i}" for i in range(m.num_dims))
        noun = "result" if m.num_results == 1 else "results"
        return f"({dims}) -> ({m.num_results} {noun}): KNOWN EMPTY"
    header = "(" + ", ".join(f"d{i}" for i in range(m.num_dims)) + ")"
    if m.range_vars:
        header += "[" + ", ".join(f"s{i}" for i in range(len(m.range_vars))) + "]"
    if m.runtime_vars:
        header += "{" + ", ".join(f"rt{i}" for i in range(len(m.runtime_vars))) + "}"
    text = header + " -> (" + ", ".join(format_expr(e) for e in m.results) + ")"
    items = [f"d{i} in [{b.lo}, {b.hi}]" for i, b in enumerate(m.dims)]
    items += [f"s{i} in [{b.lo}, {b.hi}]" for i, b in enumerate(m.range_vars)]
    items += [f"rt{i} in [{v.interval.lo}, {v.interval.hi}]" for i, v in enumerate(m.runtime_vars)]
    items += [f"{format_expr(e)} in [{b.lo}, {b.hi}]" for e, b in m.constraints]
    if items:
        text += field_separator + "domain:" + (" " if field_separator == ", " else field_separator)
        text += field_separator.join(items)
    return text


def format_mlir(m: IndexingMap) -> str:
    """MLIR ``affine_map<(d0, ...)[s0, ...] -> (...)>``; runtime variables become the symbols
    after the range variables, and the domain (bounds, constraints) is dropped."""
    if m.is_undefined or m.is_known_empty:
        raise ValueError(f"{format_map(m)} has no affine_map form")
    n_range = len(m.range_vars)

    def names(v: Expr) -> str:
        if v.kind == DIM:
            return f"d{v.value}"
        return f"s{v.value if v.kind == RANGE else n_range + v.value}"

    n_symbols = n_range + len(m.runtime_vars)
    dims = ", ".join(f"d{i}" for i in range(m.num_dims))
    symbols = "[" + ", ".join(f"s{i}" for i in range(n_symbols)) + "]" if n_symbols else ""
    results = ", ".join(format_expr(e, names) for e in m.results)
    return f"affine_map<({dims}){symbols} -> ({results})>"


# -------------------------------------------------------------------------------- parser
_TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<arrow>->)"
    r"|(?P<punct>[()\[\]{},:+\-*/]))"
)
_KEYWORDS = {"floordiv": FLOORDIV, "ceildiv": CEILDIV, "mod": MOD}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None:
                rest = text[pos:]
                if not rest.strip():
                    break
                column = pos + len(rest) - len(rest.lstrip()) + 1
                raise MapSyntaxError(f"unexpected character {text[column - 1]!r}", text, column)
            kind = m.lastgroup
            assert kind is not None  # every alternative of _TOKEN is a named group
            self.tokens.append((kind, m.group(kind), m.start(kind) + 1))
            pos = m.end()
        self.tokens.append(("end", "", len(text.rstrip()) + 1))
        self.i = 0
        self.scope: dict[str, Expr] = {}

    # token helpers
    def peek(self, offset: int = 0) -> tuple[str, str, int]:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def error(self, message: str, token: tuple[str, str, int] | None = None) -> MapSyntaxError:
        token = token or self.peek()
        shown = token[1] or "end of input"
        return MapSyntaxError(f"{message}, found {shown!r}", self.text, token[2])

    def accept(self, value: str) -> bool:
        kind, text, _ = self.peek()
        if kind != "end" and (text == value or (kind == "name" and text.lower() == value)):
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            raise self.error(f"expected {value!r}")

    def integer(self) -> int:
        negative = self.accept("-")
        kind, text, _ = self.peek()
        if kind != "int":
            raise self.error("expected an integer")
        self.i += 1
        return -int(text) if negative else int(text)

    # variables
    def declare(self, kind: int, closing: str) -> list[str]:
        names: list[str] = []
        if self.accept(closing):
            return names
        while True:
            k, text, _ = self.peek()
            if k != "name" or text.lower() in _KEYWORDS or text in self.scope:
                raise self.error("expected a new variable name")
            self.i += 1
            self.scope[text] = variable(kind, len(names))
            names.append(text)
            if self.accept(closing):
                return names
            self.expect(",")

    # expressions: sum of products, MLIR precedence (* floordiv ceildiv mod bind tighter)
    def expr(self) -> Expr:
        e = self.product()
        while True:
            if self.accept("+"):
                e = e + self.product()
            elif self.accept("-"):
                e = e - self.product()
            else:
                return e

    def product(self) -> Expr:
        e = self.unary()
        while True:
            token = self.peek()
            try:
                if self.accept("*"):
                    e = e * self.unary()
                elif (token[0] == "name" and token[1].lower() in _KEYWORDS) or token[1] == "/":
                    self.i += 1
                    divisor = self.unary()
                    op = FLOORDIV if token[1] == "/" else _KEYWORDS[token[1].lower()]
                    if op != MOD and divisor.kind == CONST and divisor.value < 0:
                        # x floordiv -c == (-x) floordiv c; ceildiv alike (XLA text uses these)
                        e, divisor = -e, -divisor
                    e = (
                        e.floordiv(divisor)
                        if op == FLOORDIV
                        else (e.ceildiv(divisor) if op == CEILDIV else e.mod(divisor))
                    )
                else:
                    return e
            except NonAffineError as err:
                raise MapSyntaxError(str(err), self.text, token[2]) from None

    def unary(self) -> Expr:
        if self.accept("-"):
            return -self.unary()
        kind, text, column = self.peek()
        if kind == "int":
            self.i += 1
            value = int(text)
            following = self.peek()
            # the spec writes products by juxtaposition: 16d0, 10(d1)
            if following[2] == column + len(text) and following[0] == "name" and following[1] in self.scope:
                return self.unary() * value
            return _const(value)
        if kind == "name" and text in self.scope:
            self.i += 1
            return self.scope[text]
        if self.accept("("):
            e = self.expr()
            self.expect(")")
            return e
        if kind == "name":
            raise self.error("unknown variable")
        raise self.error("expected an expression")

    def interval(self) -> Interval:
        self.expect("[")
        lo = self.integer()
        self.expect(",")
        hi = self.integer()
        self.expect("]")
        return Interval(lo, hi)


def _const(value: int) -> Expr:
    from .expr import const

    return const(value)


def parse_expr(
    text: str,
    dim_names: Sequence[str] | None = None,
    range_names: Sequence[str] | None = None,
    runtime_names: Sequence[str] | None = None,
) -> Expr:
    """Parse one expression; variables are d<i>, s<i>, rt<i> unless names are given."""
    scope = _default_scope(text, dim_names, range_names, runtime_names)
    fast = read_expr(text, scope)
    return fast if fast is not None else _parse_expr_carefully(text, scope)


def _parse_expr_carefully(text: str, scope: dict[str, Expr]) -> Expr:
    p = _Parser(text)
    p.scope.update(scope)
    e = p.expr()
    if p.peek()[0] != "end":
        raise p.error("expected the end of the expression")
    return e


def _default_scope(
    text: str, dim_names: Sequence[str] | None, range_names: Sequence[str] | None, runtime_names: Sequence[str] | None
) -> dict[str, Expr]:
    scope: dict[str, Expr] = {}
    for kind, names, prefix in ((DIM, dim_names, "d"), (RANGE, range_names, "s"), (RUNTIME, runtime_names, "rt")):
        if names is None:
            indices = {int(m.group(1)) for m in re.finditer(rf"\b{prefix}(\d+)\b", text)}
            names = [f"{prefix}{i}" for i in range(max(indices) + 1)] if indices else []
        for i, name in enumerate(names):
            scope[name] = variable(kind, i)
    return scope


def parse_map(text: str) -> IndexingMap:
    """Parse XLA indexing-map text (see the module docstring); raises :class:`MapSyntaxError`.

    Well-formed text is read by the fast reader (``text_reader.py``); the rest, and every error,
    by the careful parser below."""
    fast = read_map(text)
    return fast if fast is not None else _parse_map_carefully(text)


def _parse_map_carefully(text: str) -> IndexingMap:
    from .indexing_map import IndexingMap

    stripped = text.strip()
    if stripped.startswith("UNDEFINED"):
        rest = stripped[len("UNDEFINED") :].strip()
        return IndexingMap.undefined(rest[1:].strip() if rest.startswith(":") else rest)
    p = _Parser(text)
    if p.accept("KNOWN"):
        p.expect("EMPTY")
        _expect_end(p)
        return IndexingMap.known_empty(0, 0)
    p.expect("(")
    dim_names = p.declare(DIM, ")")
    range_names = p.declare(RANGE, "]") if p.accept("[") else []
    runtime_names = p.declare(RUNTIME, "}") if p.accept("{") else []
    p.expect("->")
    p.expect("(")
    if p.peek()[0] == "int" and p.peek(1)[1] in ("result", "results"):
        count = int(p.peek()[1])  # the arity header of a KNOWN EMPTY map
        p.i += 2
        p.expect(")")
        p.expect(":")
        p.expect("KNOWN")
        p.expect("EMPTY")
        _expect_end(p)
        return IndexingMap.known_empty(len(dim_names), count)
    results: list[Expr] = []
    if not p.accept(")"):
        while True:
            results.append(p.expr())
            if p.accept(")"):
                break
            p.expect(",")
    bounds: dict[Expr, Interval] = {}
    constraints: list[tuple[Expr, Interval]] = []
    if p.accept(","):
        p.expect("domain")
        p.expect(":")
        while p.peek()[0] != "end":
            if p.peek()[1] == "is_simplified":
                p.i += 1
                p.expect(":")
                if not (p.accept("true") or p.accept("false")):
                    raise p.error("expected true or false")
                break
            e = p.expr()
            p.expect("in")
            interval = p.interval()
            if e.is_variable and e not in bounds:
                bounds[e] = interval
            else:
                constraints.append((e, interval))
            if not p.accept(","):
                break
    _expect_end(p)
    declared = [(DIM, dim_names), (RANGE, range_names), (RUNTIME, runtime_names)]
    intervals = {}
    for kind, names in declared:
        found = []
        for i, name in enumerate(names):
            v = variable(kind, i)
            if v not in bounds:
                column = text.find(name) + 1
                raise MapSyntaxError(f"no bounds given for {name}", text, max(column, 1))
            found.append(bounds[v])
        intervals[kind] = found
    from .interval import RuntimeVar

    return IndexingMap(
        intervals[DIM], intervals[RANGE], [RuntimeVar(b, "") for b in intervals[RUNTIME]], results, constraints
    )


def _expect_end(p: _Parser) -> None:
    if p.peek()[0] != "end":
        raise p.error("expected the end of the map")
