"""``hlo-index tile PATH --fusion NAME --tile 8,128``: the tile each operand must provide."""
from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.text import Text


def _ints(text: str | None, what: str) -> tuple[int, ...] | None:
    """``8,128`` or ``8x128`` as positive integers; anything else is a usage error (exit 2)."""
    if text is None:
        return None
    parts = [v.strip() for v in text.replace("x", ",").split(",")]
    try:
        values = tuple(int(v) for v in parts)
    except ValueError:
        values = ()
    if not values or any(v <= 0 for v in values):
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}",
                                 param_hint=what)
    return values


@click.command("tile")
@click.argument("path")
@click.option("--fusion", "fusion_name", required=True, help="The fusion (or instruction) to tile.")
@click.option("--tile", "tile_text", required=True, help="Output tile sizes, e.g. 8,128.")
@click.option("--strides", "strides_text", default=None, help="Output tile strides (default 1s).")
@click.option("--range-tiles", "range_text", default=None,
              help="Also tile each operand's range variables (a dot's contracted dims, a reduce's "
                   "reduced dims) with these sizes, one per range variable or one for all, as XLA "
                   "tiles a dot's K; the tile index gains one dim per range variable.")
@click.option("--output", "output_index", default=0, show_default=True,
              help="Which output of a multi-output fusion the tile is on.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def command(path: str, fusion_name: str, tile_text: str, strides_text: str | None,
            range_text: str | None, output_index: int, output_format: str) -> None:
    """Propagate an output tile of a fusion to its operands (offsets as maps of the tile index,
    sizes, strides), or say precisely why an operand's reads are not a tile. An operand read
    through several maps also gets the bounding tile of their union."""
    from ..analyses.tile_constraints import satisfied, size_constraints
    from ..analyses.tiling import TileError, propagate, propagate_with_range_tiles, tile_counts, union_tile
    from ..fusion import output_to_input
    from ..hlo import format_diagnostic, load

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    sizes, strides = _ints(tile_text, "'--tile'"), _ints(strides_text, "'--strides'")
    range_sizes = _ints(range_text, "'--range-tiles'")
    target = None
    for result in load(path):
        if result.module is None:
            err.print(format_diagnostic(result.diagnostics[0]), markup=False)
            sys.exit(2)
        name = fusion_name.lstrip("%")
        for comp in result.module.computations:
            target = target or comp.by_name.get(name)
    if target is None:
        err.print(f"error: no instruction named {fusion_name!r} in {path}", markup=False)
        sys.exit(2)
    try:
        out_shape = target.shape.leaf(output_index)
    except IndexError:
        err.print(f"error: %{target.name} has no output {output_index} (its shape is {target.shape})",
                  markup=False)
        sys.exit(2)
    try:
        counts = tile_counts(out_shape.dims, sizes, strides)
    except TileError as exc:
        # A tile that does not fit the output is a bad argument, like an unreadable input.
        err.print(f"error: {exc}", markup=False)
        sys.exit(2)
    rows = []
    for row in output_to_input(target):
        if row.output != output_index:
            continue
        operand = target.operands[row.operand] if row.operand < len(target.operands) else None
        try:
            tiles = [_tile(m, out_shape.dims, sizes, strides, range_sizes, propagate,
                           propagate_with_range_tiles) for m in row.maps]
        except TileError as exc:
            err.print(f"error: {exc}", markup=False)
            sys.exit(2)
        union = union_tile(tiles)
        constraints = [c for m in row.maps for c in size_constraints(m)]
        rows.append({"operand": row.operand, "name": operand.name if operand else "",
                     "shape": str(operand.shape) if operand else "",
                     "tiles": [t.to_json() for t in tiles],
                     "union": union.to_json() if union is not None else None,
                     "tile_size_constraints": [{"constraint": c, "satisfied": satisfied(c, sizes)}
                                               for c in dict.fromkeys(constraints)]})
    data = {"fusion": target.name, "output_shape": str(out_shape), "tile": list(sizes),
            "strides": list(strides or (1,) * len(sizes)), "tile_counts": list(counts),
            "operands": rows}
    if output_format == "json":
        click.echo(json.dumps(data, indent=1))
        return
    out = Console(highlight=False)
    out.print(Text(f"%{target.name}: output {data['output_shape']}, tile {list(sizes)} strides "
                   f"{data['strides']} ({'x'.join(map(str, counts))} tiles)", style="bold"), soft_wrap=True)
    for row in rows:
        out.print(Text(f"  operand {row['operand']} %{row['name']}  {row['shape']}"), soft_wrap=True)
        if not row["tiles"]:
            out.print(Text("      not read by this output", style="dim"))
        for t in row["tiles"]:
            if t["is_tile"]:
                out.print(Text(f"      tile sizes {t['sizes']} strides {t['strides']}", style="green"))
                out.print(Text(f"      offsets {t['offsets']}"), soft_wrap=True)
                if t["signed_strides"] != t["strides"]:
                    out.print(Text(f"      XLA form: first element at {t['first_offsets']}, strides "
                                   f"{t['signed_strides']} (negative: read backwards, a reverse)"),
                              soft_wrap=True)
                for note in t["notes"]:
                    out.print(Text(f"      note: {note}", style="dim"), soft_wrap=True)
            else:
                out.print(Text(f"      not a tile: {t['reason']}", style="red"), soft_wrap=True)
        for c in row["tile_size_constraints"]:
            mark = "met" if c["satisfied"] else "not met: XLA would reject these sizes"
            out.print(Text(f"      XLA's tile size constraint: {c['constraint']}  ({mark})",
                           style="dim" if c["satisfied"] else "yellow"), soft_wrap=True)
        union = row["union"]
        if union is not None:
            head = f"      union of {union['union_of_maps']} maps (bounding tile)"
            if not union["is_tile"]:
                out.print(Text(f"{head}: not a tile: {union['reason']}", style="red"), soft_wrap=True)
                continue
            fill = {True: "the maps fill it", False: "over-approximates: the maps leave holes",
                    None: "too big to check whether the maps fill it"}[union["exact"]]
            out.print(Text(f"{head}: sizes {union['sizes']} strides {union['strides']} ({fill})",
                           style="cyan"), soft_wrap=True)
            out.print(Text(f"        offsets {union['offsets']}"), soft_wrap=True)


def _tile(m, dims, sizes, strides, range_sizes, propagate, propagate_with_range_tiles):
    """One map's tile; with ``--range-tiles`` its range variables are tiled too."""
    if range_sizes is None or not m.range_vars or m.is_undefined:
        return propagate(m, dims, sizes, strides)
    per_var = range_sizes * len(m.range_vars) if len(range_sizes) == 1 else range_sizes
    return propagate_with_range_tiles(m, dims, sizes, per_var, strides)
