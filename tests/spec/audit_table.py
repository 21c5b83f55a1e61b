"""Print the spec-audit table (markdown) from the same examples and comparisons the tests use.

cd tests && ../.venv/bin/python -m spec.audit_table
"""

from __future__ import annotations

import pathlib
import tempfile

from .examples import EXAMPLES
from .helpers import analyze, check_against_spec, map_texts
from .test_spec_maps import one_line_attributes

STATUS = {
    "exact": "exact",
    "structural": "same map, different spelling",
    "semantic": "same relation (brute force), different spelling",
}


def rows():
    for ex in EXAMPLES:
        try:
            target = analyze(
                pathlib.Path(tempfile.mkdtemp()),
                one_line_attributes(ex.hlo),
                instruction=ex.instruction,
                fusion=ex.fusion,
                computation=ex.computation,
                direction="out2in" if ex.computation else "both",
            )
        except AssertionError as err:
            yield ex, None, "ANALYZE FAILED: " + " ".join(str(err).split())[-160:], []
            continue
        if not ex.checks:
            yield ex, None, "exact (no operand: no maps)", []
        for chk in ex.checks:
            got = map_texts(target, chk.direction, chk.operand, chk.output)
            try:
                kinds = check_against_spec(target, chk)
                status = "; ".join(sorted({STATUS.get(k, k) for k in kinds}))
            except AssertionError as err:
                status = f"DIFFERS: {str(err).splitlines()[0]}"
            if chk.spec_says:
                status += " (spec slip corrected)"
            yield ex, chk, status, got


def main() -> None:
    print("| example | map | status | ours, where not exact |")
    print("|---|---|---|---|")
    for ex, chk, status, got in rows():
        what = "-" if chk is None else f"{chk.direction} operand {chk.operand} / output {chk.output}"
        shown = "" if status.startswith("exact") else "<br>".join(f"`{g}`" for g in got)
        print(f"| {ex.name} | {what} | {status} | {shown} |")


if __name__ == "__main__":
    main()
