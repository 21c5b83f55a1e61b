"""Joining maps that differ only in their results' constant terms, in arithmetic progression.

A loop unrolled with its counter folded reads one row per iteration: maps ``r + c_t`` for
``t = 0 .. m-1`` whose constant vectors are ``c_0 + t * delta``, identical otherwise (domain,
range variables, constraints, the rest of every result). Their union is exactly one map with a new
range variable ``t in [0, m-1]`` and results ``r + c_0 + t * delta``: every ``t`` gives one of the
pieces and nothing else. Groups that are not a full progression stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

from ...affine import IndexingMap, Interval, RuntimeVar, const, range_var
from ...affine.expr import Expr

# What the members of one progression share: dims, range and runtime variables, constraints, and
# the results less their constants.
_Signature: TypeAlias = tuple[
    tuple[Interval, ...],
    tuple[Interval, ...],
    tuple[RuntimeVar, ...],
    tuple[tuple[Expr, Interval], ...],
    tuple[Expr, ...],
]
_Member: TypeAlias = tuple[tuple[int, ...], IndexingMap]  # (result constants, map)


def _split(m: IndexingMap) -> tuple[tuple[Expr, ...], tuple[int, ...]]:
    stripped: list[Expr] = []
    constants: list[int] = []
    for r in m.results:
        c, _ = r.linear_terms()
        stripped.append(r - const(c) if c else r)
        constants.append(c)
    return tuple(stripped), tuple(constants)


def _signature(m: IndexingMap, stripped: tuple[Expr, ...]) -> _Signature | None:
    if m.is_undefined or m.is_known_empty or not m.results:
        return None
    return (m.dims, m.range_vars, m.runtime_vars, m.constraints, stripped)


def join_constant_progressions(maps: Sequence[IndexingMap]) -> tuple[IndexingMap, ...]:
    groups: dict[_Signature, list[_Member]] = {}
    order: list[IndexingMap | _Signature] = []
    for m in maps:
        stripped, constants = _split(m)
        key = _signature(m, stripped)
        if key is None:
            order.append(m)
            continue
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((constants, m))
    out: list[IndexingMap] = []
    for entry in order:
        if isinstance(entry, IndexingMap):
            out.append(entry)
            continue
        members = sorted(groups[entry], key=lambda cm: cm[0])
        joined = _joined(entry, members)
        out.extend([joined] if joined is not None else [m for _, m in members])
    return tuple(out)


def _joined(key: _Signature, members: list[_Member]) -> IndexingMap | None:
    if len(members) < 2:
        return None
    first = members[0][0]
    delta = tuple(b - a for a, b in zip(first, members[1][0]))
    if not any(delta):
        return None
    for t, (constants, _) in enumerate(members):
        if constants != tuple(a + t * d for a, d in zip(first, delta)):
            return None
    dims, range_vars, runtime_vars, constraints, stripped = key
    step = range_var(len(range_vars))
    results = [s + const(c) + step * d if d else s + const(c) for s, c, d in zip(stripped, first, delta)]
    return IndexingMap(dims, tuple(range_vars) + (Interval(0, len(members) - 1),), runtime_vars, results, constraints)
