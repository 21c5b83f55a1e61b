"""Whole-process benchmark of ``hlo-index analyze FILE --format json`` on the gpt12 dump.

Each run is a fresh child process (interpreter start, imports, gunzip, parse, composition of every
fusion, JSON); wall time and the child's peak RSS (``resource.getrusage(RUSAGE_CHILDREN)``) are
recorded, median of 5. A last in-process run is profiled with cProfile to say where time goes.
Prints the ratio against XLA's C++ parser when jaxlib is importable. Writes
``benchmarks/results/analyze.json``.
"""
from __future__ import annotations

import cProfile
import glob
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus", "gpt12_train"))
RUNS = 5
TARGET_S, TARGET_MB = 1.5, 500


def _child_run(path: str) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB, exit code) of one ``hlo-index analyze`` child process."""
    cmd = [sys.executable, "-c", "import sys; from hlo_index.cli import main; sys.exit(main())",
           "analyze", path, "--format", "json"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far (KB on Linux): children run in turn,
    # and the first is no smaller than the rest, so the max over runs is what we report.
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, peak_mb, proc.returncode


def _phase_times(path: str) -> dict:
    """In-process split: load (gunzip + parse), analysis of every fusion, JSON rendering."""
    from hlo_index.render.driver import AnalyzeOptions, analyze_path
    from hlo_index.render.json_out import render_json
    from hlo_index.hlo import load
    t0 = time.perf_counter()
    load(path)
    t1 = time.perf_counter()
    from hlo_index.fusion import clear_cache
    clear_cache()
    t2 = time.perf_counter()
    reports = analyze_path(path, AnalyzeOptions())
    t3 = time.perf_counter()
    render_json(reports)
    t4 = time.perf_counter()
    targets = sum(len(r.targets) for r in reports)
    return {"load_s": t1 - t0, "load_and_analyze_s": t3 - t2, "analyze_only_s": (t3 - t2) - (t1 - t0),
            "json_s": t4 - t3, "targets": targets}


def _profile(path: str, top: int = 12) -> list[str]:
    from hlo_index.fusion import clear_cache
    from hlo_index.render.driver import AnalyzeOptions, analyze_path
    clear_cache()
    profiler = cProfile.Profile()
    profiler.enable()
    analyze_path(path, AnalyzeOptions())
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return [line for line in out.getvalue().splitlines() if line.strip()][-top:]


def _xla_parse_seconds(path: str):
    try:
        from parse import _xla_parser  # benchmarks/parse.py, same folder
    except Exception:
        return None
    fn = _xla_parser()
    if fn is None:
        return None
    import gzip
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        text = f.read()
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str]) -> int:
    pattern = argv[0] if argv else os.path.join(DEFAULT, "*after_optimizations*.gz")
    paths = sorted(glob.glob(pattern))
    if not paths:
        print(f"no input matches {pattern}", file=sys.stderr)
        return 2
    path = paths[0]
    runs = [_child_run(path) for _ in range(RUNS)]
    if any(code != 0 for _, _, code in runs):
        print(f"hlo-index analyze exited with {[c for _, _, c in runs]}", file=sys.stderr)
    walls = [w for w, _, _ in runs]
    peak = max(m for _, m, _ in runs)
    phases = _phase_times(path)
    result = {
        "input": os.path.basename(path), "runs": RUNS, "wall_median_s": statistics.median(walls),
        "wall_times_s": walls, "peak_rss_mb": peak, "target_s": TARGET_S, "target_mb": TARGET_MB,
        "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        **phases, "profile_top_tottime": _profile(path),
    }
    xla = _xla_parse_seconds(path)
    if xla is not None:
        result["xla_parse_s"] = xla
        result["ratio_to_xla_parse"] = result["wall_median_s"] / xla
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "analyze.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"{'input':<44}{result['input']}")
    print(f"{'hlo-index analyze --format json (median)':<44}{result['wall_median_s']:.2f} s   (goal <= {TARGET_S} s)")
    print(f"{'peak RSS':<44}{peak:.0f} MB   (goal <= {TARGET_MB} MB)")
    print(f"{'  load (gunzip + parse), in process':<44}{phases['load_s']:.2f} s")
    print(f"{'  composition of {} targets'.format(phases['targets']):<44}{phases['analyze_only_s']:.2f} s")
    print(f"{'  JSON':<44}{phases['json_s']:.2f} s")
    if xla is not None:
        print(f"{'ratio to XLA C++ parse':<44}{result['ratio_to_xla_parse']:.1f}x  (XLA {xla:.2f} s)")
    else:
        print("ratio to XLA C++ parse: jaxlib not importable")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main(sys.argv[1:]))
