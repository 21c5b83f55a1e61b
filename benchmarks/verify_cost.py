"""``check --verify`` against ``check`` on every file of ``../shared/corpus`` and ``../shared/field``:
ROUNDS interleaved rounds of the two whole processes per file (``measure.py``), the ratio between
their medians (wall / CPU), peak RSS of each, and the worst file, which is then measured again in
``AGAIN_ROUNDS`` interleaved rounds (both figures are printed). A process that runs past the
per-file limit is killed and printed as "> N s" (its ratio as "> Nx"), so that one pathological
file cannot hold up the run; it is not run again in later rounds.

Usage: ``python benchmarks/verify_cost.py [--rounds N | --quick] [--only TEXT] [--timeout S]``
(default limit 120 s a process). Writes ``benchmarks/results/verify_cost.json``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import measure
from measure import SHARED

AGAIN_ROUNDS = 9  # the worst file measured again (its first figure is kept beside)


def files() -> list[Path]:
    return [
        p
        for folder in ("corpus", "field")
        for p in sorted((SHARED / folder).rglob("*"))
        if p.is_file() and not p.name.endswith((".md", ".json"))
    ]


def main(argv: list[str]) -> int:
    rounds = measure.rounds_from(argv)
    only = measure.option(argv, "--only")
    timeout = float(measure.option(argv, "--timeout", "120"))
    rows, results = [], []
    for path in files():
        if only and only not in str(path):
            continue
        sides = measure.interleaved(
            {
                "check": lambda p=path: measure.tool(["check", p], timeout=timeout),
                "verify": lambda p=path: measure.tool(["check", p, "--verify"], timeout=timeout),
            },
            rounds,
        )
        check, verify = sides["check"], sides["verify"]
        entry = {
            "file": measure.shown(path),
            **sides,
            "wall_ratio": measure.ratio(verify, check, "wall_s"),
            "cpu_ratio": measure.ratio(verify, check, "cpu_s"),
        }
        if "timed_out" in verify and check.get("wall_s"):
            entry["wall_ratio_above"] = verify["wall_s"] / check["wall_s"]
        results.append(entry)
        rows.append(
            [
                measure.shown(path).removeprefix("../shared/"),
                measure.times(check),
                measure.times(verify),
                measure.times_ratio(verify, check),
                measure.mb(check),
                measure.mb(verify),
                f"{measure.exits(check)} / {measure.exits(verify)}",
            ]
        )
        print(f"  {rows[-1][0]}: {rows[-1][3]}", file=sys.stderr, flush=True)
    print(
        f"check FILE vs check FILE --verify, whole processes, medians of {rounds} interleaved rounds "
        f"(limit {timeout:.0f} s a process); wall / CPU"
    )
    measure.table(["file", "check", "check --verify", "ratio", "RSS check", "RSS verify", "exit"], rows)
    ranked = [(r.get("wall_ratio") or r.get("wall_ratio_above"), r) for r in results]
    ranked = [(value, r) for value, r in ranked if value is not None]
    worst = max(ranked, key=lambda item: item[0], default=None)
    again = None
    if worst:
        value, r = worst
        bound = "> " if "wall_ratio_above" in r else ""
        print(f"worst: {bound}{value:.1f}x wall ({r['file']})")
        if not bound:
            # A small file's ratio swings with a stall of the machine in one round (a 0.4 s run
            # taking 1.1 s): the worst is measured again, in more rounds, and both are shown.
            more = max(AGAIN_ROUNDS, rounds)
            path = r["file"]
            sides = measure.interleaved(
                {
                    "check": lambda: measure.tool(["check", path], timeout=timeout),
                    "verify": lambda: measure.tool(["check", path, "--verify"], timeout=timeout),
                },
                more,
            )
            again = {
                "file": path,
                "rounds": more,
                **sides,
                "wall_ratio": measure.ratio(sides["verify"], sides["check"], "wall_s"),
                "cpu_ratio": measure.ratio(sides["verify"], sides["check"], "cpu_s"),
            }
            print(
                f"the worst again, medians of {more} interleaved rounds: "
                f"{measure.times_ratio(sides['verify'], sides['check'])} "
                f"({measure.times(sides['verify'])} against {measure.times(sides['check'])})"
            )
    measure.write(
        "verify_cost",
        {
            "rounds": rounds,
            "timeout_s": timeout,
            "files": results,
            "worst": worst
            and {"file": worst[1]["file"], "wall_ratio": worst[0], "at_least": "wall_ratio_above" in worst[1]},
            "worst_again": again,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
