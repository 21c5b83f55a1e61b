"""``tile``'s report: the tile each operand of a fusion must provide for one output tile."""

from __future__ import annotations

from dataclasses import dataclass

from ..analyses.tiling import MapTile, UnionTile

SCHEMA = "hlo-index-tile/1"


class TileRequestError(ValueError):
    """The input, the target or the tile asked for cannot be used (the message is the whole
    ``error:`` line, or a positioned diagnostic)."""


@dataclass(frozen=True, slots=True)
class OperandTiles:
    operand: int
    name: str
    shape: str
    tiles: list[MapTile]  # one per map the operand is read through
    union: UnionTile | None  # the bounding tile of several maps' tiles
    constraints: list[tuple[str, bool]]  # XLA's tile size constraints, and whether the sizes meet each


@dataclass(frozen=True, slots=True)
class TileReport:
    fusion: str
    output_shape: str
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    counts: tuple[int, ...]  # tiles along each output dim
    operands: list[OperandTiles]


def tile_report(
    path: str,
    fusion_name: str,
    sizes: tuple[int, ...],
    strides: tuple[int, ...] | None = None,
    range_sizes: tuple[int, ...] | None = None,
    output_index: int = 0,
) -> TileReport:
    """Propagate the output tile ``sizes`` / ``strides`` of output ``output_index`` of the
    instruction ``fusion_name`` in ``path`` to its operands; ``range_sizes`` also tiles each map's
    range variables. Raises ``TileRequestError`` for anything that cannot be answered."""
    from ..analyses.tile_constraints import satisfied, size_constraints
    from ..analyses.tiling import TileError, tile_counts, union_tile
    from ..fusion import output_to_input
    from ..hlo import format_diagnostic, load

    found = []  # (module, instruction): every module of the path that has the name
    name = fusion_name.lstrip("%")
    for result in load(path):
        if result.module is None:
            raise TileRequestError(format_diagnostic(result.diagnostics[0]))
        for comp in result.module.computations:
            instr = comp.by_name.get(name)
            if instr is not None:
                found.append((result.module, instr))
                break
    if not found:
        raise TileRequestError(f"error: no instruction named {fusion_name!r} in {path}")
    if len(found) > 1:
        # a dump directory (or a file of several modules) names its fusions alike: say which
        # modules have it rather than tile the first
        where = "; ".join(f"{m.name} ({m.source})" for m, _ in found[:5])
        more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
        raise TileRequestError(
            f"error: {len(found)} modules in {path} have an instruction named {fusion_name!r}: "
            f"{where}{more}; give the file of one"
        )
    target = found[0][1]
    try:
        out_shape = target.shape.leaf(output_index)
    except IndexError:
        raise TileRequestError(
            f"error: %{target.name} has no output {output_index} (its shape is {target.shape})"
        ) from None
    try:
        # A tile that does not fit the output is a bad argument, like an unreadable input.
        counts = tile_counts(out_shape.dims, sizes, strides)
        operands = []
        for row in output_to_input(target):
            if row.output != output_index:
                continue
            operand = target.operands[row.operand] if row.operand < len(target.operands) else None
            tiles = [_tile(m, out_shape.dims, sizes, strides, range_sizes) for m in row.maps]
            constraints = dict.fromkeys(c for m in row.maps for c in size_constraints(m))
            operands.append(
                OperandTiles(
                    row.operand,
                    operand.name if operand else "",
                    str(operand.shape) if operand else "",
                    tiles,
                    union_tile(tiles),
                    [(c, satisfied(c, sizes)) for c in constraints],
                )
            )
    except TileError as exc:
        raise TileRequestError(f"error: {exc}") from None
    return TileReport(
        target.name, str(out_shape), tuple(sizes), tuple(strides or (1,) * len(sizes)), tuple(counts), operands
    )


def _tile(m, dims, sizes, strides, range_sizes) -> MapTile:
    """One map's tile; with ``range_sizes`` its range variables are tiled too."""
    from ..analyses.tiling import propagate, propagate_with_range_tiles

    if range_sizes is None or not m.range_vars or m.is_undefined:
        return propagate(m, dims, sizes, strides)
    per_var = range_sizes * len(m.range_vars) if len(range_sizes) == 1 else range_sizes
    return propagate_with_range_tiles(m, dims, sizes, per_var, strides)
