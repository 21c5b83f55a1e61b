"""The data-movement, elementwise, tuple and collective rules on every distinct instruction of
the real XLA dumps in ../shared/corpus (gpt12 excluded for time), checked against the reference
on a seeded sample of elements."""

from __future__ import annotations

import glob
import os

import pytest

import hlo_index.fusion  # noqa: F401  (registers the composite ops: the whole registry is checked)
from hlo_index.hlo import load_path
from hlo_index.ops import INPUT_TO_OUTPUT, OPAQUE_REASONS, OUTPUT_TO_INPUT
from hlo_index.reference import NoReference

from .oracle_check import check_in2out, check_out2in

CORPUS = next(
    (
        p
        for p in (os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpus"), "/work/shared/corpus")
        if os.path.isdir(p)
    ),
    "",
)
MINE = {
    "hlo_index.ops.rules_elementwise",
    "hlo_index.ops.rules_shape",
    "hlo_index.ops.rules_reshape",
    "hlo_index.ops.rules_tuple",
    "hlo_index.ops.rules_collectives",
}
SAMPLE = 32
PER_OPCODE = 25  # distinct instructions checked per opcode (the first ones in corpus order)


def corpus_modules():
    paths = sorted(p for p in glob.glob(os.path.join(CORPUS, "*", "*.hlo.txt*")) if "gpt12" not in p)
    return [m for p in paths for m in load_path(p)]


@pytest.fixture(scope="module")
def modules():
    if not os.path.isdir(CORPUS):
        pytest.skip("corpus not present")
    return corpus_modules()


def _signature(instr) -> tuple:
    return (
        instr.opcode,
        str(instr.shape),
        tuple(str(o.shape) for o in instr.operands),
        tuple(sorted((k, str(v)) for k, v in instr.attrs.items() if k not in ("metadata", "sharding"))),
    )


def test_every_corpus_opcode_has_a_rule_or_reason(modules):
    missing = {
        i.opcode
        for m in modules
        for i in m.instructions
        if i.opcode not in OUTPUT_TO_INPUT and i.opcode not in OPAQUE_REASONS
    }
    assert not missing, f"opcodes with neither a rule nor an UNDEFINED reason: {sorted(missing)}"


def test_rules_match_reference_on_corpus_instructions(modules):
    seen, per_opcode, checked = set(), {}, 0
    for module in modules:
        for instr in module.instructions:
            rule = OUTPUT_TO_INPUT.get(instr.opcode)
            if rule is None or rule.__module__ not in MINE or instr.opcode in ("parameter", "constant", "iota"):
                continue
            sig = _signature(instr)
            if sig in seen or per_opcode.get(instr.opcode, 0) >= PER_OPCODE:
                continue
            seen.add(sig)
            per_opcode[instr.opcode] = per_opcode.get(instr.opcode, 0) + 1
            try:
                for j in range(instr.shape.num_outputs):
                    checked += check_out2in(instr, j, sample=SAMPLE, seed=checked)
                # In to out inverts the reference over every output element: small ops only.
                outputs = sum(instr.shape.leaf(j).num_elements for j in range(instr.shape.num_outputs))
                if outputs * len(instr.operands) <= 4096 and instr.opcode in INPUT_TO_OUTPUT:
                    for i in range(len(instr.operands)):
                        checked += check_in2out(instr, i, sample=SAMPLE, seed=checked)
            except NoReference:
                continue
            except AssertionError as err:
                raise AssertionError(f"{module.source}: %{instr.name}: {err}") from None
    assert checked > 0
