"""``hlo-index check``: fail CI when a fusion reads an operand through more than one distinct map."""

from __future__ import annotations

import json
import sys
from collections import Counter

import click

from .cmd_analyze import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, print_diagnostics, run_reports
from .options import color_option, format_option, jobs_option


def _codes(values) -> list[str]:
    return [c.strip().upper() for v in values for c in v.split(",") if c.strip()]


@click.command("check")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--allow",
    multiple=True,
    metavar="NAME",
    help="Exempt fusions with this instruction or fused computation name (a glob allowed); repeatable.",
)
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Rule codes or prefixes that fail the check (default HI001,HI900; ALL for every rule).",
)
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes not to report.")
@click.option(
    "--baseline",
    "baseline_path",
    metavar="FILE",
    help="Fail only on findings not in this baseline (matched by identity, not by name).",
)
@click.option(
    "--write-baseline",
    "write_baseline",
    metavar="FILE",
    help="Write every selected finding to FILE as the accepted baseline, and exit 0.",
)
@click.option("--exit-zero", is_flag=True, help="Report findings but exit 0 (unreadable input still exits 2).")
@format_option("github", "sarif")
@click.option("--verify", is_flag=True, help="Also check sampled elements against the numpy reference.")
@jobs_option(
    help="Worker processes: as analyze's --jobs (auto: a directory's files, or a big module's fusions, "
    "shared among the idle CPUs).",
    auto=True,
)
@color_option
def command(paths, allow, select, ignore, baseline_path, write_baseline, exit_zero, fmt, verify, jobs, color) -> None:
    """Exit 0 when every fusion in PATH... reads each operand through one distinct map.

    Exit 1 when some fusion reads an operand through several (each named with its rule code,
    maps, source location and an identity that survives recompiles) or --verify found a
    mismatch; 2 when an input, the baseline or the settings could not be read. Rules: HI001
    several maps; benign kinds HI002 concatenate pieces, HI003 pad pieces, HI004 other disjoint
    output regions, HI005 a reduce broadcast back, HI006 read again through concatenate pieces (RoPE),
    HI007 distinct elements, none read twice (off unless selected); HI900 verify mismatch.
    Defaults come from [tool.hlo-index] in the nearest pyproject.toml.
    """
    from ..render.check import render_check_github, render_check_json, render_check_text
    from ..report.check import (
        BaselineError,
        baseline_document,
        code_selected,
        findings,
        fusions_checked,
        new_findings,
        read_baseline,
    )
    from ..report.driver import AnalyzeOptions
    from ..report.finding_kinds import DEFAULT_SELECT, RULES
    from .config import ConfigError, load_settings
    from .output import echo

    try:
        settings = load_settings()
    except ConfigError as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_UNREADABLE)
    select = _codes(select) or settings.get("select") or list(DEFAULT_SELECT)
    ignore = _codes(ignore) or settings.get("ignore", [])
    for code in select + ignore:
        if code != "ALL" and not any(r.startswith(code) for r in RULES):
            raise click.BadParameter(
                f"no rule code starts with {code!r} (rules: {', '.join(RULES)})", param_hint="'--select' / '--ignore'"
            )
    allow = list(allow) + settings.get("allow", [])
    baseline_path = baseline_path or (None if write_baseline else settings.get("baseline"))
    exit_zero = exit_zero or bool(settings.get("exit-zero"))
    baseline = None
    if baseline_path:
        try:
            baseline = read_baseline(baseline_path)
        except BaselineError as exc:
            click.echo(str(exc), err=True)
            sys.exit(EXIT_UNREADABLE)
    reports = run_reports(
        paths, AnalyzeOptions(verify=verify, fusions_only=True, extra={"check": True}), jobs, show_progress=True
    )
    used: set = set()
    # every finding once; those the selection leaves out are said with a pass, which would
    # otherwise read as "nothing else found"
    everything = findings(reports, allow, ["ALL"], [], used_allow=used)
    found = [f for f in everything if code_selected(f.code, select, ignore)]
    unselected = Counter(f.code for f in everything if not code_selected(f.code, select, ignore))
    for pattern in allow:
        if pattern not in used:
            click.echo(f"warning: --allow {pattern!r} matches no fusion with a finding", err=True)
    checked = fusions_checked(reports)
    if write_baseline:
        try:
            with open(write_baseline, "w", encoding="utf-8") as f:
                json.dump(baseline_document(found), f, indent=1)
                f.write("\n")
        except OSError as exc:
            click.echo(f"{write_baseline}: error: cannot write the baseline: {exc.strerror}", err=True)
            sys.exit(EXIT_UNREADABLE)
        click.echo(f"wrote {len(found)} finding(s) of {checked} fusion(s) to {write_baseline}", err=True)
        print_diagnostics(reports)
        sys.exit(EXIT_UNREADABLE if any(m.unreadable for m in reports) else EXIT_OK)
    baselined, selected = 0, found
    if baseline is not None:
        fresh = new_findings(found, baseline)
        baselined, found = len(found) - len(fresh), fresh
    if fmt == "json":
        echo(render_check_json(found, checked, baselined, unselected))
    elif fmt == "sarif":
        from .sarif_output import sarif_text

        echo(sarif_text(found, selected))
    elif fmt == "github":
        text = render_check_github(found, reports)
        if text:
            echo(text)
    else:
        from ..render.text import Painter
        from .output import color_enabled

        echo("\n".join(render_check_text(found, checked, Painter(color_enabled(color)), baselined, unselected)))
    print_diagnostics(reports)
    if verify:
        note = _verify_skipped_note(reports)
        if note:
            click.echo(note, err=True)
    if any(m.unreadable or m.invalid_input or m.internal_failure for m in reports):
        sys.exit(EXIT_UNREADABLE)
    sys.exit(EXIT_FINDINGS if found and not exit_zero else EXIT_OK)


def _verify_skipped_note(reports) -> str | None:
    """How many fusions --verify could not check, and the commonest reason: a pass with every
    fusion skipped must not read as a verified dump."""
    from collections import Counter

    verdicts = [t.extra.get("verify") for m in reports for t in m.targets]
    skipped = [v for v in verdicts if v and v.get("verdict") == "skipped"]
    if not skipped:
        return None
    first_notes = ((v.get("notes") or ["no reason given"])[0] for v in skipped)
    reasons = Counter(note.removeprefix("verification skipped: ") for note in first_notes)
    reason, count = reasons.most_common(1)[0]
    more = f"; {len(reasons) - 1} other reason(s)" if len(reasons) > 1 else ""
    return (
        f"note: --verify checked {len(verdicts) - len(skipped)} of {len(verdicts)} fusion(s) against the "
        f"reference; {len(skipped)} skipped ({count}: {reason}{more})"
    )
