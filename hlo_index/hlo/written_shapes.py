"""Whether an instruction's written result shape is the one its operands and attributes give, by
the ops' own shape inference (``shape_inference.py``): what XLA's verifier compares for every
instruction. Reading a module checks the common cases eagerly (``shape_checks.py``); this check
is for an analysis that failed on an instruction those checks let through, so that text XLA's
verifier rejects is reported as invalid input at its position, not as a failure of the tool.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import Computation, Instruction, Shape
from .shape_inference import ShapeInferenceError, infer_shape, is_unknown

# Ops whose written result shape the operands do not give: a broadcast's ``dimensions`` place its
# operand's dimensions in the written result (the eager checks, ``shape_checks``, verify that when
# the module is read); the inference of a broadcast written without a shape (the operand's
# dimensions after the given sizes) says nothing of a written one.
_WRITTEN_ONLY = frozenset({"broadcast"})


def written_shape_problem(instr: Instruction) -> str | None:
    """Why the written result shape of ``instr`` cannot be right, or None when it agrees with what
    the operands and attributes give (or that is unknown: an op without an inference rule)."""
    if is_unknown(instr.shape) or any(is_unknown(o.shape) for o in instr.operands) or instr.opcode in _WRITTEN_ONLY:
        return None
    try:
        inferred = infer_shape(instr)
    except ShapeInferenceError as e:
        if str(e).startswith("cannot infer shape for opcode"):
            return None
        return f"{instr.opcode} %{instr.name} is malformed: {e}"
    except (IndexError, KeyError, TypeError, ValueError) as e:  # attributes that do not fit the operands
        what = f"{type(e).__name__}: {e}"
        return f"{instr.opcode} %{instr.name} is malformed: its attributes do not fit its operands ({what})"
    if _dims(inferred) != _dims(instr.shape):
        what = f"{instr.opcode} %{instr.name}"
        return f"the written shape {instr.shape} of {what} is not what its operands give ({inferred})"
    return None


def written_shape_differs(instr: Instruction) -> str | None:
    """For the eager checks: the written result's dimensions against those the op's inference
    gives, said in a few words, or the inference's own complaint; None where they agree or cannot
    be compared (unknown or dynamic shapes, an op without an inference rule)."""
    written = instr.shape
    if is_unknown(written) or any(is_unknown(o.shape) for o in instr.operands) or _dynamic(written):
        return None
    try:
        inferred = infer_shape(instr)
    except ShapeInferenceError as e:
        return None if str(e).startswith("cannot infer shape for opcode") else str(e)
    except (IndexError, KeyError, TypeError, ValueError) as e:  # attributes that do not fit the operands
        return f"its attributes do not fit its operands ({type(e).__name__}: {e})"
    if _dims(inferred) == _dims(written):
        return None
    if inferred.is_tuple or written.is_tuple:
        return f"the operands give {inferred}, the written shape is {written}"
    return f"the operands give dimensions [{','.join(map(str, inferred.dims))}], the written shape is {written}"


def _dynamic(shape: Shape) -> bool:
    if shape.tuple_shapes is not None:
        return any(map(_dynamic, shape.tuple_shapes))
    return any(shape.dynamic)


def reached_instructions(instr: Instruction) -> Iterator[Instruction]:
    """``instr``, its operands, and every instruction of the computations it calls, through calls
    of calls (each computation once)."""
    yield instr
    yield from instr.operands
    seen: set[int] = set()
    stack: list[Computation] = list(instr.called.values())
    while stack:
        comp = stack.pop()
        if id(comp) in seen:
            continue
        seen.add(id(comp))
        for inner in comp.instructions:
            yield inner
            stack.extend(inner.called.values())


def _dims(shape: Shape) -> object:
    return tuple(map(_dims, shape.tuple_shapes)) if shape.tuple_shapes is not None else shape.dims
