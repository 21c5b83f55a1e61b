"""Inclusive integer intervals and runtime-variable descriptors."""

from __future__ import annotations

from typing import NamedTuple

_tuple_new = tuple.__new__  # builds an Interval without the named tuple's Python-level __new__


class Interval(NamedTuple):
    """The integers ``lo..hi`` inclusive; empty when ``lo > hi``."""

    lo: int
    hi: int

    @classmethod
    def point(cls, value: int) -> Interval:
        return cls(value, value)

    @property
    def size(self) -> int:
        return max(0, self.hi - self.lo + 1)

    @property
    def is_empty(self) -> bool:
        return self.lo > self.hi

    @property
    def is_point(self) -> bool:
        return self.lo == self.hi

    def contains(self, value: int) -> bool:
        return self.lo <= value <= self.hi

    def contains_interval(self, other: Interval) -> bool:
        return self.lo <= other.lo and other.hi <= self.hi

    def intersect(self, other: Interval) -> Interval:
        return Interval(max(self.lo, other.lo), min(self.hi, other.hi))

    def union(self, other: Interval) -> Interval:
        """The smallest interval holding both."""
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def shift(self, offset: int) -> Interval:
        return Interval(self.lo + offset, self.hi + offset)

    # tuple's + and * concatenate and repeat; an interval's add and scale (hence the overrides)
    def __add__(self, other: Interval | int) -> Interval:  # type: ignore[override]
        if isinstance(other, Interval):
            return Interval(self.lo + other.lo, self.hi + other.hi)
        return self.shift(int(other))

    def __sub__(self, other: Interval | int) -> Interval:
        if isinstance(other, Interval):
            return Interval(self.lo - other.hi, self.hi - other.lo)
        return self.shift(-int(other))

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __mul__(self, factor: Interval | int) -> Interval:  # type: ignore[override]
        if isinstance(factor, Interval):
            products = (self.lo * factor.lo, self.lo * factor.hi, self.hi * factor.lo, self.hi * factor.hi)
            return Interval(min(products), max(products))
        k = int(factor)
        if k >= 0:
            return Interval(self.lo * k, self.hi * k)
        return Interval(self.hi * k, self.lo * k)

    def __rmul__(self, factor: Interval | int) -> Interval:  # type: ignore[override]
        return self.__mul__(factor)

    def floordiv(self, divisor: int) -> Interval:
        return Interval(self.lo // divisor, self.hi // divisor)

    def ceildiv(self, divisor: int) -> Interval:
        return Interval(-((-self.lo) // divisor), -((-self.hi) // divisor))

    def mod(self, divisor: int) -> Interval:
        """Range of ``x mod divisor`` for ``x`` in the interval (exact when one period)."""
        if self.lo // divisor == self.hi // divisor:
            return Interval(self.lo % divisor, self.hi % divisor)
        return Interval(0, divisor - 1)

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"


def make_interval(lo: int, hi: int) -> Interval:
    """``Interval(lo, hi)`` for hot paths (no Python-level ``__new__``)."""
    return _tuple_new(Interval, (lo, hi))


class RuntimeVar(NamedTuple):
    """A runtime variable: a value known only when the program runs (a dynamic offset, a gathered
    index), its feasible ``interval`` and a free-text ``description`` of what it stands for. The
    description is an annotation: it is neither printed in map text nor part of map equality.
    ``narrowed``: a constraint has cut ``interval`` down from the values the variable takes, so the
    map holds only when the runtime value lies in it (a condition, kept even where nothing uses it)."""

    interval: Interval
    description: str = ""
    narrowed: bool = False
