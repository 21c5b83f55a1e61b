"""``hlo-index stats PATH...``: modules, computations, instructions, fusions by kind, opcode histogram."""
from __future__ import annotations

import json
import sys
from collections import Counter

import click

EXIT_OK, EXIT_UNREADABLE = 0, 2
SCHEMA = "hlo-index-stats/1"


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


def _stats_of(path: str) -> tuple[list[dict], list[str], bool]:
    """(stats of each module, formatted diagnostics, whether some module failed) for one path."""
    from hlo_index.hlo import format_diagnostic, load
    results, messages, failed = [], [], False
    for loaded in load(path):
        messages.extend(format_diagnostic(d) for d in loaded.diagnostics)
        if loaded.module is None:
            failed = True
            continue
        results.append({"path": loaded.path, **module_stats(loaded.module)})
    return results, messages, failed


def _each_path(paths: list[str], jobs: int):
    """``_stats_of`` for every path in order; files go to worker processes with --jobs (stdin here)."""
    if jobs > 1 and len(paths) > 1:
        import multiprocessing
        import os
        ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
        files = [p for p in paths if p != "-"]
        with ctx.Pool(max(1, min(jobs, len(files)))) as pool:
            results = iter(pool.imap(_stats_of, files))
            for path in paths:
                yield _stats_of(path) if path == "-" else next(results)
        return
    for path in paths:
        yield _stats_of(path)


@click.command("stats")
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="A table per module, or JSON on stdout (schema hlo-index-stats/1).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes when several files are given (a directory counts as its files).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(paths: tuple[str, ...], fmt: str, jobs: int, color: str) -> None:
    """Counts of modules, computations, instructions, fusions by kind and opcodes.

    PATH is an HLO text file, a .gz, '-' for stdin, or an XLA dump directory. Unreadable inputs
    are reported on stderr (the others are still counted) and make the exit code 2.
    """
    from ..report.driver import expand_paths
    from .cmd_analyze import make_console
    from .output import echo
    results = []
    failed = False
    for found, messages, bad in _each_path(expand_paths(list(paths)) if jobs > 1 else list(paths), jobs):
        results.extend(found)
        for m in messages:
            click.echo(m, err=True)
        failed = failed or bad
    if fmt == "json":
        echo(json.dumps({"schema": SCHEMA, "modules": results}, indent=2))
    else:
        _render_table(results, make_console(color))
    if failed:
        sys.exit(EXIT_UNREADABLE)
