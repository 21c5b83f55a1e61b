"""Every opcode seen in the real XLA dumps has an indexing rule (both directions) or a
documented UNDEFINED reason; opaque ops really give UNDEFINED with that reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hlo_index.fusion  # noqa: F401  (registers the composite ops: the whole registry is checked)
from hlo_index.hlo.build import array_shape, instruction, tuple_shape
from hlo_index.ops import INPUT_TO_OUTPUT, OPAQUE_REASONS, OUTPUT_TO_INPUT, input_to_output, output_to_input

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"

# The corpus README's list "Opcodes seen across the full corpus" (including held-back dumps).
README_OPCODES = [
    "parameter",
    "broadcast",
    "multiply",
    "convert",
    "add",
    "fusion",
    "reshape",
    "constant",
    "bitcast",
    "subtract",
    "reduce",
    "negate",
    "dot",
    "divide",
    "slice",
    "transpose",
    "copy",
    "get-tuple-element",
    "iota",
    "compare",
    "select",
    "concatenate",
    "rsqrt",
    "reduce-window",
    "maximum",
    "call",
    "pad",
    "exponential",
    "sine",
    "cosine",
    "tanh",
    "power",
    "tuple",
    "xor",
    "convolution",
    "shift-right-logical",
    "or",
    "and",
    "shift-left",
    "abs",
    "sqrt",
    "reverse",
    "gather",
    "scatter",
    "bitcast-convert",
    "log",
    "minimum",
    "opt-barrier",
    "custom-call",
    "while",
    "log-plus-one",
    "dynamic-slice",
    "dynamic-update-slice",
    "sort",
    "remainder",
    "sign",
    "floor",
    "fft",
    "clamp",
    "all-reduce",
    "atan2",
    "is-finite",
    "complex",
    "conditional",
    "not",
    "real",
    "round-nearest-even",
    "shift-right-arithmetic",
    "exponential-minus-one",
    "erf",
    "cbrt",
    "ceil",
    "tan",
    "reduce-precision",
    "popcnt",
    "count-leading-zeros",
    "topk",
    "partition-id",
    "all-gather",
    "collective-permute",
    "reduce-scatter",
    "all-to-all",
    "rng-bit-generator",
    "select-and-scatter",
    "imag",
    "map",
]


def corpus_opcodes() -> set[str]:
    found = set(README_OPCODES)
    counts = CORPUS / "counts.json"
    if counts.exists():
        for entry in json.loads(counts.read_text())["files"].values():
            found |= set(entry.get("opcodes", {}))
    return found


@pytest.mark.parametrize("opcode", sorted(corpus_opcodes()))
def test_corpus_opcode_has_rule_or_reason(opcode):
    assert opcode in OUTPUT_TO_INPUT or opcode in OPAQUE_REASONS, f"no rule and no UNDEFINED reason for {opcode}"
    if opcode in OUTPUT_TO_INPUT and opcode not in OPAQUE_REASONS:
        assert opcode in INPUT_TO_OUTPUT, f"{opcode} has an output-to-input rule but no input-to-output rule"


OPAQUE_EXAMPLES = [
    "rng",
    "rng-bit-generator",
    "rng-get-and-update-state",
    "infeed",
    "outfeed",
    "send",
    "recv",
    "send-done",
    "recv-done",
    "fft",
    "cholesky",
    "triangular-solve",
    "after-all",
    "get-dimension-size",
    "set-dimension-size",
    "dynamic-reshape",
    "partition-id",
    "replica-id",
]


@pytest.mark.parametrize("opcode", OPAQUE_EXAMPLES)
def test_opaque_op_is_undefined_with_its_reason(opcode):
    reason = OPAQUE_REASONS[opcode]
    assert len(reason) > 30
    f32 = array_shape("f32", [4, 4])
    instr = instruction(opcode, f32, [f32, array_shape("f32", [4])])
    for om in output_to_input(instr):
        assert [m.undefined_reason for m in om.maps] == [reason]
    for i in range(2):
        (maps,) = input_to_output(instr, i)
        assert maps[0].is_undefined and maps[0].undefined_reason == reason


def test_custom_call_reason_names_the_target():
    f32 = array_shape("f32", [8])
    instr = instruction("custom-call", tuple_shape(f32, f32), [f32], custom_call_target="lapack_sgeqrf")
    (om,) = output_to_input(instr, 1)
    assert om.maps[0].is_undefined and "lapack_sgeqrf" in om.maps[0].undefined_reason
    assert all(maps[0].is_undefined for maps in input_to_output(instr, 0))


def test_add_dependency_passes_its_operand_through():
    f32 = array_shape("f32", [3, 5])
    instr = instruction("add-dependency", f32, [f32, array_shape("token", [])])
    data, token = output_to_input(instr)
    assert data.maps[0].read_set((2, 4)) == {(2, 4)}
    assert token.maps[0].num_results == 0
    assert input_to_output(instr, 0)[0][0].read_set((1, 3)) == {(1, 3)}


# ---- the real dumps: every instruction of the contraction / window / dynamic / sort families ----

STATIC_FAMILIES = {"reduce", "reduce-window", "select-and-scatter", "dot", "convolution", "sort", "topk"}
DYNAMIC_FAMILIES = {"dynamic-slice", "dynamic-update-slice", "gather", "scatter"}


def corpus_instructions() -> list:
    """Distinct (by opcode, shapes and attributes) corpus instructions of the families above."""
    from hlo_index.hlo import load

    if not CORPUS.exists():
        return []
    seen, found = set(), []
    for path in sorted(CORPUS.glob("*/*.txt")):
        for result in load(str(path)):
            if result.module is None:
                continue
            for instr in result.module.instructions:
                if instr.opcode not in STATIC_FAMILIES | DYNAMIC_FAMILIES:
                    continue
                key = (
                    instr.opcode,
                    str(instr.shape),
                    tuple(str(o.shape) for o in instr.operands),
                    tuple(
                        sorted(
                            (k, repr(v))
                            for k, v in instr.attrs.items()
                            if k not in ("to_apply", "select", "scatter", "metadata", "backend_config")
                        )
                    ),
                )
                if key not in seen:
                    seen.add(key)
                    found.append(instr)
    return found


def _reads_per_output(instr) -> int:
    from hlo_index.reference import read_set

    out_dims = instr.shape.leaf(0).dims
    return sum(len(read_set(instr, 0, tuple(0 for _ in out_dims), i)) for i in range(len(instr.operands)))


def _overwritten_by_runtime_windows(instr, operand: int, m) -> bool:
    """The one documented unknown of these families: a scatter whose combiner overwrites, with
    several windows at runtime starts (which operand elements survive depends on all of them)."""
    return (
        instr.opcode == "scatter"
        and m.is_undefined
        and operand < (len(instr.operands) - 1) // 2
        and "depends on every runtime index vector at once" in m.undefined_reason
    )


def test_corpus_instructions_get_exact_maps():
    """Structure for all of them; for the static ops, the reference on sampled elements (and the
    inverse relation where the output is small enough to scan)."""
    from .oracle_check import check_in2out, check_out2in

    instructions = corpus_instructions()
    if not instructions:
        pytest.skip("corpus not available")
    checked = 0
    for instr in instructions:
        for j in range(instr.shape.num_outputs):
            per_operand = output_to_input(instr, j)
            assert len(per_operand) == len(instr.operands)
            for om in per_operand:
                for m in om.maps:
                    if _overwritten_by_runtime_windows(instr, om.operand, m):
                        continue
                    assert not m.is_undefined, (instr, m.undefined_reason)
                    assert m.num_dims == instr.shape.leaf(j).rank
        for i in range(len(instr.operands)):
            for maps in input_to_output(instr, i):
                assert all(
                    _overwritten_by_runtime_windows(instr, i, m)
                    or (not m.is_undefined and m.num_dims == instr.operands[i].shape.rank)
                    for m in maps
                ), instr
        if instr.opcode not in STATIC_FAMILIES:
            continue
        reads = max(1, _reads_per_output(instr))
        for j in range(instr.shape.num_outputs):
            check_out2in(instr, j, sample=10 if reads < 2_000 else 2)
        if instr.shape.leaf(0).num_elements * reads <= 10_000:
            for i in range(len(instr.operands)):
                check_in2out(instr, i, sample=30)
        checked += 1
    assert checked >= 20
