"""Real XLA dumps: every after-optimizations module analyses without error, maps are mostly known,
and sampled fusions agree with the numpy reference walk (``--verify``)."""

from __future__ import annotations

import glob
import os

import pytest

from hlo_index.api import select_targets
from hlo_index.fusion import input_to_output, output_to_input
from hlo_index.hlo import load
from hlo_index.verify import verify_target

CORPUS = os.environ.get("HLO_INDEX_CORPUS", os.path.join(os.path.dirname(__file__), "../../../shared/corpus"))
# gpt12 (38k instructions) is the benchmark's job; the rest covers every opcode family.
FILES = sorted(
    f for f in glob.glob(os.path.join(CORPUS, "**", "*after_optimizations*"), recursive=True) if "gpt12" not in f
)

pytestmark = pytest.mark.skipif(not FILES, reason="corpus not found")


@pytest.fixture(scope="module")
def modules():
    out = []
    for path in FILES:
        for result in load(path):
            assert result.module is not None, (path, result.diagnostics[:1])
            out.append((path, result.module))
    return out


def test_every_after_optimizations_fusion_analyses_and_90_percent_of_maps_are_known(modules):
    read = known = fusions = 0
    for _path, module in modules:
        for fusion in module.fusions:
            fusions += 1
            rows = output_to_input(fusion)
            assert len(rows) >= len(fusion.operands) * fusion.shape.num_outputs > 0 or not fusion.operands
            for row in rows:
                if row.maps:
                    read += 1
                    known += row.known
    assert fusions > 500
    assert known / read >= 0.90, f"{known}/{read} fusion operand maps known"


def test_modules_without_fusions_analyse_their_entry_both_ways(modules):
    entries = [(p, m) for p, m in modules if not m.fusions]
    assert entries
    for _path, module in entries:
        [selected] = select_targets(module)
        assert selected.kind == "computation" and selected.target is module.entry
        output_to_input(module.entry)
        input_to_output(module.entry)


def test_input_to_output_of_every_fusion(modules):
    for _path, module in modules[::3]:
        for fusion in module.fusions:
            rows = input_to_output(fusion)
            assert {r.operand for r in rows} == set(range(len(fusion.operands)))


def test_sampled_fusions_match_the_reference_walk(modules):
    verified = 0
    for path, module in modules:
        for selected in select_targets(module)[::4]:
            outcome = verify_target(selected, module, samples=3, seed=1)
            assert not outcome.errors, (path, outcome.errors[:3])
            verified += not outcome.notes
    assert verified >= 100
