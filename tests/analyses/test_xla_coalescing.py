"""XLA's own coalescing tests (coalescing_analysis_test.cc), read from ../shared/conformance.

* indexing-based cases: every per-operand verdict equals XLA's under the GPU target (the RTX
  A6000 device description XLA's tests use), from the thread maps of the emitter XLA picks;
* heuristic cases: XLA's whole-fusion heuristic on the producer / consumer pair;
* tiled cases: the operand tile our tile propagation gives, fed to XLA's tiled heuristics.
"""

import json
from pathlib import Path

import pytest

from hlo_index.analyses.coalescing_heuristic import (
    heuristic_coalesced,
    tiled_bandwidth_utilization,
    tiled_read_coalesced,
)
from hlo_index.analyses.gpu_coalescing import fusion_coalescing
from hlo_index.analyses.tiling import propagate
from hlo_index.fusion import output_to_input
from hlo_index.hlo import parse_module_text

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "xla_coalescing_tests.json"
CASES = json.loads(DATA.read_text()) if DATA.exists() else []
pytestmark = pytest.mark.skipif(not CASES, reason="../shared/conformance is not available")


def _of(kind):
    return [c for c in CASES if c["expect"]["kind"] == kind]


def _module(case):
    return parse_module_text(case.get("hlo") or case.get("hlo_equivalent"))


@pytest.mark.parametrize("case", _of("per_operand_read_coalesced"), ids=lambda c: c["name"])
def test_indexing_verdicts_equal_xlas(case):
    module = _module(case)
    fusion = module.entry.root
    result = fusion_coalescing(fusion)
    got = [result.per_operand[k].verdict == "coalesced" for k in range(len(fusion.operands))]
    assert got == case["expect"]["coalesced"], {k: (v.verdict, v.reason) for k, v in result.per_operand.items()}


def test_indexing_case_count():
    # 44 comparable operands plus the 4 of VariadicReduceViaLoopEmitter
    assert sum(len(c["expect"]["coalesced"]) for c in _of("per_operand_read_coalesced")) == 48


def test_emitters_match_xla_notes():
    """The emitter picked is the one the case's notes name (as XLA's analysis infers it)."""
    expected = {
        "CoalescingTest.Transpose": "transpose",
        "CoalescingTest.RowReduction": "row reduction",
        "CoalescingTest.MultiRowReduction": "multi-row reduction",
        "CoalescingTest.ColumnReduction": "small column reduction",
        "CoalescingTest.VariadicReduceViaReductionEmitter": "row reduction",
        "CoalescingTest.TransposeOnlyOuterDims": "loop",
        "CoalescingTest.Gather": "loop",
        "CoalescingTest.ConcatenateInLoopEmitter": "loop",
    }
    for case in CASES:
        if case["name"] in expected:
            fusion = parse_module_text(case.get("hlo") or case["hlo_equivalent"]).entry.root
            assert fusion_coalescing(fusion).emitter == expected[case["name"]], case["name"]


def test_gather_counts_xlas_transactions():
    """The unrolled gather: 32 threads each read a 16-byte chunk, 70 elements apart."""
    case = next(c for c in CASES if c["name"] == "CoalescingTest.Gather")
    fusion = parse_module_text(case["hlo"]).entry.root
    read = fusion_coalescing(fusion).per_operand[0].reads[0]
    assert len(read.intervals) == 32 and all(hi - lo == 3 for lo, hi in read.intervals)
    assert (read.transactions, read.ideal_transactions) == (32, 4)


@pytest.mark.parametrize("case", _of("whole_fusion_heuristic"), ids=lambda c: c["name"])
def test_heuristic_cases(case):
    module = parse_module_text(case["hlo"])
    consumer = module.entry.root
    producer = consumer.operands[0]
    ok, _ = heuristic_coalesced(producer, consumer)
    assert ok == case["expect"]["coalesced"]


def _operand_tile(module, case, sizes):
    root = module.entry.root
    rows = output_to_input(root)
    tiles = []
    for row in rows:
        tile = propagate(row.maps[0], root.shape.dims, sizes)
        assert tile.is_tile, tile.reason
        tiles.append((root.operands[row.operand].shape, tile))
    return tiles


@pytest.mark.parametrize("case", _of("tiled_read_coalesced_per_operand"), ids=lambda c: c["name"])
def test_tiled_read_coalesced_cases(case):
    module = parse_module_text(case["hlo"])
    for sub in case["expect"]["cases"]:
        tiles = _operand_tile(module, case, sub["tile_sizes"])
        got = [tiled_read_coalesced(shape, t.sizes, t.strides) for shape, t in tiles]
        assert got == sub["coalesced"], (sub, [(t.sizes, t.strides) for _, t in tiles])


@pytest.mark.parametrize("case", _of("tiled_bandwidth_utilization_rate_per_operand"), ids=lambda c: c["name"])
def test_tiled_bandwidth_cases(case):
    module = parse_module_text(case["hlo"])
    for sub in case["expect"]["cases"]:
        [(shape, tile)] = _operand_tile(module, case, sub["tile_sizes"])
        assert tiled_bandwidth_utilization(shape, tile.sizes, tile.strides) == pytest.approx(sub["expected_rate"])
