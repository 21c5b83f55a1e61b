"""``hlo-index simplify MAP``: print the range-aware canonical form of an indexing map."""

from __future__ import annotations

import json

import click

from hlo_index.affine import IndexingMap, MapSyntaxError, parse_map

from .options import color_option, format_option


def read_map_or_exit(text: str, what: str = "MAP") -> IndexingMap:
    """Parse map text; on failure print ``error: ...`` with a caret to stderr and exit 2."""
    try:
        return parse_map(text)
    except MapSyntaxError as err:
        click.echo(f"error: cannot read {what}: {err}", err=True)
        click.echo(err.caret_display(), err=True)
        raise SystemExit(2) from None
    except ValueError as err:
        click.echo(f"error: invalid {what}: {err}", err=True)
        raise SystemExit(2) from None


def emit(m: IndexingMap, output_format: str, color: str = "never") -> None:
    from .output import color_enabled, echo

    if output_format == "json":
        from ..render.map_json import map_document

        echo(json.dumps(map_document(m), indent=2))
    else:
        from ..render.text import Painter

        echo(Painter(color_enabled(color)).map(str(m)))


@click.command("simplify")
@click.argument("map_text", metavar="MAP")
@format_option(help="Output format (JSON schema hlo-index-map/1).")
@color_option
def command(map_text: str, fmt: str, color: str) -> None:
    """Simplify an indexing map given in XLA text form, e.g.

    hlo-index simplify "(d0) -> (d0 floordiv 8 * 8 + d0 mod 8), domain: d0 in [0, 31]"
    """
    emit(read_map_or_exit(map_text).simplified(), fmt, color)
