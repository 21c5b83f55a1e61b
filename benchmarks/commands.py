"""The commands against each other on big dumps: text output against the JSON path (and the
seconds to the first byte of text), ``bubble`` against ``analyze``, ``--jobs 2`` and the default
``--jobs auto`` against serial.

Dumps: gpt12 after optimizations, gpt24 when there is one (under ../shared/corpus, or made into
benchmarks/results by ``make_gpt_dump.py``; otherwise "not measured" with the command that makes
it), and the field's A100 Pax step before optimizations: its ENTRY is one target of ~10^6 operand
rows, whose text (78 MB) must be written as it is made, not held. Every figure is a whole
process (``measure.py``), the sides of a ratio run in ROUNDS interleaved rounds, ratios between
medians, wall / CPU. ``--jobs 2``: also the bound two idle cores
would give (a file is never split, so the run takes at least its largest file's time).

Usage: ``python benchmarks/commands.py [--rounds N | --quick]`` (``--quick``: one round, no corpus
directory). Writes ``benchmarks/results/commands.json``.
"""

from __future__ import annotations

import sys

import measure
from make_gpt_dump import dump_path, how_to_make
from measure import SHARED

CORPUS = SHARED / "corpus"
PAX_BEFORE = (
    SHARED / "field" / "gpu" / "JAX-Toolbox.nsys-jax.pax_fsdp4_4proc_proc0.module_0040.pjit__wrapped_step_fn."
    "before_optimizations.txt.gz"
)


def dumps() -> dict[str, str | None]:
    gpt12 = CORPUS / "gpt12_train" / "gpt12_train_step.after_optimizations.hlo.txt.gz"
    return {
        "gpt12": str(gpt12) if gpt12.is_file() else None,
        "gpt24": dump_path(24),
        "pax_before": str(PAX_BEFORE) if PAX_BEFORE.is_file() else None,
    }


def _not_there(name: str) -> str:
    return how_to_make(int(name[3:])) if name.startswith("gpt") else f"{measure.shown(PAX_BEFORE)} is not there"


def dump_figures(path: str, rounds: int) -> dict:
    sides = measure.interleaved(
        {
            "json": lambda: measure.tool(["analyze", path, "--format", "json"]),
            "text": lambda: measure.tool(["analyze", path, "--no-pager"], first_byte=True),
            "bubble": lambda: measure.tool(["bubble", path, "--format", "json"], timeout=300),
        },
        rounds,
    )
    return {"path": measure.shown(path), **sides}


def jobs_figures(paths: list[str], rounds: int) -> dict:
    sides = measure.interleaved(
        {
            "serial": lambda: measure.tool(["analyze", *paths, "--format", "json", "--jobs", "1"]),
            "jobs_2": lambda: measure.tool(["analyze", *paths, "--format", "json", "--jobs", "2"]),
            "auto": lambda: measure.tool(["analyze", *paths, "--format", "json"]),  # the default
        },
        rounds,
    )
    out = {"paths": [measure.shown(p) for p in paths], **sides}
    serial = sides["serial"]
    if all(p.endswith((".gz", ".txt", ".hlo")) for p in paths) and serial.get("wall_s"):
        largest = max(measure.tool(["analyze", p, "--format", "json"])["wall_s"] for p in paths)
        out["bound"] = serial["wall_s"] / max(largest, serial["wall_s"] / 2)
    return out


def main(argv: list[str]) -> int:
    rounds = measure.rounds_from(argv)
    result: dict = {"rounds": rounds}
    rows = []
    for name, path in dumps().items():
        if path is None:
            result[name] = {"not_measured": _not_there(name)}
            print(f"{name}: not measured: {result[name]['not_measured']}")
            continue
        fig = result[name] = dump_figures(path, rounds)
        j, t, b = fig["json"], fig["text"], fig["bubble"]
        rows += [
            [name, "analyze --format json", measure.times(j), "", measure.mb(j), ""],
            [
                name,
                "analyze (text)",
                measure.times(t),
                measure.times_ratio(t, j) + " of JSON",
                measure.mb(t),
                f"first byte after {measure.seconds(t, 'first_output_s')}",
            ],
            [
                name,
                "bubble --format json",
                measure.times(b),
                measure.times_ratio(b, j) + " of JSON",
                measure.mb(b),
                f"{b.get('bytes', 0) / 2**20:.2f} MB written",
            ],
        ]
    gpt12 = sorted(str(p) for p in (CORPUS / "gpt12_train").glob("*") if p.is_file())
    jobs = {"jobs_gpt12": (gpt12, "gpt12's two dumps")}
    if "--quick" not in argv:
        jobs["jobs_corpus"] = ([str(CORPUS)], "the corpus directory")
    for key, (paths, label) in jobs.items():
        if not paths:
            continue
        r = result[key] = jobs_figures(paths, rounds)
        bound = f"at most {r['bound']:.2f}x with 2 idle cores" if "bound" in r else ""
        rows += [
            [label, "analyze --format json", measure.times(r["serial"]), "", measure.mb(r["serial"]), ""],
            [
                label,
                "  --jobs 2",
                measure.times(r["jobs_2"]),
                measure.times_ratio(r["serial"], r["jobs_2"]) + " speed-up",
                measure.mb(r["jobs_2"]),
                bound,
            ],
            [
                label,
                "  --jobs auto (the default)",
                measure.times(r["auto"]),
                measure.times_ratio(r["serial"], r["auto"]) + " speed-up",
                measure.mb(r["auto"]),
                "",
            ],
        ]
    print(f"whole processes, medians of {rounds} interleaved rounds; wall / CPU")
    measure.table(["input", "command", "time", "ratio", "peak RSS", ""], rows)
    measure.write("commands", result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
