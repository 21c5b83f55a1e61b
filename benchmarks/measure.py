"""How every benchmark here measures: one place for the two sides of each ratio.

* ``tool(args)``: one whole ``hlo-index`` process, run as ``python -m hlo_index`` runs it (interpreter
  start-up, imports, the command, the exit): wall seconds, CPU seconds (user + system from ``wait4``
  once it has ended, its ``--jobs`` workers included), peak RSS (``/proc``'s VmHWM read at its exit,
  or a ``--jobs`` worker's peak when larger;
  Linux carries ``ru_maxrss`` over exec, so ``wait4`` would report the launcher's peak when that is
  larger), bytes written, exit code; optionally the seconds to its first byte of output.
* ``xla_parse(path)``: XLA's own parser the way XLA is timed: a fresh process with jaxlib parses a
  tiny module first (warm-up), then the file's text with ``hlo_module_from_text``, the wall clock and
  the process's CPU time read around that call alone (reading and gunzipping the file are outside).
  jaxlib is never a dependency: it is found in ``$HLO_INDEX_BENCH_XLA_PYTHON`` (a Python that has
  jaxlib), else in the interpreter running the benchmark; without it every XLA figure is
  "not measured" with the reason.
* ``interleaved(...)``: both sides, round after round (load hits both alike); the figure of each side
  is the median of its rounds, and ratios are taken between those medians.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import threading
import time
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
SHARED = (REPO.parent / "shared").resolve()
XLA_PYTHON_VARIABLE = "HLO_INDEX_BENCH_XLA_PYTHON"
ROUNDS = 3

# A module small enough that parsing it costs nothing: XLA's warm-up, and the fixed-cost input.
TINY_MODULE = """HloModule tiny

ENTRY main {
  p = f32[8,16]{1,0} parameter(0)
  ROOT n = f32[8,16]{1,0} negate(p)
}
"""

# The tool's process: ``python -m hlo_index`` with the process's exit hooked to report VmHWM first.
# ``run`` ends with ``os._exit`` (no atexit, no shutdown), so the hook wraps ``os._exit`` itself.
_TOOL = """import os, runpy, sys
def _peak_kb():
    try:
        with open('/proc/self/status') as f:
            return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))
    except (OSError, StopIteration, ValueError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
_exit = os._exit
def _exit_reporting(code):
    import resource   # --jobs workers: the largest of them
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    os.write(2, b'\\nBENCH-PEAK-KB %d\\n' % max(_peak_kb(), workers))
    _exit(code)
os._exit = _exit_reporting
sys.argv[0] = 'hlo-index'
try:
    runpy.run_module('hlo_index', run_name='__main__', alter_sys=True)
except SystemExit as exc:
    code = exc.code
    _exit_reporting(code if isinstance(code, int) else (0 if code is None else 1))
_exit_reporting(0)
"""

# XLA's side: warm-up on the tiny module, then the file's text alone between the two clock reads.
_XLA = """import gzip, json, os, sys, time
def parser():
    try:
        from jaxlib import xla_client
    except ImportError:
        from jax._src.lib import xla_client
    for owner in (getattr(xla_client, 'hlo', None), getattr(xla_client, '_xla', None), xla_client):
        fn = getattr(owner, 'hlo_module_from_text', None) if owner is not None else None
        if fn is not None:
            return fn
    raise ImportError('jaxlib has no hlo_module_from_text')
def peak_kb():
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmHWM:'))
parse = parser()
parse(sys.argv[1])
path = sys.argv[2]
with (gzip.open(path, 'rt') if path.endswith('.gz') else open(path)) as f:
    text = f.read()
try:
    wall, cpu = time.perf_counter(), time.process_time()
    parse(text)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
except Exception as exc:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
    print(json.dumps({'rejected': ' '.join(lines[:2])[:240]}))
else:
    print(json.dumps({'wall_s': wall, 'cpu_s': cpu, 'peak_rss_mb': peak_kb() / 1024}))
"""

_XLA_PROBE = """import sys
try:
    from jaxlib import xla_client
except ImportError:
    from jax._src.lib import xla_client
import jaxlib
print(getattr(jaxlib, '__version__', 'unknown'))
"""


# ------------------------------------------------------------------------------ XLA's side
@cache
def xla_python() -> tuple[str | None, str]:
    """(a Python with jaxlib, jaxlib's version) or (None, why XLA cannot be measured)."""
    chosen = os.environ.get(XLA_PYTHON_VARIABLE)
    python = chosen or sys.executable
    try:
        probe = subprocess.run([python, "-c", _XLA_PROBE], capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{XLA_PYTHON_VARIABLE}={python} cannot run: {exc}"
    if probe.returncode != 0:
        where = f"{XLA_PYTHON_VARIABLE}={python}" if chosen else f"{python} (set {XLA_PYTHON_VARIABLE})"
        return None, f"no jaxlib in {where}: {(probe.stderr.strip().splitlines() or ['?'])[-1]}"
    return python, probe.stdout.strip()


def xla_parse(path: str | os.PathLike, timeout: float = 300) -> dict:
    """One timing of XLA's parser on the file, in a fresh process: {"wall_s", "cpu_s",
    "peak_rss_mb"}, or {"rejected": XLA's message}, or {"not_measured": why}."""
    python, version = xla_python()
    if python is None:
        return {"not_measured": version}
    try:
        out = subprocess.run(
            [python, "-c", _XLA, TINY_MODULE, str(path)], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"not_measured": f"XLA's process ran past {timeout:.0f} s"}
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        return {"not_measured": f"XLA's process failed: {last[:160]}"}
    return json.loads(lines[-1])


# ------------------------------------------------------------------------------ our side
def tool(args: list[str], timeout: float = 600, first_byte: bool = False, python: str | None = None) -> dict:
    """One whole ``hlo-index ARGS`` process (see the module's docstring); {"timed_out": True,
    "wall_s": timeout} when it runs past ``timeout`` seconds (it is killed)."""
    return process([python or sys.executable, "-c", _TOOL, *map(str, args)], timeout, first_byte)


def process(cmd: list[str], timeout: float = 600, first_byte: bool = False) -> dict:
    """One whole process: wall and CPU seconds, peak RSS (when it reports one), bytes on stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)
    reader.start()
    killed = threading.Event()
    killer = threading.Timer(timeout, lambda: (killed.set(), proc.kill()))
    killer.start()
    first, size = None, 0
    try:
        while chunk := proc.stdout.read1(1 << 16):
            if first is None:
                first = time.perf_counter() - start
            size += len(chunk)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's CPU, its exit and workers included
        proc.returncode = os.waitstatus_to_exitcode(status)
    finally:
        killer.cancel()
        reader.join()
    wall = time.perf_counter() - start
    if killed.is_set():
        return {"timed_out": True, "wall_s": timeout}
    text = b"".join(err).decode(errors="replace")
    peaks = [int(line.split()[1]) for line in text.splitlines() if line.startswith("BENCH-PEAK-KB ")]
    out = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "bytes": size, "exit": proc.returncode}
    if peaks:
        out["peak_rss_mb"] = peaks[-1] / 1024
    if first_byte:
        out["first_output_s"] = first if first is not None else wall
    return out


# ------------------------------------------------------------------------------ rounds and medians
def median_of(samples: list[dict]) -> dict:
    """Medians of a side's rounds (peak RSS: the largest); a round that timed out or was rejected
    stands for the whole side."""
    for key in ("timed_out", "rejected", "not_measured"):
        bad = [s for s in samples if key in s]
        if bad:
            return bad[0]
    out = {
        key: statistics.median(s[key] for s in samples)
        for key in ("wall_s", "cpu_s", "first_output_s", "bytes")
        if all(key in s for s in samples)
    }
    if all("peak_rss_mb" in s for s in samples):
        out["peak_rss_mb"] = max(s["peak_rss_mb"] for s in samples)
    if all("exit" in s for s in samples):
        out["exit"] = sorted({s["exit"] for s in samples})
    out["rounds"] = len(samples)
    return out


def interleaved(sides: dict, rounds: int = ROUNDS, warmup: int = 0) -> dict:
    """``sides``: name -> a function taking no argument and returning one sample. Each round runs
    every side once, in order; a side that timed out, was rejected or cannot be measured is not run
    again. ``warmup`` rounds run first and are not counted. Returns name -> ``median_of`` its
    samples."""
    for _ in range(warmup):
        for measure in sides.values():
            measure()
    samples: dict[str, list[dict]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, measure in sides.items():
            done = samples[name]
            if done and any(k in done[-1] for k in ("timed_out", "rejected", "not_measured")):
                continue
            done.append(measure())
    return {name: median_of(done) for name, done in samples.items()}


def ratio(ours: dict, theirs: dict, key: str = "wall_s", extra: float = 0.0) -> float | None:
    if not ours.get(key) or theirs.get(key) is None or "timed_out" in ours:
        return None
    return ours[key] / (theirs[key] + extra)


# ------------------------------------------------------------------------------ printing, results
def seconds(sample: dict, key: str = "wall_s") -> str:
    """A side's figure as printed: seconds, "> N s" past its time limit, or why it has none."""
    if "timed_out" in sample:
        return f"> {sample['wall_s']:.0f} s"
    if "rejected" in sample:
        return "rejected by XLA"
    if "not_measured" in sample:
        return "not measured"
    value = sample.get(key)
    if value is None:
        return "n/a"
    if value < 1e-3:
        return f"{value * 1e6:.0f} us"
    return f"{value * 1e3:.1f} ms" if value < 0.1 else f"{value:.2f} s"


def times(sample: dict) -> str:
    """Wall and CPU of a side: "1.23 s / 1.20 s"."""
    if any(k in sample for k in ("timed_out", "rejected", "not_measured")):
        return seconds(sample)
    return f"{seconds(sample, 'wall_s')} / {seconds(sample, 'cpu_s')}"


def times_ratio(ours: dict, theirs: dict, plus: dict | None = None) -> str:
    """Our time over theirs (plus the ``plus`` side's, when given), wall / CPU: "4.1x / 4.0x";
    "> Nx" when ours ran past its limit."""
    extra = {key: (plus or {}).get(key) or 0.0 for key in ("wall_s", "cpu_s")}
    if "timed_out" in ours and theirs.get("wall_s"):
        return f"> {ours['wall_s'] / (theirs['wall_s'] + extra['wall_s']):.1f}x"
    wall = ratio(ours, theirs, "wall_s", extra["wall_s"])
    cpu = ratio(ours, theirs, "cpu_s", extra["cpu_s"])
    if wall is None:
        return "n/a"
    return f"{wall:.1f}x / {cpu:.1f}x" if cpu is not None else f"{wall:.1f}x"


def exits(sample: dict) -> str:
    return ",".join(map(str, sample.get("exit", []))) or "-"


def mb(sample: dict) -> str:
    value = sample.get("peak_rss_mb")
    return f"{value:.0f} MB" if value is not None else "n/a"


def table(header: list[str], rows: list[list[str]]) -> None:
    """A plain-text table on stdout, columns as wide as their widest cell."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip())


def shown(path: str | os.PathLike) -> str:
    """A path as printed: relative to ../shared when under it, else to the repository."""
    path = Path(path).resolve()
    for root, prefix in ((SHARED, "../shared/"), (REPO, "")):
        try:
            return prefix + str(path.relative_to(root))
        except ValueError:
            pass
    return str(path)


def make_command(script: str, *extra: str) -> str:
    """The command that reproduces a script's figures."""
    args = " ".join([script.removesuffix(".py"), *extra])
    return f"make bench ARGS={shlex.quote(args)}" if extra else f"make bench ARGS={args}"


def machine() -> dict:
    """What the figures were measured on."""
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    python, jaxlib = xla_python()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cores": os.cpu_count(),
        "cpu": model,
        "python": platform.python_version(),
        "jaxlib": jaxlib if python else f"none ({jaxlib})",
        "load_average": list(os.getloadavg()),
    }


def write(name: str, data: dict) -> Path:
    """``benchmarks/results/NAME.json``, with the machine and the load at the end of the run."""
    RESULTS.mkdir(exist_ok=True)
    data = {"machine": machine(), **data}
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def tiny_module() -> Path:
    """The 5-line module as a file under results/ (written once per run)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "tiny.hlo"
    if not path.exists() or path.read_text() != TINY_MODULE:
        path.write_text(TINY_MODULE)
    return path


def rounds_from(argv: list[str], default: int = ROUNDS) -> int:
    """``--rounds N`` (``--quick``: 1)."""
    if "--quick" in argv:
        return 1
    if "--rounds" in argv:
        return int(argv[argv.index("--rounds") + 1])
    return default


def option(argv: list[str], name: str, default: str | None = None) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else default
