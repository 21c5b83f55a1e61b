"""Whole-process benchmark of ``hlo-index bubble ... --format json`` against ``analyze --format json``
on the same dumps (issue: bubble within 2x the JSON analyze time, < 300 MB, < 20 MB of JSON).

Each run is a fresh child process; wall time, the child's peak RSS and the size of stdout, median
of several runs. Dumps: gpt12 (after and before optimizations) and gpt24 when present (under
../shared/corpus, or made into benchmarks/results by ``make_gpt_dump.py``).
Usage: ``python benchmarks/bubble.py [--runs N]``. Writes ``benchmarks/results/bubble.json``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))
sys.path.insert(0, HERE)
from make_gpt_dump import dump_path, how_to_make  # noqa: E402 - a sibling script, no jax import

DUMPS = [os.path.join(CORPUS, "gpt12_train", "gpt12_train_step.after_optimizations.hlo.txt.gz"),
         os.path.join(CORPUS, "gpt12_train", "gpt12_train_step.before_optimizations.hlo.txt"),
         dump_path(24)]


def _child(args: list[str]) -> tuple[float, float, int]:
    """(wall s, peak RSS MB, bytes on stdout) of one ``hlo-index`` child."""
    cmd = [sys.executable, "-c",
           "import resource, sys\nfrom hlo_index.cli import main\n"
           "try:\n    code = main()\nexcept SystemExit as exc:\n    code = exc.code\n"
           "sys.stderr.write('PEAK_KB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
           "sys.exit(code or 0)\n", *args]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    peak = [int(line.split()[1]) for line in proc.stderr.decode().splitlines() if line.startswith("PEAK_KB ")]
    return wall, (peak[-1] / 1024 if peak else float("nan")), len(proc.stdout)


def _median(args: list[str], runs: int) -> dict:
    results = [_child(args) for _ in range(runs)]
    return {"wall_median_s": statistics.median(r[0] for r in results),
            "peak_rss_mb": max(r[1] for r in results), "stdout_bytes": results[-1][2]}


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    out = {}
    for path in DUMPS:
        if path is None:
            print(f"gpt24: not measured: {how_to_make(24)}")
            continue
        if not os.path.exists(path):
            continue
        name = os.path.basename(path).split(".hlo")[0]
        analyze = _median(["analyze", path, "--format", "json"], runs)
        bubble = _median(["bubble", path, "--format", "json"], runs)
        ratio = bubble["wall_median_s"] / analyze["wall_median_s"]
        out[name] = {"analyze": analyze, "bubble": bubble, "bubble_over_analyze": ratio}
        print(f"{name}: bubble --format json {bubble['wall_median_s']:.2f} s, {bubble['peak_rss_mb']:.0f} MB peak, "
              f"{bubble['stdout_bytes'] / 1e6:.2f} MB JSON; analyze --format json {analyze['wall_median_s']:.2f} s "
              f"-> {ratio:.2f}x (goal < 2x, < 300 MB, < 20 MB)")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "bubble.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
