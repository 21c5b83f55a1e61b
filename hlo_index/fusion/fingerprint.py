"""A name-free structural key of a computation.

Transformer layers repeat the same fused computations under different names; two computations
with equal keys have the same instructions, shapes, attributes and wiring, so their indexing maps
are identical and need computing once. ``fingerprint_id`` interns each key to a small int, so
callers hash and compare it once per computation rather than on every lookup.
"""
from __future__ import annotations

from ..hlo.model import Computation, Shape

# Attributes that never change indexing and often differ between otherwise identical copies.
_IGNORED_ATTRS = frozenset({"metadata", "backend_config", "frontend_attributes", "statistics",
                            "control-predecessors", "sharding", "origin", "op_name"})

# The parser shares one Shape object between equal shapes; hashing a Shape rebuilds its field
# tuple every time, so each object gets a small int once (the entry keeps it alive: ids stay unique).
_SHAPE_TOKENS: dict[int, tuple[Shape, int]] = {}
_SHAPE_IDS: dict[Shape, int] = {}
_KEY_IDS: dict[tuple, int] = {}
_BY_COMPUTATION: dict[int, tuple[Computation, int]] = {}


def clear() -> None:
    _SHAPE_TOKENS.clear()
    _SHAPE_IDS.clear()
    _KEY_IDS.clear()
    _BY_COMPUTATION.clear()


def shape_token(shape: Shape) -> int:
    """A small int equal for equal shapes (memoised per shape object)."""
    hit = _SHAPE_TOKENS.get(id(shape))
    if hit is not None and hit[0] is shape:
        return hit[1]
    token = _SHAPE_IDS.setdefault(shape, len(_SHAPE_IDS))
    _SHAPE_TOKENS[id(shape)] = (shape, token)
    return token


def _hashable(value: object) -> object:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _attrs_key(instr) -> tuple:
    called = instr.called
    items = []
    for key, value in instr.attrs.items():
        if key in _IGNORED_ATTRS:
            continue
        callee = called.get(key)
        items.append((key, fingerprint_id(callee) if callee is not None else _hashable(value)))
    for role, callee in called.items():
        if role not in instr.attrs:
            items.append((role, fingerprint_id(callee)))
    return tuple(items)


def computation_fingerprint(comp: Computation) -> tuple:
    """Every instruction's opcode, shape, operand positions, attributes (text order) and callees,
    names left out. Attribute order is not normalised: a reordered copy is merely analysed again."""
    instructions = comp.instructions
    position = {id(instr): i for i, instr in enumerate(instructions)}
    tokens = _SHAPE_TOKENS
    rows = []
    append = rows.append
    for instr in instructions:
        shape = instr.shape
        hit = tokens.get(id(shape))
        token = hit[1] if hit is not None and hit[0] is shape else shape_token(shape)
        operands = instr.operands
        wiring = tuple([position.get(id(o), -1) for o in operands]) if operands else ()
        if instr.attrs or instr.called or instr.parameter_number is not None or instr.literal is not None:
            append((instr.opcode, token, wiring, instr.parameter_number, instr.literal, _attrs_key(instr)))
        else:
            append((instr.opcode, token, wiring))
    root = comp.root
    append(position.get(id(root), -1) if root is not None else -1)
    return tuple(rows)


def fingerprint_id(comp: Computation) -> int:
    """Interned ``computation_fingerprint``: equal ints exactly when the keys are equal."""
    hit = _BY_COMPUTATION.get(id(comp))
    if hit is not None and hit[0] is comp:
        return hit[1]
    key = computation_fingerprint(comp)
    fid = _KEY_IDS.setdefault(key, len(_KEY_IDS))
    _BY_COMPUTATION[id(comp)] = (comp, fid)
    return fid
