"""XLA's own HLO texts: every module XLA's parser accepts loads and analyses cleanly; the parser's
negative cases are rejected.

One pass over ``../shared/conformance/xla_hlo`` (worker processes, many files each), shared by
the tests below. ``tests/conformance/run_xla_hlo.py`` is the same harness as a script, with
failures grouped by cause and timings.
"""

from __future__ import annotations

import os

import pytest

from .run_xla_hlo import MANIFEST, Case, check_file, is_parser_negative, manifest_cases, run

pytestmark = [
    pytest.mark.skipif(not MANIFEST.is_file(), reason="../shared/conformance is not present"),
    # minutes of work: `make conformance` (and .ci/run) runs it, a plain `make test` does not
    pytest.mark.skipif(os.environ.get("HLO_INDEX_CONFORMANCE") != "1", reason="run with `make conformance`"),
]

# Parser-negative cases this project accepts on purpose: the text is well-formed HLO and the
# project reads on purpose what XLA refuses (the reason is given per file).
DELIBERATELY_ACCEPTED: dict[str, str] = {
    "hlo_parser_test__L04350_MultipleOpsProducesError.hlo": (
        "several bare instructions: XLA reads only one; this project reads them as one ENTRY computation "
        "(with a note), so the spec's snippets paste in verbatim"
    ),
}

# Modules XLA's parser reads and XLA's verifier rejects (each fails to compile with jaxlib 0.10.2, with
# the message given, but where said otherwise): this project rejects them too, naming the ShapeInference rule.
REJECTED_BY_XLAS_VERIFIER: dict[str, str] = {
    "tools__tests__invalid_concat.hlo": "shapes of operand (0) and (1) are not compatible at non-concat index 0",
    "ir_emitter_test__L00317_SmallConstantsAreEmittedAsGlobalsLargeAreNot.hlo": "broadcast_dimensions size (0) "
    "does not match operand rank (2)",
    "hlo__transforms__tests__rewrite_bf16_conv_to_onednn__002.hlo": "inferred shape '[8, 0, 5, 5, 32]' is "
    "incompatible with return type of operation 'tensor<4x4x5x5x32xbf16>'",
    # %convolution.4: window={size=3x3 ...} over a kernel f32[2,2,1,1]. XLA's InferConvolveShape: "Window
    # dimensions do not match RHS shape". jaxlib 0.10.2 compiles it: its translation to StableHLO (this
    # file's own test) drops the window's sizes.
    "hlo__translate__hlo_to_mhlo__tests__import.hlo": "Window dimensions do not match RHS shape",
    # (f32[3], f32[2]) tuple(parameter, parameter) over an f32[3]: XLA's test of exactly this failure
    "tuple_test__L00348_BadTupleShapeFailsGracefully.hlo": "type of return operand 1 ('tensor<3xf32>') doesn't "
    "match function result type ('tensor<2xf32>')",
    # a dynamic-update-slice whose start index is the f32[1] it writes: InferDynamicUpdateSliceShape
    "buffer_assignment_test__L03180_AsyncCallImplicitSharding.hlo": "'stablehlo.dynamic_update_slice' op operand #2 "
    "must be variadic of 0D tensor of 2/4/8/16/32/64-bit integer values, but got 'tensor<1xf32>'",
}


@pytest.fixture(scope="module")
def outcomes():
    cases = manifest_cases()
    jobs = max(1, min(4, os.cpu_count() or 1))
    return {o.file: o for o in run(cases, jobs)}


def test_manifest_is_complete():
    cases = manifest_cases()
    assert len(cases) == 2495
    assert sum(c.expected == "valid" for c in cases) == 2296


def test_every_valid_module_loads_and_analyses(outcomes):
    failed = [
        f"{o.file}: {o.category}: {o.detail[:200]}"
        for o in outcomes.values()
        if o.expected == "valid" and not o.passed and os.path.basename(o.file) not in REJECTED_BY_XLAS_VERIFIER
    ]
    assert not failed, f"{len(failed)} valid modules fail:\n" + "\n".join(failed[:40])


def test_what_xlas_verifier_rejects_is_rejected(outcomes):
    rejected = {
        os.path.basename(o.file): o for o in outcomes.values() if os.path.basename(o.file) in REJECTED_BY_XLAS_VERIFIER
    }
    assert set(rejected) == set(REJECTED_BY_XLAS_VERIFIER)
    for name, o in rejected.items():
        assert o.category == "load-error" and "ShapeInference::" in o.detail, (name, o.category, o.detail)


def test_parser_negative_cases_are_rejected(outcomes):
    cases = {c.file: c for c in manifest_cases()}
    accepted = [
        o.file
        for o in outcomes.values()
        if o.expected == "invalid"
        and not o.passed
        and is_parser_negative(cases[o.file])
        and os.path.basename(o.file) not in DELIBERATELY_ACCEPTED
    ]
    assert not accepted, f"{len(accepted)} invalid modules accepted:\n" + "\n".join(accepted)


def test_no_traceback_anywhere(outcomes):
    crashed = [f"{o.file}: {o.detail[:300]}" for o in outcomes.values() if o.category == "traceback"]
    assert not crashed, "\n".join(crashed)


def test_harness_sees_a_real_failure():
    """The harness is not vacuous: a module with an undefined operand fails, a template is rejected."""
    import tempfile
    from pathlib import Path

    from . import run_xla_hlo

    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.hlo"
        bad.write_text("HloModule m\nENTRY e {\n  ROOT r = f32[2] add(p, q)\n}\n")
        old = run_xla_hlo.XLA_HLO
        run_xla_hlo.XLA_HLO = Path(tmp)
        try:
            valid = check_file(Case("bad.hlo", "valid", "", ""))
            invalid = check_file(Case("bad.hlo", "invalid", "", ""))
        finally:
            run_xla_hlo.XLA_HLO = old
    assert not valid.passed and valid.category == "load-error" and "not defined" in valid.detail
    assert invalid.passed and invalid.category == "rejected"
