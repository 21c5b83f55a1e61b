"""A rule's ``reads=`` declaration is its cache key: two instructions equal in everything declared
share one answer. So an attribute a rule does not declare must not change its maps. Checked on
real instructions (the corpus and XLA's own HLO tests) of the ops with rich attributes: each
undeclared attribute is removed in turn and every map, both directions, must stay the same (each
evaluation in a fresh analysis context, so no cache hides a difference). Without
``operand_values``, a constant operand's literal must not matter either.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from hlo_index.context import AnalysisContext
from hlo_index.fusion.fingerprint import NEVER_READ
from hlo_index.hlo import load
from hlo_index.ops import input_to_output, output_to_input
from hlo_index.ops.registry import reads_of

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
OPCODES = (
    "custom-call",
    "while",
    "conditional",
    "batch-norm-training",
    "batch-norm-inference",
    "batch-norm-grad",
    "ragged-dot",
    "scaled-dot",
    "scatter",
    "dynamic-update-slice",
    "gather",
)
CALLEE_ROLES = {
    "calls",
    "to_apply",
    "condition",
    "body",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
    "branch_computations",
    "called_computations",
}
PER_GROUP = 8  # distinct instructions checked per opcode (custom-call: per target)
# conformance files scanned: up to FILES_PER_PATTERN (in name order) mentioning each of these
PATTERNS = (
    "__cublas",
    "__cudnn",
    "__onednn",
    "block_scaled",
    "TopK",
    "SPMD",
    "Sharding",
    "batch-norm-",
    "while(",
    "conditional(",
    "ragged-dot(",
    "scaled-dot(",
    "scatter(",
    "dynamic-update-slice(",
)
FILES_PER_PATTERN = 8


def _files() -> list[Path]:
    found = sorted((SHARED / "corpus").glob("*/*.txt"))
    xla = SHARED / "conformance" / "xla_hlo"
    counts = dict.fromkeys(PATTERNS, 0)
    for path in sorted(xla.rglob("*.hlo")) if xla.is_dir() else ():
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        hits = [p for p in PATTERNS if counts[p] < FILES_PER_PATTERN and p in text]
        for p in hits:
            counts[p] += 1
        if hits:
            found.append(path)
    return found


def _instructions():
    seen: dict[tuple, int] = {}
    keys = set()
    out = []
    for path in _files():
        try:
            results = load(str(path))
        except Exception:  # noqa: BLE001  a file that does not load gives no instructions to sample
            continue
        for result in results:
            if result.module is None:
                continue
            for instr in result.module.instructions:
                if instr.opcode not in OPCODES or reads_of(instr.opcode) is None:
                    continue
                key = (
                    instr.opcode,
                    str(instr.shape),
                    repr(sorted((k, repr(v)) for k, v in instr.attrs.items() if k not in NEVER_READ)),
                )
                group = (instr.opcode, instr.attr("custom_call_target"))
                if key in keys or seen.get(group, 0) >= PER_GROUP:
                    continue
                keys.add(key)
                seen[group] = seen.get(group, 0) + 1
                out.append(instr)
    return out


def _answers(instr) -> list:
    """Every map of ``instr`` in both directions, from a fresh context (equality ignores the
    runtime variables' descriptions, which name instructions)."""
    with AnalysisContext():
        answers: list = [
            [(om.operand, om.operand_output, om.maps) for om in output_to_input(instr, j)]
            for j in range(instr.shape.num_outputs)
        ]
        answers.extend(input_to_output(instr, i) for i in range(len(instr.operands)))
        # canonical keys made here, while the context lives: comparing the answers later then
        # simplifies nothing in whatever context is current (expressions of a closed context
        # would fill that context's simplifier memos)
        for answer in answers:
            for item in answer:
                for m in item[2] if isinstance(item, tuple) and len(item) == 3 and isinstance(item[2], tuple) else item:
                    m.canonical_key()
        return answers


def test_undeclared_attributes_and_literals_do_not_change_the_maps():
    instructions = _instructions()
    if not instructions:
        pytest.skip("corpus / conformance set not available")
    checked = 0
    for instr in instructions:
        declared = reads_of(instr.opcode)
        baseline = _answers(instr)
        for name in sorted(instr.attrs):
            if name in declared.attributes or name in NEVER_READ or name in CALLEE_ROLES:
                continue
            mutated = copy.copy(instr)
            mutated.attrs = {k: v for k, v in instr.attrs.items() if k != name}
            assert _answers(mutated) == baseline, (
                f"{instr.opcode} %{instr.name}: its maps change without "
                f"attribute '{name}', which its rules do not declare"
            )
            checked += 1
        if not declared.operand_values and any(o.opcode == "constant" for o in instr.operands):
            mutated = copy.copy(instr)
            mutated.operands = tuple(_other_literal(o) for o in instr.operands)
            assert _answers(mutated) == baseline, f"{instr.opcode} %{instr.name} reads an undeclared literal"
            checked += 1
    assert checked > 0


def _other_literal(op):
    if op.opcode != "constant" or op.literal is None:
        return op
    other = copy.copy(op)
    other.literal = re.sub(r"-?\d+", "1", op.literal)
    return other


def test_a_while_key_holds_the_initial_counter_inside_its_init_tuple():
    """The trip count comes from a constant inside the init tuple: two loops that differ only
    there must not share maps (a ``tuple`` operand is keyed by its elements' values)."""
    from fusion.test_rules_control_flow import while_module

    from hlo_index.fusion.fingerprint import instruction_key
    from hlo_index.hlo import parse_module_text

    loops = [parse_module_text(while_module(1, 3, "shift", start, 4, False)).entry.root for start in (0, 2)]
    with AnalysisContext():
        assert instruction_key(loops[0]) != instruction_key(loops[1])
    assert _answers(loops[0]) != _answers(loops[1])
    with AnalysisContext():  # in one context, each still gets its own answer
        together = [[om.maps for om in output_to_input(w, 1)] for w in loops]
    assert together[0] == [om[2] for om in _answers(loops[0])[1]]
    assert together[1] == [om[2] for om in _answers(loops[1])[1]]
