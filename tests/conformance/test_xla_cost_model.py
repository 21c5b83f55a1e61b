"""XLA's GPU cost-model tests (``gpu_hlo_cost_analysis_test.cc``, ``gpu_performance_model_test.cc``,
``gpu_indexing_performance_model_test.cc``; cases in ``../shared/conformance/xla_cost_model_tests.json``)
against ``hlo_index.analyses.cost``.

Every expectation is checked within the test's own tolerance, in XLA's unit and with XLA's
truncation (``cast: int64``); relations between runs (``near``, ``lt``, ``eq``, ``ratio_near``) are
checked on the figures of the cases they name. Expectations the model does not meet yet are
listed in ``NOT_MET`` with the reason, and are expected to fail (strict: one that starts passing
must leave the list).
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import pytest

from hlo_index.analyses.cost import CostOptions, HloCost, load_device
from hlo_index.analyses.cost.fused_kernel import fuse
from hlo_index.analyses.cost.gpu_model import GpuPerformanceModel
from hlo_index.analyses.cost.indexing_model import IndexingPerformanceModel, block_level_config
from hlo_index.hlo import parse_module_text

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
CASES_PATH = CONFORMANCE / "xla_cost_model_tests.json"
pytestmark = pytest.mark.skipif(not CASES_PATH.is_file(), reason="../shared/conformance is not present")

UNIT_US = {"us": 1.0, "ns": 1e-3, "ms": 1e3, "s": 1e6}
NOT_MET: dict[str, str] = {}


def _cases() -> list[dict]:
    return json.loads(CASES_PATH.read_text()) if CASES_PATH.is_file() else []


CASES = {c["name"]: c for c in _cases()}


def _target(module, target: dict, key: str):
    comp = module.by_name[target["in_computation"]] if "in_computation" in target else module.entry
    return comp.by_name[target[key]] if key in target else None


@cache
def figures(name: str) -> dict:
    """Our figures for one case, under XLA's key names."""
    case = CASES[name]
    module = parse_module_text(case["hlo"], name)
    target = case["target"]
    instr = _target(module, target, "fusion") or _target(module, target, "instruction")
    options = CostOptions(count_multiple_input_accesses=case["options"].get("count_multiple_input_accesses", True))
    cost = HloCost(options)
    if case["model"].startswith("gpu_indexing_performance_model"):
        return _indexing_figures(case, instr, cost)
    if case["model"] == "gpu_hlo_cost_analysis":
        p = cost.of(instr)
        return {
            "flops": p.flops,
            "transcendentals": p.transcendentals,
            "bytes_accessed": p.bytes_accessed,
            "output_bytes_accessed": p.output_bytes,
            "operand_bytes_accessed": {str(k): v for k, v in enumerate(p.operand_bytes)},
            "operand_utilization": {str(k): v for k, v in enumerate(p.operand_utilization)},
        }
    model = GpuPerformanceModel(load_device(str(CONFORMANCE / "gpu_specs" / f"{case['device']}.txtpb")), cost)
    comp = instr.computation
    consumers = [comp.by_name[c] for c in target.get("consumers", [])]
    rt = model.fused_run_time(instr, consumers[0]) if target.get("measure") == "fused" else model.run_time(instr)
    out = {
        "flops": rt.flops,
        "bytes_read": rt.bytes_read,
        "bytes_written": rt.bytes_written,
        "exec_time_us": rt.exec_time_us,
        "compute_time_us": rt.compute_time_us,
        "read_time_us": rt.read_time_us,
        "write_time_us": rt.write_time_us,
        "num_blocks": rt.blocks,
        "num_threads_per_block": rt.threads_per_block,
    }
    if "consumers" in target and target.get("measure") != "fused":
        out["time_unfused_us"], out["time_fused_us"] = model.run_times(
            instr, consumers, multi_output=case["options"].get("multi_output_fusion", False)
        )
    return out


def _runtime_figures(rt) -> dict:
    return {
        "flops": rt.flops,
        "bytes_read": rt.bytes_read,
        "bytes_written": rt.bytes_written,
        "exec_time_us": rt.exec_time_us,
        "compute_time_us": rt.compute_time_us,
        "read_time_us": rt.read_time_us,
        "write_time_us": rt.write_time_us,
        "num_blocks": rt.blocks,
        "num_threads_per_block": rt.threads_per_block,
    }


def _indexing_figures(case: dict, instr, cost) -> dict:
    """``GpuPerformanceModelWithIndexingAnalysis``: untiled, or tiled with the case's tiles, the
    fusion's ``block_level_fusion_config``, or XLA's search (``tile: auto``)."""
    model = IndexingPerformanceModel(load_device(str(CONFORMANCE / "gpu_specs" / f"{case['device']}.txtpb")), cost)
    target, options = case["target"], case["options"]
    comp = instr.computation
    consumers = [comp.by_name[c] for c in target.get("consumers", [])]
    kernel = fuse(instr, consumers[0]) if target.get("measure") == "fused" else instr
    if case["model"] == "gpu_indexing_performance_model":
        if target.get("measure") == "fused":
            return _runtime_figures(model.run_time(consumers[0], fusion=kernel))
        out = _runtime_figures(model.run_time(instr))
        if "consumers" in target:
            out["time_unfused_us"], out["time_fused_us"] = model.run_times(instr, consumers)
        return out
    launch = options.get("launch") or {}
    if options.get("tiling_from_backend_config"):
        tiles, warps = block_level_config(kernel)
        rt = model.tiled_run_time(kernel, tiles[0], num_warps=warps)
    elif options.get("tile") == "auto":
        rt = model.best_tiling(kernel)
    else:
        rt = model.tiled_run_time(
            kernel,
            options["tile"],
            num_blocks=launch.get("num_blocks"),
            threads_per_block=launch.get("num_threads_per_block"),
        )
    out = _runtime_figures(rt)
    out["tile_sizes"] = rt.tile_sizes
    return out


def _in_unit(value_us: float, spec: dict) -> float:
    xla = spec.get("xla", {})
    unit = xla.get("unit", spec.get("unit", "us"))
    v = value_us / UNIT_US[unit]
    if xla.get("cast") == "int64" and math.isfinite(v):
        v = float(math.trunc(v))
    return v


def check(expected, got) -> tuple[bool, str]:
    if isinstance(expected, dict) and "value" in expected:
        if expected["value"] == "inf":
            return math.isinf(got), f"{got} is not infinite"
        xla = expected.get("xla", {})
        v = _in_unit(got, expected)
        want = xla.get("value", expected["value"])
        if not isinstance(want, (int, float)):
            want = 0.0
        if xla.get("assert") == "EXPECT_EQ":
            ok = abs(v - want) <= 0.01 * abs(want) + 1e-12
        else:
            ok = abs(v - want) <= xla.get("tolerance", expected.get("tolerance", 0))
        return ok, f"{v} ({xla.get('unit', 'us')}) vs {want} +- {xla.get('tolerance', expected.get('tolerance'))}"
    if isinstance(expected, dict):
        bad = {k: (v, got.get(k)) for k, v in expected.items() if got.get(k) != v}
        return not bad, f"mismatched operands {bad}"
    if isinstance(expected, list):
        return got == expected, f"{got} vs {expected}"
    return got == expected, f"{got} vs {expected}"


EXPECTATIONS = [(name, key) for name, c in CASES.items() for key in c["expect"]]
RELATIONS = [(name, k) for name, c in CASES.items() for k in range(len(c.get("relations", [])))]


def _xfail(case_key: str):
    return pytest.mark.xfail(strict=True, reason=NOT_MET[case_key]) if case_key in NOT_MET else ()


@pytest.mark.parametrize(
    "name,key", [pytest.param(n, k, id=f"{n}:{k}", marks=_xfail(f"{n}:{k}")) for n, k in EXPECTATIONS]
)
def test_expectation(name: str, key: str) -> None:
    expected = CASES[name]["expect"][key]
    got = figures(name).get(key)
    assert got is not None, f"no figure {key}"
    ok, why = check(expected, got)
    assert ok, why


def _term(term: dict) -> float:
    f = figures(term["case"])
    value = f[term["key"]]
    if "minus" in term:
        value -= f[term["minus"]]
    return value


@pytest.mark.parametrize(
    "name,index", [pytest.param(n, k, id=f"{n}:relation{k}", marks=_xfail(f"{n}:relation{k}")) for n, k in RELATIONS]
)
def test_relation(name: str, index: int) -> None:
    rel = CASES[name]["relations"][index]
    lhs, rhs = _term(rel["lhs"]), _term(rel["rhs"])
    if rel.get("cast") == "int64":
        lhs, rhs = float(math.trunc(lhs)), float(math.trunc(rhs))
    op = rel["op"]
    if op == "lt":
        assert lhs < rhs, f"{lhs} !< {rhs}"
    elif op == "near":
        assert abs(lhs - rhs) <= rel["tolerance"], f"{lhs} vs {rhs}"
    elif op == "eq":
        assert abs(lhs - rhs) <= rel.get("rel_tolerance", 0.01) * abs(rhs), f"{lhs} vs {rhs}"
    elif op == "ratio_near":
        assert abs(lhs / rhs - rel["value"]) <= rel["tolerance"], f"{lhs / rhs}"


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=_xfail(f"{n}:status")) for n, c in CASES.items() if "expect_status" in c]
)
def test_status(name: str) -> None:
    figures(name)
