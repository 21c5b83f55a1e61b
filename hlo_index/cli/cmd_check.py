"""``hlo-index check``: fail CI when a fusion reads an operand through more than one distinct map."""
from __future__ import annotations

import sys

import click

from .cmd_analyze import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, make_console, print_diagnostics, run_reports


@click.command("check")
@click.argument("paths", nargs=-1, required=True)
@click.option("--allow", multiple=True, metavar="NAME",
              help="Exempt this fusion (instruction or fused computation name); repeatable.")
@click.option("--exit-zero", is_flag=True, help="Report findings but exit 0 (unreadable input still exits 2).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text", show_default=True)
@click.option("--verify", is_flag=True, help="Also check sampled elements against the numpy reference.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(paths, allow, exit_zero, fmt, verify, jobs, color) -> None:
    """Exit 0 when every fusion in PATH... reads each operand through one distinct map.

    Exit 1 when some fusion reads an operand through several (each named, with its maps and
    source location) or --verify found a mismatch; 2 when an input could not be read.
    """
    from ..render.check import findings, render_check_github, render_check_json, render_check_text
    from ..render.driver import AnalyzeOptions
    reports = run_reports(paths, AnalyzeOptions(verify=verify, fusions_only=True), jobs, show_progress=True)
    found = findings(reports, allow)
    checked = sum(1 for m in reports for t in m.targets if t.kind == "fusion")
    if fmt == "json":
        click.echo(render_check_json(found, checked))
    elif fmt == "github":
        text = render_check_github(found, reports)
        if text:
            click.echo(text)
    else:
        render_check_text(found, checked, make_console(color))
    print_diagnostics(reports)
    if any(m.unreadable or m.internal_failure for m in reports):
        sys.exit(EXIT_UNREADABLE)
    sys.exit(EXIT_FINDINGS if found and not exit_zero else EXIT_OK)
