"""``hlo-index compose OUTER INNER``: the simplified composition ``OUTER ∘ INNER``."""

from __future__ import annotations

import click

from .cmd_simplify import emit, read_map_or_exit
from .options import color_option, format_option


@click.command("compose")
@click.argument("outer_text", metavar="OUTER")
@click.argument("inner_text", metavar="INNER")
@format_option(help="Output format (JSON schema hlo-index-map/1).")
@color_option
def command(outer_text: str, inner_text: str, fmt: str, color: str) -> None:
    """Compose two indexing maps: x -> OUTER(INNER(x)). INNER's results feed OUTER's dims."""
    outer = read_map_or_exit(outer_text, "OUTER")
    inner = read_map_or_exit(inner_text, "INNER")
    if outer.num_dims != inner.num_results and not (
        outer.is_undefined or inner.is_undefined or outer.is_known_empty or inner.is_known_empty
    ):
        click.echo(f"error: OUTER has {outer.num_dims} dims but INNER has {inner.num_results} results", err=True)
        raise SystemExit(2)
    emit(outer.compose(inner), fmt, color)
