"""Parse-time benchmark: the 5.3 MB gpt12 after-optimizations dump (38k instructions).

Prints the median of 5 (parse + link + validate, text already decompressed), the full ``load``
time (with gunzip), peak Python memory (tracemalloc, a separate run), the peak resident set size of
a fresh process doing the whole ``load`` (``resource.getrusage``, next to the same process after
the imports alone), and the ratio to XLA's own parser, timed as ``measure.xla_parse`` times it
(a fresh process, after a warm-up parse, the call alone), in rounds interleaved with ours.
Usage: ``python benchmarks/parse.py [FILE-PATTERN] [--quick]``. Writes ``benchmarks/results/parse.json``.
"""

from __future__ import annotations

import glob
import gzip
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import measure

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus", "gpt12_train"))
RUNS = 5


def _timed(fn, runs: int = RUNS, clock=time.perf_counter) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return times


_RSS_PROBE = """
import resource, sys
from hlo_index.hlo import load
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if sys.argv[1] == "load":
    assert all(r.module is not None for r in load(sys.argv[2]))
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _peak_rss_mb(path: str) -> tuple[float, float] | None:
    """(peak RSS after the imports, peak RSS after loading ``path``) of a fresh process, in MB."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", _RSS_PROBE, "load", path], capture_output=True, text=True, check=True, timeout=600
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    scale = 2**20 if sys.platform == "darwin" else 2**10  # ru_maxrss: bytes on macOS, KiB on Linux
    return int(out[0]) / scale, int(out[1]) / scale


def main(argv: list[str]) -> int:
    from hlo_index.hlo import load, parse_module_text

    runs = 1 if "--quick" in argv else RUNS
    argv = [a for a in argv if not a.startswith("--")]
    pattern = argv[0] if argv else os.path.join(DEFAULT, "*after_optimizations*.gz")
    paths = sorted(glob.glob(pattern))
    if not paths:
        print(f"no input matches {pattern}", file=sys.stderr)
        return 2
    path = paths[0]
    # first, while this process is small: Linux keeps ru_maxrss across fork+exec
    rss = _peak_rss_mb(path)
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        text = f.read()
    module = parse_module_text(text, path)
    n_instr = sum(len(c.instructions) for c in module.computations)

    # XLA's parse (a fresh process each) and ours (in this process), round after round
    parse_times, cpu_times, xla_samples = [], [], []
    for _ in range(runs):
        xla_samples.append(measure.xla_parse(path))
        wall, cpu = time.perf_counter(), time.process_time()
        parse_module_text(text, path)
        parse_times.append(time.perf_counter() - wall)
        cpu_times.append(time.process_time() - cpu)
    load_times = _timed(lambda: load(path), runs=min(runs, 3))
    tracemalloc.start()
    parse_module_text(text, path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    result = {
        "input": os.path.basename(path),
        "bytes": len(text.encode()),
        "instructions": n_instr,
        "computations": len(module.computations),
        "runs": runs,
        "parse_median_s": statistics.median(parse_times),
        "parse_times_s": parse_times,
        "parse_cpu_median_s": statistics.median(cpu_times),
        "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "load_median_s": statistics.median(load_times),
        "peak_python_memory_mb": peak / 2**20,
        "target_s": 1.5,
        "peak_rss_imports_mb": rss[0] if rss else None,
        "peak_rss_load_mb": rss[1] if rss else None,
    }
    xla = measure.median_of(xla_samples)
    result["xla"] = xla
    if "wall_s" in xla:
        result["ratio_vs_xla"] = result["parse_median_s"] / xla["wall_s"]
        result["cpu_ratio_vs_xla"] = result["parse_cpu_median_s"] / xla["cpu_s"]

    print(f"{'input':<30}{result['input']}  ({result['bytes'] / 2**20:.1f} MB, {n_instr} instructions)")
    print(f"{'parse (median)':<30}{result['parse_median_s']:.3f} s   (target <= 1.5 s)")
    print(f"{'parse CPU time (median)':<30}{result['parse_cpu_median_s']:.3f} s")
    print(f"{'load incl. gunzip (med 3)':<30}{result['load_median_s']:.3f} s")
    if result["load_average_1min"] is not None:
        print(f"{'machine load average':<30}{result['load_average_1min']:.2f} ({os.cpu_count()} CPUs)")
    print(f"{'peak Python memory':<30}{result['peak_python_memory_mb']:.1f} MB (tracemalloc, parse only)")
    if rss:
        print(f"{'peak RSS, whole load':<30}{rss[1]:.1f} MB (fresh process; {rss[0]:.1f} MB after imports)")
    if "ratio_vs_xla" in result:
        print(
            f"{'XLA parse (fresh process)':<30}{measure.times(xla)}   ratio {result['ratio_vs_xla']:.2f}x wall, "
            f"{result['cpu_ratio_vs_xla']:.2f}x CPU"
        )
    else:
        print(
            f"{'XLA parse':<30}"
            + (
                f"rejected by XLA: {xla['rejected']}"
                if "rejected" in xla
                else f"not measured: {xla.get('not_measured')}"
            )
        )
    measure.write("parse", result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
