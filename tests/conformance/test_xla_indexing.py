"""XLA's indexing-analysis tests (``xla/hlo/analysis/indexing_analysis_test.cc``, 106 cases in
``../shared/conformance/xla_indexing_analysis_tests.json``) against this project's maps.

Each (operand, output) pair is compared as a relation, by brute-force enumeration of both sides:
the set of (output index, operand index) pairs over every value of the range variables and, for
runtime variables, over every value in their interval (a runtime value is unknown, so a map reads
what some value makes it read). The maps must give the same relation as XLA's, or a strictly
smaller one that is still exact: then the numpy reference walk (``hlo_index.verify``) must find
no element the maps miss. Cases in XLA's physical-layout mode compare other objects and are left
to the layout tests.
"""
from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from hlo_index.affine import parse_map
from hlo_index.api import SelectedTarget
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.hlo import parse_module_text

CASES_PATH = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "xla_indexing_analysis_tests.json"
pytestmark = pytest.mark.skipif(not CASES_PATH.is_file(), reason="../shared/conformance is not present")
RUNTIME_ASSIGNMENTS = 4096   # budget: beyond it the runtime box is sampled at corners, centre and random points
POINTS = 1 << 18


def _cases() -> list[dict]:
    if not CASES_PATH.is_file():
        return []
    return [c for c in json.loads(CASES_PATH.read_text()) if "skip" not in c and "physical" not in c]


def _runtime_assignments(m) -> list[tuple[int, ...]]:
    boxes = [range(v.interval.lo, v.interval.hi + 1) for v in m.runtime_vars]
    total = 1
    for b in boxes:
        total *= len(b)
    if total <= RUNTIME_ASSIGNMENTS:
        return list(itertools.product(*boxes))
    rng = np.random.default_rng(0)
    picks = {tuple(b[0] for b in boxes), tuple(b[-1] for b in boxes), tuple(b[len(b) // 2] for b in boxes)}
    while len(picks) < 256:
        picks.add(tuple(int(rng.integers(b.start, b.stop)) for b in boxes))
    return sorted(picks)


def relation(maps) -> set[tuple]:
    """Every (dims point, result) a union of maps relates, runtime variables existential."""
    out: set[tuple] = set()
    for m in maps:
        if m.is_known_empty:
            continue
        assert not m.is_undefined, m.undefined_reason
        for rt in _runtime_assignments(m):
            points, results = m.enumerate(runtime_vals=rt if m.runtime_vars else None, limit=POINTS)
            nd = m.num_dims
            for p, r in zip(points.tolist(), results.tolist()):
                out.add((tuple(p[:nd]), tuple(r)))
    return out


def _target(module, target: dict):
    if "fusion" in target:
        return SelectedTarget("fusion", next(f for f in module.fusions if f.name == target["fusion"]))
    if "computation" in target:
        return SelectedTarget("computation", module.by_name[target["computation"]])
    name = target["instruction"]
    instr = next(i for c in module.computations for i in c.instructions if i.name == name)
    return SelectedTarget("fusion" if instr.opcode == "fusion" else "instruction", instr)


def _ours(case: dict, selected) -> dict[tuple[int, int], list]:
    if case["direction"] == "out2in":
        rows = output_to_input(selected.target)
        return {(r.operand, r.output): list(r.maps) for r in rows if r.output == case.get("output_id", r.output)}
    rows = input_to_output(selected.target)
    return {(r.operand, r.output): list(r.maps) for r in rows if r.operand == case.get("input_id", r.operand)}


def _verified_exact(selected, module) -> bool:
    from hlo_index.verify import verify_target
    outcome = verify_target(selected, module, samples=16, seed=0)
    return not outcome.errors


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_same_relation_as_xla_or_strictly_more_precise_and_exact(case, request):
    module = parse_module_text(case["hlo"])
    selected = _target(module, case["target"])
    ours = _ours(case, selected)
    verdicts = []
    for exp in case["expect"]:
        key = (exp["operand"], exp["output"])
        assert key in ours, f"no maps for operand {key[0]}, output {key[1]}: have {sorted(ours)}"
        xla = relation([parse_map(text) for text in exp["maps"]])
        mine = relation(ours[key])
        if mine == xla:
            verdicts.append("agree")
            continue
        missing = xla - mine
        extra = mine - xla
        assert not extra, f"operand {key}: reads XLA's maps never read, e.g. {sorted(extra)[:3]}"
        assert _verified_exact(selected, module), f"operand {key}: smaller than XLA's but not exact"
        verdicts.append(f"more precise ({len(missing)} fewer pairs)")
    if case.get("expect_no_operands"):
        assert all(not maps for maps in ours.values())
    request.node.user_properties.append(("verdict", verdicts))


def test_iota_gather_is_exact_piecewise_clamping():
    """XLA reads rows 33..41 of a 33-row operand (it forgets that gather clamps); the exact answer
    is row min(d0, 32): pieces with disjoint domains, no runtime variable."""
    [case] = [c for c in _cases() if c["name"] == "FusionWithRTVarsSimplification_Iota"]
    module = parse_module_text(case["hlo"])
    selected = _target(module, case["target"])
    maps = _ours(case, selected)[(0, 0)]
    assert all(not m.runtime_vars for m in maps)
    got = relation(maps)
    assert got == {((d0, 0, 0), (min(d0, 32), 0)) for d0 in range(42)}
