"""GPU target against XLA's own tests, and coverage on the conformance set's GPU modules.

Prints, side by side:
* XLA's indexing-based coalescing tests: our verdict per operand against XLA's (RTX A6000);
* XLA's heuristic cases and tiled (Triton) cases: our value against XLA's expectation;
* XLA's symbolic tile tests: brute-force read-set agreement (XLA exact / ours exact);
* the GPU modules of ../shared/conformance/xla_hlo (GPU directories, or a dump auto-detected as
  GPU): how many fusion operands get a coalescing verdict, by method, and the emitters seen.
JSON in benchmarks/results/gpu_report.json.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "conformance"
sys.path.insert(0, str(ROOT / "tests" / "analyses"))

GPU_DIRS = ("xla-cc-gpu/", "xla-gpu-emitter-tests/", "xla-gpu-hlo-tests/")


def coalescing_cases() -> dict:
    from hlo_index.analyses.coalescing_heuristic import (
        heuristic_coalesced,
        tiled_bandwidth_utilization,
        tiled_read_coalesced,
    )
    from hlo_index.analyses.gpu_coalescing import fusion_coalescing
    from hlo_index.analyses.tiling import propagate
    from hlo_index.fusion import output_to_input
    from hlo_index.hlo import parse_module_text

    cases = json.loads((SHARED / "xla_coalescing_tests.json").read_text())
    rows, agree, total = [], 0, 0
    for c in cases:
        kind = c["expect"]["kind"]
        text = c.get("hlo") or c.get("hlo_equivalent")
        try:
            module = parse_module_text(text)
        except Exception as exc:  # noqa: BLE001
            rows.append((c["name"], kind, "does not parse", str(c["expect"].get("coalesced")), str(exc)[:60]))
            continue
        root = module.entry.root
        if kind == "per_operand_read_coalesced":
            result = fusion_coalescing(root)
            got = [result.per_operand[k].verdict == "coalesced" for k in range(len(root.operands))]
            want = c["expect"]["coalesced"]
            agree += sum(a == b for a, b in zip(got, want))
            total += len(want)
            rows.append((c["name"], result.emitter, str(got), str(want), "equal" if got == want else "DIFFERENT"))
        elif kind == "whole_fusion_heuristic":
            ok, _ = heuristic_coalesced(root.operands[0], root)
            want = c["expect"]["coalesced"]
            rows.append((c["name"], "heuristic", str(ok), str(want), "equal" if ok == want else "DIFFERENT"))
        else:
            for sub in c["expect"]["cases"]:
                got = []
                for row in output_to_input(root):
                    tile = propagate(row.maps[0], root.shape.dims, sub["tile_sizes"])
                    shape = root.operands[row.operand].shape
                    if kind == "tiled_bandwidth_utilization_rate_per_operand":
                        got.append(round(tiled_bandwidth_utilization(shape, tile.sizes, tile.strides), 6))
                    else:
                        got.append(tiled_read_coalesced(shape, tile.sizes, tile.strides))
                want = [sub["expected_rate"]] if "expected_rate" in sub else sub["coalesced"]
                rows.append(
                    (
                        c["name"].split(".")[-1][:48] + f" {sub['tile_sizes']}",
                        "tiled",
                        str(got),
                        str(want),
                        "equal" if got == want else "DIFFERENT",
                    )
                )
    return {"rows": rows, "indexing_agree": agree, "indexing_total": total}


def symbolic_tiles() -> dict:
    from xla_tile_compare import compare_case, load_cases

    comps = [c for case in load_cases() for c in compare_case(case)]
    return {
        "comparisons": len(comps),
        "xla_exact": sum(c.xla_right for c in comps),
        "ours_exact_or_marked_box": sum(c.ours_right for c in comps),
        "ours_equal_where_xla_exact": sum(c.ours == c.xla for c in comps if c.xla_right),
        "xla_wrong_unpadded": sorted(
            {(c.case.split(".")[-1], c.sizes) for c in comps if c.xla is not None and not c.xla_right and not c.padded}
        ),
    }


def gpu_modules() -> dict:
    from hlo_index.analyses.emitters import ComputationAsFusion
    from hlo_index.analyses.gpu_coalescing import fusion_coalescing
    from hlo_index.analyses.gpu_target import detect_target
    from hlo_index.analyses.target_figures import is_fused_body
    from hlo_index.hlo import load

    folder = SHARED / "xla_hlo"
    with open(folder / "MANIFEST.tsv") as manifest:
        rows = list(csv.DictReader(manifest, delimiter="\t"))
    modules = fusions = bodies = 0
    verdicts, methods, emitters = Counter(), Counter(), Counter()
    body_verdicts = Counter()
    for r in rows:
        if r["xla_parser"] != "valid":
            continue
        for res in load(str(folder / r["file"])):
            m = res.module
            if m is None:
                continue
            if not (any(d in r["file"] for d in GPU_DIRS) or detect_target(m).target == "gpu"):
                continue
            modules += 1
            targets = list(m.fusions)
            fusions += len(targets)
            for f in targets:
                result = fusion_coalescing(f)
                emitters[result.emitter] += 1
                for v in result.per_operand.values():
                    verdicts[v.verdict] += 1
                    methods[v.method] += 1
            if not targets and m.entry is not None and is_fused_body(m.entry):
                bodies += 1  # a fused computation written alone
                for v in fusion_coalescing(ComputationAsFusion(m.entry)).per_operand.values():
                    body_verdicts[v.verdict] += 1
    return {
        "modules": modules,
        "fusions": fusions,
        "fused_bodies_alone": bodies,
        "operands": sum(verdicts.values()),
        "verdicts": dict(verdicts),
        "methods": dict(methods),
        "fused_body_operands": dict(body_verdicts),
        "emitters": dict(emitters.most_common()),
    }


def main() -> int:
    if not SHARED.exists():
        print("../shared/conformance not available: nothing to report")
        return 0
    t0 = time.perf_counter()
    out = {"coalescing": coalescing_cases(), "symbolic_tiles": symbolic_tiles(), "gpu_modules": gpu_modules()}
    print(f"{'XLA case':60} {'ours':>28} {'XLA':>28}  ")
    for name, how, got, want, verdict in out["coalescing"]["rows"]:
        print(f"{name[:60]:60} {got[:28]:>28} {want[:28]:>28}  {verdict} ({how})")
    c = out["coalescing"]
    print(f"indexing-based verdicts equal to XLA's: {c['indexing_agree']}/{c['indexing_total']}")
    s = out["symbolic_tiles"]
    print(
        f"symbolic tiles: {s['comparisons']} comparisons, XLA exact {s['xla_exact']}, ours exact "
        f"{s['ours_exact_or_marked_box']}, ours equal to XLA's where XLA exact {s['ours_equal_where_xla_exact']}/"
        f"{s['xla_exact']}; XLA wrong without padding: {s['xla_wrong_unpadded']}"
    )
    g = out["gpu_modules"]
    print(
        f"GPU modules: {g['modules']} ({g['fusions']} fusions, {g['fused_bodies_alone']} fused bodies alone), "
        f"{g['operands']} fusion operands: {g['verdicts']} by {g['methods']}; fused bodies alone: "
        f"{g['fused_body_operands']}"
    )
    print(f"emitters: {g['emitters']}")
    print(f"({time.perf_counter() - t0:.1f} s)")
    (Path(__file__).resolve().parent / "results").mkdir(exist_ok=True)
    (Path(__file__).resolve().parent / "results" / "gpu_report.json").write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
