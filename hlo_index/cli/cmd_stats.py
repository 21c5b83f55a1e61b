"""``hlo-index stats PATH...``: modules, computations, instructions, fusions by kind, opcode histogram."""

from __future__ import annotations

import sys

import click

from .options import color_option, format_option, jobs_option

EXIT_OK, EXIT_UNREADABLE = 0, 2


@click.command("stats")
@click.argument("paths", nargs=-1, required=True)
@format_option(help="A table per module, or JSON on stdout (schema hlo-index-stats/1).")
@jobs_option(help="Worker processes when several files are given (a directory counts as its files).")
@color_option
def command(paths: tuple[str, ...], fmt: str, jobs: int, color: str) -> None:
    """Counts of modules, computations, instructions, fusions by kind and opcodes.

    PATH is an HLO text file, a .gz, '-' for stdin, or an XLA dump directory. Unreadable inputs
    are reported on stderr (the others are still counted) and make the exit code 2.
    """
    from ..report.driver import expand_paths
    from ..report.stats import stats_of_paths
    from .cmd_analyze import make_console, progress_bar
    from .output import echo

    results = []
    failed = False
    files = expand_paths(list(paths))  # a directory's files one by one: the bar counts them
    with progress_bar(files) as (file_done, _):
        for found, messages, bad in stats_of_paths(files, jobs):
            results.extend(found)
            for m in messages:
                click.echo(m, err=True)
            failed = failed or bad
            if file_done is not None:
                file_done(None)
    if fmt == "json":
        from ..render.stats import stats_json

        echo(stats_json(results))
    else:
        from ..render.stats import render_stats_table

        render_stats_table(results, make_console(color))
    if failed:
        sys.exit(EXIT_UNREADABLE)
