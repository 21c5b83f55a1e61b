"""Op-rule results and compositions, memoised across the instructions of a module.

A big dump repeats the same op on the same shapes thousands of times (an ``add`` of two
``f32[4,128,256]``); its maps depend only on the opcode, the shapes, the attributes, and — for
rules that fold constant or iota operands — those operands' literal / attributes. Results that
mention instruction names (runtime-variable descriptions, UNDEFINED reasons) are never shared.
"""
from __future__ import annotations

from typing import Optional

from ..affine import IndexingMap
from ..hlo.model import Instruction

_NOT_CACHED_OPCODES = frozenset({"fusion", "call", "parameter"})   # their maps come from callees
_OUT2IN: dict[tuple, list] = {}
_IN2OUT: dict[tuple, list] = {}
_COMPOSED: dict[tuple[IndexingMap, IndexingMap], IndexingMap] = {}


def clear() -> None:
    _OUT2IN.clear()
    _IN2OUT.clear()
    _COMPOSED.clear()


def _operand_key(o: Instruction) -> tuple:
    if o.opcode == "constant":
        return (o.opcode, o.shape, o.literal)
    if o.opcode == "iota":
        return (o.opcode, o.shape, tuple(sorted(o.attrs.items())))
    return (o.shape,)


def structural_key(instr: Instruction) -> Optional[tuple]:
    """Everything an op rule may look at, or None when the instruction must not be shared.
    (May be unhashable when an attribute value is; callers then compute without the cache.)"""
    if instr.opcode in _NOT_CACHED_OPCODES:
        return None
    # attrs in text order (not sorted): equal ops in one dump print their attributes alike, and a
    # differently ordered copy only misses the cache
    return (instr.opcode, instr.shape, tuple(instr.attrs.items()),
            tuple(_operand_key(o) for o in instr.operands))


def _portable(maps) -> bool:
    return all(not m.is_undefined and not m.runtime_vars for m in maps)


def output_to_input(instr: Instruction, output_index: int):
    """``hlo_index.ops.output_to_input``, shared between structurally equal instructions."""
    from .. import ops
    key = structural_key(instr)
    if key is None:
        return ops.output_to_input(instr, output_index)
    key = (key, output_index)
    try:
        hit = _OUT2IN.get(key)
    except TypeError:   # an attribute value we cannot hash: compute every time
        return ops.output_to_input(instr, output_index)
    if hit is None:
        hit = ops.output_to_input(instr, output_index)
        if all(_portable(om.maps) for om in hit):
            _OUT2IN[key] = hit
    return hit


def input_to_output(instr: Instruction, operand_index: int):
    """``hlo_index.ops.input_to_output``, shared between structurally equal instructions."""
    from .. import ops
    key = structural_key(instr)
    if key is None:
        return ops.input_to_output(instr, operand_index)
    key = (key, operand_index)
    try:
        hit = _IN2OUT.get(key)
    except TypeError:
        return ops.input_to_output(instr, operand_index)
    if hit is None:
        hit = ops.input_to_output(instr, operand_index)
        if all(_portable(maps) for maps in hit):
            _IN2OUT[key] = hit
    return hit


def composed(op_map: IndexingMap, to_value: IndexingMap) -> IndexingMap:
    """``op_map ∘ to_value``, simplified, unused range variables dropped; memoised."""
    key = (op_map, to_value)
    hit = _COMPOSED.get(key)
    if hit is None:
        hit = op_map.compose(to_value).simplified().remove_unused_variables()
        if not hit.runtime_vars:
            _COMPOSED[key] = hit
    return hit
