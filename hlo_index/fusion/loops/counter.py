"""A while body specialised to one iteration: the loop counter replaced by its value.

With jax's induction pattern (counter ``c`` starts at a constant, the body's root sets it to
``c + step``, the condition compares it with a constant) the counter at the start of iteration n is
exactly ``start + n * step``. ``specialised_body`` copies the body with that value folded, through
the scalar integer ops that compute a dynamic offset from it (convert, the arithmetic jax emits,
its negative-index normalisation ``select(i < 0, i + n, i)``, clamps) and into the ``call`` /
``fusion`` callees it is passed to. A folded offset is a ``constant``, which the dynamic-slice
rules fold into the map (clamped as XLA clamps); anything not provably foldable (a value outside
its type's range, a float, an unknown op) is left as it is, and its rule keeps its runtime variable.

The copies are new objects with the folded values in their literals, so every cache (keyed by
structural fingerprint, literals included) tells them apart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ...context import current
from ...hlo.model import Computation, Instruction
from ...ops.starts import constant_values

_BITS = {"s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "EQ": lambda a, b: a == b,
    "NE": lambda a, b: a != b,
    "LT": lambda a, b: a < b,
    "LE": lambda a, b: a <= b,
    "GT": lambda a, b: a > b,
    "GE": lambda a, b: a >= b,
}
_ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "maximum": max,
    "minimum": min,
}


def _fits(instr: Instruction, value: int) -> int | None:
    """``value`` when ``instr`` is a scalar of an integer or pred type that holds it exactly
    (no wrap-around is modelled), else None."""
    shape = instr.shape
    if shape.is_tuple or shape.dims:
        return None
    kind = shape.element_type
    if kind == "pred":
        return int(bool(value)) if value in (0, 1) else None
    bits = _BITS.get(kind)
    if bits is None:
        return None
    lo, hi = (0, (1 << bits) - 1) if kind.startswith("u") else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return value if lo <= value <= hi else None


class _Folder:
    """Scalar integer values of one computation's instructions, given some parameters' values."""

    def __init__(self, comp: Computation, parameters: dict[int, int], elements: dict[int, int]) -> None:
        self.comp = comp
        self.parameters = parameters  # parameter number -> value (a scalar parameter)
        self.elements = elements  # element of tuple parameter 0 -> value
        self.memo: dict[int, tuple[Instruction, int | None]] = {}

    def value(self, instr: Instruction) -> int | None:
        hit = self.memo.get(id(instr))
        if hit is not None and hit[0] is instr:
            return hit[1]
        self.memo[id(instr)] = (instr, None)  # a cycle (malformed input) folds nothing
        result = self._value(instr)
        self.memo[id(instr)] = (instr, result)
        return result

    def _value(self, instr: Instruction) -> int | None:
        op, ops = instr.opcode, instr.operands
        if op == "parameter":
            v = self.parameters.get(instr.parameter_number)  # type: ignore[arg-type]  # a parameter has its number
            return None if v is None else _fits(instr, v)
        if op == "get-tuple-element":
            if ops and ops[0].opcode == "parameter" and ops[0].parameter_number == 0:
                v = self.elements.get(int(instr.attr("index", -1)))
                return None if v is None else _fits(instr, v)
            return None
        if op == "constant":
            values = constant_values(instr)
            return (
                int(values.flat[0])
                if values is not None
                and values.size == 1
                and not instr.shape.dims
                and _fits(instr, int(values.flat[0])) is not None
                else None
            )
        folded = [self.value(o) for o in ops]
        args = [a for a in folded if a is not None]
        if len(args) < len(folded) or not args:
            return None
        if op in ("convert", "copy", "bitcast-convert") and len(args) == 1:
            return _fits(instr, args[0]) if op != "bitcast-convert" else None
        if op == "negate" and len(args) == 1:
            return _fits(instr, -args[0])
        if op in _ARITHMETIC and len(args) == 2:
            return _fits(instr, _ARITHMETIC[op](*args))
        if op == "compare" and len(args) == 2 and instr.attr("direction", "") in _COMPARE:
            return _fits(instr, int(_COMPARE[instr.attr("direction")](*args)))
        if op == "select" and len(args) == 3:
            return _fits(instr, args[1] if args[0] else args[2])
        if op == "clamp" and len(args) == 3:
            lo, x, hi = args
            return _fits(instr, min(max(x, lo), hi))
        return None


def _literal(instr: Instruction, value: int) -> str:
    return ("true" if value else "false") if instr.shape.element_type == "pred" else str(value)


def _specialise(
    comp: Computation, parameters: dict[int, int], elements: dict[int, int], depth: int
) -> tuple[Computation, bool]:
    """A copy of ``comp`` whose ops that are not themselves folded read folded operands as
    constants (a tuple root keeps its operands: the counters' own update chains stay intact).
    Every read this drops is a read of a counter; ``matrix`` puts those back. Also: whether
    anything changed."""
    folder = _Folder(comp, parameters, elements)
    clone = Computation(
        comp.name,
        is_entry=False,
        execution_thread=comp.execution_thread,
        line=comp.line,
        column=comp.column,
        module=comp.module,
        is_fused=comp.is_fused,
        result_shape=comp.result_shape,
    )
    new: dict[int, tuple[Instruction, Instruction]] = {}  # id(old) -> (old, copy)
    for instr in comp.instructions:
        copy = dataclasses.replace(instr, attrs=dict(instr.attrs), called=dict(instr.called))
        copy.computation = clone
        new[id(instr)] = (instr, copy)
        clone.instructions.append(copy)
        clone.by_name[copy.name] = copy
        if instr.opcode == "parameter":
            clone.parameters[instr.parameter_number] = copy  # type: ignore[index]  # a parameter has its number
        if instr is comp.root:
            clone.root = copy
    changed = False
    for instr in comp.instructions:
        copy = new[id(instr)][1]
        consumer = (
            not (instr is comp.root and instr.opcode == "tuple")
            and instr.opcode not in ("call", "fusion")
            and (instr.opcode == "parameter" or folder.value(instr) is None)
        )
        operands = []
        for o in instr.operands:
            v = folder.value(o) if consumer and o.opcode != "constant" else None
            if v is not None:
                operands.append(_constant_for(clone, o, v))
                changed = True
            else:
                operands.append(new[id(o)][1] if id(o) in new and new[id(o)][0] is o else o)
        copy.operands = tuple(operands)
        copy.operand_names = tuple(o.name for o in operands)
        if instr.opcode in ("call", "fusion") and depth < current().budgets.loop_counter_call_depth:
            role = "to_apply" if "to_apply" in instr.called else "calls"
            callee = instr.called.get(role)
            known = {i: v for i, o in enumerate(instr.operands) if (v := folder.value(o)) is not None}
            if callee is not None and known:
                inner, inner_changed = _specialise(callee, known, {}, depth + 1)
                if inner_changed:
                    copy.called[role] = inner
                    changed = True
    return clone, changed


def _constant_for(clone: Computation, source: Instruction, value: int) -> Instruction:
    name = f"{source.name}.value"
    hit = clone.by_name.get(name)
    if hit is not None:
        return hit
    c = Instruction(
        name,
        "constant",
        source.shape,
        (),
        {},
        source.metadata,
        False,
        source.line,
        source.column,
        literal=_literal(source, value),
    )
    c.computation = clone
    clone.instructions.insert(0, c)
    clone.by_name[name] = c
    return c


def specialised_body(body: Computation, values: dict[int, int]) -> Computation | None:
    """``body`` with the loop-state elements in ``values`` known to hold those values, or None
    when nothing but the counters' own updates reads them (the specialisation would change no map)."""
    clone, changed = _specialise(body, {}, values, 0)
    return clone if changed else None


# ---- counters: loop-state elements that grow by a constant every iteration ---------------------


def _counter_of(expr: Instruction, callers: tuple[Instruction, ...], depth: int = 0) -> tuple[int, int] | None:
    """``(element, offset)`` when ``expr`` is exactly ``state[element] + offset`` (state: the
    body's tuple parameter), through constant adds / subtracts and ``call`` boundaries;
    ``callers``: the call instructions (innermost last) whose callees ``expr`` lies in."""
    if depth > 64:
        return None
    op, ops = expr.opcode, expr.operands
    if op == "get-tuple-element" and ops and ops[0].opcode == "parameter" and not callers:
        return int(expr.attr("index", -1)), 0
    if op == "parameter" and callers:
        call = callers[-1]
        number = expr.parameter_number
        if number is None or number >= len(call.operands):
            return None
        return _counter_of(call.operands[number], callers[:-1], depth + 1)
    if op == "get-tuple-element" and ops and ops[0].opcode == "call":
        call = ops[0]
        callee = call.called.get("to_apply")
        root = callee.root if callee is not None else None
        index = int(expr.attr("index", -1))
        if root is None or root.opcode != "tuple" or not 0 <= index < len(root.operands):
            return None
        return _counter_of(root.operands[index], callers + (call,), depth + 1)
    if op in ("add", "subtract") and len(ops) == 2:
        for x, y, sign in ((ops[0], ops[1], 1), (ops[1], ops[0], 1 if op == "add" else None)):
            if sign is None:
                continue
            c = _constant_scalar(y)
            if c is None:
                continue
            inner = _counter_of(x, callers, depth + 1)
            if inner is not None:
                return inner[0], inner[1] + (c if op == "add" else -c)
    return None


def _constant_scalar(op: Instruction) -> int | None:
    values = constant_values(op)
    return int(values.flat[0]) if values is not None and values.size == 1 and not op.shape.dims else None


def counters(instr: Instruction) -> dict[int, tuple[int, int]]:
    """Loop-state elements of a ``while`` that start at a constant and that the body sets to
    themselves plus a constant: element -> (start, step). At the start of iteration n such an
    element holds ``start + n * step`` exactly (the values stay in their type's range where the
    folding uses them; ``_fits`` refuses anything else)."""
    body, init = instr.called.get("body"), instr.operands[0] if instr.operands else None
    if body is None or body.root is None or body.root.opcode != "tuple" or init is None or init.opcode != "tuple":
        return {}
    found = {}
    for e, update in enumerate(body.root.operands):
        if e >= len(init.operands):
            break
        start = _constant_scalar(init.operands[e])
        if start is None or update.shape.is_tuple or update.shape.dims:
            continue
        step = _counter_of(update, ())
        if step is not None and step[0] == e:
            found[e] = (start, step[1])
    return found
