"""XLA's indexing-analysis tests (``xla/hlo/analysis/indexing_analysis_test.cc``, 106 cases in
``../shared/conformance/xla_indexing_analysis_tests.json``) against this project's maps.

Each (operand, output) pair is compared as a relation, by brute-force enumeration of both sides:
the set of (output index, operand index) pairs over every value of the range variables and, for
runtime variables, over every value in their interval (a runtime value is unknown, so a map reads
what some value makes it read). The maps must give the same relation as XLA's, or a strictly
smaller one that is still exact: then the numpy reference walk (``hlo_index.verify``) must find
no element the maps miss. Cases in XLA's physical-layout mode (maps between physical dims) are
compared after conjugating ours with the layouts' permutations.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import numpy as np
import pytest

from hlo_index.affine import parse_map
from hlo_index.api import SelectedTarget
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.hlo import parse_module_text

CASES_PATH = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "xla_indexing_analysis_tests.json"
pytestmark = pytest.mark.skipif(not CASES_PATH.is_file(), reason="../shared/conformance is not present")
RUNTIME_ASSIGNMENTS = 64  # beyond this many, the runtime box is sampled: corners, centre, seeded points
ALL_POINTS = 4096  # output boxes up to this size are compared at every point; bigger ones sampled
SAMPLED_POINTS = 400
# Where XLA's expected maps are not a superset of the truth (checked here against the reference).
XLA_UNSOUND = {
    "FusionWithRTVarsSimplification_Iota": (
        "XLA reads rows 33..41 of a 33-row operand: gather clamps the iota's starts to row 32"
    )
}


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
    picks = set(itertools.product(*[(b[0], b[-1]) for b in boxes]))
    picks.add(tuple(b[len(b) // 2] for b in boxes))
    while len(picks) < RUNTIME_ASSIGNMENTS:
        picks.add(tuple(int(rng.integers(b.start, b.stop)) for b in boxes))
    return sorted(picks)


def _points(maps) -> list[tuple[int, ...]]:
    """Output points to compare at: the hull of the maps' dims boxes (pieces of a clamped gather
    have narrower boxes than the output)."""
    boxes = [
        range(min(m.dims[k].lo for m in maps), max(m.dims[k].hi for m in maps) + 1) for k in range(maps[0].num_dims)
    ]
    total = 1
    for b in boxes:
        total *= len(b)
    if total <= ALL_POINTS:
        return list(itertools.product(*boxes))
    rng = np.random.default_rng(1)
    picks = set(itertools.product(*[(b[0], b[-1]) for b in boxes]))
    while len(picks) < SAMPLED_POINTS:
        picks.add(tuple(int(rng.integers(b.start, b.stop)) for b in boxes))
    return sorted(picks)


def read_sets(maps, points) -> dict[tuple, frozenset]:
    """Per output point, what a union of maps reads, runtime variables existential."""
    out: dict[tuple, set] = {p: set() for p in points}
    for m in maps:
        if m.is_known_empty:
            continue
        assert not m.is_undefined, m.undefined_reason
        for rt in _runtime_assignments(m):
            for p in points:
                if all(iv.lo <= x <= iv.hi for x, iv in zip(p, m.dims)):
                    out[p] |= m.read_set(p, runtime_vals=rt if m.runtime_vars else None)
    return {p: frozenset(v) for p, v in out.items()}


def relation(maps) -> set[tuple]:
    """Every (output point, operand point) pair of a union of maps (small domains only)."""
    live = [m for m in maps if not m.is_known_empty]
    if not live:
        return set()
    sets = read_sets(live, _points(live))
    return {(p, r) for p, rs in sets.items() for r in rs}


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


@pytest.mark.skipif(os.environ.get("HLO_INDEX_CONFORMANCE") != "1", reason="minutes of work: `make conformance`")
@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_same_relation_as_xla_or_strictly_more_precise_and_exact(case, request):
    module = parse_module_text(case["hlo"])
    selected = _target(module, case["target"])
    ours = _ours(case, selected)
    verdicts = []
    for exp in case["expect"]:
        key = (exp["operand"], exp["output"])
        assert key in ours, f"no maps for operand {key[0]}, output {key[1]}: have {sorted(ours)}"
        if any(text.strip().upper().startswith("UNKNOWN") for text in exp["maps"]):
            # XLA has no map: any exact answer is more precise; none is the same answer
            if all(m.is_undefined for m in ours[key]):
                verdicts.append("agree (unknown)")
            else:
                assert _verified_exact(selected, module), f"operand {key}: XLA has no map and ours is not exact"
                verdicts.append("more precise (XLA: unknown)")
            continue
        xla_maps = [parse_map(text) for text in exp["maps"]]
        live = [m for m in xla_maps + ours[key] if not m.is_known_empty]
        if not live:
            verdicts.append("agree")
            continue
        points = _points(live)
        xla, mine = read_sets(xla_maps, points), read_sets(ours[key], points)
        if mine == xla:
            verdicts.append("agree")
            continue
        extra = [(p, sorted(mine[p] - xla[p])[:3]) for p in points if mine[p] - xla[p]]
        if case["name"] in XLA_UNSOUND:
            assert _verified_exact(selected, module), f"operand {key}: not exact"
            verdicts.append(f"differs from XLA, exact ({XLA_UNSOUND[case['name']]})")
            continue
        assert not extra, f"operand {key}: reads what XLA's maps never read, e.g. {extra[:2]}"
        assert _verified_exact(selected, module), f"operand {key}: smaller than XLA's but not exact"
        verdicts.append("more precise")
    if case.get("expect_no_operands"):
        assert all(not maps for maps in ours.values())
    request.node.user_properties.append(("verdict", verdicts))
    print(f"\nverdict {case['name']}: {', '.join(verdicts) or 'no operands'}")  # noqa: T201  (shown under `pytest -s`)


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


def _physical_cases() -> list[dict]:
    if not CASES_PATH.is_file():
        return []
    return [c for c in json.loads(CASES_PATH.read_text()) if "physical" in c]


def _to_logical(point: tuple, minor_to_major: list[int]) -> tuple:
    """A physical index (dims in major-to-minor order) as the logical index it stores."""
    logical = [0] * len(point)
    for physical_dim, logical_dim in enumerate(reversed(minor_to_major)):
        logical[logical_dim] = point[physical_dim]
    return tuple(logical)


def _to_physical(point: tuple, minor_to_major: list[int]) -> tuple:
    return tuple(point[logical_dim] for logical_dim in reversed(minor_to_major))


@pytest.mark.skipif(os.environ.get("HLO_INDEX_CONFORMANCE") != "1", reason="minutes of work: `make conformance`")
@pytest.mark.parametrize("case", _physical_cases(), ids=lambda c: c["name"])
def test_physical_layout_cases_give_xla_relation(case):
    """XLA's ``use_physical_layout`` maps go between physical dims (layout order). Ours are logical;
    conjugated with the layouts' permutations (computed here from minor_to_major, not by the tool)
    they must give XLA's relation at every physical point."""
    physical = case["physical"]
    module = parse_module_text(case["hlo"])
    selected = _target(module, case["target"])
    ours = _ours(case, selected)
    out_mtm, operand_mtm = physical["output_minor_to_major"], physical["operand_minor_to_major"]
    for exp in case["expect"]:
        key = (exp["operand"], exp["output"])
        xla_maps = [parse_map(text) for text in exp["maps"]]
        if case["direction"] == "out2in":
            source_shape, source_mtm, dest_mtm = physical["output_shape"], out_mtm, operand_mtm
        else:
            source_shape, source_mtm, dest_mtm = physical["operand_shape"], operand_mtm, out_mtm
        physical_points = list(itertools.product(*[range(n) for n in _to_physical(tuple(source_shape), source_mtm)]))
        xla = read_sets(xla_maps, physical_points)
        logical = read_sets(ours[key], [_to_logical(p, source_mtm) for p in physical_points])
        for p in physical_points:
            mine = {_to_physical(r, dest_mtm) for r in logical[_to_logical(p, source_mtm)]}
            assert mine == set(xla[p]), f"physical point {p}: ours {sorted(mine)[:3]}, XLA {sorted(xla[p])[:3]}"
