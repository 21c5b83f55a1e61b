"""Module cost totals against XLA:CPU's own ``HloCostAnalysis``.

For every after-optimizations module of ``../shared/corpus``: hlo-index's ``cost_totals`` (the
generic CPU variant: flops, transcendentals, bytes accessed) next to what jaxlib's
``hlo_module_cost_analysis(cpu_client, hlo_module_from_text(text))`` says for the same text.
Goal: flops and transcendentals equal, bytes accessed within 0.1%, on every module.

Needs jaxlib (not a dependency of hlo-index); prints a table and exits 1 when a module misses.
Usage: ``PYTHONPATH=. python benchmarks/cost_vs_xla.py [FILE_OR_DIR ...]``.
"""

from __future__ import annotations

import glob
import gzip
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "corpus"))
BYTES_TOLERANCE = 1e-3


def after_optimization_modules(paths: list[str]) -> list[str]:
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            out += glob.glob(os.path.join(path, "**", "*.after_optimizations.hlo.txt*"), recursive=True)
        else:
            out.append(path)
    return sorted(out)


def read(path: str) -> str:
    if path.endswith(".gz"):
        with gzip.open(path, "rt") as f:
            return f.read()
    with open(path) as f:
        return f.read()


def xla_cpu_totals(text: str) -> dict:
    """XLA:CPU's HloCostAnalysis of the module (jaxlib >= 0.10: ``xla_client.hlo`` holds the parser)."""
    import jax
    from jax._src.lib import xla_client

    parser = (
        getattr(getattr(xla_client, "hlo", None), "hlo_module_from_text", None) or xla_client._xla.hlo_module_from_text
    )
    client = jax.devices("cpu")[0].client
    got = xla_client._xla.hlo_module_cost_analysis(client, parser(text))
    return {
        "flops": got.get("flops", 0.0),
        "transcendentals": got.get("transcendentals", 0.0),
        "bytes_accessed": got.get("bytes accessed", 0.0),
    }


def our_totals(text: str, path: str) -> dict:
    from hlo_index.analyses.cost.flops import CostOptions
    from hlo_index.analyses.cost.hlo_cost import module_totals
    from hlo_index.hlo import parse_module_text

    totals = module_totals(parse_module_text(text, path), CostOptions(gpu=False))
    return {"flops": totals.flops, "transcendentals": totals.transcendentals, "bytes_accessed": totals.bytes_accessed}


def compare(path: str) -> dict:
    text = read(path)
    ours, xla = our_totals(text, path), xla_cpu_totals(text)
    rel = abs(ours["bytes_accessed"] - xla["bytes_accessed"]) / max(abs(xla["bytes_accessed"]), 1.0)
    ok = ours["flops"] == xla["flops"] and ours["transcendentals"] == xla["transcendentals"] and rel <= BYTES_TOLERANCE
    return {"path": path, "ours": ours, "xla": xla, "bytes_rel_diff": rel, "ok": ok}


def main(argv: list[str]) -> int:
    paths = after_optimization_modules(argv or [CORPUS])
    rows = [compare(p) for p in paths]
    print(f"{'module':<52}{'flops ours/xla':>30}{'transc ours/xla':>24}{'bytes ours/xla':>30}{'rel':>10}")
    for r in rows:
        o, x = r["ours"], r["xla"]
        name = os.path.relpath(r["path"], CORPUS)[:50]
        mark = "" if r["ok"] else "  MISS"
        print(
            f"{name:<52}{o['flops']:>15.0f}/{x['flops']:<14.0f}{o['transcendentals']:>12.0f}/"
            f"{x['transcendentals']:<11.0f}{o['bytes_accessed']:>15.0f}/{x['bytes_accessed']:<14.0f}"
            f"{r['bytes_rel_diff']:>10.2e}{mark}"
        )
    missed = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(missed)}/{len(rows)} modules match")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
