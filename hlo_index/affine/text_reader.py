"""The fast reader of map text: one regular-expression split into tokens, then one loop over them.

Why a second reader: the careful parser in ``text.py`` costs about a microsecond per character
(a method call per token, and a sum rebuilt and re-interned at every ``+``), which made reading a
map dearer than simplifying it. Here each sum is collected as ``constant + coefficient * atom``
and built once, when its expression ends; a parenthesised sum becomes no node of its own (its
terms are added into the enclosing sum, or divided as they are); products and divisions by
constants fold on the way. In long text (made by substitution) each distinct parenthesised group
is read once.

This reader only reads well-formed text. On anything it does not expect it gives up (returns
None) and the careful parser reads the text again: it accepts the rarer spellings (keywords in
capitals, ``KNOWN EMPTY``, ``UNDEFINED``) and reports errors with their column. Both readers give
the same map on every text the fast one accepts (tests/affine/test_text_reader.py checks it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeAlias

from .expr import (
    CEILDIV,
    CONST,
    DIM,
    FLOORDIV,
    MOD,
    RANGE,
    RUNTIME,
    SUM,
    Expr,
    ceildiv,
    ceildiv_of_sum,
    floordiv,
    floordiv_of_sum,
    make_sum,
    mod,
    mod_of_sum,
    scale,
    variable,
)
from .indexing_map import IndexingMap
from .interval import Interval, RuntimeVar, make_interval

# Tokens are split by spacing out the punctuation (str.replace and str.split run in C, several
# times faster than a regular expression's findall here). A word the loop does not know (an
# unknown character sticks to its word) makes it give up.
_PUNCTUATION = tuple((c, f" {c} ") for c in "()[]{},:+*/-")
_ARROW = "\x01"  # stands for "->" while "-" is spaced out; text holding it is left to the parser
_JUXTAPOSED = re.compile(r"(\d+)(.*)")

# A parenthesised sum read as (constant, [(atom, coefficient), ...]): it becomes no node of its own.
_Form: TypeAlias = tuple[int, list[tuple[Expr, int]]]
_Operand: TypeAlias = Expr | _Form | None  # None: the constant factor alone
_DIVISIONS = {"floordiv": FLOORDIV, "ceildiv": CEILDIV, "mod": MOD, "/": FLOORDIV}
_MULTIPLY = 0
# names the careful parser would read as something else than a new variable
_RESERVED = {"floordiv", "ceildiv", "mod", "in", "domain", "is_simplified", "known", "undefined"}
_END = ""  # sentinel after the last token; the regular expression never yields an empty token


class _GiveUp(Exception):
    """The text is not in the form this reader knows; the careful parser takes over."""


def tokens_of(text: str) -> tuple[str, ...]:
    if _ARROW in text:
        raise _GiveUp
    text = text.replace("->", f" {_ARROW} ")
    for c, spaced in _PUNCTUATION:
        text = text.replace(c, spaced)
    found = text.split()
    found.append(_END)
    return tuple(found)


class _Groups:
    """Where each parenthesis closes (found at the first group), and the value of each
    parenthesised group already read, keyed by its tokens: text made by substitution repeats
    groups many times, and each distinct one is read once."""

    __slots__ = ("tokens", "_closing", "values")

    def __init__(self, tokens: tuple[str, ...]) -> None:
        self.tokens = tokens
        self._closing: dict[int, int] | None = None
        self.values: dict[tuple[str, ...], tuple[int, _Operand]] = {}

    def closing(self, i: int) -> int:
        if self._closing is None:
            tokens, closing, opened = self.tokens, {}, []
            for j in [j for j, t in enumerate(tokens) if t in ("(", ")")]:
                if tokens[j] == "(":
                    opened.append(j)
                else:
                    closing[opened.pop()] = j  # IndexError when none is open: the reader gives up
            if opened:
                raise _GiveUp
            self._closing = closing
        return self._closing[i]


_MEMO_TOKENS = 128  # text made by substitution repeats groups; printed maps are shorter


def _groups(tokens: tuple[str, ...]) -> _Groups | None:
    """The group memo, for text long enough to repay finding where every parenthesis closes
    (text made by substitution); shorter text re-reads its few repeated groups."""
    return _Groups(tokens) if len(tokens) >= _MEMO_TOKENS else None


def read_map(text: str) -> IndexingMap | None:
    """The map of well-formed XLA map text, or None when the careful parser must read it."""
    try:
        return _read_map(tokens_of(text))
    except (_GiveUp, IndexError, ValueError):
        return None


def read_expr(text: str, scope: dict[str, Expr]) -> Expr | None:
    """One expression over ``scope`` (name -> variable), or None (see :func:`read_map`)."""
    try:
        tokens = tokens_of(text)
        e, i = _expression(tokens, 0, scope, _groups(tokens))
    except (_GiveUp, IndexError, ValueError):
        return None
    return e if tokens[i] == _END else None


def _read_map(tokens: tuple[str, ...]) -> IndexingMap:
    groups = _groups(tokens)
    scope: dict[str, Expr] = {}
    if tokens[0] != "(":
        raise _GiveUp
    i, dims = _declare(tokens, 1, scope, DIM, ")")
    ranges: Sequence[Expr] = ()
    runtime: Sequence[Expr] = ()
    if tokens[i] == "[":
        i, ranges = _declare(tokens, i + 1, scope, RANGE, "]")
    if tokens[i] == "{":
        i, runtime = _declare(tokens, i + 1, scope, RUNTIME, "}")
    if tokens[i] != _ARROW or tokens[i + 1] != "(":
        raise _GiveUp
    i += 2
    results = []
    if tokens[i] == ")":
        i += 1
    else:
        while True:
            e, i = _expression(tokens, i, scope, groups)
            results.append(e)
            token = tokens[i]
            i += 1
            if token == ")":
                break
            if token != ",":
                raise _GiveUp
    bounds: dict[Expr, Interval] = {}
    constraints = []
    if tokens[i] == ",":
        if tokens[i + 1] != "domain" or tokens[i + 2] != ":":
            raise _GiveUp
        i += 3
        while tokens[i] != _END:
            item: Expr | None = scope.get(tokens[i])
            if (
                item is not None
                and tokens[i + 1] == "in"
                and tokens[i + 2] == "["
                and tokens[i + 4] == ","
                and tokens[i + 6] == "]"
                and tokens[i + 3].isdigit()
                and tokens[i + 5].isdigit()
            ):
                # the usual item: a variable's bounds, both non-negative
                interval = make_interval(int(tokens[i + 3]), int(tokens[i + 5]))
                i += 7
            else:
                if tokens[i] == "is_simplified":
                    if tokens[i + 1] != ":" or tokens[i + 2] not in ("true", "false"):
                        raise _GiveUp
                    i += 3
                    break
                if item is not None and tokens[i + 1] == "in":
                    i += 1
                else:
                    item, i = _expression(tokens, i, scope, groups)
                if tokens[i] != "in" or tokens[i + 1] != "[":
                    raise _GiveUp
                i, lo = _integer(tokens, i + 2)
                if tokens[i] != ",":
                    raise _GiveUp
                i, hi = _integer(tokens, i + 1)
                if tokens[i] != "]":
                    raise _GiveUp
                i += 1
                interval = Interval(lo, hi)
            if item.kind in (DIM, RANGE, RUNTIME) and item not in bounds:
                bounds[item] = interval
            else:
                constraints.append((item, interval))
            if tokens[i] != ",":
                break
            i += 1
    if tokens[i] != _END:
        raise _GiveUp
    if len(bounds) != len(dims) + len(ranges) + len(runtime):
        raise _GiveUp  # a variable without bounds: the careful parser names it
    # every variable of the results and constraints was resolved in ``scope``, so it is declared
    return IndexingMap._from_parts(
        [bounds[v] for v in dims],
        [bounds[v] for v in ranges],
        [RuntimeVar(bounds[v], "") for v in runtime],
        results,
        constraints,
    )


def _declare(
    tokens: tuple[str, ...], i: int, scope: dict[str, Expr], kind: int, closing: str
) -> tuple[int, list[Expr]]:
    """Read the names of one bracket of the header; returns the index after it and its variables."""
    declared: list[Expr] = []
    if tokens[i] == closing:
        return i + 1, declared
    while True:
        name = tokens[i]
        # an ASCII identifier ([A-Za-z_][A-Za-z0-9_]*), new, and no keyword of the careful parser
        if name in scope or not (name.isidentifier() and name.isascii()) or name.lower() in _RESERVED:
            raise _GiveUp
        scope[name] = v = variable(kind, len(declared))
        declared.append(v)
        token = tokens[i + 1]
        i += 2
        if token == closing:
            return i, declared
        if token != ",":
            raise _GiveUp


def _integer(tokens: tuple[str, ...], i: int) -> tuple[int, int]:
    token = tokens[i]
    if token == "-":
        token = tokens[i + 1]
        if not token.isdigit():
            raise _GiveUp
        return i + 2, -int(token)
    if not token.isdigit():
        raise _GiveUp
    return i + 1, int(token)


def _expression(tokens: tuple[str, ...], i: int, scope: dict[str, Expr], groups: _Groups | None) -> tuple[Expr, int]:
    """Read one expression from ``tokens[i]``; returns it and the index of the token after it.

    MLIR precedence: ``*``, ``floordiv``, ``ceildiv``, ``mod`` (and ``/``) bind tighter than
    ``+`` and ``-`` and associate to the left; unary minus binds tightest. The product being read
    is ``k * e``: ``e`` is None (the constant ``k``), a node, or the *form* ``(constant,
    [(atom, coefficient), ...])`` of a parenthesised sum, which becomes no node of its own: it is
    added term by term into the enclosing sum, or divided as it is (``floordiv_of_sum``). The sum
    being read is ``constant + sum(c * atom)`` in a dict, made into a node once."""
    # enclosing sums, saved at each "(": constant, coefficients, sign, k, e, operator, negate, group
    stack: list[tuple[int, dict[Expr, int], int, int, _Operand, int | None, bool, tuple[str, ...] | None]] = []
    coefficients: dict[Expr, int] = {}
    constant, sign = 0, 1
    e: _Operand
    ve: _Operand  # the operand just read, as (vk, ve) like (k, e)
    k, e = 1, None
    operator: int | None = None  # pending product operator, applied to the next operand
    negate = False  # unary minus pending on the next operand
    expecting = True  # an operand comes next
    while True:
        token = tokens[i]
        i += 1
        if expecting:
            ve = scope.get(token)
            if ve is not None:
                vk = 1
            elif token.isdigit():
                vk, ve = int(token), None
            elif token == "(":
                group = known = None
                if groups is not None:
                    end = groups.closing(i - 1)
                    group = tokens[i:end]
                    known = groups.values.get(group)
                if known is None:
                    stack.append((constant, coefficients, sign, k, e, operator, negate, group))
                    constant, coefficients, sign = 0, {}, 1
                    k, e, operator, negate = 1, None, None, False
                    continue
                vk, ve = known
                i = end + 1
            elif token == "-":
                negate = not negate
                continue
            elif token[:1].isdigit():  # 16d0
                digits, name = _JUXTAPOSED.match(token).groups()  # type: ignore[union-attr]  # starts with a digit
                ve = scope.get(name)
                if ve is None:
                    raise _GiveUp
                vk = int(digits)
            else:
                raise _GiveUp
        else:
            if token == "*":
                operator = _MULTIPLY
                expecting = True
                continue
            division = _DIVISIONS.get(token)
            if division is not None:
                operator = division
                expecting = True
                continue
            # the product ends: add sign * k * e to the sum
            factor = sign * k
            if e is None:
                constant += factor
            elif e.__class__ is tuple:  # a group's form
                constant += factor * e[0]
                for atom, c in e[1]:
                    coefficients[atom] = coefficients.get(atom, 0) + factor * c
            else:
                node: Expr = e  # type: ignore[assignment]  # not a form: its class was tested above
                if node.kind == SUM:
                    constant += factor * node.value
                    for atom, c in node.terms:
                        coefficients[atom] = coefficients.get(atom, 0) + factor * c
                elif node.kind == CONST:
                    constant += factor * node.value
                else:
                    coefficients[node] = coefficients.get(node, 0) + factor
            if token in ("+", "-"):
                sign = 1 if token == "+" else -1
                k, e, expecting = 1, None, True
                continue
            if token != ")" or not stack:
                if stack:
                    raise _GiveUp
                return make_sum(constant, coefficients), i - 1
            # a group closes: a constant, k * atom, or else its form
            items = [item for item in coefficients.items() if item[1]]
            if not items:
                vk, ve = constant, None
            elif constant == 0 and len(items) == 1:
                ve, vk = items[0]
            else:
                vk, ve = 1, (constant, items)
            constant, coefficients, sign, k, e, operator, negate, group = stack.pop()
            if group is not None:
                groups.values[group] = (vk, ve)  # type: ignore[union-attr]  # a group is read only with groups
        # an operand (vk, ve) is read: apply the pending unary minus and product operator
        if negate:
            vk = -vk
            negate = False
        expecting = False
        if operator is None:
            k, e = vk, ve
        elif operator == _MULTIPLY:
            if ve is None:
                k *= vk
            elif e is None:
                k *= vk
                e = ve
            else:
                raise _GiveUp  # a non-affine product: the careful parser reports it
            operator = None
        else:
            if ve is not None:
                raise _GiveUp  # division by a non-constant
            if vk <= 0:
                if vk == 0 or operator == MOD:
                    raise _GiveUp
                vk, k = -vk, -k  # x floordiv -c == (-x) floordiv c, ceildiv alike
            if e is None:
                k = k // vk if operator == FLOORDIV else (-((-k) // vk) if operator == CEILDIV else k % vk)
            else:
                e = _divide(k, e, operator, vk)
                k = 1
                if e.kind == CONST:
                    k, e = e.value, None
            operator = None


def _divide(k: int, e: Expr | _Form, operator: int, c: int) -> Expr:
    """``(k * e) floordiv / ceildiv / mod c`` for a node or a group's form ``e``, ``c > 0``."""
    if e.__class__ is tuple:
        constant, items = e
        if k != 1:
            constant, items = constant * k, [(atom, j * k) for atom, j in items]
        if c > 1:
            return (
                floordiv_of_sum(constant, items, c)
                if operator == FLOORDIV
                else (ceildiv_of_sum(constant, items, c) if operator == CEILDIV else mod_of_sum(constant, items, c))
            )
        x = make_sum(constant, dict(items))
    else:
        x = scale(e, k)  # type: ignore[arg-type]  # not a form: its class was tested above
    return floordiv(x, c) if operator == FLOORDIV else (ceildiv(x, c) if operator == CEILDIV else mod(x, c))
