"""What XLA's parser rejects in text that is otherwise well-formed HLO (its semantic checks while
building instructions, ``hlo_parser.cc``), each as a positioned error with XLA's wording.

Runs on a linked module. Literal values are checked in ``literals.py``.
"""

from __future__ import annotations

import re

from .diagnostics import error
from .model import Computation, Diagnostic, Instruction, Module, Shape
from .shapes import compatible

_ASYNC = ("async-start", "async-update", "async-done")
_API_VERSIONS = {
    "API_VERSION_ORIGINAL",
    "API_VERSION_STATUS_RETURNING",
    "API_VERSION_STATUS_RETURNING_UNIFIED",
    "API_VERSION_TYPED_FFI",
}
# ops that take result_accuracy (create_unary_instruction_with_result_accuracy)
_ACCURACY_OPS = frozenset(
    [
        "acos",
        "acosh",
        "asin",
        "asinh",
        "atanh",
        "exponential-minus-one",
        "log",
        "log-plus-one",
        "logistic",
        "sqrt",
        "cbrt",
        "rsqrt",
        "tanh",
        "erf",
        "sine",
        "sinh",
        "cosine",
        "cosh",
        "tan",
        "exponential",
    ]
)
_ACCURACY = re.compile(
    r"\{\s*(?:mode\s*=\s*(?:default|highest|DEFAULT|HIGHEST)"
    r"|tolerance\s*=\s*\{\s*(?:(?:atol|rtol|ulps)\s*=\s*[-+\d.eE]+\s*,?\s*)*\})\s*\}\Z"
)
_CHECKED = frozenset(("conditional", "infeed", "custom-call", "broadcast") + _ASYNC)
_SHAPE_INDEX = r"\{\s*(?:\d+\s*(?:,\s*\d+\s*)*)?\}"
_ALIAS_ENTRY = re.compile(
    rf"\s*{_SHAPE_INDEX}\s*:\s*\(\s*\d+\s*,\s*{_SHAPE_INDEX}\s*(?:,\s*(?:may|must)-alias\s*)?\)\s*"
)
_DONOR_ENTRY = re.compile(rf"\s*\(\s*\d+\s*,\s*{_SHAPE_INDEX}\s*\)\s*")


# attributes whose presence sends any instruction to ``_check_instruction``
_ATTRS_CHECKED = frozenset({"result_accuracy", "execution_thread", "original_value"})


def check_module(module: Module) -> list[Diagnostic]:
    problems: list[Diagnostic] = []
    check_module_header(module, problems)
    async_starts: list[Instruction] = []
    for comp in module.computations:
        check_computation(comp, problems, async_starts)
    problems.extend(shared_async_computations(async_starts))
    return problems


def check_module_header(module: Module, problems: list[Diagnostic]) -> None:
    """What ``check_module`` finds in the module as a whole (its header, its ENTRY markers)."""
    _check_header(module, problems)
    entries = [c for c in module.computations if c.is_entry]
    if len(entries) > 1 and all(c.line for c in entries):
        problems.append(error("expects only one ENTRY", entries[1].line, entries[1].column))


def check_computation(comp: Computation, problems: list[Diagnostic], async_starts: list[Instruction]) -> None:
    """What ``check_module`` finds in ``comp`` alone; its async-start instructions are added to
    ``async_starts`` (``shared_async_computations`` reads them all)."""
    written = comp.result_shape
    if written is not None and comp.root is not None and not compatible(written, comp.root.shape):
        problems.append(
            error(
                f"Shape of computation {comp.name}, {written}, is not compatible with that of its "
                f"root instruction {comp.root.name}, {comp.root.shape}",
                comp.line,
                comp.column,
            )
        )
    for instr in comp.instructions:
        attrs = instr.attrs
        if instr.opcode in _CHECKED or (attrs and not _ATTRS_CHECKED.isdisjoint(attrs)):
            message = _check_instruction(instr)
            if message:
                problems.append(error(message, instr.line, instr.column))
            if instr.opcode == "async-start":
                async_starts.append(instr)


def _check_header(module: Module, problems: list[Diagnostic]) -> None:
    for key, entry in (("input_output_alias", _ALIAS_ENTRY), ("buffer_donor", _DONOR_ENTRY)):
        value = module.attrs.get(key)
        if value is None:
            continue
        text = value.strip()
        ok = text.startswith("{") and text.endswith("}")
        if ok:
            inner = text[1:-1].strip()
            pos = 0
            while ok and pos < len(inner):
                m = entry.match(inner, pos)
                if m is None:
                    ok = False
                    break
                pos = m.end()
                if pos < len(inner):
                    if inner[pos] != ",":
                        ok = False
                    pos += 1
        if not ok:
            problems.append(
                error(
                    f"malformed {key}={text[:80]}: expected "
                    + (
                        "{ {output index}: (parameter, {parameter index}[, may-alias|must-alias]), ... }"
                        if key == "input_output_alias"
                        else "{ (parameter, {parameter index}), ... }"
                    ),
                    1,
                    1,
                )
            )


def _check_instruction(instr: Instruction) -> str | None:
    op = instr.opcode
    attrs = instr.attrs
    if op in _ASYNC:
        return _check_async(instr)
    if op == "conditional" and not instr.operands:
        return "expects at least 1 operand (the branch index or predicate), has none"
    if op == "conditional" and not ({"branch_computations", "true_computation"} & attrs.keys()):
        return "attribute branch_computations (or true_computation and false_computation) is expected but not seen"
    if op == "conditional" and instr.operands:
        first = instr.operands[0].shape
        if first.is_tuple or first.rank != 0:
            return "The first operand must be a scalar"
        if first.element_type not in ("pred", "s32"):
            return "The first operand must be a scalar of PRED or S32"
        if first.element_type == "pred" and "branch_computations" in attrs:
            return (
                'unexpected attribute "branch_computations" (a PRED conditional takes true_computation and '
                "false_computation)"
            )
        if first.element_type == "s32" and "true_computation" in attrs:
            return 'unexpected attribute "true_computation" (an S32 conditional takes branch_computations)'
    if op == "infeed" and (not instr.shape.is_tuple or not instr.shape.tuple_shapes):
        return "infeed must have a non-empty tuple shape"
    if op == "custom-call":
        return _check_custom_call(instr)
    if op == "broadcast" and "dimensions" not in attrs and instr.operands and instr.operands[0].shape.rank > 0:
        return "attribute dimensions is expected but not seen"
    if "execution_thread" in attrs:  # a computation's attribute; async ops take async_execution_thread
        return f'unexpected attribute "execution_thread" for {op}'
    if "original_value" in attrs:
        # XLA's parser (jaxlib 0.10.2 and 0.11.2 alike) refuses it on every instruction: the values of
        # the program before optimization are written "origin=" now
        return 'unexpected attribute "original_value"'
    if "result_accuracy" in attrs:
        if op not in _ACCURACY_OPS:
            return f'unexpected attribute "result_accuracy" for {op}'
        if not _ACCURACY.match(str(attrs["result_accuracy"]).strip()):
            return f"expects ResultAccuracy type but sees: {attrs['result_accuracy']}"
    return None


def _check_custom_call(instr: Instruction) -> str | None:
    attrs = instr.attrs
    version = attrs.get("api_version")
    if version is not None:
        version = str(version).strip()
        if version == "API_VERSION_UNSPECIFIED":
            return f"Invalid API version: {version}"
        if version not in _API_VERSIONS:
            return f"expects custom-call API version but sees: {version}"
    constraints = attrs.get("operand_layout_constraints")
    if constraints is not None:
        shapes = _shape_list(str(constraints))
        if shapes is None:
            return f"malformed operand_layout_constraints {str(constraints)[:60]}"
        if len(shapes) != len(instr.operands):
            return f"Expected {len(instr.operands)} operand layout constraints, {len(shapes)} given"
        for k, (shape, operand) in enumerate(zip(shapes, instr.operands)):
            if not compatible(shape, operand.shape):
                return (
                    f"Operand layout constraint shape {shape} for operand {k} is not compatible with operand "
                    f"shape {operand.shape}"
                )
    return None


def _shape_list(text: str) -> list[Shape] | None:
    from .attributes import split_top_level
    from .diagnostics import ParseError
    from .parser import parse_shape

    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    parts = [p for p in split_top_level(text[1:-1]) if p.strip()]
    try:
        return [parse_shape(p.strip()) for p in parts]
    except ParseError:
        return None


def _async_start_of(instr: Instruction) -> Instruction | None:
    seen = 0
    while instr.opcode in ("async-update", "async-done") and len(instr.operands) == 1 and seen < 10000:
        instr = instr.operands[0]
        seen += 1
    return instr if instr.opcode == "async-start" else None


def _is_async_shape(shape: Shape) -> bool:
    parts = shape.tuple_shapes
    return parts is not None and len(parts) >= 2 and parts[0].is_tuple


def _check_async(instr: Instruction) -> str | None:
    if instr.opcode == "async-start":
        if not _is_async_shape(instr.shape):
            return "AsyncStart expects the op shape to be in the form of ((async-operands), async-outputs, state)."
        return None
    ops = instr.operands
    if len(ops) != 1 or ops[0].opcode not in ("async-start", "async-update"):
        return "AsyncUpdate and AsyncDone expect a single async op as their operand."
    if instr.opcode == "async-update" and not compatible(instr.shape, ops[0].shape):
        return "AsyncUpdate expects the op shape to be the same as the operand shape."
    start = _async_start_of(instr)
    if start is None:
        return None
    thread = instr.attrs.get("async_execution_thread")
    if thread is not None:
        expected = str(start.attrs.get("async_execution_thread", '"main"')).strip('"')
        if str(thread).strip('"') != expected:
            return f"Expect async_execution_thread to be {expected}, but got {str(thread).strip(chr(34))}"
    calls = instr.attrs.get("calls")
    if calls is not None and start.attrs.get("calls") is not None and calls != start.attrs.get("calls"):
        return f"Expect async_wrapped_computation to be {start.attrs['calls']}, but got {calls}"
    return None


def shared_async_computations(starts: list[Instruction]) -> list[Diagnostic]:
    """An async computation called by more than one of ``starts``."""
    callers: dict[str, Instruction] = {}
    out = []
    for instr in starts:
        if True:
            callee = instr.attrs.get("calls")
            if isinstance(callee, str):
                if callee in callers:
                    out.append(
                        error(f"Computation {callee} is called by more than one async op.", instr.line, instr.column)
                    )
                callers[callee] = instr
    return out
