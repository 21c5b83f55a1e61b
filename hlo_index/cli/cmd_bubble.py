"""``hlo-index bubble PATH...``: can each slice/reshape pair be swapped without changing the result?"""
from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.text import Text

VERDICT_STYLE = {"legal": "green", "illegal": "red", "unprovable": "yellow"}


@click.command("bubble")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Readable text, or JSON data on stdout.")
def command(paths: tuple[str, ...], output_format: str) -> None:
    """Find every reshape(slice(x)) and slice(reshape(x)) pair (dynamic-slice too) and decide
    from the indexing maps whether the other order computes the same tensor.

    Verdicts: legal (with the swapped pair and the rewritten module), illegal (with the reason)
    or unprovable (e.g. a runtime offset whose divisibility is unknown).
    """
    from ..analyses.reorder import analyse_module
    from ..hlo import format_diagnostic, load

    modules, failed = [], False
    for path in paths:
        for result in load(path):
            if result.module is None:
                failed = True
                # path:line:col, the source line and a caret; unwrapped so editors can jump to it
                for d in result.diagnostics[:1] or ():
                    click.echo(format_diagnostic(d), err=True)
                if not result.diagnostics:
                    click.echo(f"{path}: error: could not be read", err=True)
                continue
            modules.append((result.module, analyse_module(result.module)))
    if output_format == "json":
        data = {"modules": [{"name": m.name, "chains": [c.to_json() for c in chains]}
                            for m, chains in modules]}
        click.echo(json.dumps(data, indent=1))
    else:
        out = Console(highlight=False)
        for module, chains in modules:
            out.print(Text(f"module {module.name}: {len(chains)} slice/reshape pair(s)", style="bold"))
            for c in chains:
                line = Text("  ")
                line.append(c.verdict, style=VERDICT_STYLE.get(c.verdict, ""))
                pair = (f"%{c.slice} -> %{c.reshape}" if c.order == "slice_then_reshape"
                        else f"%{c.reshape} -> %{c.slice}")
                line.append(f"  {pair}  ({c.order.replace('_', ' ')}, in %{c.computation})")
                out.print(line, soft_wrap=True)
                out.print(Text(f"      {c.reason}"), soft_wrap=True)
    if failed:
        sys.exit(2)
