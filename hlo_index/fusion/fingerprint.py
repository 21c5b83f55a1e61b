"""A name-free structural key of a computation.

Transformer layers repeat the same fused computations under different names; two computations
with equal keys have the same instructions, shapes, attributes and wiring, so their indexing maps
are identical and need computing once. The key is a nested tuple (exact comparison on a hash hit).
"""
from __future__ import annotations

from ..hlo.model import Computation

# Attributes that never change indexing and often differ between otherwise identical copies.
_IGNORED_ATTRS = frozenset({"metadata", "backend_config", "frontend_attributes", "statistics",
                            "control-predecessors", "sharding", "origin", "op_name"})


def _hashable(value: object) -> object:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def computation_fingerprint(comp: Computation, _memo: dict[int, tuple] | None = None) -> tuple:
    """Every instruction's opcode, shape, operand positions, attributes (text order) and callees,
    names left out. Attribute order is not normalised: a reordered copy is merely analysed again."""
    memo = {} if _memo is None else _memo
    if id(comp) in memo:
        return memo[id(comp)]
    position = {id(instr): i for i, instr in enumerate(comp.instructions)}
    rows = []
    for instr in comp.instructions:
        attrs = []
        for key, value in instr.attrs.items():
            if key in _IGNORED_ATTRS:
                continue
            callee = instr.called.get(key)
            attrs.append((key, computation_fingerprint(callee, memo) if callee is not None else _hashable(value)))
        for role, callee in instr.called.items():
            if role not in instr.attrs:
                attrs.append((role, computation_fingerprint(callee, memo)))
        rows.append((instr.opcode, instr.shape, tuple(position.get(id(o), -1) for o in instr.operands),
                     instr.parameter_number, instr.literal, instr is comp.root, tuple(attrs)))
    key = tuple(rows)
    memo[id(comp)] = key
    return key
