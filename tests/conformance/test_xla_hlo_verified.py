"""XLA's own HLO texts through ``--verify``: every map the tool gives for them, in both directions,
agrees with the numpy reference at the sampled elements, and nothing ends in an internal error.

XLA's tests hold the shapes a dump rarely does (tuples of collectives, partitioning custom calls,
empty tuples, unbounded dynamic dims, operands of 2^31 elements), which is where this check found
its bugs. Every ``HLO_INDEX_VERIFY_STRIDE``-th module XLA's parser accepts (default 4; 1 checks all
2,464, about ten minutes on 2 cores), XLA's benchmark models aside (whole programs, verified in
``make bench ARGS=verify_cost``).
"""

from __future__ import annotations

import os
import signal

import pytest

from hlo_index.hlo import load
from hlo_index.report.build import module_report

from .run_xla_hlo import MANIFEST, XLA_HLO, manifest_cases

pytestmark = [
    pytest.mark.skipif(not MANIFEST.is_file(), reason="../shared/conformance is not present"),
    pytest.mark.skipif(os.environ.get("HLO_INDEX_CONFORMANCE") != "1", reason="run with `make conformance`"),
]
STRIDE = int(os.environ.get("HLO_INDEX_VERIFY_STRIDE", "4"))
# checked whatever the stride: the modules where this check found a wrong map, an internal error
# or a reference asking for gigabytes
ALWAYS = (
    "hlo_constant_splitter_test__L00253_InstructionsWithOneUser",  # full-to-shard, input to output
    "AllReduceStartAndDoneTwoOperands",  # a tuple all-reduce's done
    "InlineSingleUseCalleesOnly",  # calls that return ()
    "DontInlineCallWithAttributeInlineableFalse",  # shard-to-full after full-to-shard
    "tools__print_indexing_test",  # a fused parameter unlike its operand
    "import_emit_stablehlo__127",  # f32[?,784]
    "SinkConstant",  # an s8[56,4096,4096] dynamic-slice
    "ErrorStatusOnTooManyIndices",  # a gather of 2^31 indices
    "AsyncAllToAllNumberOfElementsLargerThanInt32Max",  # an all-to-all of 2^31 bytes
)
PER_FILE_TIMEOUT_S = 60


class _TooLong(Exception):
    pass


def _alarm(*_):
    raise _TooLong


def _problems(path: str) -> list[str]:
    """The verify mismatches and internal errors of every module in ``path``."""
    found = []
    for result in load(path):
        if result.module is None:  # rejected as XLA's verifier rejects it: ``test_xla_hlo`` holds those
            continue
        report = module_report(result.module, "both", verify=True, seed=0)
        found += [
            d.message
            for d in report.diagnostics
            if d.severity == "error" and d.message.startswith(("verify:", "internal:"))
        ]
    return found


def test_xla_modules_verify_against_the_reference():
    cases = [c for c in manifest_cases() if c.expected == "valid" and not c.file.startswith("xla-tools-data/")]
    strided = {c.file for c in cases[::STRIDE]}
    picked = [c for c in cases if c.file in strided or any(name in c.file for name in ALWAYS)]
    assert sum(any(name in c.file for c in picked) for name in ALWAYS) == len(ALWAYS)
    failures: dict[str, list[str]] = {}
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        for case in picked:
            signal.alarm(PER_FILE_TIMEOUT_S)
            try:
                problems = _problems(str(XLA_HLO / case.file))
            except _TooLong:
                problems = [f"more than {PER_FILE_TIMEOUT_S} s"]
            finally:
                signal.alarm(0)
            if problems:
                failures[case.file] = problems[:3]
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert len(picked) > 500 / STRIDE
    assert not failures, "\n".join(f"{f}: {p}" for f, p in failures.items())
