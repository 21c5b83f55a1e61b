"""A name-free structural fingerprint of a computation.

Transformer layers repeat the same fused computations under different names; two computations
with equal fingerprints have the same instructions, shapes, attributes and wiring, so their
indexing maps are identical and need computing once.
"""
from __future__ import annotations

import hashlib

from ..hlo.model import Computation

# Attributes that never change indexing and often differ between otherwise identical copies.
_IGNORED_ATTRS = frozenset({"metadata", "backend_config", "frontend_attributes", "statistics",
                            "control-predecessors", "sharding", "origin", "op_name"})


def _attr_text(value: object) -> str:
    return repr(value)


def computation_fingerprint(comp: Computation, _memo: dict[int, str] | None = None) -> str:
    """Hex digest over every instruction's opcode, shape, operand positions, attributes and callees."""
    memo = {} if _memo is None else _memo
    if id(comp) in memo:
        return memo[id(comp)]
    position = {id(instr): i for i, instr in enumerate(comp.instructions)}
    h = hashlib.blake2b(digest_size=16)
    for instr in comp.instructions:
        operands = ",".join(str(position.get(id(o), -1)) for o in instr.operands)
        parts = [instr.opcode, repr(instr.shape), operands, str(instr.parameter_number),
                 instr.literal or "", "R" if instr is comp.root else ""]
        for key in sorted(instr.attrs):
            if key in _IGNORED_ATTRS:
                continue
            callee = instr.called.get(key)
            if callee is not None:
                parts.append(f"{key}=<{computation_fingerprint(callee, memo)}>")
            elif key == "branch_computations" and instr.called:
                parts.append(key)
            else:
                parts.append(f"{key}={_attr_text(instr.attrs[key])}")
        for role in sorted(instr.called):
            if role not in instr.attrs:
                parts.append(f"{role}=<{computation_fingerprint(instr.called[role], memo)}>")
        h.update("\x1f".join(parts).encode())
        h.update(b"\x1e")
    digest = h.hexdigest()
    memo[id(comp)] = digest
    return digest
