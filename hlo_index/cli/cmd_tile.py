"""``hlo-index tile PATH --fusion NAME --tile 8,128``: the tile each operand must provide."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console

from .options import color_option, format_option


def _ints(text: str, what: str) -> tuple[int, ...]:
    """``8,128`` or ``8x128`` as positive integers; anything else is a usage error (exit 2)."""
    parts = [v.strip() for v in text.replace("x", ",").split(",")]
    try:
        values = tuple(int(v) for v in parts)
    except ValueError:
        values = ()
    if not values or any(v <= 0 for v in values):
        raise click.BadParameter(f"expected comma-separated positive integers, got {text!r}", param_hint=what)
    return values


@click.command("tile")
@click.argument("path")
@click.option("--fusion", "fusion_name", required=True, help="The fusion (or instruction) to tile.")
@click.option("--tile", "tile_text", required=True, help="Output tile sizes, e.g. 8,128.")
@click.option("--strides", "strides_text", default=None, help="Output tile strides (default 1s).")
@click.option(
    "--range-tiles",
    "range_text",
    default=None,
    help="Also tile each operand's range variables (a dot's contracted dims, a reduce's "
    "reduced dims) with these sizes, one per range variable or one for all, as XLA "
    "tiles a dot's K; the tile index gains one dim per range variable.",
)
@click.option(
    "--output",
    "output_index",
    default=0,
    show_default=True,
    help="Which output of a multi-output fusion the tile is on.",
)
@format_option()
@color_option
def command(
    path: str,
    fusion_name: str,
    tile_text: str,
    strides_text: str | None,
    range_text: str | None,
    output_index: int,
    fmt: str,
    color: str,
) -> None:
    """Propagate an output tile of a fusion to its operands (offsets as maps of the tile index,
    sizes, strides), or say precisely why an operand's reads are not a tile. An operand read
    through several maps also gets the bounding tile of their union."""
    from ..report.tile import TileRequestError, tile_report

    sizes = _ints(tile_text, "'--tile'")
    strides = _ints(strides_text, "'--strides'") if strides_text is not None else None
    range_sizes = _ints(range_text, "'--range-tiles'") if range_text is not None else None
    try:
        report = tile_report(path, fusion_name, sizes, strides, range_sizes, output_index)
    except TileRequestError as exc:
        Console(stderr=True, highlight=False, soft_wrap=True).print(str(exc), markup=False)
        sys.exit(2)
    if fmt == "json":
        from ..render.tile import tile_json

        click.echo(json.dumps(tile_json(report), indent=1))
        return
    from ..render.tile import render_tile_text
    from .cmd_analyze import make_console

    render_tile_text(report, make_console(color))
