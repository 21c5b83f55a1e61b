"""The trip count of a while loop: XLA's ``known_trip_count``, or jax's counter pattern simulated.

jax's counter pattern: an element ``c`` of the loop state initialised by a constant, set to
``c + step`` (a constant step) by the body's root, and compared with a constant bound by the
condition. Its trip count is found by running the comparison (at most
``Budgets.loop_simulated_trips`` times), never by a closed formula that could round wrongly.
"""

from __future__ import annotations

from collections.abc import Callable

from ...context import current
from ...hlo.model import Computation, Instruction
from ...ops.starts import constant_values


def known_trip_count(instr: Instruction) -> int | None:
    """``backend_config={"known_trip_count":{"n":"20"}}`` or jax's counter pattern, else None."""
    from ...hlo.backend_config import backend_config

    cfg = backend_config(instr) or {}
    n = cfg.get("known_trip_count", {})
    if isinstance(n, dict) and str(n.get("n", "")).lstrip("-").isdigit():
        return int(n["n"])
    return _induction_trip_count(instr)


def _scalar_constant(op: Instruction) -> int | None:
    values = constant_values(op)
    return int(values.flat[0]) if values is not None and values.size == 1 else None


def _gte_of_parameter(op: Instruction) -> int | None:
    if op.opcode == "get-tuple-element" and op.operands and op.operands[0].opcode == "parameter":
        return int(op.attr("index", 0))
    return None


_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "LT": lambda a, b: a < b,
    "LE": lambda a, b: a <= b,
    "GT": lambda a, b: a > b,
    "GE": lambda a, b: a >= b,
    "NE": lambda a, b: a != b,
}
_SWAPPED = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "NE": "NE"}


def _induction_trip_count(instr: Instruction) -> int | None:
    found = induction_variable(instr)
    return None if found is None else found[3]


def induction_variable(instr: Instruction) -> tuple[int, int, int, int] | None:
    """(counter element, start, step, trip count) of jax's counter pattern: an element c initialised
    by a constant, ``c + step`` (constant) in the body, and the condition ``compare(c, bound)``
    against a constant. The count is simulated exactly."""
    body, cond = instr.called.get("body"), instr.called.get("condition")
    init = instr.operands[0] if instr.operands else None
    if body is None or cond is None or init is None or init.opcode != "tuple" or cond.root is None:
        return None
    compare = cond.root
    if compare.opcode != "compare" or len(compare.operands) != 2:
        return None
    direction = compare.attr("direction", "")
    a, b = compare.operands
    counter, bound = _gte_of_parameter(a), _scalar_constant(b)
    if counter is None or bound is None:
        counter, bound, direction = _gte_of_parameter(b), _scalar_constant(a), _SWAPPED.get(direction, "")
    if counter is None or bound is None or direction not in _COMPARE:
        return None
    step = _counter_step(body, counter)
    start = _scalar_constant(init.operands[counter]) if counter < len(init.operands) else None
    if step is None or start is None:
        return None
    value, trips, test = start, 0, _COMPARE[direction]
    while test(value, bound):
        value += step
        trips += 1
        if trips > current().budgets.loop_simulated_trips:
            return None
    return counter, start, step, trips


def _counter_step(body: Computation, counter: int) -> int | None:
    root = body.root
    if root is None or root.opcode != "tuple" or counter >= len(root.operands):
        return None
    update = root.operands[counter]
    if update.opcode not in ("add", "subtract") or len(update.operands) != 2:
        return None
    x, y = update.operands
    step = _scalar_constant(y) if _gte_of_parameter(x) == counter else None
    if step is None and update.opcode == "add" and _gte_of_parameter(y) == counter:
        step = _scalar_constant(x)
    if step is None:
        return None
    return -step if update.opcode == "subtract" else step
