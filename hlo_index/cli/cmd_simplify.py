"""``hlo-index simplify MAP``: print the range-aware canonical form of an indexing map."""
from __future__ import annotations

import json

import click

from hlo_index.affine import IndexingMap, MapSyntaxError, parse_map


def map_to_json(m: IndexingMap) -> dict:
    """Data-only description of a map (shared with ``compose``)."""
    if m.is_undefined:
        return {"map": str(m), "undefined": True, "reason": m.undefined_reason}
    if m.is_known_empty:
        return {"map": str(m), "known_empty": True, "num_dims": m.num_dims,
                "num_results": m.num_results}
    return {
        "map": str(m),
        "mlir": m.to_mlir(),
        "dims": [[b.lo, b.hi] for b in m.dims],
        "range_vars": [[b.lo, b.hi] for b in m.range_vars],
        "runtime_vars": [[v.interval.lo, v.interval.hi] for v in m.runtime_vars],
        "results": [str(e) for e in m.results],
        "constraints": [{"expr": str(e), "interval": [b.lo, b.hi]} for e, b in m.constraints],
        "known_empty": False,
        "undefined": False,
    }


def read_map_or_exit(text: str, what: str = "MAP") -> IndexingMap:
    """Parse map text; on failure print ``error: ...`` with a caret to stderr and exit 2."""
    try:
        return parse_map(text)
    except MapSyntaxError as err:
        click.echo(f"error: cannot read {what}: {err}", err=True)
        click.echo(err.caret_display(), err=True)
        raise SystemExit(2)
    except ValueError as err:
        click.echo(f"error: invalid {what}: {err}", err=True)
        raise SystemExit(2)


SCHEMA = "hlo-index-map/1"


def emit(m: IndexingMap, output_format: str, color: str = "never") -> None:
    from ..render.text import Painter
    from .output import color_enabled, echo
    if output_format == "json":
        echo(json.dumps({"schema": SCHEMA, **map_to_json(m)}, indent=2))
    else:
        echo(Painter(color_enabled(color)).map(str(m)))


COLOR_OPTION = click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
                            show_default=True)


@click.command("simplify")
@click.argument("map_text", metavar="MAP")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Output format (JSON schema hlo-index-map/1).")
@COLOR_OPTION
def command(map_text: str, output_format: str, color: str) -> None:
    """Simplify an indexing map given in XLA text form, e.g.

    hlo-index simplify "(d0) -> (d0 floordiv 8 * 8 + d0 mod 8), domain: d0 in [0, 31]"
    """
    emit(read_map_or_exit(map_text).simplified(), output_format, color)
