"""A custom-call seen as a standard op: the translation record and the table of translators.

``rules_custom_call`` (cuBLAS, cuDNN, TopK, ...) and ``custom_call_onednn`` (XLA:CPU's oneDNN
calls) each register translators here, one per target; the custom-call rules look a target up
with ``translate``. Both sides import this module and neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..hlo.model import Instruction, Shape
from .registry import InputToOutputRule, OutputToInputRule

ExtraRole = tuple[Any, ...]
"""A role of ``Equivalent.extras``: its first item says which of the forms below it is."""


@dataclass(frozen=True)
class Equivalent:
    """A custom-call seen as a standard op ``core`` on some of its operands, plus extras.

    ``core_operands[k]`` is the custom-call operand that is operand k of ``core``;
    ``outputs[j]`` the ``core`` output that custom-call output j is (absent: reads nothing);
    ``extras[i]`` the role of a custom-call operand outside ``core``: ("scalar",), ("same",),
    ("vector", result_dim) or ("broadcast", its dims) (aligned at the result's last dim, size-1
    dims read at 0); it feeds every output that is ``core`` output 0 (("scalar", "every"):
    every output).
    """

    core: Instruction
    out2in: OutputToInputRule
    in2out: InputToOutputRule
    core_operands: tuple[int, ...]
    outputs: dict[int, int]
    extras: dict[int, ExtraRole] = field(default_factory=dict)


AMAX = -1
"""``Equivalent.outputs`` value of a scalar output reducing the whole result (amax): it reads the
union of what every result element reads."""

Translation = Equivalent | str  # a reason string when the semantics cannot be told
Translator = Callable[[Instruction], Translation]
_TRANSLATORS: dict[str, Translator] = {}
_T = TypeVar("_T", bound=Translator)

UNKNOWN_TARGET = "external code whose element access pattern is unknown"


def translator(*targets: str) -> Callable[[_T], _T]:
    """Register a function ``instr -> Translation`` for the custom-call targets named."""

    def register(fn: _T) -> _T:
        for t in targets:
            _TRANSLATORS[t] = fn
        return fn

    return register


def target_of(instr: Instruction) -> str:
    target: str = instr.attr("custom_call_target", "") or ""
    return target


def translate(instr: Instruction) -> Translation:
    """The registered translation of ``instr``'s target, or the reason there is none."""
    fn = _TRANSLATORS.get(target_of(instr))
    return UNKNOWN_TARGET if fn is None else fn(instr)


def result_shapes(instr: Instruction) -> list[Shape]:
    return [instr.shape.leaf(j) for j in range(instr.shape.num_outputs)]


def is_workspace(shape: Shape) -> bool:
    """A trailing ``u8`` / ``s8`` vector output: the call's scratch memory, which reads nothing."""
    return shape.rank == 1 and shape.element_type in ("u8", "s8")
