"""What the cost model adds to ``analyze FILE --format json``: the same command with and without
the cost figures (the hidden ``--no-cost`` skips them and nothing else), whole processes, ``ROUNDS``
interleaved rounds in one run (medians, wall / CPU), on gpt12 (corpus) and the A100 Pax step
(field). The goal: at most 10% slower with the cost.

Usage: ``python benchmarks/cost_overhead.py [--rounds N | --quick] [--only TEXT]``.
Writes ``benchmarks/results/cost_overhead.json``.
"""

from __future__ import annotations

import sys

import measure

ROUNDS = 11  # the two runs differ by ~10%, about what the machine drifts over three rounds

FILES = (
    "corpus/gpt12_train/gpt12_train_step.after_optimizations.hlo.txt.gz",
    (
        "field/gpu/JAX-Toolbox.nsys-jax.pax_fsdp4_4proc_proc0.module_0040.pjit__wrapped_step_fn"
        ".sm_8.0_gpu_after_optimizations.txt.gz"
    ),
)


def _overhead(with_cost: dict, without: dict) -> str:
    """How much slower with the cost, wall / CPU: "+12% / +9%"."""
    parts = []
    for key in ("wall_s", "cpu_s"):
        r = measure.ratio(with_cost, without, key)
        parts.append(f"{100 * (r - 1):+.1f}%" if r is not None else "not measured")
    return " / ".join(parts)


def main(argv: list[str]) -> int:
    rounds = measure.rounds_from(argv, default=ROUNDS)
    only = measure.option(argv, "--only")
    rows, files = [], []
    for name in FILES:
        path = measure.SHARED / name
        if (only and only not in name) or not path.exists():
            continue
        args = ["analyze", str(path), "--format", "json"]
        sides = measure.interleaved(
            {
                "cost": lambda args=args: measure.tool(args),
                "no_cost": lambda args=args: measure.tool([*args, "--no-cost"]),
            },
            rounds,
        )
        with_cost, without = sides["cost"], sides["no_cost"]
        rows.append(
            [
                measure.shown(path),
                measure.times(with_cost),
                measure.times(without),
                _overhead(with_cost, without),
            ]
        )
        files.append(
            {
                "file": measure.shown(path),
                "cost": with_cost,
                "no_cost": without,
                "wall_ratio": measure.ratio(with_cost, without, "wall_s"),
                "cpu_ratio": measure.ratio(with_cost, without, "cpu_s"),
            }
        )
    print(f"analyze --format json with / without the cost: medians of {rounds} interleaved rounds, wall / CPU")
    measure.table(["file", "with the cost", "--no-cost", "overhead (wall / CPU)"], rows)
    measure.write("cost_overhead", {"rounds": rounds, "files": files})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
