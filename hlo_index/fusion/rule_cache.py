"""Op-rule results and compositions, memoised across the instructions of a module.

A big dump repeats the same op on the same shapes thousands of times (an ``add`` of two
``f32[4,128,256]``); its maps depend only on the opcode, the shapes, the attributes, and — for
rules that fold constant or iota operands — those operands' literal / attributes. Results that
mention instruction names (runtime-variable descriptions, UNDEFINED reasons) are never shared.

The walks want more than the maps: ``steps`` also says which maps are the identity on the value's
own box (elementwise ops, most of every fusion), so a walk can pass its maps through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from .. import ops
from ..affine import IndexingMap, Interval, dim
from ..context import current, register_table
from ..hlo.model import Instruction
from ..ops import OperandMaps
from ..ops.rules_elementwise import elementwise_input_to_output, elementwise_output_to_input
from ..ops.rules_tuple import tuple_input_to_output, tuple_output_to_input
from .existential import drop_witness_range_vars
from .fingerprint import Key, instruction_key

_Entry = TypeVar("_Entry")

_NOT_CACHED_OPCODES = frozenset({"fusion", "call", "parameter"})  # their maps come from callees
# Per analysis context (hlo_index.context); keys are structural (fingerprint.instruction_key).
_OUT2IN = register_table("fusion.rule_cache.out2in")
_IN2OUT = register_table("fusion.rule_cache.in2out")
_STEPS = register_table("fusion.rule_cache.steps")
_COMPOSED = register_table("fusion.rule_cache.composed")  # (outer, inner) by value
_COMPOSED_BY_ID = register_table("fusion.rule_cache.composed_by_object")  # ids, objects kept and checked
_IDENTITIES = register_table("fusion.rule_cache.identities")
_BOXES = register_table("fusion.rule_cache.boxes")
_KEYS = register_table("fusion.rule_cache.structural_keys")  # id(instr) -> (instr, key): identity memo

# One walk step into an operand: (operand position, tuple element of the operand, maps, passthrough)
# where passthrough means the maps are exactly the identity on the instruction's output box.
Step = tuple[int, int, tuple[IndexingMap, ...], bool]


def full_box(dims: tuple[int, ...]) -> tuple[Interval, ...]:
    boxes: dict[tuple[int, ...], tuple[Interval, ...]] = current().tables[_BOXES]
    box = boxes.get(dims)
    if box is None:
        box = boxes[dims] = tuple(Interval(0, n - 1) for n in dims)
    return box


def identity(dims: tuple[int, ...]) -> IndexingMap:
    """The shared identity map of ``dims`` (one object per shape: walks compare by ``is``)."""
    identities: dict[tuple[int, ...], IndexingMap] = current().tables[_IDENTITIES]
    m = identities.get(dims)
    if m is None:
        m = identities[dims] = IndexingMap.identity(dims)
    return m


def is_identity_on(m: IndexingMap, dims: tuple[int, ...]) -> bool:
    """``m`` is ``(d0, ..., dn) -> (d0, ..., dn)`` on the whole box of ``dims``, nothing else."""
    if m is current().tables[_IDENTITIES].get(dims):
        return True
    if m.range_vars or m.runtime_vars or m.constraints or m.is_undefined or m.is_known_empty:
        return False
    # == (not ``is``): a map built in another analysis context holds other (equal) node objects
    return (
        len(m.results) == len(dims) and all(r == dim(i) for i, r in enumerate(m.results)) and m.dims == full_box(dims)
    )


def structural_key(instr: Instruction) -> Key | None:
    """Everything an op rule may look at, or None when the instruction must not be shared.
    (May be unhashable when an attribute value is; callers then compute without the cache.)"""
    if instr.opcode in _NOT_CACHED_OPCODES:
        return None
    memo: dict[int, tuple[Instruction, Key | None]] = current().tables[_KEYS]
    hit = memo.get(id(instr))
    if hit is None or hit[0] is not instr:
        # walks ask once per output: a root tuple of 900 outputs would hash 900 operand shapes each time
        hit = memo[id(instr)] = (instr, instruction_key(instr))
    return hit[1]


def _portable(maps: Iterable[IndexingMap]) -> bool:
    return all(not m.is_undefined and not m.runtime_vars for m in maps)


def _cached(
    slot: int,
    instr: Instruction,
    index: int,
    compute: Callable[[Instruction, int], list[_Entry]],
    maps_of: Callable[[_Entry], tuple[IndexingMap, ...]],
) -> list[_Entry]:
    structure = structural_key(instr)
    if structure is None:
        return compute(instr, index)
    key = (structure, index)
    table: dict[tuple[Key, int], list[_Entry]] = current().tables[slot]
    try:
        hit = table.get(key)
    except TypeError:  # an attribute value we cannot hash: compute every time
        return compute(instr, index)
    if hit is None:
        hit = compute(instr, index)
        if all(_portable(maps_of(entry)) for entry in hit):
            table[key] = hit
    return hit


def output_to_input(instr: Instruction, output_index: int) -> list[OperandMaps]:
    """``hlo_index.ops.output_to_input``, shared between structurally equal instructions."""
    return _cached(_OUT2IN, instr, output_index, ops.output_to_input, lambda om: om.maps)


def input_to_output(instr: Instruction, operand_index: int) -> list[tuple[IndexingMap, ...]]:
    """``hlo_index.ops.input_to_output``, shared between structurally equal instructions."""
    return _cached(_IN2OUT, instr, operand_index, ops.input_to_output, lambda maps: maps)


# Opcodes whose rules address each element of a tuple-shaped operand themselves, an UNDEFINED
# read included (a while loop's maps per pair of loop state elements): registered by the rules.
ELEMENTS_ADDRESSED: set[str] = set()


def spread_unknown(instr: Instruction, found: Iterable[OperandMaps]) -> list[OperandMaps]:
    """``found`` (OperandMaps) with every UNDEFINED read of a tuple-shaped operand addressed to
    each of its elements: an unknown read may read any of them, so none may look unread (a while
    loop behind a tuple would otherwise make the loop state's other elements "not read"). The
    rules of ``ELEMENTS_ADDRESSED`` say which elements an unknown read reads: left as they are."""
    if instr.opcode in ELEMENTS_ADDRESSED:
        return list(found)
    out: list[OperandMaps] = []
    for om in found:
        operand = instr.operands[om.operand] if om.operand < len(instr.operands) else None
        unknown = tuple(m for m in om.maps if m.is_undefined)
        if operand is None or not unknown or not operand.shape.is_tuple:
            out.append(om)
            continue
        known = tuple(m for m in om.maps if not m.is_undefined)
        for element in range(operand.shape.num_outputs):
            maps = known + unknown if element == om.operand_output else unknown
            out.append(OperandMaps(om.operand, maps, element))
    return out


def _steps_of(instr: Instruction, output_index: int) -> tuple[Step, ...]:
    out_dims = instr.shape.leaf(output_index).dims
    steps: list[Step] = []
    for om in spread_unknown(instr, output_to_input(instr, output_index)):
        if om.maps:
            passthrough = len(om.maps) == 1 and is_identity_on(om.maps[0], out_dims)
            steps.append((om.operand, om.operand_output, om.maps, passthrough))
    return tuple(steps)


def output_to_input_steps(instr: Instruction, output_index: int) -> tuple[Step, ...]:
    """The op's output-to-input maps as walk steps (operands with no maps left out)."""
    shape = instr.shape
    operands = instr.operands
    table: dict[Key, tuple[Step, ...]] = current().tables[_STEPS]
    key: Key
    # An elementwise op whose operands all have the output's dims reads each through the identity:
    # no rule call, no key to hash (checked against the registry, so a re-registered rule wins).
    if ops.OUTPUT_TO_INPUT.get(instr.opcode) is elementwise_output_to_input and not shape.is_tuple:
        dims = shape.dims
        if all(o.shape.dims == dims for o in operands):
            key = (len(operands), dims)
            steps = table.get(key)
            if steps is None:
                ident = identity(dims)
                steps = table[key] = tuple((j, 0, (ident,), True) for j in range(len(operands)))
            return steps
    if ops.OUTPUT_TO_INPUT.get(instr.opcode) is tuple_output_to_input:
        # output j of a tuple is operand j, whole: one step (the rule lists every operand per output)
        element = shape.leaf(output_index)
        if not element.is_tuple and output_index < len(operands) and operands[output_index].shape.dims == element.dims:
            key = ("tuple", element.dims)
            steps = table.get(key)
            if steps is None:
                steps = table[key] = ((0, 0, (identity(element.dims),), True),)
            return ((output_index,) + steps[0][1:],)
    structure = structural_key(instr)
    if structure is None:
        return _steps_of(instr, output_index)
    key = (structure, output_index)
    try:
        steps = table.get(key)
    except TypeError:  # an attribute value we cannot hash
        return _steps_of(instr, output_index)
    if steps is None:
        steps = _steps_of(instr, output_index)
        if all(_portable(maps) for _, _, maps, _ in steps):
            table[key] = steps
    return steps


# One step from an operand to a user's output: (output index, maps, passthrough).
ForwardStep = tuple[int, tuple[IndexingMap, ...], bool]


def spread_unknown_forward(
    instr: Instruction, per_output: list[tuple[IndexingMap, ...]]
) -> list[tuple[IndexingMap, ...]]:
    """``per_output`` (input-to-output maps, one entry per output of ``instr``) with an UNDEFINED
    map reaching every output of a tuple-shaped ``instr``: a rule that cannot tell which element
    an operand reaches (a get-tuple-element forwarding a nested tuple) must not leave the other
    elements looking unreached."""
    unknown = tuple(m for maps in per_output for m in maps if m.is_undefined)
    if not unknown or not instr.shape.is_tuple:
        return per_output
    unknown = tuple(dict.fromkeys(unknown))
    padded = list(per_output) + [()] * (instr.shape.num_outputs - len(per_output))
    return [tuple(m for m in maps if not m.is_undefined) + unknown for maps in padded]


def _forward_steps_of(instr: Instruction, operand_index: int) -> tuple[ForwardStep, ...]:
    value_dims = instr.operands[operand_index].shape.dims if instr.operands else None
    steps = []
    for out, maps in enumerate(spread_unknown_forward(instr, input_to_output(instr, operand_index))):
        if maps:
            passthrough = (
                len(maps) == 1
                and value_dims is not None
                and not instr.operands[operand_index].shape.is_tuple
                and not instr.shape.is_tuple
                and instr.shape.dims == value_dims
                and is_identity_on(maps[0], value_dims)
            )
            steps.append((out, maps, passthrough))
    return tuple(steps)


def input_to_output_steps(instr: Instruction, operand_index: int) -> tuple[ForwardStep, ...]:
    """The op's input-to-output maps from one operand, as walk steps (unread outputs left out)."""
    shape = instr.shape
    table: dict[Key, tuple[ForwardStep, ...]] = current().tables[_STEPS]
    key: Key
    if (
        ops.INPUT_TO_OUTPUT.get(instr.opcode) is elementwise_input_to_output
        and not shape.is_tuple
        and instr.operands[operand_index].shape.dims == shape.dims
    ):
        key = ("in2out", shape.dims)
        steps = table.get(key)
        if steps is None:
            steps = table[key] = ((0, (identity(shape.dims),), True),)
        return steps
    if ops.INPUT_TO_OUTPUT.get(instr.opcode) is tuple_input_to_output and operand_index < shape.num_outputs:
        # operand j of a tuple is output j, whole: one step (the rule lists every output per operand)
        element = shape.leaf(operand_index)
        if not element.is_tuple and instr.operands[operand_index].shape.dims == element.dims:
            return ((operand_index, (identity(element.dims),), False),)
    structure = structural_key(instr)
    if structure is None:
        return _forward_steps_of(instr, operand_index)
    key = ("in2out", structure, operand_index)
    try:
        steps = table.get(key)
    except TypeError:
        return _forward_steps_of(instr, operand_index)
    if steps is None:
        steps = _forward_steps_of(instr, operand_index)
        if all(_portable(maps) for _, maps, _ in steps):
            table[key] = steps
    return steps


def composed(outer: IndexingMap, inner: IndexingMap) -> IndexingMap:
    """``outer ∘ inner``, simplified, unused and witness-only range variables dropped; memoised
    (by object, then by value)."""
    tables = current().tables
    by_object: dict[tuple[int, int], tuple[IndexingMap, IndexingMap, IndexingMap]] = tables[_COMPOSED_BY_ID]
    by_id = by_object.get((id(outer), id(inner)))
    if by_id is not None and by_id[0] is outer and by_id[1] is inner:
        return by_id[2]
    key = (outer, inner)
    by_value: dict[tuple[IndexingMap, IndexingMap], IndexingMap] = tables[_COMPOSED]
    hit = by_value.get(key)
    if hit is None:
        hit = drop_witness_range_vars(outer.compose(inner).simplified().remove_unused_variables())
        # runtime-variable descriptions come from these very objects: shared by object, not by value
        if not hit.runtime_vars:
            by_value[key] = hit
    by_object[(id(outer), id(inner))] = (outer, inner, hit)
    return hit
