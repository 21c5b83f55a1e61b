"""Op-rule results and compositions, memoised across the instructions of a module.

A big dump repeats the same op on the same shapes thousands of times (an ``add`` of two
``f32[4,128,256]``); its maps depend only on the opcode, the shapes, the attributes, and — for
rules that fold constant or iota operands — those operands' literal / attributes. Results that
mention instruction names (runtime-variable descriptions, UNDEFINED reasons) are never shared.

The walks want more than the maps: ``steps`` also says which maps are the identity on the value's
own box (elementwise ops, most of every fusion), so a walk can pass its maps through unchanged.
"""
from __future__ import annotations

from typing import Optional

from ..affine import IndexingMap, Interval, dim
from ..hlo.model import Instruction
from .existential import drop_witness_range_vars
from .fingerprint import shape_token

_NOT_CACHED_OPCODES = frozenset({"fusion", "call", "parameter"})   # their maps come from callees
_OUT2IN: dict[tuple, list] = {}
_IN2OUT: dict[tuple, list] = {}
_STEPS: dict[tuple, tuple] = {}
_COMPOSED: dict[tuple[IndexingMap, IndexingMap], IndexingMap] = {}
_COMPOSED_BY_ID: dict[tuple[int, int], tuple[IndexingMap, IndexingMap, IndexingMap]] = {}
_IDENTITIES: dict[tuple[int, ...], IndexingMap] = {}
_BOXES: dict[tuple[int, ...], tuple[Interval, ...]] = {}

# One walk step into an operand: (operand position, tuple element of the operand, maps, passthrough)
# where passthrough means the maps are exactly the identity on the instruction's output box.
Step = tuple[int, int, tuple[IndexingMap, ...], bool]


def clear() -> None:
    for table in (_OUT2IN, _IN2OUT, _STEPS, _COMPOSED, _COMPOSED_BY_ID):
        table.clear()


def full_box(dims: tuple[int, ...]) -> tuple[Interval, ...]:
    box = _BOXES.get(dims)
    if box is None:
        box = _BOXES[dims] = tuple(Interval(0, n - 1) for n in dims)
    return box


def identity(dims: tuple[int, ...]) -> IndexingMap:
    """The shared identity map of ``dims`` (one object per shape: walks compare by ``is``)."""
    m = _IDENTITIES.get(dims)
    if m is None:
        m = _IDENTITIES[dims] = IndexingMap.identity(dims)
    return m


def is_identity_on(m: IndexingMap, dims: tuple[int, ...]) -> bool:
    """``m`` is ``(d0, ..., dn) -> (d0, ..., dn)`` on the whole box of ``dims``, nothing else."""
    if m is _IDENTITIES.get(dims):
        return True
    if m.range_vars or m.runtime_vars or m.constraints or m.is_undefined or m.is_known_empty:
        return False
    return (len(m.results) == len(dims) and all(r is dim(i) for i, r in enumerate(m.results))
            and m.dims == full_box(dims))


def _operand_key(o: Instruction) -> tuple:
    if o.opcode == "constant":
        return (o.opcode, shape_token(o.shape), o.literal)
    if o.opcode == "iota":
        return (o.opcode, shape_token(o.shape), tuple(sorted(o.attrs.items())))
    return (shape_token(o.shape),)


def structural_key(instr: Instruction) -> Optional[tuple]:
    """Everything an op rule may look at, or None when the instruction must not be shared.
    (May be unhashable when an attribute value is; callers then compute without the cache.)"""
    if instr.opcode in _NOT_CACHED_OPCODES:
        return None
    # attrs in text order (not sorted): equal ops in one dump print their attributes alike, and a
    # differently ordered copy only misses the cache
    return (instr.opcode, shape_token(instr.shape), tuple(instr.attrs.items()),
            tuple([_operand_key(o) for o in instr.operands]))


def _portable(maps) -> bool:
    return all(not m.is_undefined and not m.runtime_vars for m in maps)


def _cached(table: dict, instr: Instruction, index: int, compute, maps_of):
    key = structural_key(instr)
    if key is None:
        return compute(instr, index)
    key = (key, index)
    try:
        hit = table.get(key)
    except TypeError:   # an attribute value we cannot hash: compute every time
        return compute(instr, index)
    if hit is None:
        hit = compute(instr, index)
        if all(_portable(maps_of(entry)) for entry in hit):
            table[key] = hit
    return hit


def output_to_input(instr: Instruction, output_index: int):
    """``hlo_index.ops.output_to_input``, shared between structurally equal instructions."""
    return _cached(_OUT2IN, instr, output_index, (_REGISTRY or _registry())["ops"].output_to_input,
                   lambda om: om.maps)


def input_to_output(instr: Instruction, operand_index: int):
    """``hlo_index.ops.input_to_output``, shared between structurally equal instructions."""
    return _cached(_IN2OUT, instr, operand_index, (_REGISTRY or _registry())["ops"].input_to_output,
                   lambda maps: maps)


_REGISTRY: dict = {}


def _registry() -> dict:
    """The ops registry and the elementwise rule, imported once (ops imports are not free per call)."""
    if not _REGISTRY:
        from .. import ops
        from ..ops.rules_elementwise import elementwise_input_to_output, elementwise_output_to_input
        _REGISTRY.update(out2in=ops.OUTPUT_TO_INPUT, elementwise=elementwise_output_to_input,
                         in2out=ops.INPUT_TO_OUTPUT, elementwise_in=elementwise_input_to_output, ops=ops)
    return _REGISTRY


def _steps_of(instr: Instruction, output_index: int) -> tuple[Step, ...]:
    out_dims = instr.shape.leaf(output_index).dims
    steps = []
    for om in output_to_input(instr, output_index):
        if om.maps:
            passthrough = len(om.maps) == 1 and is_identity_on(om.maps[0], out_dims)
            steps.append((om.operand, om.operand_output, om.maps, passthrough))
    return tuple(steps)


def output_to_input_steps(instr: Instruction, output_index: int) -> tuple[Step, ...]:
    """The op's output-to-input maps as walk steps (operands with no maps left out)."""
    registry = _REGISTRY or _registry()
    shape = instr.shape
    operands = instr.operands
    # An elementwise op whose operands all have the output's dims reads each through the identity:
    # no rule call, no key to hash (checked against the registry, so a re-registered rule wins).
    if registry["out2in"].get(instr.opcode) is registry["elementwise"] and not shape.is_tuple:
        dims = shape.dims
        if all(o.shape.dims == dims for o in operands):
            key = (len(operands), dims)
            steps = _STEPS.get(key)
            if steps is None:
                ident = identity(dims)
                steps = _STEPS[key] = tuple((j, 0, (ident,), True) for j in range(len(operands)))
            return steps
    key = structural_key(instr)
    if key is None:
        return _steps_of(instr, output_index)
    key = (key, output_index)
    try:
        steps = _STEPS.get(key)
    except TypeError:   # an attribute value we cannot hash
        return _steps_of(instr, output_index)
    if steps is None:
        steps = _steps_of(instr, output_index)
        if all(_portable(maps) for _, _, maps, _ in steps):
            _STEPS[key] = steps
    return steps


# One step from an operand to a user's output: (output index, maps, passthrough).
ForwardStep = tuple[int, tuple[IndexingMap, ...], bool]


def _forward_steps_of(instr: Instruction, operand_index: int) -> tuple[ForwardStep, ...]:
    value_dims = instr.operands[operand_index].shape.dims if instr.operands else None
    steps = []
    for out, maps in enumerate(input_to_output(instr, operand_index)):
        if maps:
            passthrough = (len(maps) == 1 and value_dims is not None
                           and not instr.operands[operand_index].shape.is_tuple
                           and not instr.shape.is_tuple and instr.shape.dims == value_dims
                           and is_identity_on(maps[0], value_dims))
            steps.append((out, maps, passthrough))
    return tuple(steps)


def input_to_output_steps(instr: Instruction, operand_index: int) -> tuple[ForwardStep, ...]:
    """The op's input-to-output maps from one operand, as walk steps (unread outputs left out)."""
    registry = _REGISTRY or _registry()
    shape = instr.shape
    if registry["in2out"].get(instr.opcode) is registry["elementwise_in"] and not shape.is_tuple \
            and instr.operands[operand_index].shape.dims == shape.dims:
        key = ("in2out", shape.dims)
        steps = _STEPS.get(key)
        if steps is None:
            steps = _STEPS[key] = ((0, (identity(shape.dims),), True),)
        return steps
    key = structural_key(instr)
    if key is None:
        return _forward_steps_of(instr, operand_index)
    key = ("in2out", key, operand_index)
    try:
        steps = _STEPS.get(key)
    except TypeError:
        return _forward_steps_of(instr, operand_index)
    if steps is None:
        steps = _forward_steps_of(instr, operand_index)
        if all(_portable(maps) for _, maps, _ in steps):
            _STEPS[key] = steps
    return steps


def composed(outer: IndexingMap, inner: IndexingMap) -> IndexingMap:
    """``outer ∘ inner``, simplified, unused and witness-only range variables dropped; memoised
    (by object, then by value)."""
    by_id = _COMPOSED_BY_ID.get((id(outer), id(inner)))
    if by_id is not None and by_id[0] is outer and by_id[1] is inner:
        return by_id[2]
    key = (outer, inner)
    hit = _COMPOSED.get(key)
    if hit is None:
        hit = drop_witness_range_vars(outer.compose(inner).simplified().remove_unused_variables())
        if hit.runtime_vars:
            return hit
        _COMPOSED[key] = hit
    _COMPOSED_BY_ID[(id(outer), id(inner))] = (outer, inner, hit)
    return hit
