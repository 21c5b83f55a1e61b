"""``hlo-index diff``: which fusions of two dumps changed how they read, how much, and where from."""

from __future__ import annotations

import sys

import click

from .cmd_analyze import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, check_device
from .options import color_option, format_option, jobs_option


def _conditions(values):
    from ..report.diff import parse_condition

    out = []
    for value in values:
        for text in value.split(","):
            if not text.strip():
                continue
            try:
                out.append(parse_condition(text))
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="'--fail-on'") from None
    return out


@click.command("diff")
@click.argument("old")
@click.argument("new")
@format_option()
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="CONDITION",
    help="Exit 1 when NEW meets it: duplicated_reads (a fusion gains a second map for an operand, "
    "or an added fusion reads one through several), uncoalesced (an operand's read turns "
    "uncoalesced / not contiguous, or an added fusion has such a read), bytes>N% or time>N% "
    "(a module's total grows by more than N%). Repeatable, or comma-separated.",
)
@click.option("--show-same", is_flag=True, help="Also list the fusions that did not change (text).")
@click.option(
    "--device",
    metavar="NAME|PATH.txtpb",
    callback=check_device,
    help="Device of the times compared, as analyze's --device (GPU modules default to the one their dump "
    "names; CPU and TPU modules get times only with one, a TPU chip such as tpu_v6e included).",
)
@jobs_option(
    help="Processes: 2 or more analyse big dumps' two sides at once (auto: when a CPU is idle). "
    "The result is the same.",
    auto=True,
)
@color_option
def command(old, new, fmt, fail_on, show_same, device, jobs, color) -> None:
    """Compare the fusions of OLD and NEW (files, .gz, dump directories, '-' for one of them).

    Modules are paired by dump name (module_NNNN. and the backend left out); fusions by structure,
    then by source (op name and file:line), then by name. Each changed fusion lists its changes:
    operands, computation, maps, duplicated_reads, coalescing, bytes, flops (and time, where a cost
    model applies).
    Exit status: 0; 1 when a --fail-on condition is met (the fusions named on stderr); 2 when an
    input could not be read.
    """
    conditions = _conditions(fail_on)
    if old == "-" and new == "-":
        raise click.UsageError("only one of OLD and NEW can be '-' (stdin)")
    from ..hlo.diagnostics import format_diagnostic
    from ..render.diff_text import condition_lines
    from ..report.diff import conditions_met, diff_paths
    from ..report.split_targets import usable_workers
    from .output import echo

    report = diff_paths(old, new, processes=usable_workers(jobs), device=device)
    if any(c.kind == "time" for c in conditions) and not report.has_cost:
        click.echo(
            "error: --fail-on time>N%: no cost model applies to these dumps, so times cannot be compared", err=True
        )
        sys.exit(EXIT_UNREADABLE)
    if fmt == "json":
        from ..render.diff_json import render_diff_json

        echo(render_diff_json(report))
    else:
        from ..render.diff_text import render_diff_text
        from ..render.text import Painter
        from .output import color_enabled

        echo("\n".join(render_diff_text(report, Painter(color_enabled(color)), show_same)))
    for d in report.diagnostics:
        click.echo(format_diagnostic(d), err=True)
    if report.unreadable:
        sys.exit(EXIT_UNREADABLE)
    met = conditions_met(report, conditions)
    for line in condition_lines(met):
        click.echo(line, err=True)
    sys.exit(EXIT_FINDINGS if met else EXIT_OK)
