"""Parse-time benchmark: the 5.3 MB gpt12 after-optimizations dump (38k instructions).

Prints median of 5 (parse + link + validate, text already decompressed), the full ``load`` time
(with gunzip), peak Python memory (tracemalloc, a separate run), the peak resident set size of a
fresh process doing the whole ``load`` (``resource.getrusage``, next to the same process after the
imports alone), and the ratio against XLA's own C++ parser when jaxlib is importable. Writes
``benchmarks/results/parse.json``.
"""
from __future__ import annotations

import glob
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

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
        out = subprocess.run([sys.executable, "-c", _RSS_PROBE, "load", path], capture_output=True,
                             text=True, check=True, timeout=600).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    scale = 2**20 if sys.platform == "darwin" else 2**10   # ru_maxrss: bytes on macOS, KiB on Linux
    return int(out[0]) / scale, int(out[1]) / scale


def _xla_parser():
    """XLA's C++ HLO text parser through jaxlib, if installed (optional)."""
    try:
        from jax._src.lib import xla_client  # type: ignore
    except Exception:
        try:
            from jaxlib import xla_client  # type: ignore
        except Exception:
            return None
    xla = getattr(xla_client, "_xla", None)
    for owner in (getattr(xla_client, "hlo", None), xla, xla_client):   # jaxlib >= 0.10: xla_client.hlo
        fn = getattr(owner, "hlo_module_from_text", None) if owner is not None else None
        if fn is not None:
            return fn
    return None


def main(argv: list[str]) -> int:
    from hlo_index.hlo import load, parse_module_text
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

    parse_times = _timed(lambda: parse_module_text(text, path))
    # CPU time of this process: steadier than wall time when other jobs share the machine
    cpu_times = _timed(lambda: parse_module_text(text, path), clock=time.process_time)
    load_times = _timed(lambda: load(path), runs=3)
    tracemalloc.start()
    parse_module_text(text, path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    result = {
        "input": os.path.basename(path), "bytes": len(text.encode()), "instructions": n_instr,
        "computations": len(module.computations), "runs": RUNS,
        "parse_median_s": statistics.median(parse_times), "parse_times_s": parse_times,
        "parse_cpu_median_s": statistics.median(cpu_times),
        "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "load_median_s": statistics.median(load_times), "peak_python_memory_mb": peak / 2**20,
        "target_s": 1.5,
        "peak_rss_imports_mb": rss[0] if rss else None, "peak_rss_load_mb": rss[1] if rss else None,
    }
    xla_parse = _xla_parser()
    if xla_parse is not None:
        try:
            xla_times = _timed(lambda: xla_parse(text))
            xla_cpu = _timed(lambda: xla_parse(text), clock=time.process_time)
            result["xla_median_s"] = statistics.median(xla_times)
            result["xla_cpu_median_s"] = statistics.median(xla_cpu)
            result["ratio_vs_xla"] = result["parse_median_s"] / result["xla_median_s"]
            result["cpu_ratio_vs_xla"] = result["parse_cpu_median_s"] / result["xla_cpu_median_s"]
        except Exception as e:  # jaxlib API drift: report, do not fail the benchmark
            result["xla_error"] = f"{type(e).__name__}: {e}"

    print(f"{'input':<30}{result['input']}  ({result['bytes'] / 2**20:.1f} MB, {n_instr} instructions)")
    print(f"{'parse (median of 5)':<30}{result['parse_median_s']:.3f} s   (target <= 1.5 s)")
    print(f"{'parse CPU time (median of 5)':<30}{result['parse_cpu_median_s']:.3f} s")
    print(f"{'load incl. gunzip (med 3)':<30}{result['load_median_s']:.3f} s")
    if result["load_average_1min"] is not None:
        print(f"{'machine load average':<30}{result['load_average_1min']:.2f} ({os.cpu_count()} CPUs)")
    print(f"{'peak Python memory':<30}{result['peak_python_memory_mb']:.1f} MB (tracemalloc, parse only)")
    if rss:
        print(f"{'peak RSS, whole load':<30}{rss[1]:.1f} MB (fresh process; {rss[0]:.1f} MB after imports)")
    if "xla_median_s" in result:
        print(f"{'XLA C++ parser (median)':<30}{result['xla_median_s']:.3f} s   ratio {result['ratio_vs_xla']:.2f}x")
        print(f"{'XLA C++ parser CPU (median)':<30}{result['xla_cpu_median_s']:.3f} s   CPU ratio "
              f"{result['cpu_ratio_vs_xla']:.2f}x")
    else:
        print(f"{'XLA C++ parser':<30}not measured ({result.get('xla_error', 'jaxlib not importable')})")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "parse.json"), "w") as f:
        json.dump(result, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
