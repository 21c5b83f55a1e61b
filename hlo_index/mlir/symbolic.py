"""Index expressions over a function's SSA values (``%val``, ``dim(%t, 0)``) and conditions on them.

Small and immutable: constants fold at construction (as MLIR's ``AffineExpr`` does), everything
else is kept as written. Text uses MLIR's affine spelling (``floordiv``, ``mod``) so a condition
reads like the IR it talks about. Values are non-negative index values, so ``arith.divsi`` /
``divui`` are both ``floordiv``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

Env = Mapping[str, int]


class Expr:
    def free(self) -> frozenset[str]:
        raise NotImplementedError

    def value(self, env: Env) -> int:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    @property
    def constant(self) -> int | None:
        return self.v if isinstance(self, Const) else None

    def __add__(self, other) -> Expr:
        return add(self, lift(other))

    def __mul__(self, other) -> Expr:
        return mul(self, lift(other))

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class Const(Expr):
    v: int

    def free(self):
        return frozenset()

    def value(self, env):
        return self.v

    def text(self) -> str:
        return str(self.v)


@dataclass(frozen=True)
class Sym(Expr):
    """A runtime index value, named as the condition prints it (``%val``, ``dim(%arg0, 0)``)."""

    name: str

    def free(self):
        return frozenset((self.name,))

    def value(self, env):
        return env[self.name]

    def text(self) -> str:
        return self.name


_PREC = {"+": 1, "-": 1, "*": 2, "floordiv": 2, "ceildiv": 2, "mod": 2}


@dataclass(frozen=True)
class Bin(Expr):
    op: str  # + - * floordiv ceildiv mod
    a: Expr
    b: Expr

    def free(self):
        return self.a.free() | self.b.free()

    def value(self, env):
        x, y = self.a.value(env), self.b.value(env)
        if self.op == "+":
            return x + y
        if self.op == "-":
            return x - y
        if self.op == "*":
            return x * y
        if y == 0:
            raise ZeroDivisionError(self.text())
        if self.op == "floordiv":
            return x // y
        if self.op == "ceildiv":
            return -(-x // y)
        return x % y

    def text(self) -> str:
        p = _PREC[self.op]
        left = self.a.text()
        if isinstance(self.a, Bin) and (_PREC[self.a.op] < p or (self.a.op != self.op and p == 2)):
            left = f"({left})"
        right = self.b.text()
        if isinstance(self.b, Bin) and (
            _PREC[self.b.op] < p
            or (_PREC[self.b.op] == p and self.op != "+" and not (self.op == "*" and self.b.op == "*"))
        ):
            right = f"({right})"
        return f"{left} {self.op} {right}"


@dataclass(frozen=True)
class Select(Expr):
    """``a`` where ``cond`` holds, else ``b`` (``arith.select`` when emitted)."""

    cond: Cond
    a: Expr
    b: Expr

    def free(self):
        return self.cond.free() | self.a.free() | self.b.free()

    def value(self, env):
        return self.a.value(env) if self.cond.holds(env) else self.b.value(env)

    def text(self) -> str:
        return f"({self.cond.text()} ? {self.a.text()} : {self.b.text()})"


def select(cond: Cond, a: Expr, b: Expr) -> Expr:
    if a == b or cond == TRUE:
        return a
    if cond == FALSE:
        return b
    return Select(cond, a, b)


def lift(x: int | Expr) -> Expr:
    return x if isinstance(x, Expr) else Const(int(x))


def add(a: Expr | int, b: Expr | int) -> Expr:
    a, b = lift(a), lift(b)
    if a.constant is not None and b.constant is not None:
        return Const(a.constant + b.constant)
    if a.constant == 0:
        return b
    if b.constant == 0:
        return a
    if a.constant is not None:  # constants last: "3 * %i + 5"
        a, b = b, a
    return Bin("+", a, b)


def sub(a: Expr | int, b: Expr | int) -> Expr:
    a, b = lift(a), lift(b)
    if a.constant is not None and b.constant is not None:
        return Const(a.constant - b.constant)
    if b.constant == 0:
        return a
    if a == b:
        return Const(0)
    return Bin("-", a, b)


def mul(a: Expr | int, b: Expr | int) -> Expr:
    a, b = lift(a), lift(b)
    if a.constant is not None and b.constant is not None:
        return Const(a.constant * b.constant)
    if a.constant == 0 or b.constant == 0:
        return Const(0)
    if a.constant == 1:
        return b
    if b.constant == 1:
        return a
    if b.constant is not None:  # constants first: "3 * %i"
        a, b = b, a
    if a.constant is not None and isinstance(b, Bin) and b.op == "*" and b.a.constant is not None:
        return mul(Const(a.constant * b.a.constant), b.b)
    return Bin("*", a, b)


def floordiv(a: Expr | int, b: Expr | int) -> Expr:
    a, b = lift(a), lift(b)
    if b.constant == 1:
        return a
    if a.constant is not None and b.constant not in (None, 0):
        return Const(a.constant // b.constant)
    if a.constant == 0:
        return Const(0)
    if a == b:
        return Const(1)
    # (c * x) floordiv d with d | c
    if (
        isinstance(a, Bin)
        and a.op == "*"
        and a.a.constant is not None
        and b.constant
        and a.a.constant % b.constant == 0
    ):
        return mul(Const(a.a.constant // b.constant), a.b)
    return Bin("floordiv", a, b)


def mod(a: Expr | int, b: Expr | int) -> Expr:
    a, b = lift(a), lift(b)
    if b.constant == 1 or a.constant == 0 or a == b:
        return Const(0)
    if a.constant is not None and b.constant not in (None, 0):
        return Const(a.constant % b.constant)
    if (
        isinstance(a, Bin)
        and a.op == "*"
        and a.a.constant is not None
        and b.constant
        and a.a.constant % b.constant == 0
    ):
        return Const(0)
    return Bin("mod", a, b)


def product(xs) -> Expr:
    out: Expr = Const(1)
    for x in xs:
        out = mul(out, lift(x))
    return out


# ---- conditions -----------------------------------------------------------------------------


class Cond:
    def holds(self, env: Env) -> bool:
        raise NotImplementedError

    def free(self) -> frozenset[str]:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class Truth(Cond):
    v: bool

    def holds(self, env):
        return self.v

    def free(self):
        return frozenset()

    def text(self):
        return "true" if self.v else "false"


TRUE, FALSE = Truth(True), Truth(False)


@dataclass(frozen=True)
class Cmp(Cond):
    op: str  # == != <= < >=
    a: Expr
    b: Expr

    def holds(self, env):
        x, y = self.a.value(env), self.b.value(env)
        return {"==": x == y, "!=": x != y, "<=": x <= y, "<": x < y, ">=": x >= y, ">": x > y}[self.op]

    def free(self):
        return self.a.free() | self.b.free()

    def text(self):
        return f"{self.a.text()} {self.op} {self.b.text()}"


@dataclass(frozen=True)
class Junction(Cond):
    op: str  # and | or
    parts: tuple[Cond, ...]

    def holds(self, env):
        results = (p.holds(env) for p in self.parts)
        return all(results) if self.op == "and" else any(results)

    def free(self):
        out = frozenset()
        for p in self.parts:
            out |= p.free()
        return out

    def text(self):
        return f" {self.op} ".join(f"({p.text()})" if isinstance(p, Junction) else p.text() for p in self.parts)


def compare(op: str, a, b) -> Cond:
    a, b = lift(a), lift(b)
    if a.constant is not None and b.constant is not None:
        return Truth(Cmp(op, a, b).holds({}))
    if a == b and op in ("==", "<=", ">="):
        return TRUE
    return Cmp(op, a, b)


def _join(op: str, parts) -> Cond:
    unit, zero = (TRUE, FALSE) if op == "and" else (FALSE, TRUE)
    flat: list[Cond] = []
    for p in parts:
        if p == zero:
            return zero
        if p == unit:
            continue
        for q in p.parts if isinstance(p, Junction) and p.op == op else (p,):
            if q not in flat:
                flat.append(q)
    if not flat:
        return unit
    return flat[0] if len(flat) == 1 else Junction(op, tuple(flat))


def all_of(*parts: Cond) -> Cond:
    return _join("and", parts)


def any_of(*parts: Cond) -> Cond:
    return _join("or", parts)
