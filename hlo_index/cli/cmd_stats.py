"""``hlo-index stats PATH...``: modules, computations, instructions, fusions by kind, opcode histogram."""
from __future__ import annotations

import json
import sys
from collections import Counter

import click

EXIT_OK, EXIT_UNREADABLE = 0, 2


def module_stats(module) -> dict:
    """Counts of one module, as plain data (the JSON output and the table are made from this)."""
    opcodes = Counter(i.opcode for i in module.instructions)
    kinds = Counter(str(f.attrs.get("kind", "")) for f in module.fusions)
    return {
        "module": module.name,
        "computations": len(module.computations),
        "instructions": sum(len(c.instructions) for c in module.computations),
        "fusions": sum(kinds.values()),
        "fusion_kinds": dict(sorted(kinds.items())),
        "opcodes": dict(sorted(opcodes.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def _render_table(results: list[dict], console) -> None:
    from rich.table import Table
    from rich.text import Text
    for entry in results:
        # The heading is printed on its own: as a table title it wraps to the (narrow) table width.
        console.print(Text(f"{entry['module']}  ({entry['path']})", style="bold"), soft_wrap=True)
        table = Table()
        table.add_column("item")
        table.add_column("count", justify="right")
        table.add_row("computations", str(entry["computations"]))
        table.add_row("instructions", str(entry["instructions"]))
        table.add_row("fusions", str(entry["fusions"]))
        for kind, n in entry["fusion_kinds"].items():
            table.add_row(f"  fusion kind={kind or '?'}", str(n))
        table.add_section()
        for opcode, n in entry["opcodes"].items():
            table.add_row(opcode, str(n))
        console.print(table)
    if len(results) > 1:
        console.print(f"{len(results)} modules, "
                      f"{sum(e['computations'] for e in results)} computations, "
                      f"{sum(e['instructions'] for e in results)} instructions, "
                      f"{sum(e['fusions'] for e in results)} fusions")


@click.command("stats")
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="A Rich table per module, or JSON on stdout.")
def command(paths: tuple[str, ...], fmt: str) -> None:
    """Counts of modules, computations, instructions, fusions by kind and opcodes.

    PATH is an HLO text file, a .gz, '-' for stdin, or an XLA dump directory. Unreadable inputs
    are reported on stderr (the others are still counted) and make the exit code 2.
    """
    from hlo_index.hlo import format_diagnostic, load
    results = []
    failed = False
    for path in paths:
        for loaded in load(path):
            for d in loaded.diagnostics:
                click.echo(format_diagnostic(d), err=True)
            if loaded.module is None:
                failed = True
                continue
            results.append({"path": loaded.path, **module_stats(loaded.module)})
    if fmt == "json":
        click.echo(json.dumps({"modules": results}, indent=2))
    else:
        from rich.console import Console
        _render_table(results, Console(file=sys.stdout))
    if failed:
        sys.exit(EXIT_UNREADABLE)
