"""``hlo-index analyze``: indexing maps of every fusion (or a named target) of HLO dumps.

Heavy modules (the map engine, Rich, numpy) are imported inside the command, so ``--help`` and
JSON runs do not pay for what they do not use.
"""

from __future__ import annotations

import os
import sys

import click

from .options import color_option, format_option, jobs_option

EXIT_OK, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


def make_console(color: str, stderr: bool = False):
    """A Rich console honouring ``--color`` and ``NO_COLOR`` (Rich reads NO_COLOR itself); a closed
    pipe ends its output quietly (the command exits 0, not Rich's 1)."""
    from rich.console import Console as RichConsole

    class Console(RichConsole):
        def on_broken_pipe(self) -> None:
            from .output import silence_stdout

            silence_stdout()
            self.quiet = True
            raise BrokenPipeError

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


def progress_bar(paths):
    """A Rich progress bar on stderr (and its callbacks) when stderr is a terminal that the
    output itself does not occupy, and the job is big; else a no-op context."""
    import contextlib

    big = (
        len(paths) > 1
        or any(p != "-" and os.path.isdir(p) for p in paths)
        or any(p.endswith(".gz") or (os.path.isfile(p) and os.path.getsize(p) > 1 << 20) for p in paths)
    )
    if not (big and sys.stderr.isatty() and not sys.stdout.isatty()):
        return contextlib.nullcontext((None, None))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    @contextlib.contextmanager
    def bar():
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=make_console("auto", stderr=True),
            transient=True,
        ) as progress:
            files = progress.add_task("files", total=len(paths))
            targets = progress.add_task("targets", total=None)
            yield (lambda _p: progress.advance(files)), (lambda _r: progress.advance(targets))

    return bar()


def stream_reports(paths, options, jobs: int, show_progress: bool = True, on_target=None):
    """Each module report as soon as it is ready (a generator), with a progress bar when useful.
    ``on_target(module report so far)`` is called after each target analysed in this process."""
    from ..report.driver import iter_reports, plan_files

    paths, jobs = plan_files(list(paths), jobs)
    with progress_bar(paths) if show_progress else _no_progress() as (on_file, progress_target):
        if on_target is not None and progress_target is not None:

            def both(report, first=on_target, second=progress_target):
                first(report)
                second(report)

            callback = both
        else:
            callback = on_target or progress_target
        for reports in iter_reports(paths, options, jobs, on_file=on_file, on_target=callback):
            yield from reports


def _no_progress():
    import contextlib

    return contextlib.nullcontext((None, None))


def run_reports(paths, options, jobs: int, show_progress: bool):
    """Every module report, as a list."""
    return list(stream_reports(paths, options, jobs, show_progress))


def missing_target_message(reports, options) -> str:
    """Non-empty when a named target exists in no readable module: what was looked for, and where."""
    readable = [m for m in reports if not m.unreadable]
    if not readable or not any(m.missing_target for m in readable) or any(not m.missing_target for m in readable):
        return ""
    if options.fusion:
        patterns = [options.fusion] if isinstance(options.fusion, str) else list(options.fusion)
        globbing = any(c in p for p in patterns for c in "*?[")
        what = f"no fusion {'matching' if globbing else 'named'} " + " or ".join(repr(p.lstrip("%")) for p in patterns)
    elif options.computation:
        what = f"no computation named {options.computation.lstrip('%')!r}"
    else:
        what = f"no instruction named {options.instruction.lstrip('%')!r}"
    sources = sorted({m.source for m in readable})
    shown = ", ".join(sources[:3]) + (f" and {len(sources) - 3} more" if len(sources) > 3 else "")
    return f"error: {what} in {len(readable)} module(s) ({shown})"


class _Kept:
    """What the exit status and the diagnostics need of a module once its targets are written."""

    def __init__(self):
        self.modules = []

    def keep(self, mod):
        from ..report.model import ModuleReport

        light = ModuleReport(
            mod.name,
            mod.source,
            diagnostics=mod.diagnostics,
            unreadable=mod.unreadable,
            missing_target=mod.missing_target,
        )
        self.modules.append(light)


def _write_json(reports, top, sort) -> None:
    from ..render.json_out import write_json
    from .output import SafeStream

    out = SafeStream(sys.stdout)
    write_json(reports, out, top=top, sort=sort)
    out.flush()


class _ReaderLeft(Exception):
    """The pager or the pipe reading the text output has gone: stop analysing."""


def _write_text(make_reports, color, pager, several_files, top, sort) -> None:
    """Text output; each target is written as soon as it is analysed (serial runs), each module's
    remaining targets when the module is done (worker processes)."""
    from ..render.text import TextWriter
    from .output import terminal_width, text_output

    with text_output(color, pager) as (out, use_color):
        writer = TextWriter(out, use_color, min(terminal_width(), 160), several_files=several_files, top=top, sort=sort)

        def on_target(report):
            writer.partial(report)
            if out.broken:
                raise _ReaderLeft

        reports = make_reports(on_target if top is None else None)
        try:
            for mod in reports:
                writer.module(mod)
                if out.broken:
                    break
        except _ReaderLeft:
            pass
        finally:
            reports.close()
        writer.close()


def check_device(ctx, param, value):
    """``--device``'s value checked: a named GPU or TPU chip, or a readable device file."""
    if value is None:
        return None
    from ..analyses.cost import DeviceError, load_device
    from ..analyses.cost.devices import TPU_CHIPS

    if value in TPU_CHIPS:
        return value
    try:
        load_device(value)
    except DeviceError as e:
        raise click.BadParameter(str(e)) from None
    return value


def _positive_ints(value: str, param) -> tuple[int, ...]:
    try:
        numbers = tuple(int(x) for x in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{value!r}: comma-separated integers expected", param=param) from None
    if any(n < 1 for n in numbers):
        raise click.BadParameter(f"{value!r}: sizes are positive", param=param)
    return numbers


def _check_tile(ctx, param, value):
    if value is None or value == "auto":
        return value
    return _positive_ints(value, param)


def _check_launch(ctx, param, value):
    if value is None:
        return None
    numbers = _positive_ints(value, param)
    if len(numbers) != 2:
        raise click.BadParameter(f"{value!r}: BLOCKS,THREADS expected", param=param)
    return numbers


# each cost option and the values it takes (the first is the default)
COST_OPTIONS = {"count_multiple_input_accesses": ("true", "false"), "time_uses": ("xla", "exact")}


def _check_cost_options(ctx, param, values):
    out: dict = {}
    for value in values:
        key, sep, choice = value.partition("=")
        if key not in COST_OPTIONS or not sep or choice not in COST_OPTIONS[key]:
            expected = "; ".join(f"{k}={'|'.join(v)}" for k, v in COST_OPTIONS.items())
            raise click.BadParameter(f"{value!r}: expected one of {expected}", param=param)
        out[key] = choice == "true" if COST_OPTIONS[key] == ("true", "false") else choice
    return out


@click.command("analyze")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--fusion",
    "fusion",
    metavar="NAME",
    multiple=True,
    help="Only fusions with this instruction or fused computation name; a glob ('fusion.1*') is allowed; repeatable.",
)
@click.option("--computation", metavar="NAME", help="Analyse this computation as a whole (root against parameters).")
@click.option("--instruction", metavar="NAME", help="Only this instruction (its op rule; fusions and calls composed).")
@click.option(
    "--direction",
    type=click.Choice(["out2in", "in2out", "both"]),
    default="out2in",
    show_default=True,
    help="Output-to-input maps, input-to-output maps, or both.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    metavar="N",
    help="Only the N heaviest targets by --sort: one line each in text (name, bytes read, "
    "worst operand figure, source), the same targets in rank order in JSON.",
)
@click.option(
    "--sort",
    type=click.Choice(["bytes", "uncoalesced", "utilization", "maps", "time", "flops", "intensity"]),
    default="bytes",
    show_default=True,
    help="Order for --top: bytes read; uncoalesced operands; reads per element (utilization); "
    "most distinct maps for one operand; the cost's estimated time, FLOPs, or FLOPs per byte accessed.",
)
@format_option(
    "model-explorer-node-data",
    help="model-explorer-node-data: Model Explorer node data of the per-operand figures, one file "
    "per figure (PREFIX.<figure>.json with -o PREFIX; bytes read on standard output without).",
)
@click.option(
    "--output",
    "-o",
    "output",
    metavar="PREFIX",
    help="With --format model-explorer-node-data: write PREFIX.<figure>.json files.",
)
@jobs_option(
    help="Worker processes. 'auto': this process and the CPUs idle besides it share several files "
    "as N does, unless one holds more than 90% of the text; then, as for one file, a big module's "
    "targets are shared among them (a training step's 2,000 fusions: about half the run, after the "
    "parse). N: several files go to N workers, largest text first (one file is never split among "
    "them), or one file's big modules are shared among N. The output is the same either way; 1 "
    "analyses everything in this process.",
    auto=True,
)
@click.option("--verify", is_flag=True, help="Check sampled elements of every target against the numpy reference.")
@click.option(
    "--physical",
    is_flag=True,
    help="Also give, per operand, maps from the output index to the operand's linear physical "
    "offset under its layout (tiles included).",
)
@click.option(
    "--no-analyses", "no_analyses", is_flag=True, help="Skip the per-operand utilization and coalescing figures."
)
# what the cost adds to a run (benchmarks/cost_overhead.py): every figure but the cost
@click.option("--no-cost", "no_cost", is_flag=True, hidden=True, help="Skip the cost figures only.")
@click.option(
    "--target",
    "target",
    type=click.Choice(["auto", "gpu", "cpu", "tpu"]),
    default="auto",
    show_default=True,
    help="Machine the coalescing figures are for: gpu (XLA's GPU emitters and coalescing rule), "
    "cpu (does the innermost loop read contiguously), tpu (tiles read, padding, and whether the "
    "output's minor dimension walks lanes, sublanes or across tiles), auto (read from the dump).",
)
@click.option(
    "--device",
    metavar="NAME|PATH.txtpb",
    callback=check_device,
    help="Device of the cost's time: a named GPU (h100_sxm, a100_sxm_80, ...) or a GpuTargetConfigProto "
    "text file (XLA's hlo-opt format). GPU modules default to one per compute capability of the dump's "
    "name; CPU and TPU modules get a roofline time only with a device, which may also be a TPU chip "
    "(tpu_v5e, tpu_v5p, tpu_v6e: its published peak bf16 FLOP/s and HBM bandwidth).",
)
@click.option(
    "--fusion-candidate",
    metavar="PRODUCER",
    help="Cost of fusing PRODUCER into --fusion-consumers (XLA's EstimateRunTimes): time unfused vs fused. "
    "Without --fusion / --computation / --instruction, PRODUCER is the target.",
)
@click.option(
    "--fusion-consumers",
    metavar="C1,C2|none",
    help="The consumers of the --fusion-candidate what-if ('none': no consumer).",
)
@click.option(
    "--multi-output", is_flag=True, help="The what-if fuses as a multi-output fusion (producer still written)."
)
@click.option(
    "--tile",
    metavar="a,b,...|auto",
    callback=_check_tile,
    help="Cost fusions per output tile of these sizes (XLA's tiled model), or 'auto': XLA's search "
    "for the best tiling.",
)
@click.option(
    "--launch", metavar="BLOCKS,THREADS", callback=_check_launch, help="Launch dimensions of the cost's kernel."
)
@click.option(
    "--cost-model",
    type=click.Choice(["classic", "indexing"]),
    default="classic",
    show_default=True,
    help="GPU time from XLA's GpuPerformanceModel (classic) or its indexing-based variant.",
)
@click.option(
    "--cost-option",
    "cost_options",
    metavar="KEY=VALUE",
    multiple=True,
    callback=_check_cost_options,
    help="Cost option; repeatable: count_multiple_input_accesses=true|false (XLA's option, default true); "
    "time_uses=xla|exact (the time from XLA's figures, the default, or from the maps' exact bytes).",
)
@color_option
@click.option("--no-pager", is_flag=True, help="Never page text output (HLO_INDEX_PAGER / PAGER=cat do the same).")
def command(
    paths,
    fusion,
    computation,
    instruction,
    direction,
    top,
    sort,
    fmt,
    jobs,
    verify,
    physical,
    no_analyses,
    no_cost,
    target,
    device,
    fusion_candidate,
    fusion_consumers,
    multi_output,
    tile,
    launch,
    cost_model,
    cost_options,
    color,
    no_pager,
    output=None,
) -> None:
    """Indexing maps of every fusion in PATH... (files, .gz, directories, '-' for stdin).

    Each operand also gets its utilization (distinct elements read, bytes, reads per element) and
    coalescing (--target gpu: how the warps of XLA's emitter read it, in 128-byte transactions;
    --target cpu: whether the innermost loop reads it contiguously; --target tpu: tiles read and
    used, padding, lanes or sublanes along the output's minor dimension); --physical adds maps to the
    operand's physical offsets. A module without fusions is analysed as a whole (its ENTRY
    computation). Text is written as it is produced, through a pager in a terminal. Exit status:
    0; 1 when --verify found a mismatch; 2 when an input could not be read or a --fusion /
    --computation / --instruction filter matched nothing anywhere.
    """
    if sum(bool(x) for x in (fusion, computation, instruction)) > 1:
        raise click.UsageError("give at most one of --fusion, --computation, --instruction")
    if fmt == "model-explorer-node-data":
        from .model_explorer_files import write_node_data_files

        if output is not None and (output.endswith(("/", os.sep)) or os.path.isdir(output)):
            # "-o dir/" would write hidden files dir/.bytes-read.json: a prefix names the files
            raise click.BadParameter(
                f"{output!r} is a directory; give a prefix such as {os.path.join(output, 'step')!r} "
                "(writes step.bytes-read.json, ...)",
                param_hint="'-o' / '--output'",
            )

        sys.exit(write_node_data_files(paths, output, tuple(fusion) or None, target))
    if top is not None and direction == "in2out" and sort in ("bytes", "uncoalesced", "utilization"):
        # those figures come from the output-to-input maps: every target would rank as unknown
        raise click.UsageError(
            f"--sort {sort} ranks by the output-to-input figures: give --direction out2in or both "
            "(or sort by maps, time, flops or intensity)"
        )
    if (fusion_candidate is None) != (fusion_consumers is None):
        raise click.UsageError("--fusion-candidate and --fusion-consumers go together")
    if multi_output and fusion_candidate is None:
        raise click.UsageError("--multi-output needs --fusion-candidate")
    cost_asked = device or fusion_candidate or tile or launch or cost_model != "classic" or cost_options
    if no_analyses and cost_asked:
        raise click.UsageError("--no-analyses leaves out the cost: drop it to use the cost options")
    if no_cost and cost_asked:
        raise click.UsageError("--no-cost leaves out the cost: drop it to use the cost options")
    if fusion_candidate is not None:
        fusion_candidate = fusion_candidate.lstrip("%")
        if not (fusion or computation or instruction):
            instruction = fusion_candidate
    from ..analyses.cost.options import TargetCostOptions
    from ..report.driver import AnalyzeOptions

    consumers = None
    if fusion_consumers is not None:
        consumers = (
            () if fusion_consumers == "none" else tuple(c.strip().lstrip("%") for c in fusion_consumers.split(","))
        )
    cost = TargetCostOptions(
        target=target,
        device=device,
        cost_model=cost_model,
        tile=tile,
        launch=launch,
        count_multiple_input_accesses=cost_options.get("count_multiple_input_accesses", True),
        time_uses=cost_options.get("time_uses", "xla"),
        consumers=consumers,
        multi_output=multi_output,
        exact=False,
    )
    extra = {"analyses": not no_analyses, "physical": physical, "target": target}
    if not no_analyses and not no_cost:
        extra["cost"] = cost
        if fusion_candidate is not None:
            extra["fusion_candidate"] = fusion_candidate

    encode = target_encoder = None
    if fmt == "json" and top is None:
        from ..render import json_out

        encode, target_encoder = json_out.encode_module, json_out.target_encoder
    options = AnalyzeOptions(
        direction=direction,
        fusion=tuple(fusion) or None,
        computation=computation,
        instruction=instruction,
        verify=verify,
        encode=encode,
        target_encoder=target_encoder,
        extra=extra,
    )
    kept = _Kept()

    def reports(on_target=None):
        for mod in stream_reports(paths, options, jobs, on_target=on_target):
            kept.keep(mod)
            yield mod

    several_files = len(paths) > 1 or any(p != "-" and os.path.isdir(p) for p in paths)
    if fmt == "json":
        stream = reports()
        try:
            _write_json(stream, top, sort)
        finally:
            stream.close()  # the reader left early (| head): stop the analysis too
    else:
        _write_text(reports, color, not no_pager, several_files, top, sort)
    print_diagnostics(kept.modules)
    missing = missing_target_message(kept.modules, options)
    if missing:
        click.echo(missing, err=True)
    if any(m.unreadable or m.invalid_input or m.internal_failure or m.cost_error for m in kept.modules) or missing:
        sys.exit(EXIT_UNREADABLE)
    if verify and any(
        d.severity == "error" and d.message.startswith("verify:") for m in kept.modules for d in m.diagnostics
    ):
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_OK)
