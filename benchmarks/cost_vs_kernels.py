"""The cost model's time per fusion against the kernels' measured time on the GPU.

For each jax-made XLA:GPU dump in ``tests/data/gpu/<variant>/`` (see ``make_gpu_dumps.py`` there:
GPT and ResNet training steps compiled by XLA for an H200, their kernels timed under jax's profiler
over 20 steps), ``analyze --format json`` on the dump (the device comes from the dump's own
``gpu_target_config.pbtxt``), then per kernel thunk of the module: the model's ``time_us`` for the
instruction the thunk runs and the median measured duration. Printed per variant:

- the launch dimensions the model gives against the ones XLA chose (from XLA's thunk sequence);
- per fusion the estimate, the measurement and their ratio, largest measured first;
- the same for ``time_us`` (XLA's figures) and ``exact.time_us`` (the same model with the bytes of the
  maps): the sum over the fusions the model times, how many are within 2x of their measured time,
  the rank correlation (Spearman) and how many of the estimate's top 10 are the measured top 10;
- the measured time the model leaves out: Triton gemm fusions ("not modelled") and cuBLAS / cuDNN calls.

Needs no GPU (the measurements are data). Usage: ``PYTHONPATH=. python benchmarks/cost_vs_kernels.py``.
Writes ``benchmarks/results/cost_vs_kernels.json``.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "gpu")
RESULTS = os.path.join(HERE, "results")


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def spearman(a: list[float], b: list[float]) -> float:
    ra, rb = _ranks(a), _ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def compare(variant_dir: str) -> dict:
    (dump,) = glob.glob(os.path.join(variant_dir, "*gpu_after_optimizations.txt.gz"))
    with open(os.path.join(variant_dir, "kernels.json")) as f:
        measured = json.load(f)
    out = subprocess.run(
        [sys.executable, "-m", "hlo_index", "analyze", dump, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout)["modules"][0]
    targets = {t["name"]: t for t in report["targets"]}
    rows, launch_same, launch_differ, left_out = [], 0, [], {"triton_gemm_us": 0.0, "library_us": 0.0}
    for thunk in measured["thunks"]:
        name, median = thunk["instruction"], thunk["median_us"]
        target = targets.get(name)
        cost = (target or {}).get("cost") or {}
        if thunk["grid"] is None:
            continue  # a cuBLAS / cuDNN call: the step's library time is counted below
        launch = cost.get("launch")
        xla_launch = (_product(thunk["grid"]), _product(thunk["threads"]))
        if launch is not None:
            ours = (launch["blocks"], launch["threads_per_block"])
            if ours == xla_launch:
                launch_same += 1
            else:
                launch_differ.append({"instruction": name, "ours": ours, "xla": xla_launch})
        time_us = cost.get("time_us")
        if time_us is None or time_us == "inf":
            left_out["triton_gemm_us"] += median or 0.0
            continue
        exact_us = (cost.get("exact") or {}).get("time_us", time_us)
        rows.append(
            {
                "instruction": name,
                "model_us": time_us,
                "exact_us": exact_us,
                "measured_us": median,
                "bound": cost.get("bound"),
            }
        )
    library = measured.get("library_us_median")
    left_out["library_us"] = (
        library if library is not None else sum(t["median_us"] or 0.0 for t in measured["thunks"] if t["grid"] is None)
    )
    meas = [r["measured_us"] for r in rows]
    by_meas = {r["instruction"] for r in sorted(rows, key=lambda r: -r["measured_us"])[:10]}
    figures = {}
    for key in ("model_us", "exact_us"):
        estimate = [r[key] for r in rows]
        by_estimate = {r["instruction"] for r in sorted(rows, key=lambda r: -r[key])[:10]}
        figures[key] = {
            "sum_us": sum(estimate),
            "within_2x": sum(1 for r in rows if 0.5 <= r[key] / r["measured_us"] <= 2.0),
            "spearman": spearman(estimate, meas),
            "top10_overlap": len(by_estimate & by_meas),
        }
    return {
        "variant": os.path.basename(variant_dir),
        "device": report.get("cost_totals", {}).get("device"),
        "measured_on": measured["device"],
        "jax": measured["versions"]["jax"],
        "step_wall_us_median": measured["step_wall_us_median"],
        "fusions_timed": len(rows),
        "measured_sum_us": sum(meas),
        "xla_figures": figures["model_us"],
        "exact_figures": figures["exact_us"],
        "left_out_measured_us": left_out,
        "launch_same": launch_same,
        "launch_differ": launch_differ,
        "rows": sorted(rows, key=lambda r: -r["measured_us"]),
    }


def _product(xs: list[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def main() -> int:
    results = [compare(d) for d in sorted(glob.glob(os.path.join(DATA, "*"))) if os.path.isdir(d)]
    for r in results:
        print(f"\n{r['variant']}: model on {r['device']}, measured on {r['measured_on']['kind']} (jax {r['jax']})")
        print(
            f"  launch dimensions: {r['launch_same']} of {r['launch_same'] + len(r['launch_differ'])} kernels "
            "as XLA launched them"
        )
        for d in r["launch_differ"]:
            print(f"    {d['instruction']}: model {d['ours']}, XLA {d['xla']}")
        print(f"  {'fusion':34} {'time_us':>8} {'exact':>8} {'measured':>9} {'ratio':>6} {'exact':>6}  bound")
        for row in r["rows"][:20]:
            m = row["measured_us"]
            print(
                f"  {row['instruction']:34} {row['model_us']:8.1f} {row['exact_us']:8.1f} {m:9.1f} "
                f"{row['model_us'] / m:6.2f} {row['exact_us'] / m:6.2f}  {row['bound']}"
            )
        print(f"  {r['fusions_timed']} fusions timed by the model, measured {r['measured_sum_us']:.0f} us in all:")
        for label, key in (("time_us (XLA's figures)", "xla_figures"), ("exact.time_us (the maps)", "exact_figures")):
            f = r[key]
            print(
                f"    {label:26} sum {f['sum_us']:.0f} us; {f['within_2x']} within 2x of the measured time; "
                f"rank correlation {f['spearman']:.2f}; top 10 shared {f['top10_overlap']}"
            )
        lo = r["left_out_measured_us"]
        print(
            f"  measured, not timed by the model: Triton gemm fusions {lo['triton_gemm_us']:.0f} us, "
            f"cuBLAS / cuDNN calls {lo['library_us']:.0f} us; step {r['step_wall_us_median']:.0f} us wall"
        )
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "cost_vs_kernels.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
