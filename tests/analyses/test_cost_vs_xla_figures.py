"""Module cost totals against XLA:CPU's own ``HloCostAnalysis``, as recorded with jaxlib in
``tests/data/xla_cpu_cost/totals.json`` (made by ``record.py`` there, which says how): every probe
(one op or one costing rule of XLA's each) and every module XLA's parser reads in ``../shared``:
XLA's tests and benchmark models, the corpus's after-optimizations dumps, the field dumps.

Flops and transcendentals must be equal, bytes accessed within 0.1% (XLA sums its figures in
float32; a big module's sum can round differently in the last bits). A module hlo-index rejects
must be one XLA's verifier rejects too (``REJECTED``, each with the rule)."""

from __future__ import annotations

import json
import os

import pytest

from hlo_index.analyses.cost.flops import CostOptions
from hlo_index.analyses.cost.hlo_cost import module_totals
from hlo_index.context import AnalysisContext
from hlo_index.hlo import ParseError, parse_module_text, read_text
from tests.data.xla_cpu_cost.record import PROBES

HERE = os.path.dirname(__file__)
SHARED = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared"))
with open(os.path.join(HERE, "..", "data", "xla_cpu_cost", "totals.json")) as f:
    RECORDED = json.load(f)
BYTES_TOLERANCE = 1e-3

# Modules XLA's parser reads but its verifier rejects (as hlo-index does, naming the rule).
REJECTED = {
    # concatenate of f32[2,2] and f32[3,3]: InferConcatOpShape
    "conformance/xla_hlo/xla-hlo-tests/tools__tests__invalid_concat.hlo",
    # a broadcast whose dimensions do not fit its operand: InferBroadcastShape
    "conformance/xla_hlo/xla-cc-cpu/ir_emitter_test__L00317_SmallConstantsAreEmittedAsGlobalsLargeAreNot.hlo",
    # a convolution written with batch 4 where its operands give 8: InferConvolveShape
    "conformance/xla_hlo/xla-hlo-tests/hlo__transforms__tests__rewrite_bf16_conv_to_onednn__002.hlo",
    # a convolution whose window (3x3) is not its kernel's (2x2): InferConvolveShape
    "conformance/xla_hlo/xla-hlo-translate-tests/hlo__translate__hlo_to_mhlo__tests__import.hlo",
    # a tuple written (f32[3], f32[2]) over two f32[3]: InferVariadicOpShape
    "conformance/xla_hlo/xla-cc-tests/tuple_test__L00348_BadTupleShapeFailsGracefully.hlo",
    # a dynamic-update-slice whose start index is an f32[1]: InferDynamicUpdateSliceShape
    "conformance/xla_hlo/xla-cc-service/buffer_assignment_test__L03180_AsyncCallImplicitSharding.hlo",
}


def ours(text: str, source: str) -> list[float]:
    with AnalysisContext():
        t = module_totals(parse_module_text(text, source), CostOptions(gpu=False))
    return [t.flops, t.transcendentals, t.bytes_accessed]


def differs(got: list[float], xla: list[float]) -> bool:
    return got[:2] != xla[:2] or abs(got[2] - xla[2]) > BYTES_TOLERANCE * max(abs(xla[2]), 1.0)


def test_the_figures_are_xlas_own():
    assert RECORDED["jaxlib"] == "0.10.2"
    assert set(RECORDED["probes"]) == set(PROBES)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_probe(name):
    assert ours(PROBES[name], f"{name}.hlo") == RECORDED["probes"][name]


@pytest.mark.parametrize("group", ["conformance", "corpus", "field"])
def test_modules(group):
    keys = sorted(k for k in RECORDED["modules"] if k.startswith(group + "/"))
    present = [k for k in keys if os.path.exists(os.path.join(SHARED, k))]
    if not present:
        pytest.skip(f"../shared/{group} is not here")
    wrong, rejected = [], set()
    for key in present:
        path = os.path.join(SHARED, key)
        try:
            got = ours(read_text(path), path)
        except ParseError:
            rejected.add(key)
            continue
        if differs(got, RECORDED["modules"][key]):
            wrong.append((key, got, RECORDED["modules"][key]))
    assert wrong == []
    assert rejected == {k for k in REJECTED if k in present}
