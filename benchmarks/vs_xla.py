"""``analyze FILE --format json`` against XLA's own parser of FILE, on the dumps users have.

Files: gpt12 after optimizations (``../shared/corpus/gpt12_train``), gpt24 where
``make_gpt_dump.py`` has made one, and every after-optimizations file of ``../shared/field`` (the
A100 Pax training step among them). Per file, ROUNDS interleaved
rounds (``STEADY_ROUNDS`` for gpt12 and the Pax step, whose ratios the goals name) of three
processes (``measure.py``): XLA's parse (a fresh process, after a warm-up parse,
the call alone), ``analyze FILE --format json`` (the whole process) and the same command on a
5-line module (the fixed cost: start-up, imports, exit). Ratios are between medians, wall / CPU:
ours over XLA's parse, and ours over XLA's parse plus our fixed cost (what is left on small files,
where start-up is all there is). Peak RSS is our process's. Files XLA rejects are listed as such
and left out of the worst ratio.

Usage: ``python benchmarks/vs_xla.py [--rounds N | --quick] [--only TEXT] [--timeout S]``
(``--only``: the files whose path contains TEXT). Writes ``benchmarks/results/vs_xla.json``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import measure
from make_gpt_dump import dump_path
from measure import SHARED

GPT12 = SHARED / "corpus" / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"
FIELD = SHARED / "field"
PAX = (
    FIELD
    / "gpu"
    / (
        "JAX-Toolbox.nsys-jax.pax_fsdp4_4proc_proc0.module_0040.pjit__wrapped_step_fn"
        ".sm_8.0_gpu_after_optimizations.txt.gz"
    )
)
# The two files whose ratios the goals name take more rounds unless --rounds or --quick says
# otherwise: three rounds' medians moved them by 10% between two runs on this 2-core machine.
STEADY = {GPT12: "gpt12", PAX: "the A100 Pax step"}
STEADY_ROUNDS = 7


def field_files() -> list[Path]:
    """gpt12, gpt24 where there is one (``make_gpt_dump.py``: the size of a dump held back to check
    the goals), and every after-optimizations file of the field."""
    gpt24 = dump_path(24)
    gpts = [GPT12, *([Path(gpt24)] if gpt24 else [])]
    return [p for p in [*gpts, *sorted(FIELD.rglob("*after_optimizations*"))] if p.is_file()]


def compare(
    name: str, paths: list[Path], command: list[str], argv: list[str], steady: dict[Path, str] | None = None
) -> dict:
    """The comparison above for ``hlo-index`` ``command`` (``FILE`` stands for each file); prints
    its table, writes ``results/NAME.json`` and returns what it wrote. ``steady``: files measured
    over ``STEADY_ROUNDS`` rounds unless the rounds were asked for (path -> how to name it)."""
    rounds = measure.rounds_from(argv)
    steady = {} if "--rounds" in argv or "--quick" in argv else (steady or {})
    steady_rounds = max(rounds, STEADY_ROUNDS)
    only = measure.option(argv, "--only")
    timeout = float(measure.option(argv, "--timeout", "600"))
    tiny = measure.tiny_module()

    def args(path: Path) -> list[str]:
        return [str(path) if a == "FILE" else a for a in command]

    rows, results = [], []
    for path in paths:
        if only and only not in str(path):
            continue
        sides = measure.interleaved(
            {
                "xla": lambda p=path: measure.xla_parse(p),
                "ours": lambda p=path: measure.tool(args(p), timeout=timeout),
                "fixed": lambda: measure.tool(args(tiny)),
            },
            steady_rounds if path in steady else rounds,
        )
        xla, ours, fixed = sides["xla"], sides["ours"], sides["fixed"]
        entry = {
            "file": measure.shown(path),
            "bytes": path.stat().st_size,
            **sides,
            "wall_ratio": measure.ratio(ours, xla, "wall_s"),
            "cpu_ratio": measure.ratio(ours, xla, "cpu_s"),
            "wall_ratio_with_fixed": measure.ratio(ours, xla, "wall_s", fixed.get("wall_s", 0.0)),
            "cpu_ratio_with_fixed": measure.ratio(ours, xla, "cpu_s", fixed.get("cpu_s", 0.0)),
        }
        results.append(entry)
        rows.append(
            [
                path.name[:72],
                measure.times(xla),
                measure.times(ours),
                measure.times_ratio(ours, xla),
                measure.times(fixed),
                measure.times_ratio(ours, xla, fixed),
                measure.mb(ours),
                measure.exits(ours),
            ]
        )
        print(f"  {rows[-1][0]}: {rows[-1][3]}", file=sys.stderr, flush=True)
    shown_command = " ".join(["hlo-index", *command])
    print(
        f"ours: {shown_command} (whole process); XLA parse: the call alone, in a fresh process; "
        f"fixed cost: ours on a 5-line module; medians of {rounds} interleaved rounds"
        f"{_steady_text(steady, steady_rounds)}; wall / CPU"
    )
    measure.table(
        ["file", "XLA parse", "ours", "ratio", "fixed cost", "ratio to XLA + fixed", "peak RSS", "exit"], rows
    )
    measured = [r for r in results if r["wall_ratio"] is not None]
    worst = max(measured, key=lambda r: r["wall_ratio"], default=None)
    worst_fixed = max(measured, key=lambda r: r["wall_ratio_with_fixed"], default=None)
    if worst:
        print(f"worst ratio: {worst['wall_ratio']:.1f}x wall / {worst['cpu_ratio']:.1f}x CPU ({worst['file']})")
        print(
            f"worst ratio to XLA + fixed cost: {worst_fixed['wall_ratio_with_fixed']:.1f}x wall / "
            f"{worst_fixed['cpu_ratio_with_fixed']:.1f}x CPU ({worst_fixed['file']})"
        )
    for r in results:
        if r["wall_ratio"] is None:
            why = (
                f"rejected by XLA: {r['xla']['rejected']}"
                if "rejected" in r["xla"]
                else r["xla"].get("not_measured") or f"{shown_command}: {measure.seconds(r['ours'])}"
            )
            print(f"not in the ratio: {r['file']}: {why}")
    keys = ("file", "wall_ratio", "cpu_ratio", "wall_ratio_with_fixed", "cpu_ratio_with_fixed")
    data = {
        "command": shown_command,
        "rounds": rounds,
        "steady_rounds": {measure.shown(p): steady_rounds for p in steady},
        "files": results,
        "worst": worst and {k: worst[k] for k in keys},
        "worst_with_fixed": worst_fixed and {k: worst_fixed[k] for k in keys},
    }
    measure.write(name, data)
    return data


def _steady_text(steady: dict[Path, str], steady_rounds: int) -> str:
    return f" ({steady_rounds} for {' and '.join(steady.values())})" if steady else ""


def main(argv: list[str]) -> int:
    compare("vs_xla", field_files(), ["analyze", "FILE", "--format", "json"], argv, STEADY)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
