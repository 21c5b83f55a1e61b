"""Reference read sets of conditional (and the walk through a called computation it needs).

conditional: the predicate / branch index is a scalar read by every output element; operand
k >= 1 is branch k-1's parameter. With a runtime predicate any branch may run, so the read set is
the union over the branches; a ``constant`` predicate runs one branch (an index out of range runs
the last). A branch is evaluated by walking it backward from the output element with each op's
reference read set (written here again: the reference shares nothing with the composition code).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..context import current
from ..hlo.model import Computation, Instruction
from . import element_read_sets, read_set, reads, reads_elements

MAX_ELEMENTS = 50_000


def _order(comp: Computation) -> list[Instruction]:
    assert comp.root is not None  # a linked computation has a root
    seen, order, stack = set(), [], [(comp.root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((o, False) for o in reversed(node.operands) if id(o) not in seen)
    return order


def _callee(instr: Instruction) -> Computation | None:
    if instr.opcode == "fusion":
        return instr.called.get("calls")
    if instr.opcode == "call":
        return instr.called.get("to_apply") or instr.called.get("calls")
    return None


def computation_reads(
    comp: Computation, output_index: int, point: tuple, scalars: dict | None = None
) -> dict[tuple[int, int], set]:
    return computation_reads_of(comp, output_index, {tuple(point)}, scalars)


def computation_reads_of(
    comp: Computation, output_index: int, points: set, scalars: dict | None = None, params: dict | None = None
) -> dict[tuple[int, int], set]:
    """(parameter number, tuple element) -> the elements output ``point`` of ``comp`` reads.

    ``scalars``: known values of scalar integer elements of a tuple parameter (a loop's counter at
    this iteration); ``params``: known values of scalar parameters (a callee's, passed such a
    value); offsets computed from them are used exactly, other offsets are taken as 0."""
    need: dict[tuple[int, int], set] = {(id(comp.root), output_index): set(points)}
    found: dict[tuple[int, int], set] = {}
    offsets: dict = {}  # id(op) -> the scalar operand values it needs (fixed within this walk)
    for instr in reversed(_order(comp)):
        for out in range(max(1, instr.shape.num_outputs)):
            wanted = need.pop((id(instr), out), None)
            if not wanted:
                continue
            if len(wanted) > MAX_ELEMENTS:
                raise ValueError(f"more than {MAX_ELEMENTS} elements of '{instr.name}' are read")
            if instr.opcode == "parameter":
                number: int = instr.parameter_number  # type: ignore[assignment]  # a parameter has its number
                found.setdefault((number, out), set()).update(wanted)
                continue
            callee = _callee(instr)
            if callee is not None:  # all the points at once: one walk of the callee
                inner = _known_operands(instr, scalars, params)
                for (param, element), got in computation_reads_of(callee, out, wanted, None, inner).items():
                    need.setdefault((id(instr.operands[param]), element), set()).update(got)
                continue
            for p in wanted:
                for j, operand in enumerate(instr.operands):
                    for element, got in _reads_with_offsets(instr, out, p, j, scalars, params, offsets).items():
                        if got:
                            need.setdefault((id(operand), element), set()).update(got)
    return found


def _known_operands(instr: Instruction, scalars: dict | None, params: dict | None) -> dict[int, int]:
    memo: dict = {}
    values = {}
    for j, o in enumerate(instr.operands):
        v = _scalar_value(o, scalars or {}, memo, params)
        if v is not None:
            values[j] = v
    return values


def _reads_with_offsets(
    instr: Instruction,
    out: int,
    point: tuple,
    operand: int,
    scalars,
    params: dict | None = None,
    offsets: dict | None = None,
) -> dict[int, set]:
    offsets = {} if offsets is None else offsets
    known = offsets.get(id(instr))
    if known is None:
        try:
            return element_reads(instr, out, point, operand)
        except ValueError as exc:
            if "runtime value" not in str(exc):
                raise
        memo: dict = {}
        values = {}
        for j, o in enumerate(instr.operands):
            if not o.shape.is_tuple and o.shape.rank == 0 and o.shape.element_type[:1] in ("s", "u"):
                v = _scalar_value(o, scalars or {}, memo, params)
                values[j] = np.asarray(0 if v is None else v, dtype=np.int64)
        known = offsets[id(instr)] = (instr, values)
    return {0: read_set(instr, out, point, operand, known[1])}


def element_reads(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    """Per tuple element of operand ``operand``: what output ``point`` reads of it."""
    return element_read_sets(instr, out, point, operand)


def _constant_scalar(op: Instruction) -> int | None:
    values = op.literal_values()
    if values is None or values.size != 1 or values.dtype.kind not in "biu":
        return None
    return int(values.flat[0])


def _branch_list(instr: Instruction) -> list:
    if "true_computation" in instr.attrs:
        return [instr.called.get("true_computation"), instr.called.get("false_computation")]
    return [instr.called.get(f"branch_computations.{k}") for k in range(len(instr.operands) - 1)]


@reads_elements("conditional")
def _conditional_reads(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    if operand == 0:
        return {0: {()}}
    comps = _branch_list(instr)
    selector = _constant_scalar(instr.operands[0])
    if selector is not None:
        if instr.operands[0].shape.element_type == "pred":
            runs = 0 if selector else 1
        else:
            runs = selector if 0 <= selector < len(comps) else len(comps) - 1
        if runs != operand - 1:
            return {}
    comp = comps[operand - 1]
    return {element: got for (param, element), got in computation_reads(comp, out, point).items() if param == 0}


@reads("conditional")
def conditional_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    if instr.operands[operand_index].shape.is_tuple:
        raise ValueError("conditional: a tuple-shaped operand's elements are read separately (element_reads)")
    per_element = _conditional_reads(instr, output_index, out_point, operand_index)
    return next(iter(per_element.values()), set())


# ---- while -------------------------------------------------------------------------------------

MAX_TRIPS = 1 << 16
_CMP = {
    "LT": lambda a, b: a < b,
    "LE": lambda a, b: a <= b,
    "GT": lambda a, b: a > b,
    "GE": lambda a, b: a >= b,
    "EQ": lambda a, b: a == b,
    "NE": lambda a, b: a != b,
}
_ARITH: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "maximum": max,
    "minimum": min,
    "and": lambda a, b: a and b,
    "or": lambda a, b: a or b,
}


def _scalar_value(instr: Instruction, state: dict, memo: dict, params: dict | None = None):
    """The value of a scalar integer / predicate instruction given the known scalar elements of
    the (single, tuple) parameter, or ``params`` (parameter number -> value); None when it depends
    on anything else. A tuple element of a ``call`` is evaluated in the callee."""
    if id(instr) in memo:
        return memo[id(instr)]
    op, value = instr.opcode, None
    args = instr.operands
    if instr.shape.is_tuple or instr.shape.rank != 0:
        value = None
    elif op == "constant":
        value = _constant_scalar(instr)
    elif op == "parameter":
        value = (params or {}).get(instr.parameter_number)
    elif op == "get-tuple-element" and args and args[0].opcode == "parameter":
        value = state.get(int(instr.attr("index", 0)))
    elif op == "get-tuple-element" and args and args[0].opcode == "call":
        callee = args[0].called.get("to_apply")
        index = int(instr.attr("index", 0))
        if (
            callee is not None
            and callee.root is not None
            and callee.root.opcode == "tuple"
            and index < len(callee.root.operands)
        ):
            inner = {
                j: v for j, o in enumerate(args[0].operands) if (v := _scalar_value(o, state, memo, params)) is not None
            }
            value = _scalar_value(callee.root.operands[index], {}, {}, inner)
    elif op in _ARITH and len(args) == 2:
        a, b = (_scalar_value(x, state, memo, params) for x in args)
        value = None if a is None or b is None else int(_ARITH[op](a, b))
    elif op == "compare" and len(args) == 2:
        a, b = (_scalar_value(x, state, memo, params) for x in args)
        fn = _CMP.get(instr.attr("direction", ""))
        value = None if a is None or b is None or fn is None else int(fn(a, b))
    elif op == "not" and args:
        a = _scalar_value(args[0], state, memo, params)
        value = None if a is None else int(not a)
    elif op in ("convert", "copy") and args:
        value = _scalar_value(args[0], state, memo, params)
    elif op == "negate" and args:
        a = _scalar_value(args[0], state, memo, params)
        value = None if a is None else -a
    elif op == "select" and len(args) == 3:
        p, a, b = (_scalar_value(x, state, memo, params) for x in args)
        value = None if p is None else (a if p else b)
    elif op == "clamp" and len(args) == 3:
        lo, a, hi = (_scalar_value(x, state, memo, params) for x in args)
        value = None if lo is None or a is None or hi is None else min(max(a, lo), hi)
    memo[id(instr)] = value
    return value


def scalar_states(instr: Instruction) -> tuple[int | None, list[dict]]:
    """(trip count, the known scalar elements of the state before each iteration), by running
    the loop on its scalar integer elements; trip count None when the condition depends on
    anything else (XLA's known_trip_count is taken as given)."""
    from ..hlo.backend_config import backend_config

    body, cond, init = instr.called.get("body"), instr.called.get("condition"), instr.operands[0]
    assert body is not None and body.root is not None and cond is not None and cond.root is not None  # a linked while
    state = {e: _scalar_value(o, {}, {}) for e, o in enumerate(init.operands)} if init.opcode == "tuple" else {}
    states = [state]
    n = (backend_config(instr) or {}).get("known_trip_count", {})
    fixed = int(n["n"]) if isinstance(n, dict) and str(n.get("n", "")).isdigit() else None
    for trips in range(MAX_TRIPS):
        go = _scalar_value(cond.root, state, {}) if fixed is None else int(trips < fixed)
        if go is None:
            return None, states
        if not go:
            return trips, states
        memo: dict = {}
        ops = body.root.operands if body.root.opcode == "tuple" else ()
        state = {e: _scalar_value(o, state, memo) for e, o in enumerate(ops)}
        states.append(state)
    return None, states


def trip_count(instr: Instruction) -> int | None:
    return scalar_states(instr)[0]


def _back(comp: Computation, sets: dict[int, set], scalars: dict | None = None) -> dict[int, set]:
    """One iteration backward: elements of the state before ``comp`` that ``sets`` (per element of
    its result) read; ``scalars``: the known scalar elements of that state."""
    before: dict[int, set] = {}
    root = comp.root
    assert root is not None  # a linked computation has a root
    # the walk is the oracle, but its cost is bounded like any enumeration: a loop whose reads
    # spread over whole arrays is pulled back through every iteration point by point
    limit = current().budgets.verify_points_per_value
    if sum(len(points) for points in sets.values()) > limit:
        raise ValueError(
            f"budget verify_points_per_value={limit}: a loop iteration pulls back more than {limit} elements"
        )
    for e, points in sets.items():
        source = root.operands[e] if root.opcode == "tuple" and e < len(root.operands) else None
        if source is not None and source.opcode == "get-tuple-element" and source.operands[0].opcode == "parameter":
            # the element is passed through unchanged (gte of the parameter): read as is
            before.setdefault(int(source.attr("index", 0)), set()).update(points)
            continue
        for (param, element), got in computation_reads_of(comp, e, points, scalars).items():
            if param == 0:
                before.setdefault(element, set()).update(got)
    return before


def _union_into(acc: dict[int, set], new: dict[int, set]) -> bool:
    grew = False
    for e, s in new.items():
        known = acc.setdefault(e, set())
        if not s <= known:
            known |= s
            grew = True
    return grew


def _iterate_back(
    body: Computation, start: dict[int, set], trips: int | None, states: list, every: bool
) -> dict[int, set]:
    """``start`` (in the state after ``trips`` iterations) pulled back to the initial state
    (``every``: the union over pulling back 0..trips iterations, i.e. ``start`` read in every
    state; trips None: over every count, until nothing new appears, offsets taken as 0)."""
    if trips is None:
        current, total = start, {e: set(s) for e, s in start.items()}
        for _ in range(MAX_TRIPS):
            current = _back(body, current)
            if not _union_into(total, current):
                return total
        raise ValueError("loop reads do not settle")
    if every:  # start is read in state n for every n: pull each back n iterations
        total = {}
        for n in range(trips + 1):
            current = start
            for k in range(n - 1, -1, -1):
                current = _back(body, current, states[k])
            _union_into(total, current)
        return total
    current = start
    for k in range(trips - 1, -1, -1):
        current = _back(body, current, states[k])
    return current


@reads_elements("while")
def _while_reads(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    body, cond = instr.called.get("body"), instr.called.get("condition")
    assert body is not None and cond is not None  # a linked while
    trips, states = scalar_states(instr)
    reads = _iterate_back(body, {out: {tuple(point)}}, trips, states, every=False)
    condition = {e: got for (param, e), got in computation_reads(cond, 0, ()).items() if param == 0}
    _union_into(reads, _iterate_back(body, condition, trips, states, every=True))
    return {e: s for e, s in reads.items() if s}


@reads("while")
def while_reads(
    instr: Instruction, output_index: int, out_point: tuple, operand_index: int, runtime_values: dict | None
) -> set:
    raise ValueError("while reads several elements of its tuple operand (element_reads)")
