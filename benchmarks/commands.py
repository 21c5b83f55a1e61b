"""Issue 14's figures, each next to its reference measured in the same run (whole processes).

For each big dump (gpt12, and gpt24 when one is found under ../shared or, made by
``make_gpt_dump.py``, under benchmarks/results): XLA's C++ parser on the
text (jaxlib, when importable), ``analyze --format json`` (ratio to XLA), the text output (ratio
to JSON) and its first-output latency, ``bubble --format json`` (time, peak RSS, output size),
``check --verify`` against ``check`` (ratio). Then ``--jobs 2`` against serial on the two gpt12
dumps and on the corpus directory, and issue 11's list: each module of
``../shared/conformance/xla_hlo/xla-tools-data`` through ``analyze --format json --direction
both`` (time, peak RSS) with XLA's parse time of the file.

The machine is shared: every figure is a median of RUNS whole-process runs, ratios are taken
between medians measured in this same run, and CPU seconds (user + system of the child) are
printed next to wall seconds (CPU time is what load on other cores disturbs least). A peer that is
missing (no jaxlib, no gpt24 dump) is printed as "not measured" with the reason (for a dump, the
command that makes it), never an error.
``--quick``: one run per figure, no corpus directory. ``--xla-tools``: also issue 11's list (up to
5 more minutes; ``make bench ARGS=--all`` passes it).
Writes ``benchmarks/results/commands.json``.
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

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared"))
CORPUS = os.path.join(SHARED, "corpus")
XLA_TOOLS = os.path.join(SHARED, "conformance", "xla_hlo", "xla-tools-data")
RUNS = 3
CONFORMANCE_LIMIT_S = 30          # issue 11's goal per module; beyond it the run is stopped
CONFORMANCE_BUDGET_S = 300        # the whole list; files left after it are "not measured"

# The child runs the program as the console script does (collector off, ``main``, then ``exit_now``), so its CPU
# time, taken by this process from wait4 once it has ended, covers everything up to the exit
# (and its --jobs workers). Peak RSS comes from /proc's VmHWM where there is one: Linux carries
# ru_maxrss over exec, so a child of this (big, jaxlib-loaded) process would report our peak.
_CHILD = """import gc, resource, sys
from hlo_index.cli import exit_now, main
gc.disable()   # as run() does: the process exits right after
try:
    main(prog_name='hlo-index')
    code = 0
except SystemExit as exc:
    code = exc.code
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    with open('/proc/self/status') as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))
except (OSError, StopIteration, ValueError):
    pass
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # --jobs workers
sys.stderr.write('BENCH %d %d\\n' % (peak, kids))
exit_now(code)
"""


def child(args: list[str], timeout: float = 600, first_byte: bool = False) -> dict:
    """One ``hlo-index`` process: wall and CPU seconds, peak RSS (MB), bytes written, exit code,
    and with ``first_byte`` the seconds until its first byte of output."""
    cmd = [sys.executable, "-c", _CHILD, *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = None
    size = 0
    try:
        import threading
        err_chunks: list[bytes] = []
        reader = threading.Thread(target=lambda: err_chunks.append(proc.stderr.read()), daemon=True)
        reader.start()
        while True:
            chunk = proc.stdout.read1(1 << 16) if hasattr(proc.stdout, "read1") else proc.stdout.read(1 << 16)
            if not chunk:
                break
            if first is None:
                first = time.perf_counter() - start
            size += len(chunk)
            if time.perf_counter() - start > timeout:
                raise subprocess.TimeoutExpired(cmd, timeout)
        _, status, usage = os.wait4(proc.pid, 0)   # this child's CPU, its exit included
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join()
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return {"timed_out": True, "wall_s": time.perf_counter() - start, "args": args}
    wall = time.perf_counter() - start
    stats = [line.split() for line in b"".join(err_chunks).decode(errors="replace").splitlines()
             if line.startswith("BENCH ")]
    # CPU: the process and its workers, up to its exit; peak RSS: the largest single process
    cpu = usage.ru_utime + usage.ru_stime
    peak_kb = max(int(stats[-1][1]), int(stats[-1][2])) if stats else 0
    out = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak_kb / 1024, "bytes": size,
           "exit": proc.returncode}
    if first_byte:
        out["first_output_s"] = first
    return out


def median_runs(args: list[str], runs: int, **kw) -> dict:
    samples = [child(args, **kw) for _ in range(runs)]
    if any(s.get("timed_out") for s in samples):
        return {"timed_out": True, "args": args, "wall_s": max(s["wall_s"] for s in samples)}
    out = {key: statistics.median(s[key] for s in samples)
           for key in ("wall_s", "cpu_s", "peak_rss_mb", "bytes")}
    out["peak_rss_mb"] = max(s["peak_rss_mb"] for s in samples)
    out["exit"] = sorted({s["exit"] for s in samples})
    out["runs"] = runs
    if kw.get("first_byte"):
        out["first_output_s"] = statistics.median(s["first_output_s"] or s["wall_s"] for s in samples)
    return out


# ------------------------------------------------------------------------------ XLA's parser
def xla_parse(path: str, runs: int = RUNS):
    """({"wall_s", "cpu_s"} medians of XLA's C++ parser on the file's text, None) or (None,
    reason). CPU time is this process's (the parser runs in it, on one thread)."""
    try:
        sys.path.insert(0, HERE)
        from parse import _xla_parser
        fn = _xla_parser()
    except Exception as e:  # noqa: BLE001 - a missing peer is a note, never a failure
        return None, f"{type(e).__name__}: {e}"
    if fn is None:
        return None, "jaxlib not importable (install it into the venv to measure)"
    with gzip.open(path, "rt") if path.endswith(".gz") else open(path) as f:
        text = f.read()
    walls, cpus = [], []
    try:
        for _ in range(runs):
            start, cpu = time.perf_counter(), time.process_time()
            fn(text)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - cpu)
    except Exception as e:  # noqa: BLE001 - XLA rejects some files; say so
        return None, f"XLA's parser failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus)}, None


# ------------------------------------------------------------------------------ figures
def big_dumps() -> dict[str, str]:
    """gpt12 and gpt24 after optimizations: under ../shared, else (gpt24) benchmarks/results."""
    sys.path.insert(0, HERE)
    from make_gpt_dump import dump_path
    found = {}
    for name in ("gpt12", "gpt24"):
        paths = sorted(glob.glob(os.path.join(SHARED, "**", f"{name}*after_optimizations*"),
                                 recursive=True))
        found[name] = paths[0] if paths else dump_path(int(name[3:]))
    return found


def _shown(path: str) -> str:
    """A dump's path as printed: relative to ../shared, or to the repository for results/."""
    return os.path.relpath(path, SHARED if path.startswith(SHARED + os.sep) else os.path.dirname(HERE))


def dump_figures(path: str, runs: int) -> dict:
    fig: dict = {"path": _shown(path)}
    fig["xla_parse"], fig["xla_reason"] = xla_parse(path)
    fig["json"] = median_runs(["analyze", path, "--format", "json"], runs)
    fig["text"] = median_runs(["analyze", path], runs, first_byte=True)
    fig["bubble"] = median_runs(["bubble", path, "--format", "json"], 1, timeout=300)
    fig["check"] = median_runs(["check", path], runs)
    fig["check_verify"] = median_runs(["check", path, "--verify"], 1, timeout=600)
    return fig


def jobs_figures(paths: list[str], runs: int, largest_cpu_s: float | None = None) -> dict:
    """Serial against ``--jobs 2`` (interleaved runs, so that load hits both alike), and the bound
    two idle cores would give: no file is split, so the run takes at least the largest file's CPU
    time (``largest_cpu_s``; measured here when ``paths`` are files) and half of the total."""
    serial_runs, parallel_runs = [], []
    for _ in range(runs):
        serial_runs.append(child(["analyze", *paths, "--format", "json"]))
        parallel_runs.append(child(["analyze", *paths, "--format", "json", "--jobs", "2"]))
    serial, parallel = _median_of(serial_runs), _median_of(parallel_runs)
    if largest_cpu_s is None and all(os.path.isfile(p) for p in paths):
        largest_cpu_s = max(child(["analyze", p, "--format", "json"])["cpu_s"] for p in paths)
    out = {"paths": [os.path.relpath(p, SHARED) for p in paths], "serial": serial, "jobs_2": parallel,
           "load_average_1min": os.getloadavg()[0]}
    if largest_cpu_s and not serial.get("timed_out"):
        out["largest_file_cpu_s"] = largest_cpu_s
        out["bound"] = f"{serial['cpu_s'] / max(largest_cpu_s, serial['cpu_s'] / 2):.2f}x"
    return out


def _median_of(samples: list[dict]) -> dict:
    if any(s.get("timed_out") for s in samples):
        return {"timed_out": True, "wall_s": max(s["wall_s"] for s in samples)}
    out = {key: statistics.median(s[key] for s in samples) for key in ("wall_s", "cpu_s", "bytes")}
    out["peak_rss_mb"] = max(s["peak_rss_mb"] for s in samples)
    out["exit"] = sorted({s["exit"] for s in samples})
    out["runs"] = len(samples)
    return out


def conformance_figures() -> list[dict]:
    rows = []
    spent = 0.0
    for path in sorted(glob.glob(os.path.join(XLA_TOOLS, "*"))):
        row: dict = {"file": os.path.basename(path)}
        if spent > CONFORMANCE_BUDGET_S:
            row["not_measured"] = f"bench budget of {CONFORMANCE_BUDGET_S} s spent"
            rows.append(row)
            continue
        row["xla_parse"], row["xla_reason"] = xla_parse(path, runs=1)
        row.update(child(["analyze", path, "--format", "json", "--direction", "both"],
                         timeout=CONFORMANCE_LIMIT_S))
        spent += row["wall_s"]
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------ printing
def _line(label: str, value: str) -> None:
    print(f"  {label:<44}{value}")


def _run_text(r: dict) -> str:
    if r.get("timed_out"):
        return f"stopped after {r['wall_s']:.0f} s"
    return (f"{r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU, {r['peak_rss_mb']:.0f} MB, "
            f"exit {r['exit']}")


def _ratio(a: dict, b: dict, key: str) -> str:
    if a.get("timed_out") or b.get("timed_out") or not b.get(key):
        return "n/a"
    return f"{a[key] / b[key]:.1f}x"


def print_dump(name: str, fig: dict) -> None:
    print(f"{name}: {fig['path']}")
    xla = fig["xla_parse"]
    _line("XLA C++ parser (jaxlib), median", f"{xla['wall_s']:.3f} s wall, {xla['cpu_s']:.3f} s CPU"
          if xla else f"not measured: {fig['xla_reason']}")
    j = fig["json"]
    _line("analyze --format json", _run_text(j))
    if xla and not j.get("timed_out"):
        _line("  ratio to XLA's parse (wall / CPU)", f"{j['wall_s'] / xla['wall_s']:.1f}x / "
              f"{j['cpu_s'] / xla['cpu_s']:.1f}x   (goal 5x, stretch 3x)")
    t = fig["text"]
    _line("analyze (text)", _run_text(t))
    _line("  text / JSON (wall / CPU)", f"{_ratio(t, j, 'wall_s')} / {_ratio(t, j, 'cpu_s')}   (goal 1.5x)")
    if not t.get("timed_out"):
        _line("  first output after", f"{t['first_output_s']:.2f} s  ({t['bytes'] / 2**20:.1f} MB written)")
    b = fig["bubble"]
    _line("bubble --format json", _run_text(b))
    if not b.get("timed_out"):
        _line("  output size; time / JSON analyze", f"{b['bytes'] / 2**20:.1f} MB; {_ratio(b, j, 'wall_s')} wall, "
              f"{_ratio(b, j, 'cpu_s')} CPU   (goal < 2x, < 300 MB, < 20 MB)")
    c, v = fig["check"], fig["check_verify"]
    _line("check", _run_text(c))
    _line("check --verify", _run_text(v))
    _line("  verify ratio (wall / CPU)", f"{_ratio(v, c, 'wall_s')} / {_ratio(v, c, 'cpu_s')}   (goal <= 10x)")


def _print_jobs(title: str, r: dict) -> None:
    print(title)
    _line("serial", _run_text(r["serial"]))
    _line("--jobs 2", _run_text(r["jobs_2"]))
    _line("  speed-up (wall); CPU of all processes", f'{_ratio(r["serial"], r["jobs_2"], "wall_s")} at load '
          f'{r["load_average_1min"]:.1f}; {_ratio(r["jobs_2"], r["serial"], "cpu_s")} of serial')
    if "bound" in r:
        _line("  with 2 idle cores, at most", f'{r["bound"]} (largest file {r["largest_file_cpu_s"]:.2f} s CPU '
              f'of {r["serial"]["cpu_s"]:.2f} s; a file is never split)')


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    runs = 1 if quick else RUNS
    result: dict = {"load_average_1min": os.getloadavg()[0], "runs": runs}
    print(f"machine load average (1 min) at start: {result['load_average_1min']:.1f} "
          f"on {os.cpu_count()} CPUs; medians of {runs} runs")
    for name, path in big_dumps().items():
        if path is None:
            from make_gpt_dump import how_to_make
            result[name] = f"not measured: {how_to_make(int(name[3:]))}"
            print(f"{name}: {result[name]}")
            continue
        result[name] = dump_figures(path, runs)
        print_dump(name, result[name])
    gpt12 = sorted(glob.glob(os.path.join(CORPUS, "gpt12_train", "*")))
    if len(gpt12) >= 2:
        result["jobs_gpt12"] = jobs_figures(gpt12, min(runs, 2))
        _print_jobs("--jobs 2 vs serial, the two gpt12 dumps", result["jobs_gpt12"])
    if not quick and os.path.isdir(CORPUS):
        largest = result.get("jobs_gpt12", {}).get("largest_file_cpu_s")
        result["jobs_corpus"] = jobs_figures([CORPUS], 1, largest)
        _print_jobs("--jobs 2 vs serial, the corpus directory", result["jobs_corpus"])
    if "--xla-tools" in argv and os.path.isdir(XLA_TOOLS):
        result["xla_tools_data"] = conformance_figures()
        print(f"xla-tools-data: analyze --format json --direction both (issue 11: <= "
              f"{CONFORMANCE_LIMIT_S} s, <= 2 GB each)")
        for row in result["xla_tools_data"]:
            xla = (f"XLA parse {row['xla_parse']['wall_s'] * 1e3:8.1f} ms" if row.get("xla_parse")
                   else f"XLA: {row.get('xla_reason') or 'not measured'}")
            if "not_measured" in row:
                print(f"  {row['file']:<62} not measured: {row['not_measured']}")
            elif row.get("timed_out"):
                print(f"  {row['file']:<62} stopped after {row['wall_s']:.0f} s   {xla}")
            else:
                print(f"  {row['file']:<62} {row['wall_s']:6.2f} s {row['peak_rss_mb']:6.0f} MB "
                      f"exit {row['exit']}   {xla}")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "commands.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
