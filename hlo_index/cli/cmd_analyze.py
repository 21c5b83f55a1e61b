"""``hlo-index analyze``: indexing maps of every fusion (or a named target) of HLO dumps.

Heavy modules (the map engine, Rich, numpy) are imported inside the command, so ``--help`` and
JSON runs do not pay for what they do not use.
"""
from __future__ import annotations

import os
import sys

import click

EXIT_OK, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


def make_console(color: str, stderr: bool = False):
    """A Rich console honouring ``--color`` and ``NO_COLOR`` (Rich reads NO_COLOR itself)."""
    from rich.console import Console
    if color == "always":
        return Console(stderr=stderr, force_terminal=True, color_system="truecolor")
    if color == "never":
        return Console(stderr=stderr, no_color=True, color_system=None, highlight=False)
    return Console(stderr=stderr)


def print_diagnostics(reports, stream=None) -> None:
    """``path:line:col: severity: message`` plus source line and caret, on stderr."""
    from ..hlo.diagnostics import format_diagnostic
    from ..hlo.model import Diagnostic
    stream = stream or sys.stderr
    for mod in reports:
        for d in mod.diagnostics:
            diag = Diagnostic(d.severity, d.message, d.line, d.column, d.source_line, d.path or mod.source)
            click.echo(format_diagnostic(diag), file=stream)


def run_reports(paths, options, jobs: int, show_progress: bool):
    """Analyse every path, with a progress bar on stderr when it is a terminal and the job is big."""
    from ..render.driver import analyze_paths, expand_paths
    if jobs > 1:
        paths = expand_paths(list(paths))
    big = len(paths) > 1 or any(p != "-" and os.path.isdir(p) for p in paths) or any(
        p.endswith(".gz") or (os.path.isfile(p) and os.path.getsize(p) > 1 << 20) for p in paths)
    if not (show_progress and big and sys.stderr.isatty()):
        return analyze_paths(list(paths), options, jobs)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=make_console("auto", stderr=True), transient=True) as progress:
        files = progress.add_task("files", total=len(paths))
        targets = progress.add_task("targets", total=None)
        return analyze_paths(list(paths), options, jobs,
                             on_file=lambda _p: progress.advance(files),
                             on_target=lambda: progress.advance(targets))


def target_missing_everywhere(reports, options) -> bool:
    named = options.fusion or options.computation or options.instruction
    readable = [m for m in reports if not m.unreadable]
    return bool(named) and bool(readable) and not any(m.targets for m in readable)


def _print_text(reports, color: str) -> None:
    from ..render.text import render_text
    console = make_console(color)
    if console.is_terminal:
        capture = make_console(color)
        with capture.capture() as cap:
            render_text(reports, capture)
        if cap.get().count("\n") > console.height:
            with console.pager(styles=color != "never"):
                render_text(reports, console)
            return
    render_text(reports, console)


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option("--fusion", "fusion", metavar="NAME", help="Only this fusion (instruction or fused computation name).")
@click.option("--computation", metavar="NAME", help="Analyse this computation as a whole (root against parameters).")
@click.option("--instruction", metavar="NAME", help="Only this instruction (its op rule; fusions and calls composed).")
@click.option("--direction", type=click.Choice(["out2in", "in2out", "both"]), default="out2in", show_default=True,
              help="Output-to-input maps, input-to-output maps, or both.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes when several files are given.")
@click.option("--verify", is_flag=True, help="Check sampled elements of every target against the numpy reference.")
@click.option("--physical", is_flag=True,
              help="Also give, per operand, maps from the output index to the operand's linear physical "
                   "offset under its layout (tiles included).")
@click.option("--no-analyses", "no_analyses", is_flag=True,
              help="Skip the per-operand utilization and coalescing figures.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True)
def command(paths, fusion, computation, instruction, direction, fmt, jobs, verify, physical, no_analyses,
            color) -> None:
    """Indexing maps of every fusion in PATH... (files, .gz, directories, '-' for stdin).

    Each operand also gets its utilization (distinct elements read, bytes, reads per element) and
    coalescing (how 32 consecutive output elements hit its memory); --physical adds maps to the
    operand's physical offsets. A module without fusions is analysed as a whole (its ENTRY
    computation). Exit status: 0; 1 when
    --verify found a mismatch; 2 when an input could not be read or the named target exists nowhere.
    """
    if sum(x is not None for x in (fusion, computation, instruction)) > 1:
        raise click.UsageError("give at most one of --fusion, --computation, --instruction")
    from ..render.driver import AnalyzeOptions
    options = AnalyzeOptions(direction=direction, fusion=fusion, computation=computation,
                             instruction=instruction, verify=verify,
                             extra={"analyses": not no_analyses, "physical": physical})
    reports = run_reports(paths, options, jobs, show_progress=True)
    if fmt == "json":
        from ..render.json_out import render_json
        click.echo(render_json(reports))
    else:
        _print_text(reports, color)
    print_diagnostics(reports)
    if any(m.unreadable or m.internal_failure for m in reports) or target_missing_everywhere(reports, options):
        sys.exit(EXIT_UNREADABLE)
    if verify and any(d.severity == "error" and d.message.startswith("verify:") for m in reports
                      for d in m.diagnostics):
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)
