"""Typed device groups of collective ops, read from their attribute text: ``replica_groups`` (the
list and iota forms) and ``source_target_pairs``. Imports nothing of the model, so the model's
accessors (``Instruction.replica_groups()``) can read through it without an import cycle.
"""

from __future__ import annotations

import re

MAX_REPLICA_GROUP_DEVICES = 1 << 20
_IOTA_GROUPS = re.compile(r"\[([\d,\s]*)\]\s*<=\s*\[([\d,\s]*)\]\s*(?:T\(([\d,\s]*)\))?\Z")
_GROUP = re.compile(r"\{([^{}]*)\}")


def replica_groups(value: str) -> tuple[tuple[int, ...], ...]:
    """``{{0,1},{2,3}}`` → ((0, 1), (2, 3)); the iota form ``[G,S]<=[dims]T(perm)`` expanded:
    ``iota(prod(dims))`` reshaped to ``dims``, transposed by ``perm``, reshaped to ``[G,S]``.
    ``{}`` (all replicas in one group, size unknown here) → ()."""
    text = value.strip()
    if text.startswith("["):
        m = _IOTA_GROUPS.match(text)
        if m is None:
            raise ValueError(f"malformed iota replica groups {text[:60]!r}")
        groups, dims = _ints(m.group(1)), _ints(m.group(2))
        perm = _ints(m.group(3)) if m.group(3) is not None else tuple(range(len(dims)))
        return _iota_groups(groups, dims, perm)
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected {{{{...}},...}} or [G,S]<=[...], got {text[:60]!r}")
    inner = text[1:-1]
    groups_found = _GROUP.findall(inner)
    if _GROUP.sub("", inner).replace(",", "").strip():
        raise ValueError(f"malformed replica groups {text[:60]!r}")
    return tuple(_ints(g) for g in groups_found)


def source_target_pairs(value: str) -> tuple[tuple[int, int], ...]:
    """``{{0,1},{1,2}}`` → ((0, 1), (1, 2)); ``{}`` → ()."""
    groups = replica_groups(value) if value.strip().startswith("{") else None
    if groups is None or any(len(g) != 2 for g in groups):
        raise ValueError(f"expected {{{{source,target}},...}}, got {value.strip()[:60]!r}")
    return tuple((a, b) for a, b in groups)


def _ints(text: str) -> tuple[int, ...]:
    text = text.strip()
    return tuple(int(x) for x in text.split(",")) if text else ()


def _iota_groups(groups: tuple[int, ...], dims: tuple[int, ...], perm: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    if len(groups) != 2:
        raise ValueError(f"iota replica groups need [groups,size], got {list(groups)}")
    total = 1
    for d in dims:
        total *= d
    if total != groups[0] * groups[1]:
        raise ValueError(f"iota replica groups {list(groups)} do not hold the {total} devices of {list(dims)}")
    if sorted(perm) != list(range(len(dims))):
        raise ValueError(f"T{tuple(perm)} is not a permutation of {len(dims)} dimensions")
    if total > MAX_REPLICA_GROUP_DEVICES:
        raise ValueError(f"{total} devices in replica groups is more than {MAX_REPLICA_GROUP_DEVICES}")
    strides = [1] * len(dims)
    for k in range(len(dims) - 2, -1, -1):
        strides[k] = strides[k + 1] * dims[k + 1]
    # walk the transposed array in row-major order; each position reads iota at its source index
    flat = [0]
    for k in perm:
        flat = [base + i * strides[k] for base in flat for i in range(dims[k])]
    size = groups[1]
    return tuple(tuple(flat[g * size : (g + 1) * size]) for g in range(groups[0]))


def int_list_list(value: str) -> tuple[tuple[int, ...], ...]:
    """``{{128,32},{64,32}}`` → ((128, 32), (64, 32))."""
    inner = value.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueError(f"expected {{{{...}},...}} list of integer lists, got {value!r}")
    inner = inner[1:-1]
    groups = _GROUP.findall(inner)
    if _GROUP.sub("", inner).replace(",", "").strip():
        raise ValueError(f"malformed list of integer lists {value[:60]!r}")
    return tuple(_ints(g) for g in groups)
