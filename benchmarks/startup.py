"""The fixed cost: ``analyze`` of a 5-line module against ``python -c "import click, json"``, each a
whole process, ROUNDS interleaved rounds in one run (medians, wall / CPU, peak RSS); then where the
start-up goes: the top entries of ``python -X importtime`` for that ``analyze`` (one run; the
cumulative microseconds of each import, nested imports inside their parent's).

Usage: ``python benchmarks/startup.py [--rounds N | --quick] [--top N]``.
Writes ``benchmarks/results/startup.json``.
"""

from __future__ import annotations

import subprocess
import sys

import measure

BASELINE = "import click, json"


def import_times(args: list[str]) -> list[dict]:
    """``-X importtime`` of one ``hlo-index ARGS`` process: every import, self and cumulative us."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hlo_index", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    rows = []
    for line in out.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|", 2)
        depth = (len(name) - len(name.lstrip())) // 2
        rows.append({"module": name.strip(), "depth": depth, "self_us": int(own), "cumulative_us": int(cumulative)})
    return rows


def main(argv: list[str]) -> int:
    rounds = measure.rounds_from(argv)
    top = int(measure.option(argv, "--top", "20"))
    tiny = measure.tiny_module()
    args = ["analyze", str(tiny), "--format", "json"]
    sides = measure.interleaved(
        {
            "analyze": lambda: measure.tool(args),
            "baseline": lambda: measure.process([sys.executable, "-c", BASELINE]),
        },
        rounds,
        warmup=1,  # short processes: the first after an install or a compile reads cold files
    )
    ours, base = sides["analyze"], sides["baseline"]
    print(f"fixed cost: medians of {rounds} interleaved rounds after one not counted, whole processes, wall / CPU")
    measure.table(
        ["process", "time", "peak RSS", "ratio"],
        [
            [
                f"hlo-index analyze {measure.shown(tiny)} --format json",
                measure.times(ours),
                measure.mb(ours),
                measure.times_ratio(ours, base),
            ],
            [f'python -c "{BASELINE}"', measure.times(base), "", "1x"],
        ],
    )
    imports = import_times(args)
    total = sum(r["self_us"] for r in imports)
    print(
        f"\npython -X importtime -m hlo_index {' '.join(args[:1])} <5-line module> --format json: "
        f"{len(imports)} imports, {total / 1e6:.3f} s in all (self times summed); top {top} by cumulative time"
    )
    ranked = sorted(imports, key=lambda r: -r["cumulative_us"])[:top]
    measure.table(
        ["module", "cumulative", "self"],
        [
            ["  " * r["depth"] + r["module"], f"{r['cumulative_us'] / 1e3:.1f} ms", f"{r['self_us'] / 1e3:.1f} ms"]
            for r in ranked
        ],
    )
    measure.write(
        "startup",
        {
            "rounds": rounds,
            "analyze": ours,
            "baseline": base,
            "baseline_command": BASELINE,
            "wall_ratio": measure.ratio(ours, base, "wall_s"),
            "cpu_ratio": measure.ratio(ours, base, "cpu_s"),
            "imports_total_s": total / 1e6,
            "import_top": ranked,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
