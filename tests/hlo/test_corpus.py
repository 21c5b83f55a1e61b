"""Every real dump in the shared corpus parses, and its counts equal what XLA's C++ parser reports."""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from hlo_index.hlo import format_module, load, parse_module_text

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpus")
CORPUS = os.path.normpath(os.environ.get("HLO_INDEX_CORPUS", CORPUS))
COUNTS_PATH = os.path.join(CORPUS, "counts.json")

pytestmark = pytest.mark.skipif(not os.path.isfile(COUNTS_PATH), reason="shared corpus not present")


def _counts() -> dict:
    if not os.path.isfile(COUNTS_PATH):
        return {}
    with open(COUNTS_PATH) as f:
        return json.load(f)["files"]


@pytest.fixture(scope="module")
def corpus() -> dict:
    """Relative path -> list of LoadResult, every file parsed once for the whole module."""
    by_file: dict = {}
    for result in load(CORPUS):
        by_file.setdefault(os.path.relpath(result.path, CORPUS), []).append(result)
    return by_file


def _hlo_files() -> list[str]:
    out = []
    for root, _dirs, files in os.walk(CORPUS):
        out.extend(
            os.path.relpath(os.path.join(root, name), CORPUS)
            for name in files
            if name.endswith((".txt", ".txt.gz")) and name != "README.md"
        )
    return sorted(out)


def test_every_corpus_file_parses_without_diagnostics(corpus):
    files = _hlo_files()
    assert files, "no HLO files found in the corpus"
    assert sorted(corpus) == files
    for path, results in corpus.items():
        for r in results:
            assert r.module is not None, (path, r.diagnostics)
            assert r.diagnostics == [], (path, r.diagnostics)


@pytest.mark.parametrize("name", sorted(_counts()))
def test_counts_match_xla(corpus, name):
    expected = _counts()[name]
    results = corpus.get(name) or corpus.get(name + ".gz")
    assert results, f"{name} was not loaded"
    assert len(results) == 1
    module = results[0].module
    assert module is not None
    # XLA counts every instruction of every computation (fused ones included) and fusion instructions.
    assert sum(len(c.instructions) for c in module.computations) == expected["instructions"]
    assert len(module.computations) == expected["computations"]
    assert len(module.fusions) == expected["fusions"]
    assert dict(Counter(i.opcode for i in module.instructions)) == expected["opcodes"]


def test_graph_is_linked(corpus):
    for results in corpus.values():
        module = results[0].module
        assert module.entry is not None and module.entry.is_entry
        for comp in module.computations:
            assert comp.root is not None and comp.root in comp.instructions
            assert sorted(comp.parameters) == list(range(len(comp.parameters)))
            for instr in comp.instructions:
                assert len(instr.operands) == len(instr.operand_names)
                assert all(op.computation is comp for op in instr.operands)
                assert instr.line > 0 and instr.column > 0
            for f in (i for i in comp.instructions if i.opcode == "fusion"):
                assert f.fused_computation is not None and f.fused_computation.is_fused


def test_stack_frames_resolve_to_source_locations(corpus):
    resolved = 0
    for results in corpus.values():
        module = results[0].module
        for instr in module.instructions:
            md = instr.metadata
            if md is not None and md.stack_frame_id:
                loc = module.source_location(instr)
                assert loc is not None and loc.file and loc.line > 0
                assert md.source_file == loc.file and md.source_line == loc.line
                resolved += 1
    assert resolved > 0


def test_small_corpus_files_round_trip_through_the_printer(corpus):
    from .graph import graph_signature

    for name, results in corpus.items():
        if name.endswith(".gz"):
            continue
        module = results[0].module
        again = parse_module_text(format_module(module), "<printed>")
        assert graph_signature(again) == graph_signature(module), name
