"""XLA's async sugar, desugared the way XLA's parser does it.

``%s = ((f32[4]), f32[4], u32[]) custom-call-start(%p), custom_call_target="foo"`` is how XLA
prints an ``async-start`` whose wrapped computation holds a single ``custom-call``. Reading it,
XLA's parser (``hlo_parser.cc``, async case of ``ParseInstructionRhs``) builds:

* a new computation ``async_wrapped`` (made unique in the module as ``async_wrapped.1``, ...) with
  one ``parameter`` per operand (``async_param``, ``async_param.1``, ...; the operands' shapes) and a
  root ``async_op``: opcode ``custom-call``, shape = element 1 of the start's tuple shape, the
  instruction-specific attributes;
* the start itself as opcode ``async-start`` with ``calls=async_wrapped``, keeping the generic
  attributes (metadata, sharding, backend_config, ...);
* ``X-update`` / ``X-done`` as ``async-update`` / ``async-done``; their ``calls`` is the start's
  computation (XLA inherits it along the chain).

So instruction, computation and opcode counts match what XLA reports. ``X-start`` is sugar only when
``X-start`` is not an opcode of its own (``all-reduce-start``, ``copy-start``, ... are) and ``X``
is one; anything else stays a raw unknown opcode. The wrapped opcode is ``called["calls"].root.opcode``.
"""

from __future__ import annotations

from .model import Computation, Instruction, Module, Shape
from .opcodes import XLA_OPCODES

_SUFFIXES = (("-start", "async-start"), ("-update", "async-update"), ("-done", "async-done"))
# Attributes XLA sets on the async instruction itself; the rest belong to the wrapped op.
_GENERIC_ATTRS = frozenset(
    {
        "sharding",
        "frontend_attributes",
        "backend_config",
        "control-predecessors",
        "statistics_viz",
        "original_value",
        "async_execution_thread",
    }
)


class AsyncSugarError(ValueError):
    """Async sugar XLA would reject; ``pos`` is the instruction's text offset."""

    def __init__(self, message: str, pos: int):
        super().__init__(message)
        self.message, self.pos = message, pos


def async_sugar(opcode: str) -> tuple[str, str] | None:
    """``custom-call-start`` → ("async-start", "custom-call"); None when not async sugar."""
    if opcode in XLA_OPCODES or "-" not in opcode:
        return None
    for suffix, async_opcode in _SUFFIXES:
        if opcode.endswith(suffix):
            wrapped = opcode[: -len(suffix)]
            if wrapped in XLA_OPCODES and not wrapped.startswith("async-"):
                return async_opcode, wrapped
    return None


def has_async_sugar(comp: Computation) -> bool:
    return any(i.opcode not in XLA_OPCODES and async_sugar(i.opcode) for i in comp.instructions)


def desugar_module(module: Module) -> None:
    """Rewrite every async sugar instruction in place; wrapped computations go just before their
    caller (where XLA's parser creates them). Instruction ``line`` still holds the text offset here.
    """
    taken = {c.name for c in module.computations}
    out: list[Computation] = []
    # a deferred body has no sugar (``hlo.deferred``: one with sugar is not read alone)
    sugared = {id(comp) for comp in module.read_computations() if has_async_sugar(comp)}
    for comp in module.computations:
        if id(comp) in sugared:
            out.extend(_desugar_computation(comp, taken))
        out.append(comp)
    module.computations[:] = out


def _unique(base: str, taken: set[str]) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}.{n}"
    taken.add(name)
    return name


def _is_async_shape(shape: Shape) -> bool:
    """((operands...), outputs, state...): a tuple of at least 2 whose element 0 is a tuple."""
    parts = shape.tuple_shapes
    return parts is not None and len(parts) >= 2 and parts[0].is_tuple


def _desugar_computation(comp: Computation, taken: set[str]) -> list[Computation]:
    by_name = {i.name: i for i in comp.instructions}
    wrapped_of: dict[str, tuple[str, str]] = {}  # async instr name -> (computation name, wrapped opcode)
    created = []
    for instr in comp.instructions:
        if instr.opcode == "async-start" and isinstance(instr.attrs.get("calls"), str):
            wrapped_of[instr.name] = (instr.attrs["calls"], "")  # written out in full: opcode unknown here
        sugar = async_sugar(instr.opcode)
        if sugar is None:
            if instr.opcode in ("async-update", "async-done") and len(instr.operand_names) == 1:
                chain = wrapped_of.get(instr.operand_names[0])
                if chain is not None:
                    wrapped_of[instr.name] = chain
            continue
        async_opcode, wrapped = sugar
        written = instr.opcode
        if async_opcode in ("async-start", "async-update") and not _is_async_shape(instr.shape):
            raise AsyncSugarError(
                f"{written} %{instr.name} needs a result shape ((operands), outputs, state)", instr.line
            )
        if async_opcode == "async-start":
            comp_name = _unique("async_wrapped", taken)
            created.append(_wrapped_computation(comp_name, instr, wrapped, by_name))
            instr.attrs = {k: v for k, v in instr.attrs.items() if k in _GENERIC_ATTRS}
            instr.attrs["calls"] = comp_name
        else:
            if len(instr.operand_names) != 1:
                raise AsyncSugarError(
                    f"{written} %{instr.name} takes exactly one operand, the previous async op", instr.line
                )
            previous = instr.operand_names[0]
            chain = wrapped_of.get(previous)
            if chain is None:
                raise AsyncSugarError(f"operand %{previous} of {written} %{instr.name} is not an async op", instr.line)
            comp_name, previous_wrapped = chain
            if previous_wrapped and previous_wrapped != wrapped:
                raise AsyncSugarError(
                    f"{written} %{instr.name} follows an async {previous_wrapped}, not {wrapped}", instr.line
                )
            # op attributes written on update/done are inherited from the start in XLA: drop them
            instr.attrs = {k: v for k, v in instr.attrs.items() if k in _GENERIC_ATTRS}
            instr.attrs["calls"] = comp_name
        instr.opcode = async_opcode
        wrapped_of[instr.name] = (instr.attrs["calls"], wrapped)
    return created


def _wrapped_computation(name: str, start: Instruction, wrapped: str, by_name: dict[str, Instruction]) -> Computation:
    pos = start.line
    params = []
    for i, operand_name in enumerate(start.operand_names):
        operand = by_name.get(operand_name)
        if operand is None:
            raise AsyncSugarError(f"operand %{operand_name} of %{start.name} is not defined", pos)
        param_name = "async_param" if i == 0 else f"async_param.{i}"
        params.append(Instruction(param_name, "parameter", operand.shape, (), line=pos, parameter_number=i))
    attrs = {k: v for k, v in start.attrs.items() if k not in _GENERIC_ATTRS}
    root = Instruction(
        "async_op", wrapped, start.shape.leaf(1), tuple(p.name for p in params), attrs, is_root=True, line=pos
    )
    return Computation(name, params + [root], line=pos)
