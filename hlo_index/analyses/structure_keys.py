"""One key per fusion for what the GPU analyses read of it: the fused computation's structure and
the shapes (with their layouts) of its result and operands. Fusions with equal keys (transformer
layers repeat theirs) get equal coalescing figures and costs; each analysis adds what else it reads
(the backend kind, the backend config) to this key."""

from __future__ import annotations

from ..context import current, register_table
from ..fusion.fingerprint import fingerprint_id, shape_token
from ..hlo.model import Instruction

# Per analysis context: id(fusion) -> (fusion, its key); the entry keeps the fusion alive, so ids stay its.
_KEYS = register_table("analyses.structure_keys.fusion")


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
