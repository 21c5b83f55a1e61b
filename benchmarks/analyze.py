"""Whole-process benchmarks of ``hlo-index analyze ... --format json``.

Cases (each run is a fresh child process: interpreter start, imports, gunzip, parse, composition,
JSON; wall time and the child's peak RSS, median of several runs):
  1. gpt12 after optimizations (every fusion): goal <= 1.5 s, <= 500 MB.
  2. gpt12 before optimizations (no fusions: the ENTRY computation as a whole, 125 outputs).
  3. the whole corpus directory, serial and with ``--jobs 2``.
An in-process split (load, composition of every target by ``hlo_index.fusion``, the report's
other figures, JSON) and a cProfile of the composition say where the time goes. Prints the ratio
against XLA's parser, timed as ``measure.py`` says, in rounds interleaved with case 1.
Writes ``benchmarks/results/analyze.json``.
Usage: ``python benchmarks/analyze.py [--quick]`` (--quick: one run per case, no corpus case).
"""

from __future__ import annotations

import cProfile
import glob
import io
import os
import pstats
import sys
import time

import measure

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))
GPT12 = os.path.join(CORPUS, "gpt12_train")
TARGET_S, TARGET_MB = 1.5, 500
ENTRY_TARGET_S = 10.0


def _runs(args: list[str], count: int) -> dict:
    """Medians of ``count`` whole ``hlo-index`` processes (``measure.tool``)."""
    return {"args": args, **measure.median_of([measure.tool(args) for _ in range(count)])}


def _phase_times(path: str) -> dict:
    """In-process split (CPU seconds): load, composition by ``hlo_index.fusion`` alone, the rest of
    the reports (text of maps, other figures), JSON rendering."""
    import hlo_index.ops  # noqa: F401  (rule registry import is part of start-up, not composition)
    from hlo_index.api import select_targets
    from hlo_index.fusion import clear_cache, output_to_input
    from hlo_index.hlo import load
    from hlo_index.render.json_out import render_json
    from hlo_index.report.driver import AnalyzeOptions, analyze_path

    t0 = time.process_time()
    modules = [r.module for r in load(path) if r.module is not None]
    t1 = time.process_time()
    clear_cache()
    t2 = time.process_time()
    targets = 0
    for module in modules:
        for selected in select_targets(module):
            output_to_input(selected.target)
            targets += 1
    t3 = time.process_time()
    clear_cache()
    t4 = time.process_time()
    reports = analyze_path(path, AnalyzeOptions())
    t5 = time.process_time()
    render_json(reports)
    t6 = time.process_time()
    return {
        "load_cpu_s": t1 - t0,
        "composition_cpu_s": t3 - t2,
        "reports_beyond_load_and_composition_cpu_s": (t5 - t4) - (t1 - t0) - (t3 - t2),
        "json_cpu_s": t6 - t5,
        "targets": targets,
    }


def _profile_composition(path: str, top: int = 12) -> list[str]:
    from hlo_index.api import select_targets
    from hlo_index.fusion import clear_cache, output_to_input
    from hlo_index.hlo import load

    modules = [r.module for r in load(path) if r.module is not None]
    clear_cache()
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for module in modules:
        for selected in select_targets(module):
            output_to_input(selected.target)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return [line for line in out.getvalue().splitlines() if line.strip()][-top:]


def _line(label: str, value: str) -> None:
    print(f"{label:<58}{value}")


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    after = sorted(glob.glob(os.path.join(GPT12, "*after_optimizations*.gz")))
    before = sorted(glob.glob(os.path.join(GPT12, "*before_optimizations*")))
    if not after:
        print(f"no gpt12 dump under {GPT12}", file=sys.stderr)
        return 2
    result: dict = {"load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}
    rounds = 1 if quick else measure.ROUNDS
    sides = measure.interleaved(
        {
            "xla": lambda: measure.xla_parse(after[0]),
            "ours": lambda: measure.tool(["analyze", after[0], "--format", "json"]),
        },
        rounds,
    )
    case1 = result["after_optimizations"] = {"args": ["analyze", after[0], "--format", "json"], **sides["ours"]}
    xla = result["xla_parse"] = sides["xla"]
    case1.update(_phase_times(after[0]))
    case1["composition_profile_top_tottime"] = _profile_composition(after[0])
    if before:
        case2 = result["before_optimizations_entry"] = _runs(
            ["analyze", before[0], "--format", "json"], 1 if quick else 3
        )
        case2.update(_phase_times(before[0]))
    if not quick and os.path.isdir(CORPUS):
        result["corpus_serial"] = _runs(["analyze", CORPUS, "--format", "json"], 1)
        result["corpus_jobs_2"] = _runs(["analyze", CORPUS, "--format", "json", "--jobs", "2"], 1)
    measure.write("analyze", result)

    _line("machine load (1 min)", f"{result['load_average_1min']:.1f}")
    _line(
        f"gpt12 after opt: analyze --format json (median of {case1['rounds']})",
        f"{case1['wall_s']:.2f} s   (goal <= {TARGET_S} s), exit {case1['exit']}",
    )
    _line("  peak RSS", f"{case1['peak_rss_mb']:.0f} MB   (goal <= {TARGET_MB} MB)")
    _line("  load (gunzip + parse), CPU", f"{case1['load_cpu_s']:.2f} s")
    _line(f"  composition of {case1['targets']} fusions, CPU", f"{case1['composition_cpu_s']:.2f} s")
    _line(
        "  rest of the reports (map text, other figures), CPU",
        f"{case1['reports_beyond_load_and_composition_cpu_s']:.2f} s",
    )
    _line("  JSON, CPU", f"{case1['json_cpu_s']:.2f} s")
    _line(
        "  XLA's parse (fresh process, the call alone), wall / CPU",
        measure.times(xla) if "wall_s" in xla else f"not measured: {xla.get('rejected') or xla.get('not_measured')}",
    )
    _line("  ratio to XLA's parse, wall / CPU", measure.times_ratio(case1, xla))
    if before:
        case2 = result["before_optimizations_entry"]
        _line(
            f"gpt12 before opt (ENTRY as a whole), median of {case2['rounds']}",
            f"{case2['wall_s']:.2f} s   (goal <= {ENTRY_TARGET_S:.0f} s), exit {case2['exit']}",
        )
        _line("  peak RSS", f"{case2['peak_rss_mb']:.0f} MB")
        _line(
            "  load / composition of the ENTRY, CPU",
            f"{case2['load_cpu_s']:.2f} s / {case2['composition_cpu_s']:.2f} s",
        )
    if "corpus_serial" in result:
        serial, parallel = result["corpus_serial"], result["corpus_jobs_2"]
        _line("corpus directory, serial", f"{serial['wall_s']:.2f} s, exit {serial['exit']}")
        _line(
            "corpus directory, --jobs 2",
            f"{parallel['wall_s']:.2f} s ({serial['wall_s'] / parallel['wall_s']:.2f}x), exit {parallel['exit']}",
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main(sys.argv[1:]))
