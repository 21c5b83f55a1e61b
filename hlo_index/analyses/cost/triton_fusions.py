"""Which fusions XLA emits with Triton, read from their backend config: block-level fusions (tiled
by a ``block_level_fusion_config``) and Triton matmuls. The cost asks this of every GPU target; the
indexing model, which times such fusions, is imported only when one needs it."""

from __future__ import annotations

from ...hlo.backend_config import backend_config
from ...hlo.model import Instruction


class UnreadableConfig(ValueError):
    """A ``block_level_fusion_config`` whose tiles or warps are not integers: XLA's backend fails
    to read it into its proto, so no tiling or grid follows from it."""


def block_level_config(fusion: Instruction) -> tuple[list[list[int]], int | None] | None:
    """The output tiles and warps of ``block_level_fusion_config`` in a fusion's backend_config;
    ``UnreadableConfig`` where they are not integers."""
    config = backend_config(fusion) or {}
    fbc = config.get("fusion_backend_config") or {}
    blc = fbc.get("block_level_fusion_config")
    if not blc:
        return None
    try:
        tiles = [[int(s) for s in t.get("sizes", [])] for t in blc.get("output_tiles", [])]
        warps = blc.get("num_warps")
        return tiles, int(warps) if warps is not None else None
    except (AttributeError, TypeError, ValueError) as e:
        raise UnreadableConfig(f"block_level_fusion_config of %{fusion.name} is not read: {e}") from None


def block_level_launch(fusion: Instruction) -> dict | None:
    """The grid of a fusion tiled by its ``block_level_fusion_config``: one block per output tile,
    32 threads per warp; None without a config (a classic ``__triton_gemm`` fusion) or for several
    outputs."""
    try:
        config = block_level_config(fusion)
    except UnreadableConfig:
        return None
    if config is None or fusion.shape.is_tuple:
        return None
    tiles, warps = config
    if len(tiles) != 1 or warps is None:
        return None
    tile = tiles[0]
    dims = fusion.shape.dims
    if len(tile) != len(dims) or not all(t > 0 for t in tile):
        return None
    blocks = 1
    for d, t in zip(dims, tile):
        blocks *= -(-d // t)
    return {"blocks": blocks, "threads_per_block": 32 * warps}


def triton_kind(fusion: Instruction) -> str:
    """The ``fusion_backend_config`` kind of a fusion XLA emits with Triton (every such kind starts
    ``__triton``), else "": a config that never says ``__triton`` is not read."""
    text = fusion.attrs.get("backend_config")
    if fusion.opcode != "fusion" or (isinstance(text, str) and "__triton" not in text):
        return ""
    config = backend_config(fusion) or {}
    kind = (config.get("fusion_backend_config") or {}).get("kind", "")
    return kind if isinstance(kind, str) and kind.startswith("__triton") else ""


def is_block_level(fusion: Instruction) -> bool:
    # a nested gemm fusion is a matmul: its K loop runs over the nested fusions' tiles, which the
    # per-tile model does not follow (it would take the whole contraction as one tile and call it spilled)
    return triton_kind(fusion) == "__triton"


TRITON_GEMM_KINDS = ("__triton_gemm", "__triton_nested_gemm_fusion")


def is_triton_gemm(fusion: Instruction) -> bool:
    """A fusion XLA emits as a Triton matmul: kind ``__triton_gemm`` (tiled by a ``triton_gemm_config``)
    or ``__triton_nested_gemm_fusion`` (current XLA: the dot's operands are nested fusions, tiled by
    a ``block_level_fusion_config``)."""
    return triton_kind(fusion) in TRITON_GEMM_KINDS


__all__ = [
    "TRITON_GEMM_KINDS",
    "block_level_config",
    "block_level_launch",
    "is_block_level",
    "is_triton_gemm",
    "triton_kind",
]
