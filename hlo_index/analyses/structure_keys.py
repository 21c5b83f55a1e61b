"""One key per fusion for what the GPU analyses read of it: the fused computation's structure and
the shapes (with their layouts) of its result and operands. Fusions with equal keys (transformer
layers repeat theirs) get equal coalescing figures and costs; each analysis adds what else it reads
(the backend kind, the backend config) to this key, or takes ``fusion_structure_key``, which has
both."""

from __future__ import annotations

from operator import attrgetter

from ..context import current, register_table
from ..fusion.fingerprint import fingerprint_id, shape_token
from ..hlo.model import Instruction

# Per analysis context: id(fusion) -> (fusion, its key); the entry keeps the fusion alive, so ids stay its.
_KEYS = register_table("analyses.structure_keys.fusion")
_STRUCTURE_KEYS = register_table("analyses.structure_keys.structure")  # likewise, ``fusion_structure_key``
# fused computation structure -> the positions of its custom-calls
_CUSTOM_CALLS = register_table("analyses.structure_keys.custom_calls")
_OPCODE = attrgetter("opcode")


def fusion_shape_key(fusion: Instruction) -> tuple | None:
    """(the fused computation's ``fingerprint_id``, the result's shape token, the operands' shape
    tokens), computed once per fusion; None for a fusion without a fused computation."""
    table = current().tables[_KEYS]
    hit = table.get(id(fusion))
    if hit is not None and hit[0] is fusion:
        return hit[1]
    comp = fusion.fused_computation
    key = None
    if comp is not None:
        key = (fingerprint_id(comp), shape_token(fusion.shape), tuple([shape_token(o.shape) for o in fusion.operands]))
    table[id(fusion)] = (fusion, key)
    return key


def fusion_structure_key(fusion: Instruction) -> tuple | None:
    """Equal for fusions whose figures are equal: ``fusion_shape_key`` (the fused computation's
    structure and the operand and result shapes with their layouts), the fusion's kind and
    backend config (tiling, Triton, cuBLAS configs), and the backend configs of the custom-calls
    inside (which the structure leaves out); computed once per fusion. None without a fused
    computation."""
    tables = current().tables
    memo = tables[_STRUCTURE_KEYS]
    hit = memo.get(id(fusion))
    if hit is not None and hit[0] is fusion:
        return hit[1]
    shapes = fusion_shape_key(fusion)
    comp = fusion.fused_computation
    key = None
    if shapes is not None and comp is not None:  # the shape key is None exactly when there is no computation
        # equal structures have the same opcode at each position
        positions = tables[_CUSTOM_CALLS].get(shapes[0])
        if positions is None:
            opcodes = list(map(_OPCODE, comp.instructions))
            positions = tables[_CUSTOM_CALLS][shapes[0]] = (
                tuple(k for k, op in enumerate(opcodes) if op == "custom-call") if "custom-call" in opcodes else ()
            )
        inner = tuple(comp.instructions[k].attrs.get("backend_config") for k in positions) if positions else ()
        attrs = fusion.attrs
        key = (shapes, attrs.get("kind"), attrs.get("backend_config"), inner)
    memo[id(fusion)] = (fusion, key)
    return key
