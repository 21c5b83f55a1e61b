"""``make bench``: the benchmarks, then one summary table of their figures with what they were
measured on and the command that reproduces each row.

    make bench                            the scripts of DEFAULT (see benchmarks/README.md for the time)
    make bench ARGS=--all                 every script here
    make bench ARGS="vs_xla startup"      only the scripts named
    make bench ARGS="--quick"             one round each, no corpus directory (a dry run)
    make bench ARGS="vs_xla --only Pax"   options go to the scripts that take them

Each script prints its own table and writes JSON to benchmarks/results/; the summary is read back
from those files (a script not run or failed: "not measured"). Before measuring, the package's bytecode is
compiled, as ``pip install`` does: with PYTHONDONTWRITEBYTECODE set, every measured process would
otherwise also compile the package.
"""

from __future__ import annotations

import compileall
import json
import subprocess
import sys
import time
from typing import Any

import measure
from measure import HERE, RESULTS

DEFAULT = [
    "startup.py",
    "vs_xla.py",
    "whole_programs.py",
    "verify_cost.py",
    "commands.py",
    "map_text.py",
    "cost_vs_kernels.py",
]
EVERY = [*DEFAULT, "parse.py", "analyze.py", "simplify.py", "unknown_report.py", "gpu_report.py", "cost_overhead.py"]
# the scripts that take --quick, --rounds N, --only TEXT, --timeout S
TAKES_OPTIONS = {
    "startup.py",
    "vs_xla.py",
    "whole_programs.py",
    "verify_cost.py",
    "commands.py",
    "analyze.py",
    "cost_overhead.py",
}
WITH_VALUE = {"--rounds", "--only", "--timeout", "--top"}


def _selected(argv: list[str]) -> tuple[list[str], list[str]]:
    names, options, i = [], [], 0
    while i < len(argv):
        arg = argv[i]
        if arg in WITH_VALUE and i + 1 < len(argv):
            options += argv[i : i + 2]
            i += 2
            continue
        if arg.startswith("-"):
            if arg != "--all":
                options.append(arg)
        else:
            names.append(arg if arg.endswith(".py") else f"{arg}.py")
        i += 1
    if "--all" in argv:
        names = EVERY
    elif not names:
        names = DEFAULT
    missing = [n for n in names if not (HERE / n).exists()]
    if missing:
        raise SystemExit(f"no benchmark script {', '.join(missing)} in {HERE}")
    return names, options


def main(argv: list[str]) -> int:
    RESULTS.mkdir(exist_ok=True)
    compileall.compile_dir(str(HERE.parent / "hlo_index"), quiet=1)
    names, options = _selected(argv)
    start_machine = measure.machine()
    python, why = measure.xla_python()
    if python is None:
        print(f"note: XLA's figures will be not measured: {why}", flush=True)
    for stale in names:
        (RESULTS / stale.replace(".py", ".json")).unlink(missing_ok=True)
    RAN.update(names)
    failed, started = 0, time.perf_counter()
    for name in names:
        extra = options if name in TAKES_OPTIONS else []
        print(f"== {name} {' '.join(extra)}".rstrip(), flush=True)
        t0 = time.perf_counter()
        failed += subprocess.call([sys.executable, str(HERE / name), *extra]) != 0
        print(f"   ({name}: {time.perf_counter() - t0:.0f} s)", flush=True)
    summary(start_machine, time.perf_counter() - started, options)
    return 1 if failed else 0


# ------------------------------------------------------------------------------------ summary
RAN: set[str] = set()  # the scripts of this run: the summary reads only their results


def _load(name: str) -> Any:
    if f"{name}.py" not in RAN:
        return {}
    try:
        return json.loads((RESULTS / f"{name}.json").read_text())
    except (OSError, ValueError):
        return {}


def _entry(results: dict, text: str) -> dict:
    return next((f for f in results.get("files", []) if text in f["file"]), {})


def _compare_row(label: str, entry: dict, goal: str, command: str, plus: str | None = None) -> list[str]:
    if not entry:
        return [label, "not measured", "", "", goal, command]
    xla, ours = entry["xla"], entry["ours"]
    if "rejected" in xla:
        return [label, measure.times(ours), "rejected by XLA", "", goal, command]
    if "not_measured" in xla:
        return [label, measure.times(ours), f"not measured: {xla['not_measured']}", "", goal, command]
    ratio = measure.times_ratio(ours, xla, entry.get("fixed") if plus else None)
    return [
        label,
        f"{measure.times(ours)}, {measure.mb(ours)}",
        measure.times(xla) + (f" + {measure.times(entry['fixed'])}" if plus else ""),
        ratio,
        goal,
        command,
    ]


def _worst_row(label: str, results: dict, key: str, goal: str, command: str) -> list[str]:
    worst = results.get(key)
    if not worst:
        return [label, "not measured", "", "", goal, command]
    entry = _entry(results, worst["file"])
    with_fixed = key == "worst_with_fixed"
    row = _compare_row(
        f"{label}: {worst['file'].rsplit('/', 1)[-1]}", entry, goal, command, "fixed" if with_fixed else None
    )
    return row


def rows(options: list[str]) -> list[list[str]]:
    opts = (" " + " ".join(options)) if options else ""

    def command(script: str) -> str:
        return measure.make_command(script) + (f" (run with{opts})" if opts else "")

    out = []
    vs = _load("vs_xla")
    out.append(
        _compare_row(
            "gpt12 after optimizations (corpus), analyze --format json",
            _entry(vs, "gpt12_train"),
            "3x",
            command("vs_xla"),
        )
    )
    out.append(
        _compare_row(
            "A100 Pax training step (field), analyze --format json", _entry(vs, "JAX-Toolbox"), "3x", command("vs_xla")
        )
    )
    out.append(_worst_row("field after-optimizations, worst", vs, "worst", "3x", command("vs_xla")))
    rejected = [f["file"].rsplit("/", 1)[-1] for f in vs.get("files", []) if "rejected" in f["xla"]]
    if rejected:
        out.append(["field files XLA rejects", ", ".join(rejected), "", "", "", command("vs_xla")])
    whole = _load("whole_programs")
    out.append(
        _worst_row(
            "xla-tools-data --direction both, worst vs XLA + fixed cost",
            whole,
            "worst_with_fixed",
            "30x",
            command("whole_programs"),
        )
    )
    start = _load("startup")
    if start:
        out.append(
            [
                "fixed cost: analyze of a 5-line module",
                f"{measure.times(start['analyze'])}, {measure.mb(start['analyze'])}",
                f'python -c "{start["baseline_command"]}": {measure.times(start["baseline"])}',
                measure.times_ratio(start["analyze"], start["baseline"]),
                "3x",
                command("startup"),
            ]
        )
    else:
        out.append(["fixed cost: analyze of a 5-line module", "not measured", "", "", "3x", command("startup")])
    verify = _load("verify_cost")
    gpt12 = _entry(verify, "gpt12_train/gpt12_train_step.after")
    out.append(
        [
            "gpt12: check --verify / check",
            measure.times(gpt12.get("verify", {})) if gpt12 else "not measured",
            measure.times(gpt12.get("check", {})) if gpt12 else "",
            measure.times_ratio(gpt12["verify"], gpt12["check"]) if gpt12 else "",
            "5x",
            command("verify_cost"),
        ]
    )
    worst = verify.get("worst")
    if worst:
        entry = _entry(verify, worst["file"])
        out.append(
            [
                f"check --verify / check, worst of corpus and field: {worst['file'].rsplit('/', 1)[-1]}",
                measure.times(entry["verify"]),
                measure.times(entry["check"]),
                measure.times_ratio(entry["verify"], entry["check"]),
                "5x",
                command("verify_cost"),
            ]
        )
    else:
        out.append(
            ["check --verify / check, worst of corpus and field", "not measured", "", "", "5x", command("verify_cost")]
        )
    cmds = _load("commands")
    fig = cmds.get("gpt12") or {}
    if "json" in fig:
        j, t, b = fig["json"], fig["text"], fig["bubble"]
        out.append(
            [
                "gpt12: analyze (text) / analyze --format json",
                f"{measure.times(t)} (first byte {measure.seconds(t, 'first_output_s')})",
                measure.times(j),
                measure.times_ratio(t, j),
                "1.5x",
                command("commands"),
            ]
        )
        out.append(
            [
                "gpt12: bubble --format json / analyze --format json",
                f"{measure.times(b)}, {measure.mb(b)}",
                measure.times(j),
                measure.times_ratio(b, j),
                "2x",
                command("commands"),
            ]
        )
    else:
        out.append(["gpt12: text / JSON; bubble / analyze", "not measured", "", "", "1.5x; 2x", command("commands")])
    jobs = cmds.get("jobs_corpus") or cmds.get("jobs_gpt12")
    if jobs:
        label = "corpus directory" if "jobs_corpus" in cmds else "gpt12's two dumps"
        out.append(
            [
                f"{label}: --jobs 2 speed-up (wall)",
                measure.times(jobs["jobs_2"]),
                measure.times(jobs["serial"]),
                measure.times_ratio(jobs["serial"], jobs["jobs_2"]),
                f"{jobs['bound']:.2f}x bound" if "bound" in jobs else "",
                command("commands"),
            ]
        )
        if "auto" in jobs:
            out.append(
                [
                    f"{label}: --jobs auto (the default) speed-up (wall)",
                    f"{measure.times(jobs['auto'])}, {measure.mb(jobs['auto'])}",
                    f"{measure.times(jobs['serial'])}, {measure.mb(jobs['serial'])}",
                    measure.times_ratio(jobs["serial"], jobs["auto"]),
                    "",
                    command("commands"),
                ]
            )
    text = _load("map_text").get("peer") or {}
    out.append(
        [
            "map text: parse + simplify, tinygrad's build + simplify / ours (geometric mean)",
            "",
            f"tinygrad {text.get('tinygrad_version', '')}".strip()
            if "geometric_mean_ratio" in text
            else str(text.get("tinygrad", "not measured")),
            f"{text['geometric_mean_ratio']:.1f}x faster" if "geometric_mean_ratio" in text else "",
            "20x faster",
            measure.make_command("map_text"),
        ]
    )
    kernels = _load("cost_vs_kernels")
    for variant in kernels if isinstance(kernels, list) else []:
        xla, exact = variant["xla_figures"], variant["exact_figures"]
        out.append(
            [
                f"cost vs kernels measured on an H200, {variant['variant']}: rank correlation, within 2x",
                f"exact bytes {exact['spearman']:.2f}, {exact['within_2x']}/{variant['fusions_timed']}",
                f"XLA's figures {xla['spearman']:.2f}, {xla['within_2x']}/{variant['fusions_timed']}",
                "",
                "",
                measure.make_command("cost_vs_kernels"),
            ]
        )
    return out


def summary(start_machine: dict, elapsed: float, options: list[str]) -> None:
    end = measure.machine()
    print(f"\n== summary: {end['date']}, {elapsed:.0f} s")
    print(f"machine: {end['cores']} cores, {end['cpu']}; Python {end['python']}; jaxlib {end['jaxlib']}")
    print(
        "load average (1, 5, 15 min): at the start "
        + ", ".join(f"{v:.2f}" for v in start_machine["load_average"])
        + "; at the end "
        + ", ".join(f"{v:.2f}" for v in end["load_average"])
    )
    print(
        "times: wall / CPU, whole processes except XLA's parse (the call alone, in a fresh process after a "
        "warm-up); medians of interleaved rounds\n"
    )
    measure.table(["figure", "ours", "reference", "ratio", "goal", "reproduce"], rows(options))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
