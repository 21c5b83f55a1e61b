"""Which indexing maps are still unknown, and why: counts over real dumps.

Three views per input tree (each file analysed in a child process with a time budget, so one huge
or pathological module cannot stall the report):
  fusions       every fusion's output-to-input maps (the external maps of the fused computation);
  ops           every instruction outside fusions, its own rule's output-to-input maps;
  defaults      what ``hlo-index analyze`` analyses by default (the fusions, or the ENTRY
                computation as a whole when the module has none), counted per operand row (an
                (output, operand) pair with maps; unknown when one of its maps is UNDEFINED) and
                per map.
Unknown maps are grouped by reason (digits and names folded so that similar reasons group).

Usage: ``python benchmarks/unknown_report.py [DIR...] [--jobs N] [--timeout S] [--json OUT]``
(default: ../shared/conformance/xla_hlo and ../shared/corpus).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import multiprocessing
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "shared"))
DEFAULT_DIRS = [os.path.join(SHARED, "conformance", "xla_hlo"), os.path.join(SHARED, "corpus")]


def _reason_key(reason: str) -> str:
    """Fold instance-specific detail (names, numbers, quoted targets kept) so reasons group."""
    reason = re.sub(r"%?[A-Za-z_][\w.\-]*\.\d+", "<name>", reason)
    reason = re.sub(r"\b\d+\b", "N", reason)
    return reason[:160]


def _files(dirs: list[str]) -> list[str]:
    out = []
    for d in dirs:
        for root, _, names in os.walk(d):
            out.extend(
                os.path.join(root, n)
                for n in names
                if n.endswith((".hlo", ".txt", ".hlo.txt", ".gz")) and not n.endswith(".tsv")
            )
    return sorted(out)


def _count_maps(rows, counts: dict, what: str) -> None:
    for row in rows:
        maps = row.maps if hasattr(row, "maps") else row
        for m in maps:
            if m.is_undefined:
                counts[f"{what}_unknown"] += 1
                counts[f"{what}_reason::" + _reason_key(m.undefined_reason or "")] += 1
            else:
                counts[f"{what}_known"] += 1


def analyse_file(path: str) -> dict:
    from hlo_index.api import select_targets
    from hlo_index.fusion import output_to_input as target_out2in
    from hlo_index.hlo import load
    from hlo_index.ops import output_to_input as op_out2in

    counts: collections.Counter = collections.Counter()
    for result in load(path):
        if result.module is None:
            counts["parse_failed"] += 1
            continue
        module = result.module
        fused = {id(c) for f in module.fusions for c in [f.called.get("calls")] if c is not None}
        for f in module.fusions:
            _count_maps(target_out2in(f), counts, "fusions")
        for comp in module.computations:
            if id(comp) in fused:
                continue
            for instr in comp.instructions:
                if instr.opcode in ("parameter", "constant"):
                    continue
                for out in range(instr.shape.num_outputs):
                    _count_maps(op_out2in(instr, out), counts, "ops")
        for sel in select_targets(module):
            for row in target_out2in(sel.target):
                counts["defaults_rows"] += 1
                counts["defaults_rows_known" if row.known or not row.maps else "defaults_rows_unknown"] += 1
                counts["defaults_rows_read"] += bool(row.maps)
                unknown_maps = sum(m.is_undefined for m in row.maps)
                counts["defaults_maps_unknown"] += unknown_maps
                counts["defaults_maps_known"] += len(row.maps) - unknown_maps
                if not row.known and row.maps:
                    reasons = {m.undefined_reason for m in row.maps if m.is_undefined}
                    for r in sorted(reasons):
                        counts["defaults_reason::" + _reason_key(r or "")] += 1
    return dict(counts)


def _child(path: str, queue) -> None:
    try:
        queue.put(analyse_file(path))
    except Exception as exc:  # noqa: BLE001  a crash is a finding, reported with the file and where it happened
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        where = f"{os.path.relpath(frame.filename, os.path.dirname(HERE))}:{frame.lineno}"
        queue.put({"crashed": 1, f"crash::{type(exc).__name__}: {str(exc)[:100]} at {where}": 1})


def _run_one(path: str, timeout: float) -> dict:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(path, queue))
    proc.start()
    try:
        result = queue.get(timeout=timeout)
    except Exception:  # noqa: BLE001  no answer in time, or the child died: either way it timed out
        result = {"timed_out": 1}
    proc.join(5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    return result


def _worker(args):
    path, timeout = args
    return path, _run_one(path, timeout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", default=DEFAULT_DIRS)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    import hlo_index.api
    import hlo_index.fusion
    import hlo_index.ops  # noqa: F401  (forked children inherit them)

    report = {}
    for d in args.dirs:
        files = _files([d])
        total: collections.Counter = collections.Counter()
        slow = []
        per_file = {}
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            for path, counts in pool.map(_worker, [(f, args.timeout) for f in files]):
                total.update(counts)
                per_file[os.path.relpath(path, d)] = counts
                if counts.get("timed_out") or counts.get("crashed"):
                    slow.append(os.path.relpath(path, d))
        report[d] = {"files": len(files), "totals": dict(total), "timed_out_or_crashed": slow, "per_file": per_file}
        _print(d, len(files), total, slow, args.top)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1, sort_keys=True)
    return 0


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.2f}%" if b else "n/a"


def _print(d: str, nfiles: int, total, slow, top: int) -> None:
    print(
        f"== {d}: {nfiles} files, parse failures {total['parse_failed']}, "
        f"timed out {total['timed_out']}, crashed {total['crashed']}"
    )
    for what in ("fusions", "ops"):
        k, u = total[f"{what}_known"], total[f"{what}_unknown"]
        print(f"  {what:9s} maps: {k + u:8d}  unknown {u:7d} ({_pct(u, k + u)})")
    rows, ku = total["defaults_rows"], total["defaults_rows_unknown"]
    print(f"  defaults  operand rows: {rows:8d}  unknown {ku:7d} ({_pct(ku, rows)}), known {_pct(rows - ku, rows)}")
    read = total["defaults_rows_read"]
    print(
        f"  defaults  rows read:    {read:8d}  unknown {ku:7d} ({_pct(ku, read)}), "
        f"known {_pct(read - ku, read)} (rows with at least one map)"
    )
    mk, mu = total["defaults_maps_known"], total["defaults_maps_unknown"]
    print(
        f"  defaults  maps:         {mk + mu:8d}  unknown {mu:7d} ({_pct(mu, mk + mu)}), "
        f"known {_pct(mk, mk + mu)} (exact merges make fewer maps: rows are the steadier count)"
    )
    for what in ("fusions", "ops", "defaults"):
        reasons = sorted(
            ((v, k.split("::", 1)[1]) for k, v in total.items() if k.startswith(f"{what}_reason::")), reverse=True
        )
        if reasons:
            print(f"  -- {what}: unknown by reason")
            for v, r in reasons[:top]:
                print(f"     {v:7d}  {r}")
    crashes = [k for k in total if k.startswith("crash::")]
    for c in crashes:
        print(f"  !! {c}")
    if slow:
        print("  slow/crashed files:", ", ".join(slow[:20]))


if __name__ == "__main__":
    sys.exit(main())
