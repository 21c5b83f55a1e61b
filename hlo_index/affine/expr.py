"""Affine expressions: immutable, hash-consed, kept in a canonical sum-of-products normal form.

An expression is one of

* a constant;
* an *atom*: a dimension ``d<i>``, a range variable ``s<i>``, a runtime variable ``rt<i>``, or
  ``x floordiv c`` / ``x ceildiv c`` / ``x mod c`` of a sub-expression ``x`` and a constant
  ``c > 0``;
* a *sum*: a constant plus atoms with non-zero integer coefficients, atoms in a fixed order.

Multiplication is only by constants. Every node carries an injective integer *key* describing its
structure; nodes are interned by key, so equal structure gives the same object and ``==``/``hash``
are O(1). Construction folds what needs no variable ranges: constants, like terms, ``x * 1``,
``x + 0``, exact multiples out of floordiv/ceildiv/mod, common factors (gcd), nested floordiv
``(x floordiv a) floordiv b -> x floordiv (a*b)``, ``(x mod a*b) floordiv a -> (x floordiv a) mod b``
and ``(x mod m) mod c -> x mod c`` when ``c`` divides ``m``. Range-aware rewrites live in
``simplify.py``.

Floor semantics throughout: ``floordiv`` rounds toward -inf and ``mod`` takes the sign of the
(always positive) divisor, exactly Python's ``//`` and ``%``; ``x ceildiv c == -((-x) floordiv c)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from math import gcd
from typing import SupportsIndex, TypeAlias, Union

from ..context import _ACTIVE, current

# Node kinds. The numeric order is the canonical order of atoms inside a sum: dimensions, range
# variables, runtime variables, then floordiv, ceildiv and mod atoms.
CONST, DIM, RANGE, RUNTIME, FLOORDIV, CEILDIV, MOD, SUM = range(8)
VARIABLE_KINDS = (DIM, RANGE, RUNTIME)
DIVISION_KINDS = (FLOORDIV, CEILDIV, MOD)

# A node's structural key: a nested tuple of ints (see ``Expr.key``).
Key: TypeAlias = tuple[Union[int, "Key"], ...]

# The intern table belongs to the analysis context (``hlo_index.context``): nodes of one context
# are unique there; nodes of different contexts still compare equal by key.


_NO_VARIABLES: frozenset[Expr] = frozenset()


class NonAffineError(ValueError):
    """An operation would leave affine arithmetic (a product of two non-constant expressions,
    a division by a non-constant or non-positive value)."""


class Expr:
    """One uniqued node. Build expressions with :func:`dim`, :func:`range_var`,
    :func:`runtime_var`, :func:`const` and the operators; never call the class directly."""

    __slots__ = ("kind", "value", "operand", "terms", "key", "_hash", "_variables", "__weakref__")

    kind: int
    value: int  # constant value, variable index, divisor, or the constant part of a sum
    # The sub-expression of floordiv / ceildiv / mod, read only under those kinds (other nodes hold
    # None there, see ``_new``); typed for the readers, which test the kind, not the operand.
    operand: Expr
    terms: tuple[tuple[Expr, int], ...]  # ((atom, coefficient), ...) of a sum, canonical order; () otherwise
    # Injective structural key, also the canonical sort key. Children's keys are nested (not
    # copied), so building a key is O(children); every key is a prefix-free preorder code, so
    # comparing nested keys orders exactly like comparing their flattened forms.
    key: Key
    _hash: int
    _variables: frozenset[Expr] | None  # ``variables()``, once asked

    # ----------------------------------------------------------------------------- identity
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        # Equal keys mean equal structure even across clear_caches().
        return isinstance(other, Expr) and self.key == other.key

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Callable[[str], Expr], tuple[str]]:
        return (_from_text, (str(self),))

    # --------------------------------------------------------------------------- properties
    @property
    def is_constant(self) -> bool:
        return self.kind == CONST

    @property
    def constant_value(self) -> int:
        if self.kind != CONST:
            raise ValueError(f"{self} is not a constant")
        return self.value

    @property
    def is_variable(self) -> bool:
        return self.kind in VARIABLE_KINDS

    @property
    def is_atom(self) -> bool:
        return self.kind not in (CONST, SUM)

    def linear_terms(self) -> tuple[int, tuple[tuple[Expr, int], ...]]:
        """``(constant, ((atom, coefficient), ...))`` view of any expression."""
        if self.kind == SUM:
            return self.value, self.terms
        if self.kind == CONST:
            return self.value, ()
        return 0, ((self, 1),)

    def variables(self) -> frozenset[Expr]:
        """Every dimension / range / runtime variable occurring in the expression (computed once
        per node: nodes are immutable, and composition and variable elimination ask again and again)."""
        found = self._variables
        if found is None:
            kind = self.kind
            if kind in VARIABLE_KINDS:
                found = frozenset((self,))
            elif kind == SUM:
                found = frozenset().union(*[atom.variables() for atom, _ in self.terms])
            elif kind == CONST:
                found = _NO_VARIABLES
            else:
                found = self.operand.variables()
            self._variables = found
        return found

    def count_divisions(self) -> int:
        """Number of floordiv / ceildiv / mod nodes (shared sub-expressions counted per use)."""
        if self.kind in DIVISION_KINDS:
            return 1 + self.operand.count_divisions()
        if self.kind == SUM:
            return sum(atom.count_divisions() for atom, _ in self.terms)
        return 0

    # ---------------------------------------------------------------------------- operators
    def __add__(self, other: Expr | SupportsIndex) -> Expr:
        return add(self, _as_expr(other))

    __radd__ = __add__

    def __sub__(self, other: Expr | SupportsIndex) -> Expr:
        return add(self, scale(_as_expr(other), -1))

    def __rsub__(self, other: Expr | SupportsIndex) -> Expr:
        return add(_as_expr(other), scale(self, -1))

    def __neg__(self) -> Expr:
        return scale(self, -1)

    def __pos__(self) -> Expr:
        return self

    def __mul__(self, other: Expr | SupportsIndex) -> Expr:
        factor = _as_expr(other)
        if factor.kind == CONST:
            return scale(self, factor.value)
        if self.kind == CONST:
            return scale(factor, self.value)
        raise NonAffineError(f"non-affine product ({self}) * ({factor})")

    __rmul__ = __mul__

    def floordiv(self, divisor: Expr | SupportsIndex) -> Expr:
        return floordiv(self, _divisor(divisor))

    def ceildiv(self, divisor: Expr | SupportsIndex) -> Expr:
        return ceildiv(self, _divisor(divisor))

    def mod(self, divisor: Expr | SupportsIndex) -> Expr:
        return mod(self, _divisor(divisor))

    __floordiv__ = floordiv
    __mod__ = mod

    def __str__(self) -> str:
        from .text import format_expr

        return format_expr(self)

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


# ------------------------------------------------------------------------------- interning
def _new(kind: int, value: int, operand: Expr | None, terms: tuple[tuple[Expr, int], ...], key: Key) -> Expr:
    intern = (_ACTIVE.get() or current()).intern
    node: Expr | None = intern.get(key)
    if node is None:
        node = object.__new__(Expr)
        node.kind = kind
        node.value = value
        node.operand = operand  # type: ignore[assignment]  # None for non-divisions, see Expr.operand
        node.terms = terms
        node.key = key
        node._hash = hash(key)
        node._variables = None
        intern[key] = node
    return node


def clear_intern_table() -> None:
    """Empty the current context's intern table (existing nodes stay valid)."""
    current().intern = {}


def intern_table_size() -> int:
    return len(current().intern)


def const(value: Expr | SupportsIndex) -> Expr:
    if isinstance(value, Expr):
        return value
    v = int(value)
    return _new(CONST, v, None, (), (CONST, v))


def dim(index: int) -> Expr:
    return _new(DIM, index, None, (), (DIM, index))


def range_var(index: int) -> Expr:
    return _new(RANGE, index, None, (), (RANGE, index))


def runtime_var(index: int) -> Expr:
    return _new(RUNTIME, index, None, (), (RUNTIME, index))


def variable(kind: int, index: int) -> Expr:
    return _new(kind, index, None, (), (kind, index))


def _as_expr(value: object) -> Expr:
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise NonAffineError(f"cannot use {value!r} in an affine expression")
    return const(value.__index__())


def _divisor(value: Expr | SupportsIndex) -> int:
    if isinstance(value, Expr):
        if value.kind != CONST:
            raise NonAffineError(f"division by the non-constant {value}")
        value = value.value
    divisor = int(value)
    if divisor <= 0:
        raise NonAffineError(f"divisor must be a positive integer, got {divisor}")
    return divisor


# ---------------------------------------------------------------------------------- sums
def make_sum(constant: int, coefficients: dict[Expr, int]) -> Expr:
    """Canonical expression ``constant + sum(coefficient * atom)``; zero coefficients dropped."""
    items = list(coefficients.items())
    if 0 in coefficients.values():
        items = [item for item in items if item[1]]
    n = len(items)
    if n == 1:
        atom, k = item = items[0]
        if constant == 0 and k == 1:
            return atom
        return _new(SUM, constant, None, (item,), (SUM, 1, constant, k, atom.key))
    if n == 2:  # the commonest sum: order two atoms by one comparison, no sort
        (a, j), (b, k) = first, second = items
        if a.key > b.key:
            return _new(SUM, constant, None, (second, first), (SUM, 2, constant, k, b.key, j, a.key))
        return _new(SUM, constant, None, (first, second), (SUM, 2, constant, j, a.key, k, b.key))
    if not n:
        return const(constant)
    items.sort(key=_atom_key)
    key: list[int | Key] = [SUM, n, constant]
    for atom, k in items:
        key.append(k)
        key.append(atom.key)
    return _new(SUM, constant, None, tuple(items), tuple(key))


def _atom_key(item: tuple[Expr, int]) -> Key:
    return item[0].key


def add(a: Expr, b: Expr) -> Expr:
    if a.kind == CONST:
        if b.kind == CONST:
            return const(a.value + b.value)
        if a.value == 0:
            return b
    elif b.kind == CONST and b.value == 0:
        return a
    ca, ta = a.linear_terms()
    cb, tb = b.linear_terms()
    coefficients = dict(ta)
    for atom, k in tb:
        coefficients[atom] = coefficients.get(atom, 0) + k
    return make_sum(ca + cb, coefficients)


def add_constant(e: Expr, c: int) -> Expr:
    """``e + c`` (what ``e + c`` gives, without making ``c`` a node first)."""
    if c == 0:
        return e
    kind = e.kind
    if kind == CONST:
        return const(e.value + c)
    if kind != SUM:
        return _new(SUM, c, None, ((e, 1),), (SUM, 1, c, 1, e.key))
    terms = e.terms
    constant = e.value + c
    if constant == 0 and len(terms) == 1 and terms[0][1] == 1:
        return terms[0][0]
    return _new(SUM, constant, None, terms, (SUM, len(terms), constant) + e.key[3:])


def add_all(exprs: Iterable[Expr], constant: int = 0) -> Expr:
    coefficients: dict[Expr, int] = {}
    for e in exprs:
        c, terms = e.linear_terms()
        constant += c
        for atom, k in terms:
            coefficients[atom] = coefficients.get(atom, 0) + k
    return make_sum(constant, coefficients)


def scale(a: Expr, factor: int) -> Expr:
    if factor == 1:
        return a
    if a.kind == CONST:
        return const(a.value * factor)
    if factor == 0:
        return const(0)
    c, terms = a.linear_terms()
    return make_sum(c * factor, {atom: k * factor for atom, k in terms})


def linear(constant: int, terms: Iterable[tuple[Expr, int]]) -> Expr:
    """``constant + sum(k * e)`` for ``(e, k)`` pairs where each ``e`` may be any expression."""
    coefficients: dict[Expr, int] = {}
    for e, k in terms:
        kind = e.kind
        if kind == SUM:
            constant += e.value * k
            for atom, j in e.terms:
                coefficients[atom] = coefficients.get(atom, 0) + j * k
        elif kind == CONST:
            constant += e.value * k
        else:
            coefficients[e] = coefficients.get(e, 0) + k
    return make_sum(constant, coefficients)


# ---------------------------------------------------------------------------- divisions
def _division(kind: int, operand: Expr, divisor: int) -> Expr:
    return _new(kind, divisor, operand, (), (kind, operand.key, divisor))


def _split_terms(terms: Iterable[tuple[Expr, int]], c: int) -> tuple[dict[Expr, int], dict[Expr, int]]:
    """``(atom, k)`` pairs split into those with ``k`` a multiple of ``c`` (divided by it) and the rest."""
    quotient: dict[Expr, int] = {}
    rest: dict[Expr, int] = {}
    for atom, k in terms:
        if k % c == 0:
            quotient[atom] = k // c
        else:
            rest[atom] = k
    return quotient, rest


def split_multiples(e: Expr, c: int) -> tuple[int, dict[Expr, int], dict[Expr, int]]:
    """Split ``e`` into exact multiples of ``c`` (returned divided by ``c``) and the rest."""
    constant, terms = e.linear_terms()
    quotient, rest = _split_terms(terms, c)
    return constant, quotient, rest


def floordiv(e: Expr, c: int) -> Expr:
    if c == 1:
        return e
    kind = e.kind
    if kind == CONST:
        return const(e.value // c)
    if kind != SUM:  # an atom: nothing to split off, no common factor (its coefficient is 1)
        return _floordiv_atom(e, c)
    return floordiv_of_sum(e.value, e.terms, c)


def floordiv_of_sum(constant: int, terms: Iterable[tuple[Expr, int]], c: int) -> Expr:
    """``(constant + sum(k * atom)) floordiv c`` for ``c > 1``, ``terms`` the ``(atom, k)`` pairs
    (non-zero ``k``, any order): the reader divides a group without making its sum a node."""
    quotient, rest = _split_terms(terms, c)
    q_const, r_const = divmod(constant, c)
    if not rest:  # 0 <= r_const < c, so the remainder contributes nothing
        return make_sum(q_const, quotient)
    g = gcd(c, r_const, *rest.values())
    if g > 1:
        c //= g
        r_const //= g
        rest = {atom: k // g for atom, k in rest.items()}
    remainder = make_sum(r_const, rest)
    inner = _floordiv_atom(remainder, c)
    if not quotient and q_const == 0:
        return inner
    if inner.kind in (CONST, SUM):  # the inner division folded: its parts join the sum, never as an atom
        return linear(q_const, [*quotient.items(), (inner, 1)])
    quotient[inner] = quotient.get(inner, 0) + 1
    return make_sum(q_const, quotient)


def _floordiv_atom(x: Expr, c: int) -> Expr:
    if x.kind == FLOORDIV:  # (y floordiv a) floordiv c == y floordiv (a*c)
        return floordiv(x.operand, x.value * c)
    if x.kind == MOD and x.value % c == 0:  # (y mod a*c) floordiv c == (y floordiv c) mod a
        return mod(floordiv(x.operand, c), x.value // c)
    return _division(FLOORDIV, x, c)


def ceildiv(e: Expr, c: int) -> Expr:
    if c == 1:
        return e
    kind = e.kind
    if kind == CONST:
        return const(-((-e.value) // c))
    if kind != SUM:
        return _division(CEILDIV, e, c)
    return ceildiv_of_sum(e.value, e.terms, c)


def ceildiv_of_sum(constant: int, terms: Iterable[tuple[Expr, int]], c: int) -> Expr:
    """``(constant + sum(k * atom)) ceildiv c`` for ``c > 1`` (see :func:`floordiv_of_sum`)."""
    quotient, rest = _split_terms(terms, c)
    q_const, r_const = divmod(constant, c)
    if not rest:
        return make_sum(q_const + (1 if r_const else 0), quotient)
    g = gcd(c, r_const, *rest.values())
    if g > 1:
        c //= g
        r_const //= g
        rest = {atom: k // g for atom, k in rest.items()}
    inner = _division(CEILDIV, make_sum(r_const, rest), c)
    quotient[inner] = quotient.get(inner, 0) + 1
    return make_sum(q_const, quotient)


def mod(e: Expr, c: int) -> Expr:
    if c == 1:
        return const(0)
    kind = e.kind
    if kind == CONST:
        return const(e.value % c)
    if kind == SUM:
        return mod_of_sum(e.value, e.terms, c)
    if kind != MOD or e.value % c:
        return _division(MOD, e, c)  # an atom (not a mod that c divides): kept as it is
    return mod_of_sum(0, ((e, 1),), c)


def mod_of_sum(constant: int, terms: Iterable[tuple[Expr, int]], c: int) -> Expr:
    """``(constant + sum(k * atom)) mod c`` for ``c > 1`` (see :func:`floordiv_of_sum`)."""
    rest: dict[Expr, int] = {}
    for atom, k in terms:
        if k % c == 0:
            continue
        if atom.kind == MOD and atom.value % c == 0:
            # y mod m == y (mod c) whenever c divides m
            for inner_atom, j in atom.operand.linear_terms()[1]:
                rest[inner_atom] = rest.get(inner_atom, 0) + j * k
            constant += atom.operand.linear_terms()[0] * k
        else:
            rest[atom] = rest.get(atom, 0) + k
    rest = {atom: k for atom, k in rest.items() if k % c}
    constant %= c
    if not rest:
        return const(constant)
    g = gcd(c, constant, *rest.values())
    if g > 1:  # (g*y) mod (g*c') == g * (y mod c')
        inner = mod(make_sum(constant // g, {a: k // g for a, k in rest.items()}), c // g)
        return scale(inner, g)
    return _division(MOD, make_sum(constant, rest), c)


# ---------------------------------------------------------------------------- traversal
def replace_variables(e: Expr, replace: Callable[[Expr], Expr | None], memo: dict[Expr, Expr] | None = None) -> Expr:
    """Rebuild ``e`` with every variable ``v`` replaced by ``replace(v)`` (an Expr or None to keep).

    ``memo`` shares work across several expressions rewritten with the same replacement."""
    if memo is None:
        memo = {}
    return _replace(e, replace, memo)


def _replace(e: Expr, replace: Callable[[Expr], Expr | None], memo: dict[Expr, Expr]) -> Expr:
    done = memo.get(e)
    if done is not None:
        return done
    kind = e.kind
    out: Expr | None
    if kind == CONST:
        out = e
    elif kind in VARIABLE_KINDS:
        out = replace(e)
        if out is None:
            out = e
    elif kind == SUM:
        out = linear(e.value, [(_replace(atom, replace, memo), k) for atom, k in e.terms])
    else:
        inner = _replace(e.operand, replace, memo)
        if inner is e.operand:
            out = e
        elif kind == FLOORDIV:
            out = floordiv(inner, e.value)
        elif kind == CEILDIV:
            out = ceildiv(inner, e.value)
        else:
            out = mod(inner, e.value)
    memo[e] = out
    return out


def _from_text(text: str) -> Expr:
    from .text import parse_expr

    return parse_expr(text)
