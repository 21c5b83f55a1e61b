"""`make bench`: issue 14's figures, each next to its peer measured in the same run, in a bounded time.

    make bench                          parse.py, map_text.py, commands.py (about 4-6 min on 2 loaded cores)
    make bench ARGS=--all               every script here, and commands.py's xla-tools-data list (much longer)
    make bench ARGS="map_text bubble"   only the scripts named

Each script prints a table and writes JSON to benchmarks/results/; this one ends with a summary of
issue 14's figures read back from those files. Before measuring, the package's bytecode is compiled
(as ``pip install`` does): this machine sets PYTHONDONTWRITEBYTECODE, and without it every measured
process would also compile the package (~0.1 s of CPU each). The gpt24 figures need a gpt24 dump
(../shared/corpus/gpt24_train or benchmarks/results/gpt24_train, made by ``make_gpt_dump.py``);
without one they are "not measured" and this script says how to make it.
"""
from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DEFAULT = ["parse.py", "map_text.py", "commands.py"]
ORDER = ["parse.py", "simplify.py", "map_text.py", "analyze.py", "commands.py"]
NOT_BENCHMARKS = {"run_all.py", "make_gpt_dump.py"}   # this script; the gpt24 dump's generator

sys.path.insert(0, str(HERE))
from make_gpt_dump import dump_path, how_to_make  # noqa: E402 - a sibling script, no jax import


def _selected(argv: list[str]) -> tuple[list[tuple[Path, list[str]]], bool]:
    every = "--all" in argv
    names = [a if a.endswith(".py") else f"{a}.py" for a in argv if not a.startswith("-")]
    if every:
        names = ORDER + sorted(p.name for p in HERE.glob("*.py")
                               if p.name not in ORDER and p.name not in NOT_BENCHMARKS)
    elif not names:
        names = DEFAULT
    missing = [n for n in names if not (HERE / n).exists()]
    if missing:
        raise SystemExit(f"no benchmark script {', '.join(missing)} in {HERE}")
    return [(HERE / n, ["--xla-tools"] if every and n == "commands.py" else []) for n in names], every


def main(argv: list[str]) -> int:
    RESULTS.mkdir(exist_ok=True)
    compileall.compile_dir(str(HERE.parent / "hlo_index"), quiet=1)
    scripts, _ = _selected(argv)
    if dump_path(24) is None:
        print(f"note: gpt24 will be not measured: {how_to_make(24)}", flush=True)
    failed = 0
    started = time.perf_counter()
    for script, extra in scripts:
        print(f"== {script.name} {' '.join(extra)}".rstrip(), flush=True)
        t0 = time.perf_counter()
        failed += subprocess.call([sys.executable, str(script), *extra]) != 0
        print(f"   ({script.name}: {time.perf_counter() - t0:.0f} s)", flush=True)
    summary()
    print(f"make bench: {time.perf_counter() - started:.0f} s in all, load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 1 if failed else 0


# ------------------------------------------------------------------------------------ summary
def _load(name: str):
    try:
        return json.loads((RESULTS / name).read_text())
    except (OSError, ValueError):
        return None


def _ratio(a, b) -> str:
    return f"{a / b:.1f}x" if a and b else "n/a"


def summary() -> None:
    """Issue 14's figures from this run's result files (a file missing: not measured)."""
    rows: list[tuple[str, str]] = []
    commands = _load("commands.json") or {}
    for name in ("gpt12", "gpt24"):
        fig = commands.get(name)
        if not isinstance(fig, dict):
            missing = f"not measured: {how_to_make(24)}" if name == "gpt24" and dump_path(24) is None else None
            rows.append((f"{name}: analyze --format json / XLA parse", str(fig or missing or "not measured")))
            continue
        j, t, x = fig["json"], fig["text"], fig.get("xla_parse")
        rows.append((f"{name}: analyze --format json / XLA parse, CPU",
                     f"{_ratio(j.get('cpu_s'), x and x['cpu_s'])} ({j.get('cpu_s', 0):.2f} s / "
                     f"{x['cpu_s']:.3f} s)" if x else f"not measured: {fig.get('xla_reason')}"))
        rows.append((f"{name}: text / JSON, CPU", _ratio(t.get("cpu_s"), j.get("cpu_s"))))
        rows.append((f"{name}: first text output after", f"{t['first_output_s']:.2f} s (wall)"
                     if t.get("first_output_s") else "n/a"))
        b = fig["bubble"]
        rows.append((f"{name}: bubble / JSON analyze, CPU; peak RSS; output",
                     f"{_ratio(b.get('cpu_s'), j.get('cpu_s'))}; {b.get('peak_rss_mb', 0):.0f} MB; "
                     f"{b.get('bytes', 0) / 2**20:.2f} MB" if not b.get("timed_out") else "stopped"))
        c, v = fig["check"], fig["check_verify"]
        rows.append((f"{name}: check --verify / check, CPU", _ratio(v.get("cpu_s"), c.get("cpu_s"))))
    for key, label in (("jobs_gpt12", "--jobs 2, the two gpt12 dumps"), ("jobs_corpus", "--jobs 2, corpus directory")):
        r = commands.get(key)
        if r:
            rows.append((f"{label}: speed-up (wall)", f"{_ratio(r['serial'].get('wall_s'), r['jobs_2'].get('wall_s'))}"
                         f" measured; {r.get('bound', 'n/a')} with 2 idle cores (largest file's share)"))
    parse = _load("parse.json")
    if parse:
        rows.append(("gpt12 parse / XLA parse, CPU", _ratio(parse.get("parse_cpu_median_s"), parse.get("xla_cpu_median_s"))))
    text = _load("map_text.json")
    if text and isinstance(text.get("peer"), dict):
        peer = text["peer"]
        rows.append(("map text: parse + simplify / tinygrad build + simplify (geometric mean)",
                     f"{peer['geometric_mean_ratio']:.1f}x faster" if peer.get("geometric_mean_ratio")
                     else str(peer.get("tinygrad", "n/a"))))
    print("== issue 14 figures (this run)")
    width = max(len(r[0]) for r in rows) if rows else 0
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
