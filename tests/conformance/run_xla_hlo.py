"""Conformance harness over XLA's own HLO texts (``../shared/conformance/xla_hlo``).

Each module goes through what a user runs: load (parse, link, checks), the analysis of every
target in both directions (``analyze --direction both --no-analyses``) and the ``stats`` counts.
A ``valid`` module (XLA's parser accepts it) passes when it loads with no error diagnostic, every
target is analysed with no error and no empty shape, and nothing raises. An ``invalid`` one
passes when it is rejected (an error diagnostic) without a traceback.

    python tests/conformance/run_xla_hlo.py [--jobs 2] [--only valid|invalid] [--match SUBSTR] [-v]

prints failures grouped by cause, the counts, and the median / worst per-file time. The pytest
test (``test_xla_hlo.py``) calls :func:`run` and asserts on its outcome.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import signal
import statistics
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
XLA_HLO = CONFORMANCE / "xla_hlo"
MANIFEST = XLA_HLO / "MANIFEST.tsv"
PER_FILE_TIMEOUT_S = 120


@dataclass(frozen=True)
class Case:
    file: str  # relative to XLA_HLO
    expected: str  # "valid" | "invalid"
    notes: str
    tags: str


@dataclass
class Outcome:
    file: str
    expected: str
    passed: bool
    category: str = ""  # why it failed (or, for an invalid file, why it was rejected)
    detail: str = ""
    seconds: float = 0.0
    modules: int = 0
    targets: int = 0
    loaded: bool = False  # every module parsed, linked and checked without an error


def manifest_cases() -> list[Case]:
    if not MANIFEST.is_file():
        return []
    with open(MANIFEST, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [Case(r["file"], r["xla_parser"], r["notes"], r["tags"]) for r in rows]


def is_parser_negative(case: Case) -> bool:
    """An ``invalid`` case that is HLO with a defect, not a text template XLA's tests fill in."""
    return case.expected == "invalid" and "placeholders (template?)" not in case.notes


class _Timeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Timeout()


def _empty_shape(text: str) -> bool:
    return not text or "unknown" in text


def check_file(case: Case) -> Outcome:
    """Load, analyse and count one file; never raises."""
    from hlo_index.hlo import load
    from hlo_index.report.build import module_report
    from hlo_index.report.stats import module_stats

    path = str(XLA_HLO / case.file)
    out = Outcome(case.file, case.expected, False)
    start = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(PER_FILE_TIMEOUT_S)
    try:
        results = load(path)
        out.modules = len(results)
        errors = [d for r in results for d in r.diagnostics if d.severity == "error"]
        if case.expected == "invalid":
            out.passed = bool(errors)
            out.category = "rejected" if errors else "accepted"
            out.detail = errors[0].message if errors else ""
            return out
        if errors or any(r.module is None for r in results):
            d = errors[0] if errors else None
            out.category = "load-error"
            out.detail = f"{d.line}:{d.column}: {d.message}" if d else "no module"
            return out
        out.loaded = True
        for r in results:
            module = r.module
            module_stats(module)
            report = module_report(module, "both", options={"analyses": False})
            out.targets += len(report.targets)
            bad = [d for d in report.diagnostics if d.severity == "error"]
            if bad and "_Timeout" in bad[0].message:
                raise _Timeout()
            if bad:
                out.category = "analysis-error"
                out.detail = f"{bad[0].line}:{bad[0].column}: {bad[0].message}"
                return out
            for t in report.targets:
                shapes = [s for _, s in t.outputs] + [o.operand_shape for o in t.output_to_input]
                if any(_empty_shape(s) for s in shapes):  # no outputs at all is fine: a () result
                    out.category = "empty-shape"
                    out.detail = f"{t.kind} {t.name}: outputs {t.outputs}"
                    return out
        out.passed = True
        return out
    except _Timeout:
        out.category = "timeout"
        out.detail = f"over {PER_FILE_TIMEOUT_S} s"
        return out
    except Exception as e:  # noqa: BLE001  the harness reports tracebacks, it must not stop on them
        out.category = "traceback"
        out.detail = f"{type(e).__name__}: {e} | " + traceback.format_exc(limit=-3).replace("\n", " ")[-400:]
        return out
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        out.seconds = time.perf_counter() - start


def _check_many(cases: list[Case]) -> list[Outcome]:
    outcomes = []
    trace = os.environ.get("XLA_HLO_TRACE")
    for case in cases:
        if trace:
            print(f"start {case.file}", file=sys.stderr, flush=True)
        outcomes.append(check_file(case))
        if trace:
            print(f"done {outcomes[-1].seconds:.2f}s {case.file}", file=sys.stderr, flush=True)
    return outcomes


def run(cases: list[Case], jobs: int = 2) -> list[Outcome]:
    """Outcomes in the order of ``cases``; ``jobs`` worker processes, each taking many files."""
    if jobs <= 1 or len(cases) < 2:
        return _check_many(cases)
    import multiprocessing

    import hlo_index.report.build  # noqa: F401  (workers fork with the code as it is now)

    ctx = multiprocessing.get_context("fork")
    # big files first, then small ones in batches: no worker is left holding the one slow file at the end
    order = sorted(range(len(cases)), key=lambda i: -os.path.getsize(XLA_HLO / cases[i].file))
    batches = [[i] for i in order[:40]] + [order[k : k + 25] for k in range(40, len(order), 25)]
    by_index: dict[int, Outcome] = {}
    with ctx.Pool(jobs, maxtasksperchild=4) as pool:
        for idx, outs in pool.imap_unordered(_batch_worker, [(b, [cases[i] for i in b]) for b in batches]):
            by_index.update(zip(idx, outs))
    return [by_index[i] for i in range(len(cases))]


def _batch_worker(item):
    indices, cases = item
    return indices, _check_many(cases)


def cause(outcome: Outcome) -> str:
    """A failure message with names and numbers blanked, to group failures by cause."""
    text = re.sub(r"%?[\w.\-]*\d[\w.\-]*", "N", outcome.detail.split(" | ")[0])
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    return f"{outcome.category}: {text[:140]}"


def summary(outcomes: list[Outcome]) -> dict:
    valid = [o for o in outcomes if o.expected == "valid"]
    invalid = [o for o in outcomes if o.expected == "invalid"]
    times = sorted(o.seconds for o in outcomes) or [0.0]
    worst = max(outcomes, key=lambda o: o.seconds) if outcomes else None
    return {
        "valid_passed": sum(o.passed for o in valid),
        "valid": len(valid),
        "invalid_rejected": sum(o.passed for o in invalid),
        "invalid": len(invalid),
        "median_s": statistics.median(times),
        "worst_s": times[-1],
        "worst_file": worst.file if worst else "",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", "-j", type=int, default=2)
    parser.add_argument("--only", choices=["valid", "invalid"])
    parser.add_argument("--match", default="", help="only files whose path contains this")
    parser.add_argument("--verbose", "-v", action="store_true", help="every failing file, not only causes")
    parser.add_argument("--files", help="a file listing the cases to run, one path (as in MANIFEST.tsv) a line")
    args = parser.parse_args(argv)
    wanted = None
    if args.files:
        with open(args.files) as f:
            wanted = {line.split()[0] for line in f if line.strip()}
    cases = [
        c
        for c in manifest_cases()
        if (not args.only or c.expected == args.only) and args.match in c.file and (wanted is None or c.file in wanted)
    ]
    if not cases:
        print(f"no cases (is {XLA_HLO} there?)", file=sys.stderr)
        return 2
    start = time.perf_counter()
    outcomes = run(cases, args.jobs)
    wall = time.perf_counter() - start
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        if o.expected == "valid" and not o.passed:
            groups.setdefault(cause(o), []).append(o)
    for key, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(items):4d}  {key}")
        for o in items[: (len(items) if args.verbose else 2)]:
            print(f"        {o.file}  {o.detail[:300]}")
    accepted = [o for o in outcomes if o.expected == "invalid" and not o.passed]
    if accepted:
        print(f"{len(accepted):4d}  invalid accepted:")
        for o in accepted:
            print(f"        {o.file}")
    s = summary(outcomes)
    print(
        f"valid {s['valid_passed']}/{s['valid']} pass; invalid {s['invalid_rejected']}/{s['invalid']} rejected; "
        f"per file median {s['median_s'] * 1000:.1f} ms, worst {s['worst_s']:.2f} s ({s['worst_file']}); "
        f"wall {wall:.0f} s with {args.jobs} jobs"
    )
    return 0 if all(o.passed for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
