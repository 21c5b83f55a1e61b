"""``hlo-index layout SHAPE``: where each element of a (tiled) layout lives in memory."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console

from ..hlo.shapes import ShapeTextError, parse_shape_text
from .options import color_option, format_option


@click.command("layout")
@click.argument("shape_text", metavar="SHAPE")
@format_option(help="A picture, or JSON data on stdout.")
@click.option(
    "--svg",
    "svg_path",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write the picture as SVG to this file.",
)
@click.option(
    "--max-grids", default=8, show_default=True, help="Rank > 2: draw at most this many grids (one per leading index)."
)
@color_option
def command(shape_text: str, fmt: str, svg_path: str | None, max_grids: int, color: str) -> None:
    """Draw SHAPE's layout: each element's linear physical offset, tiles and padding.

    SHAPE is shape text such as 'f32[3,5]{1,0:T(2,2)}' or 'bf16[4,8]{1,0:T(2,4)(2,1)}'.
    """
    # Imported here so that listing the commands never pays for (or trips over) the map engine.
    from ..layout import LayoutError
    from ..render.layout_picture import layout_json, render_svg, render_text
    from ..report.layout_picture import OFFSETS_LIMIT, build_picture, layout_offsets

    err = Console(stderr=True, soft_wrap=True)  # a diagnostic is never cut at the terminal width
    try:
        start = len(shape_text) - len(shape_text.lstrip())
        if shape_text[start : start + 1] == "(":
            # a tuple's elements are laid out apart: there is no one layout to draw
            raise ShapeTextError(
                "a tuple has no layout of its own: give one of its element shapes", shape_text, start + 1
            )
        shape = parse_shape_text(shape_text)
    except ShapeTextError as exc:
        err.print(exc.display(), markup=False, highlight=False)
        sys.exit(2)
    try:
        if fmt == "json":
            data = layout_json(layout_offsets(shape, limit=OFFSETS_LIMIT))
            click.echo(json.dumps({"schema": "hlo-index-layout/1", **data}))
            if data["offsets"] is None:
                err.print(
                    f"note: offsets omitted (null): the shape has {shape.num_elements} "
                    f"elements, more than {OFFSETS_LIMIT}",
                    highlight=False,
                )
        if fmt == "text" or svg_path:
            picture = build_picture(shape, max_grids=max_grids)
            if fmt == "text":
                from .cmd_analyze import make_console

                console = make_console(color)
                console.highlight = False  # the grid's numbers carry their own styles
                render_text(picture, console)
            if svg_path:
                with open(svg_path, "w", encoding="utf-8") as out:
                    out.write(render_svg(picture))
    except LayoutError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(2)
    except BrokenPipeError:
        raise  # the reader left: not an SVG problem (the command group exits 0)
    except OSError as exc:
        err.print(f"{svg_path}: error: cannot write the SVG: {exc.strerror}", markup=False, highlight=False)
        sys.exit(2)
