"""``hlo-index graph``: HLO dumps as graph files a graph viewer opens (Model Explorer)."""

from __future__ import annotations

import sys

import click


@click.command("graph")
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["model-explorer"]), default="model-explorer", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write the graph to FILE instead of standard output.")
def command(paths, fmt, output) -> None:
    """Write PATH... as one Model Explorer graph file (open it with `model-explorer FILE`).

    One graph per computation that is not a fusion body (the ENTRY first); each fusion is a layer
    holding its fused ops; node ids are instruction names; edges follow operands. Per-operand
    figures on the same nodes: `analyze --format model-explorer-node-data`. Exit 0; 2 when an
    input could not be read or the file not written.
    """
    from .model_explorer_files import write_graph_file

    sys.exit(write_graph_file(paths, output))
