"""The numpy reference's read sets, one instruction at a time (seeded runtime values, failures
as ``Skip``), and the key under which shape-only ops' read sets are shared between targets."""

from __future__ import annotations

import numpy as np

from ..context import current, register_table
from ..fusion.fingerprint import instruction_structure
from ..hlo.model import Instruction
from ..hlo.opcodes import ELEMENTWISE_OPCODES
from ..reference import ELEMENT_READ_SETS, NoReference, element_read_sets, operand_element_read, read_set
from .outcome import Skip
from .sampling import stable_seed

_RUNTIME_VALUES = register_table("verify.runtime_values")  # id(instr) -> (instr, values): identity memo


def runtime_values_for(instr: Instruction) -> dict[int, np.ndarray]:
    """Concrete offsets / indices for an op's integer operands, seeded by the op's opcode and
    shapes (not its name: identical computations get identical values).

    Any values will do: maps with runtime variables describe the union over every feasible value,
    so the reference's read set for one choice must be contained in it.
    """
    memo = current().tables[_RUNTIME_VALUES]
    hit = memo.get(id(instr))
    if hit is not None and hit[0] is instr:
        return hit[1]
    bound = max((max(o.shape.dims, default=1) for o in instr.operands if not o.shape.is_tuple), default=1)
    rng = np.random.default_rng(
        stable_seed((instr.opcode, str(instr.shape), tuple(str(o.shape) for o in instr.operands)))
    )
    # integer operands that can hold offsets or indices; one larger than a reference may
    # materialise (the s8 data of a dynamic-slice) gets none: a reference that asks for its
    # values is skipped, saying so
    limit = current().budgets.verify_reference_elements
    values = {
        j: rng.integers(0, bound + 1, size=o.shape.dims, dtype=np.int64)
        for j, o in enumerate(instr.operands)
        if not o.shape.is_tuple
        and o.shape.element_type[:1] in ("s", "u")
        and o.opcode != "constant"
        and o.shape.num_elements <= limit
    }
    memo[id(instr)] = (instr, values)
    return values


def reference_read_set(instr: Instruction, out: int, point: tuple, operand: int) -> set:
    try:
        try:
            return read_set(instr, out, point, operand, None)
        except ValueError as exc:
            if "runtime value" not in str(exc):
                raise
            return read_set(instr, out, point, operand, runtime_values_for(instr))
    except NoReference as exc:
        raise Skip(str(exc)) from None
    except Exception as exc:  # noqa: BLE001  any failure of the oracle (e.g. runtime data) is a Skip, not a crash
        raise reference_failed(instr, exc) from None


def reference_set_read(reads, instr: Instruction, out: int, points: np.ndarray, operand: int) -> np.ndarray:
    """``reads`` (a ``SET_READ_SETS`` function) of ``points``, failures as ``reference_read_set``'s."""
    try:
        return reads(instr, out, points, operand)
    except NoReference as exc:
        raise Skip(str(exc)) from None
    except Exception as exc:  # noqa: BLE001  any failure of the oracle is a Skip, not a crash
        raise reference_failed(instr, exc) from None


def reference_failed(instr: Instruction, exc: Exception) -> Skip:
    """The Skip for a reference that cannot evaluate ``instr`` in this configuration."""
    return Skip(f"reference for {instr.opcode} '{instr.name}' failed: {type(exc).__name__}: {exc}")


def reference_element_read_sets(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    """Per tuple element of the operand, the reference's read set (several for conditional / while)."""
    if instr.opcode not in ELEMENT_READ_SETS:
        return {operand_element_read(instr, out): reference_read_set(instr, out, point, operand)}
    try:
        return element_read_sets(instr, out, point, operand)
    except Exception as exc:  # noqa: BLE001  any failure of the oracle is a Skip, not a crash
        raise reference_failed(instr, exc) from None


# Ops whose reference read sets follow from opcode, shapes (layouts included) and attributes alone:
# no callee, no operand literal, no runtime value. Their read sets are shared between targets.
_SHAPE_ONLY_OPCODES = frozenset(ELEMENTWISE_OPCODES) | {
    "broadcast",
    "bitcast",
    "transpose",
    "reshape",
    "copy",
    "slice",
    "reverse",
    "concatenate",
    "pad",
    "convert",
    "bitcast-convert",
    "reduce-precision",
    "dot",
}


STRUCTURE_IDS = "structure ids"  # a key of the shared memo: structure -> small int


SHARED_READS_LIMIT = 1 << 20  # entries of a module's shared memo; beyond it, it starts afresh


def shape_only_structure(instr: Instruction):
    """Everything a shape-only reference reads of ``instr``; None when its read sets may depend
    on more (then they are memoised per instruction object, for one target only)."""
    if instr.opcode not in _SHAPE_ONLY_OPCODES or instr.called:
        return None
    return instruction_structure(instr)
