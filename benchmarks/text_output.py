"""Text output against the JSON path on gpt12 after optimizations (1,078 fusions).

Figures (medians of ``--runs``, each a fresh process): wall and CPU time of ``analyze --format
json``, ``analyze`` as text (``--color always``, as a terminal gets it), ``analyze --top 10 --sort
bytes``; peak RSS of each (``/usr/bin/time`` when present); the text/JSON CPU ratio (goal <= 1.5);
and the first-output latency: seconds until the first fusion block reaches the reader.

Usage: ``python benchmarks/text_output.py [--runs N]``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GPT12 = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus", "gpt12_train",
                                      "gpt12_train_step.after_optimizations.hlo.txt.gz"))
CLI = [sys.executable, "-m", "hlo_index", "analyze", GPT12]
CASES = {"json": ["--format", "json"], "text": ["--color", "always", "--no-pager"],
         "top10": ["--top", "10", "--sort", "bytes"]}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _one(args: list[str]) -> dict:
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    prefix = [timer, "-f", "%M"] if timer else []
    cpu0, t0 = _children_cpu(), time.perf_counter()
    done = subprocess.run(prefix + CLI + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    rss = None
    if timer and done.stderr.strip():
        try:
            rss = int(done.stderr.strip().splitlines()[-1]) / 1024
        except ValueError:
            rss = None
    return {"wall_s": wall, "cpu_s": cpu, "rss_mb": rss, "exit": done.returncode}


def _first_output() -> float:
    t0 = time.perf_counter()
    proc = subprocess.Popen(CLI + ["--color", "never", "--no-pager"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    seen = b""
    while b"\xe2\x95\xad" not in seen:    # the first block's corner
        chunk = proc.stdout.read1(65536) if hasattr(proc.stdout, "read1") else proc.stdout.read(4096)
        if not chunk:
            break
        seen += chunk
    latency = time.perf_counter() - t0
    proc.kill()
    proc.wait()
    return latency


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    if not os.path.exists(GPT12):
        print(f"no gpt12 dump at {GPT12}", file=sys.stderr)
        return 0
    result = {}
    for name, args in CASES.items():
        samples = [_one(args) for _ in range(runs)]
        result[name] = {k: statistics.median(s[k] for s in samples) if samples[0][k] is not None else None
                        for k in ("wall_s", "cpu_s", "rss_mb")}
    result["first_output_s"] = statistics.median(_first_output() for _ in range(runs))
    result["text_over_json_cpu"] = result["text"]["cpu_s"] / result["json"]["cpu_s"]
    result["top10_over_json_cpu"] = result["top10"]["cpu_s"] / result["json"]["cpu_s"]
    for name in CASES:
        r = result[name]
        rss = f", {r['rss_mb']:.0f} MB peak" if r["rss_mb"] is not None else ""
        print(f"  analyze gpt12 {name:<6} wall {r['wall_s']:.2f} s, CPU {r['cpu_s']:.2f} s{rss}")
    print(f"  text / JSON CPU time: {result['text_over_json_cpu']:.2f}x (goal <= 1.5x); "
          f"--top 10 / JSON: {result['top10_over_json_cpu']:.2f}x")
    print(f"  first fusion block reaches the reader after {result['first_output_s']:.2f} s")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "text_output.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
