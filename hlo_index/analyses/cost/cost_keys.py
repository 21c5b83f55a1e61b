"""One key per fusion for what the cost model reads of it: ``fusion_structure_key``, except where
the structure holds what no figure of the model reads.

A fusion that only slices its parameters (an FSDP step's parameter shards: 550 of the 743 fused
structures of the A100 Pax step, each slicing the same flat buffer at its own offset) has the key
of every such fusion with the same shapes, strides and wiring: its flops (none), bytes (each
slice's result), utilizations (result over operand elements) and launch grid (the result's shape)
do not depend on where a slice starts. Whether its reads are coalesced may, so a cost shared under
this key must take the verdicts as given (``CostSession.reads_maps`` says when it cannot).
"""

from __future__ import annotations

from operator import attrgetter

from ...context import current, register_table
from ...fusion.fingerprint import shape_token
from ...hlo.model import Instruction
from ..structure_keys import fusion_structure_key

# Per analysis context: fingerprint id of a fused computation -> its sliced-parameters outline,
# or None where it does anything else
_OUTLINES = register_table("analyses.cost.cost_keys.outlines")
_SLICING = frozenset({"parameter", "slice", "tuple"})
_OPCODE, _STRIDE = attrgetter("opcode"), attrgetter("stride")


def fusion_cost_key(fusion: Instruction) -> tuple | None:
    """``fusion_structure_key(fusion)`` (the same object, where nothing is left out), with a
    sliced-parameters fusion's slice starts left out."""
    key = fusion_structure_key(fusion)
    if key is None:
        return None
    outlines = current().tables[_OUTLINES]
    outline = outlines.get(key[0][0], False)
    if outline is False:
        outline = outlines[key[0][0]] = _sliced_parameters(fusion)
    return key if outline is None else (("sliced parameters", outline, *key[0][1:]), *key[1:])


def _sliced_parameters(fusion: Instruction) -> tuple | None:
    """The fused computation's instructions as (opcode, shape token, operand positions, parameter
    number, slice strides), and the root's position, where it holds only parameters, slices and
    tuples of them; else None."""
    comp = fusion.fused_computation
    if comp is None or not comp.instructions or not _SLICING.issuperset(map(_OPCODE, comp.instructions)):
        return None
    instructions = comp.instructions
    position = {id(instr): k for k, instr in enumerate(instructions)}
    rows = []
    for instr in instructions:
        strides = tuple(map(_STRIDE, instr.attrs.get("slice", ()))) if instr.opcode == "slice" else ()
        wiring = tuple(position.get(id(o), -1) for o in instr.operands)
        rows.append((instr.opcode, shape_token(instr.shape), wiring, instr.parameter_number, strides))
    return (tuple(rows), position.get(id(comp.root), -1))
