"""``--verify``: check a target's printed maps against the numpy reference, element by element.

For seeded sample elements of every output, the exact set of parameter elements read is computed
by walking the computation backward with each op's reference read-set function
(``hlo_index.reference``, which shares no code with the maps). The maps must give a superset, and
the same set unless the maps are a documented over-approximation: runtime variables (the union
over every feasible offset) or a dynamic-update-slice on the path (the maps ignore which elements
the update overwrote).

Input-to-output maps are checked from both sides on samples: every (operand element, output
element) pair the reference walk finds for a sampled output element must be given by the
operand's input-to-output maps, and every output element those maps give for a sampled operand
element (a few of them) must read that operand element according to the reference walk.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .affine import IndexingMap
from .api import SelectedTarget
from .fusion import callee_of, input_to_output, output_to_input
from .fusion.traverse import post_order
from .reference import operand_element_read
from .hlo.model import Computation, Instruction, Module

# Ops whose output-to-input maps cover more than the elements actually read (documented).
OVER_APPROXIMATING_OPCODES = frozenset({"dynamic-update-slice"})
MAX_POINTS_PER_VALUE = 20_000       # beyond this the walk is too costly; the target is skipped
MAX_RANGE_COMBINATIONS = 1 << 18    # range-variable points a map may enumerate per element
PAIRS_PER_ELEMENT = 4               # input-to-output: operand / output elements checked per sample


class Skip(Exception):
    """Verification of this target is not possible (no reference for an op, too large)."""


@dataclass
class VerifyOutcome:
    errors: list[str] = field(default_factory=list)     # mismatches, each naming the element
    notes: list[str] = field(default_factory=list)      # skipped targets and why
    checked_points: int = 0
    checked_input_points: int = 0                       # operand elements checked input-to-output


_RUNTIME_VALUES: dict[int, tuple[Instruction, dict]] = {}


def runtime_values_for(instr: Instruction) -> dict[int, np.ndarray]:
    """Concrete offsets / indices for an op's integer operands, seeded by the op's name.

    Any values will do: maps with runtime variables describe the union over every feasible value,
    so the reference's read set for one choice must be contained in it.
    """
    hit = _RUNTIME_VALUES.get(id(instr))
    if hit is not None and hit[0] is instr:
        return hit[1]
    bound = max((max(o.shape.dims, default=1) for o in instr.operands if not o.shape.is_tuple), default=1)
    rng = np.random.default_rng(sum(instr.name.encode()) + 7919 * len(instr.name))
    values = {j: rng.integers(0, bound + 1, size=o.shape.dims, dtype=np.int64)
              for j, o in enumerate(instr.operands)
              if not o.shape.is_tuple and o.shape.element_type[:1] in ("s", "u") and o.opcode != "constant"}
    _RUNTIME_VALUES[id(instr)] = (instr, values)
    return values


def _read_set(instr: Instruction, out: int, point: tuple, operand: int) -> set:
    from .reference import NoReference, read_set
    try:
        try:
            return read_set(instr, out, point, operand, None)
        except ValueError as exc:
            if "runtime value" not in str(exc):
                raise
            return read_set(instr, out, point, operand, runtime_values_for(instr))
    except NoReference as exc:
        raise Skip(str(exc)) from None
    except Exception as exc:  # the oracle cannot evaluate this configuration (e.g. runtime data)
        raise Skip(f"reference for {instr.opcode} '{instr.name}' failed: {type(exc).__name__}: {exc}") from None


def _element_read_sets(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    """Per tuple element of the operand, the reference's read set (several for conditional / while)."""
    from .reference import ELEMENT_READ_SETS, element_read_sets
    if instr.opcode not in ELEMENT_READ_SETS:
        return {operand_element_read(instr, out): _read_set(instr, out, point, operand)}
    try:
        return element_read_sets(instr, out, point, operand)
    except Exception as exc:  # the oracle cannot evaluate this configuration
        raise Skip(f"reference for {instr.opcode} '{instr.name}' failed: {type(exc).__name__}: {exc}") from None


def backward_read_sets(comp: Computation, output_index: int, point: tuple) -> dict[tuple[int, int], set]:
    """(parameter number, tuple element) -> exact set of its elements read by ``point`` of the output."""
    order = post_order(comp)
    need: dict[tuple[int, int], set] = {(id(comp.root), output_index): {tuple(point)}}
    found: dict[tuple[int, int], set] = {}
    for instr in reversed(order):
        for out in range(instr.shape.num_outputs):
            points = need.pop((id(instr), out), None)
            if not points:
                continue
            if instr.opcode == "parameter":
                found[(instr.parameter_number, out)] = points
                continue
            if len(points) > MAX_POINTS_PER_VALUE:
                raise Skip(f"more than {MAX_POINTS_PER_VALUE} elements of '{instr.name}' are read")
            callee = callee_of(instr)
            for p in points:
                if callee is not None:
                    for (param, element), got in backward_read_sets(callee, out, p).items():
                        need.setdefault((id(instr.operands[param]), element), set()).update(got)
                    continue
                for j, operand in enumerate(instr.operands):
                    for element, got in _element_read_sets(instr, out, p, j).items():
                        if got:
                            need.setdefault((id(operand), element), set()).update(got)
    return found


def _single_op_read_sets(instr: Instruction, output_index: int, point: tuple) -> dict[tuple[int, int], set]:
    out = {}
    for j in range(len(instr.operands)):
        got = _read_set(instr, output_index, point, j)
        if got:
            out[(j, operand_element_read(instr, output_index))] = got
    return out


def runtime_as_range(m: IndexingMap) -> IndexingMap:
    """The same map with its runtime variables turned into trailing range variables: its read set
    at a point is the union over every feasible runtime value."""
    if not m.runtime_vars:
        return m
    from .affine import range_var, runtime_var
    from .affine.expr import replace_variables
    n = len(m.range_vars)
    swap = {runtime_var(i): range_var(n + i) for i in range(len(m.runtime_vars))}
    memo: dict = {}
    return IndexingMap(m.dims, tuple(m.range_vars) + tuple(rv.interval for rv in m.runtime_vars), (),
                       [replace_variables(e, swap.get, memo) for e in m.results],
                       [(replace_variables(e, swap.get, memo), iv) for e, iv in m.constraints])


def predicted_read_set(maps: tuple[IndexingMap, ...], point: tuple) -> set:
    """Union over the maps (and over every feasible runtime value) of the elements they give."""
    total: set = set()
    for m in maps:
        if m.is_undefined:
            raise Skip(f"map unknown: {m.undefined_reason}")
        if m.is_known_empty:
            continue
        m = runtime_as_range(m)
        combinations = 1
        for iv in m.range_vars:
            combinations *= max(iv.size, 1)
        if combinations > MAX_RANGE_COMBINATIONS:
            raise Skip(f"a map has {combinations} range-variable combinations per element")
        total |= m.read_set(tuple(point))
    return total


def _sample_points(dims: tuple[int, ...], count: int, rng: np.random.Generator) -> list[tuple]:
    if any(d == 0 for d in dims):
        return []
    points = {tuple(0 for _ in dims), tuple(d - 1 for d in dims)}
    while len(points) < min(count, int(np.prod(dims, dtype=np.int64)) if dims else 1):
        points.add(tuple(int(rng.integers(0, d)) for d in dims))
    return sorted(points)


def _fmt(point) -> str:
    return "{" + ", ".join(str(i) for i in point) + "}"


def verify_target(selected: SelectedTarget, module: Optional[Module] = None, samples: int = 8,
                  seed: int = 0, input_to_output_too: bool = True) -> VerifyOutcome:
    """Compare the target's output-to-input (and input-to-output) maps with the reference walk on
    sampled elements."""
    outcome = VerifyOutcome()
    target = selected.target
    comp = target if isinstance(target, Computation) else callee_of(target)
    rows = output_to_input(target)
    if comp is not None:
        over = any(i.opcode in OVER_APPROXIMATING_OPCODES for i in post_order(comp))
        shape = comp.root.shape
    else:
        over = target.opcode in OVER_APPROXIMATING_OPCODES
        shape = target.shape
    truth_cache: dict = {}

    def exact(out: int, point: tuple) -> dict:
        key = (out, point)
        if key not in truth_cache:
            truth_cache[key] = (backward_read_sets(comp, out, point) if comp is not None
                                else _single_op_read_sets(target, out, point))
        return truth_cache[key]

    rng = np.random.default_rng(seed)
    sampled: list[tuple[int, tuple]] = []
    try:
        for out in range(shape.num_outputs):
            for point in _sample_points(shape.leaf(out).dims, samples, rng):
                truth_all = exact(out, point)
                sampled.append((out, point))
                outcome.checked_points += 1
                for row in rows:
                    if row.output != out:
                        continue
                    truth = truth_all.get((row.operand, row.operand_element), set())
                    given = predicted_read_set(row.maps, point)
                    missing = sorted(truth - given)
                    if missing:
                        outcome.errors.append(
                            f"{selected.kind} '{target.name}': output {out} element {_fmt(point)} reads "
                            f"operand {row.operand} element {_fmt(missing[0])}, which no map gives"
                            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
                    exempt = over or any(m.runtime_vars for m in row.maps)
                    extra = sorted(given - truth)
                    if extra and not exempt:
                        outcome.errors.append(
                            f"{selected.kind} '{target.name}': the maps say output {out} element {_fmt(point)} "
                            f"reads operand {row.operand} element {_fmt(extra[0])}, which it does not"
                            + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""))
    except Skip as exc:
        outcome.notes.append(f"verification skipped: {exc}")
        return outcome
    if input_to_output_too:
        try:
            _verify_input_to_output(selected, exact, sampled, over, samples, rng, outcome)
        except Skip as exc:
            outcome.notes.append(f"input-to-output verification skipped: {exc}")
    return outcome


def _operand_shapes(target) -> list:
    if isinstance(target, Computation):
        count = 1 + max(target.parameters, default=-1)
        return [target.parameters[n].shape if n in target.parameters else None for n in range(count)]
    return [o.shape for o in target.operands]


def _verify_input_to_output(selected: SelectedTarget, exact, sampled, over: bool, samples: int,
                            rng: np.random.Generator, outcome: VerifyOutcome) -> None:
    target = selected.target
    name = f"{selected.kind} '{target.name}'"
    maps_of = {(row.operand, row.output): row.maps for row in input_to_output(target)}
    shapes = _operand_shapes(target)
    # 1. nothing missing: each pair the reference finds for a sampled output element is in the maps
    for out, point in sampled:
        for (operand, element), read in exact(out, point).items():
            shape = shapes[operand] if operand < len(shapes) else None
            if shape is None or shape.is_tuple or element != 0:
                continue
            read = sorted(read)
            picks = [read[int(k)] for k in rng.choice(len(read), min(PAIRS_PER_ELEMENT, len(read)), replace=False)]
            for x in picks:
                if point not in predicted_read_set(maps_of.get((operand, out), ()), x):
                    outcome.errors.append(
                        f"{name}: operand {operand} element {_fmt(x)} is read by output {out} element "
                        f"{_fmt(point)}, which no input-to-output map gives")
    # 2. nothing extra: outputs the maps give for sampled operand elements really read them
    for operand, shape in enumerate(shapes):
        if shape is None or shape.is_tuple:
            continue
        for x in _sample_points(shape.dims, max(1, samples // 2), rng):
            outcome.checked_input_points += 1
            for (op, out), maps in maps_of.items():
                if op != operand or not maps or over or any(m.runtime_vars for m in maps):
                    continue
                given = sorted(predicted_read_set(maps, x))
                if not given:
                    continue
                for k in rng.choice(len(given), min(PAIRS_PER_ELEMENT, len(given)), replace=False):
                    y = given[int(k)]
                    if x not in exact(out, y).get((operand, 0), set()):
                        outcome.errors.append(
                            f"{name}: the input-to-output maps say operand {operand} element {_fmt(x)} is read "
                            f"by output {out} element {_fmt(y)}, which does not read it")
