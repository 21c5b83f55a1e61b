"""Whole programs: XLA's benchmark models (``../shared/conformance/xla_hlo/xla-tools-data``), each
through ``analyze FILE --format json --direction both``, against XLA's parse of the file plus our
fixed cost (the same command on a 5-line module), measured as ``vs_xla.py`` measures.

Usage: ``python benchmarks/whole_programs.py [--rounds N | --quick] [--only TEXT] [--timeout S]``
(default timeout 300 s a file: past it the file is printed as "> 300 s").
Writes ``benchmarks/results/whole_programs.json``.
"""

from __future__ import annotations

import sys

from measure import SHARED
from vs_xla import compare

XLA_TOOLS = SHARED / "conformance" / "xla_hlo" / "xla-tools-data"


def main(argv: list[str]) -> int:
    if not XLA_TOOLS.is_dir():
        print(f"not measured: no {XLA_TOOLS}")
        return 0
    if "--timeout" not in argv:
        argv = [*argv, "--timeout", "300"]
    compare(
        "whole_programs",
        sorted(p for p in XLA_TOOLS.iterdir() if p.is_file()),
        ["analyze", "FILE", "--format", "json", "--direction", "both"],
        argv,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
