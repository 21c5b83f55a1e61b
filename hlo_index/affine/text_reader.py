"""The fast reader of map text: one regular-expression split into tokens, then one loop over them.

Why a second reader: the careful parser in ``text.py`` costs about a microsecond per character
(a method call per token, and a sum rebuilt and re-interned at every ``+``), which made reading a
map dearer than simplifying it. Here each sum is collected as ``constant + coefficient * atom``
and built once, when its parenthesis closes or its expression ends; products and divisions by
constants fold on the way.

This reader only reads well-formed text. On anything it does not expect it gives up (returns
None) and the careful parser reads the text again: it accepts the rarer spellings (keywords in
capitals, ``KNOWN EMPTY``, ``UNDEFINED``) and reports errors with their column. Both readers give
the same map on every text the fast one accepts (tests/affine/test_text_reader.py checks it).
"""
from __future__ import annotations

import re
from .expr import (CEILDIV, CONST, DIM, FLOORDIV, MOD, RANGE, RUNTIME, SUM, Expr, ceildiv,
                   floordiv, make_sum, mod, scale, variable)
from .interval import Interval, RuntimeVar

from .indexing_map import IndexingMap

# Tokens are split by spacing out the punctuation (str.replace and str.split run in C, several
# times faster than a regular expression's findall here). A word the loop does not know (an
# unknown character sticks to its word) makes it give up.
_PUNCTUATION = tuple((c, f" {c} ") for c in "()[]{},:+*/-")
_ARROW = "\x01"  # stands for "->" while "-" is spaced out; text holding it is left to the parser
_JUXTAPOSED = re.compile(r"(\d+)(.*)")
_DIVISIONS = {"floordiv": FLOORDIV, "ceildiv": CEILDIV, "mod": MOD, "/": FLOORDIV}
_MULTIPLY = 0
# names the careful parser would read as something else than a new variable
_RESERVED = {"floordiv", "ceildiv", "mod", "in", "domain", "is_simplified", "known", "undefined"}
_END = ""  # sentinel after the last token; the regular expression never yields an empty token
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


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
        self.values: dict[tuple, tuple] = {}

    def closing(self, i: int) -> int:
        if self._closing is None:
            tokens, closing, opened = self.tokens, {}, []
            for j in [j for j, t in enumerate(tokens) if t == "(" or t == ")"]:
                if tokens[j] == "(":
                    opened.append(j)
                else:
                    closing[opened.pop()] = j
            if opened:
                raise _GiveUp
            self._closing = closing
        return self._closing[i]


def read_map(text: str) -> IndexingMap | None:
    """The map of well-formed XLA map text, or None when the careful parser must read it."""
    try:
        return _read_map(tokens_of(text))
    except (_GiveUp, IndexError, ValueError):
        return None


def read_expr(text: str, scope: dict) -> Expr | None:
    """One expression over ``scope`` (name -> variable), or None (see :func:`read_map`)."""
    try:
        tokens = tokens_of(text)
        e, i = _expression(tokens, 0, scope, _Groups(tokens))
    except (_GiveUp, IndexError, ValueError):
        return None
    return e if tokens[i] == _END else None


def _read_map(tokens: tuple[str, ...]) -> IndexingMap:
    groups = _Groups(tokens)
    scope: dict[str, Expr] = {}
    if tokens[0] != "(":
        raise _GiveUp
    i, n_dims = _declare(tokens, 1, scope, DIM, ")")
    n_range = n_runtime = 0
    if tokens[i] == "[":
        i, n_range = _declare(tokens, i + 1, scope, RANGE, "]")
    if tokens[i] == "{":
        i, n_runtime = _declare(tokens, i + 1, scope, RUNTIME, "}")
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
            if tokens[i] == "is_simplified":
                if tokens[i + 1] != ":" or tokens[i + 2] not in ("true", "false"):
                    raise _GiveUp
                i += 3
                break
            e = scope.get(tokens[i])
            if e is not None and tokens[i + 1] == "in":  # the usual item: a variable's bounds
                i += 1
            else:
                e, i = _expression(tokens, i, scope, groups)
            if tokens[i] != "in" or tokens[i + 1] != "[":
                raise _GiveUp
            i, lo = _integer(tokens, i + 2)
            if tokens[i] != ",":
                raise _GiveUp
            i, hi = _integer(tokens, i + 1)
            if tokens[i] != "]":
                raise _GiveUp
            i += 1
            if e.kind in (DIM, RANGE, RUNTIME) and e not in bounds:
                bounds[e] = Interval(lo, hi)
            else:
                constraints.append((e, Interval(lo, hi)))
            if tokens[i] != ",":
                break
            i += 1
    if tokens[i] != _END:
        raise _GiveUp
    if len(bounds) != n_dims + n_range + n_runtime:
        raise _GiveUp  # a variable without bounds: the careful parser names it
    dims = [bounds[variable(DIM, k)] for k in range(n_dims)]
    ranges = [bounds[variable(RANGE, k)] for k in range(n_range)]
    runtime = [RuntimeVar(bounds[variable(RUNTIME, k)], "") for k in range(n_runtime)]
    # every variable of the results and constraints was resolved in ``scope``, so it is declared
    return IndexingMap._from_parts(dims, ranges, runtime, results, constraints)


def _declare(tokens: tuple[str, ...], i: int, scope: dict, kind: int, closing: str) -> tuple[int, int]:
    count = 0
    if tokens[i] == closing:
        return i + 1, 0
    while True:
        name = tokens[i]
        if name in scope or not _NAME.match(name) or name.lower() in _RESERVED:
            raise _GiveUp
        scope[name] = variable(kind, count)
        count += 1
        token = tokens[i + 1]
        i += 2
        if token == closing:
            return i, count
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


def _expression(tokens: tuple[str, ...], i: int, scope: dict, groups: _Groups
                ) -> tuple[Expr, int]:
    """Read one expression from ``tokens[i]``; returns it and the index of the token after it.

    MLIR precedence: ``*``, ``floordiv``, ``ceildiv``, ``mod`` (and ``/``) bind tighter than
    ``+`` and ``-`` and associate to the left; unary minus binds tightest. The product being read
    is ``k * e`` (``e`` None: the constant ``k``); the sum being read is ``constant + sum(c *
    atom)`` in a dict, made into a node once."""
    stack: list[tuple] = []  # enclosing sums, saved at each "("
    closing, values = groups.closing, groups.values
    constant, coefficients, sign = 0, {}, 1
    k, e = 1, None
    operator = None  # pending product operator, applied to the next operand
    negate = False  # unary minus pending on the next operand
    expecting = True  # an operand comes next
    while True:
        token = tokens[i]
        i += 1
        if expecting:
            variable_ = scope.get(token)
            if variable_ is not None:
                vk, ve = 1, variable_
            elif token.isdigit():
                vk, ve = int(token), None
            elif token == "(":
                end = closing(i - 1)
                group = tokens[i:end]
                known = values.get(group)
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
                digits, name = _JUXTAPOSED.match(token).groups()
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
            elif e.kind == SUM:
                constant += factor * e.value
                for atom, c in e.terms:
                    coefficients[atom] = coefficients.get(atom, 0) + factor * c
            elif e.kind == CONST:
                constant += factor * e.value
            else:
                coefficients[e] = coefficients.get(e, 0) + factor
            if token == "+" or token == "-":
                sign = 1 if token == "+" else -1
                k, e, expecting = 1, None, True
                continue
            if token != ")" or not stack:
                if stack:
                    raise _GiveUp
                return make_sum(constant, coefficients), i - 1
            value = make_sum(constant, coefficients)
            constant, coefficients, sign, k, e, operator, negate, group = stack.pop()
            if value.kind == CONST:
                vk, ve = value.value, None
            else:
                vk, ve = 1, value
            values[group] = (vk, ve)
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
                k = k // vk if operator == FLOORDIV else (
                    -((-k) // vk) if operator == CEILDIV else k % vk)
            else:
                x = scale(e, k)
                e = floordiv(x, vk) if operator == FLOORDIV else (
                    ceildiv(x, vk) if operator == CEILDIV else mod(x, vk))
                k = 1
                if e.kind == CONST:
                    k, e = e.value, None
            operator = None
