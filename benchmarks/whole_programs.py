"""Whole programs: XLA's benchmark models (``../shared/conformance/xla_hlo/xla-tools-data``), each
through ``analyze FILE --format json --direction both``, against XLA's parse of the file plus our
fixed cost (the same command on a 5-line module), measured as ``vs_xla.py`` measures; then, per
file, the share of known maps next to its time. The share counts maps as that JSON lists them:
every map of every output-to-input and input-to-output row of every target ``analyze`` selects,
known when no map of its row is UNDEFINED (a row's known maps beside an UNDEFINED one are exact,
but what the row reads is not known: they count as unknown), and the share of rows known the
same way (counted in a child process of its own, outside the timed runs).

Usage: ``python benchmarks/whole_programs.py [--rounds N | --quick] [--only TEXT] [--timeout S]
[--field]`` (default timeout 300 s a file: past it the file is printed as "> 300 s"; ``--field``
adds the before-optimizations modules of ``../shared/field``).
Writes ``benchmarks/results/whole_programs.json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import measure
from measure import SHARED
from vs_xla import compare

XLA_TOOLS = SHARED / "conformance" / "xla_hlo" / "xla-tools-data"
FIELD = SHARED / "field"

# Run in a child: argv[1] a file; prints {"known": K, "unknown": U, "known_rows": R, "rows": N}
# over analyze's default targets.
_COUNT = """
import json, sys
from hlo_index.api import select_targets
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.hlo import load
known = unknown = known_rows = count = 0
for result in load(sys.argv[1]):
    if result.module is None:
        continue
    for selected in select_targets(result.module):
        for rows in (output_to_input(selected.target), input_to_output(selected.target)):
            for row in rows:
                count += 1
                if any(m.is_undefined for m in row.maps):
                    unknown += len(row.maps)
                else:
                    known += len(row.maps)
                    known_rows += 1
print(json.dumps({"known": known, "unknown": unknown, "known_rows": known_rows, "rows": count}))
"""


def known_share(path: Path, timeout: float) -> dict:
    """{"known": K, "unknown": U, "share": K / (K + U)}, or {"not_counted": why}."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", _COUNT, str(path)], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"not_counted": f"> {timeout:.0f} s"}
    if out.returncode != 0:
        return {"not_counted": (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1][:120]}
    counts = json.loads(out.stdout)
    total = counts["known"] + counts["unknown"]
    return {**counts, "share": counts["known"] / total if total else None}


def _shown_share(counts: dict) -> str:
    if "not_counted" in counts:
        return f"not counted: {counts['not_counted']}"
    if counts["share"] is None:
        return "no maps"
    rows = f"; rows {100 * counts['known_rows'] / counts['rows']:.2f}% of {counts['rows']}" if counts["rows"] else ""
    return f"{100 * counts['share']:.2f}% of {counts['known'] + counts['unknown']}{rows}"


def main(argv: list[str]) -> int:
    if not XLA_TOOLS.is_dir():
        print(f"not measured: no {XLA_TOOLS}")
        return 0
    if "--timeout" not in argv:
        argv = [*argv, "--timeout", "300"]
    paths = sorted(p for p in XLA_TOOLS.iterdir() if p.is_file())
    if "--field" in argv:
        argv = [a for a in argv if a != "--field"]
        paths += sorted(p for p in FIELD.rglob("*before_optimizations*") if p.is_file())
    data = compare("whole_programs", paths, ["analyze", "FILE", "--format", "json", "--direction", "both"], argv)
    timeout = float(measure.option(argv, "--timeout", "300"))
    rows = []
    for entry in data["files"]:
        path = next(p for p in paths if measure.shown(p) == entry["file"])
        entry["maps"] = counts = known_share(path, timeout)
        rows.append([Path(entry["file"]).name[:72], measure.times(entry["ours"]), _shown_share(counts)])
    print("known share: maps of analyze's JSON rows, both directions, in rows without an UNDEFINED map; rows")
    measure.table(["file", "ours", "known share"], rows)
    measure.write("whole_programs", data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
