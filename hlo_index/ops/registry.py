"""One opcode -> rule registry for both directions.

A rule file defines, side by side, ``output_to_input`` and ``input_to_output`` for one op family
and registers them with the decorators below. ``hlo_index.ops`` imports every rule module, so a
new op is one function pair in one file. The ``COMPOSITE`` ops' rules (call, fusion, conditional,
while, async-start) compose whole computations and are registered by ``hlo_index.fusion``.

Each registration may say what the rule reads (``reads=Reads(...)``): the attributes it looks
at, whether it looks at constant / iota operands' values, module attributes. That declaration *is*
the cache identity (``hlo_index.fusion.fingerprint.instruction_key``): two instructions with equal
opcode, shapes (layouts included), declared attributes, called computations' *bodies* and operand
values share one result. A rule registered without ``reads`` is never shared between instructions
(safe by default: a new rule is correct whatever it looks at; declare its reads to make it cheap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from ..affine import IndexingMap
from ..hlo.model import Instruction


@dataclass(frozen=True, slots=True)
class OperandMaps:
    """The maps from one output of an instruction to one of its operands.

    ``maps`` are the distinct maps (an operand read through two patterns has two; an operand
    this output does not read has none). ``operand_output`` says which tuple element of a
    tuple-shaped operand is addressed (get-tuple-element); it is 0 for array operands.
    """

    operand: int
    maps: tuple[IndexingMap, ...]
    operand_output: int = 0


OutputToInputRule = Callable[[Instruction, int], list[OperandMaps]]
"""(instr, output_index) -> one OperandMaps per operand, in operand order."""

InputToOutputRule = Callable[[Instruction, int], list[tuple[IndexingMap, ...]]]
"""(instr, operand_index) -> per output index of instr, the maps from that operand to the output."""


@dataclass(frozen=True, slots=True)
class Reads:
    """What a rule looks at besides the opcode and the shapes (with layouts) of the instruction and
    its operands, which every key includes.

    ``attributes``: the attribute names it reads (a called computation's attribute stands for
    that computation's *body*, fingerprinted recursively, never its name). ``operand_values``:
    it looks at ``constant`` operands' literals and ``iota`` operands' attributes.
    ``module_attributes``: module-level attributes (e.g. ``replica_count``).
    """

    attributes: frozenset[str] = frozenset()
    operand_values: bool = False
    module_attributes: frozenset[str] = frozenset()

    @staticmethod
    def of(*attributes: str, operand_values: bool = False, module_attributes: Iterable[str] = ()) -> Reads:
        return Reads(frozenset(attributes), operand_values, frozenset(module_attributes))


OUTPUT_TO_INPUT: dict[str, OutputToInputRule] = {}
INPUT_TO_OUTPUT: dict[str, InputToOutputRule] = {}
# opcode -> what its rules read; an opcode absent here is never shared between instructions.
READS: dict[str, Reads] = {}
# Opcodes whose maps are UNDEFINED by design, with the reason (opaque computation, I/O, ...).
OPAQUE_REASONS: dict[str, str] = {}

COMPOSITE = frozenset({"call", "fusion", "conditional", "while", "async-start"})
"""Opcodes whose maps are their called computations' maps, composed. Composing a computation is the
layer above this one (``hlo_index.fusion``), so their rules live there and register here when
``hlo_index.fusion`` is imported (every analysis imports it). Without them, asking for one of
these opcodes raises :class:`CompositeRuleMissing` instead of answering UNDEFINED: "no rule" would
be a wrong answer about the op, not a fact about it."""


class CompositeRuleMissing(LookupError):
    """A composite op's maps were asked for before ``hlo_index.fusion`` registered its rules."""

    def __init__(self, opcode: str) -> None:
        super().__init__(
            f"the rules of '{opcode}' compose its called computations and are registered by "
            f"hlo_index.fusion: import hlo_index.fusion before asking for them"
        )


def _declare(opcodes: tuple[str, ...], reads: Reads | None) -> None:
    for op in opcodes:
        if reads is None:
            # a rule registered without a declaration makes the opcode unshared, whatever
            # another registration for it declared
            READS.pop(op, None)
            _UNDECLARED.add(op)
        elif op not in _UNDECLARED:
            known = READS.get(op)
            READS[op] = (
                reads
                if known is None
                else Reads(
                    known.attributes | reads.attributes,
                    known.operand_values or reads.operand_values,
                    known.module_attributes | reads.module_attributes,
                )
            )


_UNDECLARED: set[str] = set()  # filled at import time, with the registrations

# Bound type variables: the checker verifies each rule's signature and keeps the function's own type.
_O2I = TypeVar("_O2I", bound=OutputToInputRule)
_I2O = TypeVar("_I2O", bound=InputToOutputRule)


def output_to_input_rule(*opcodes: str, reads: Reads | None = None) -> Callable[[_O2I], _O2I]:
    def register(fn: _O2I) -> _O2I:
        for op in opcodes:
            OUTPUT_TO_INPUT[op] = fn
        _declare(opcodes, reads)
        return fn

    return register


def input_to_output_rule(*opcodes: str, reads: Reads | None = None) -> Callable[[_I2O], _I2O]:
    def register(fn: _I2O) -> _I2O:
        for op in opcodes:
            INPUT_TO_OUTPUT[op] = fn
        _declare(opcodes, reads)
        return fn

    return register


def reads_of(opcode: str) -> Reads | None:
    """The declared reads of ``opcode``'s rules; None when undeclared (never shared)."""
    if opcode in _UNDECLARED:
        return None
    return READS.get(opcode)


def opaque(reason: str, *opcodes: str) -> None:
    """Opcodes with no rule: UNDEFINED with ``reason`` (which mentions no instruction, so the
    result is the same for every instruction of the opcode)."""
    for op in opcodes:
        OPAQUE_REASONS[op] = reason
