"""Reference read sets of conditional (and the walk through a called computation it needs).

conditional: the predicate / branch index is a scalar read by every output element; operand
k >= 1 is branch k-1's parameter. With a runtime predicate any branch may run, so the read set is
the union over the branches; a ``constant`` predicate runs one branch (an index out of range runs
the last). A branch is evaluated by walking it backward from the output element with each op's
reference read set (written here again: the reference shares nothing with the composition code).
"""
from __future__ import annotations

import re
from typing import Optional

from ..hlo.model import Computation, Instruction
from . import operand_element_read, read_set, reads

MAX_ELEMENTS = 50_000


def _order(comp: Computation) -> list[Instruction]:
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


def _callee(instr: Instruction) -> Optional[Computation]:
    if instr.opcode == "fusion":
        return instr.called.get("calls")
    if instr.opcode == "call":
        return instr.called.get("to_apply") or instr.called.get("calls")
    return None


def computation_reads(comp: Computation, output_index: int, point: tuple) -> dict[tuple[int, int], set]:
    """(parameter number, tuple element) -> the elements output ``point`` of ``comp`` reads."""
    need: dict[tuple[int, int], set] = {(id(comp.root), output_index): {tuple(point)}}
    found: dict[tuple[int, int], set] = {}
    for instr in reversed(_order(comp)):
        for out in range(max(1, instr.shape.num_outputs)):
            points = need.pop((id(instr), out), None)
            if not points:
                continue
            if len(points) > MAX_ELEMENTS:
                raise ValueError(f"more than {MAX_ELEMENTS} elements of '{instr.name}' are read")
            if instr.opcode == "parameter":
                found.setdefault((instr.parameter_number, out), set()).update(points)
                continue
            callee = _callee(instr)
            for p in points:
                if callee is not None:
                    for (param, element), got in computation_reads(callee, out, p).items():
                        need.setdefault((id(instr.operands[param]), element), set()).update(got)
                    continue
                for j, operand in enumerate(instr.operands):
                    for element, got in element_reads(instr, out, p, j).items():
                        if got:
                            need.setdefault((id(operand), element), set()).update(got)
    return found


def element_reads(instr: Instruction, out: int, point: tuple, operand: int) -> dict[int, set]:
    """Per tuple element of operand ``operand``: what output ``point`` reads of it."""
    if instr.opcode == "conditional":
        return _conditional_reads(instr, out, point, operand)
    return {operand_element_read(instr, out): read_set(instr, out, point, operand)}


def _constant_scalar(op: Instruction) -> Optional[int]:
    if op.opcode != "constant" or op.literal is None:
        return None
    words = re.findall(r"-?\d+|true|false", op.literal)
    if len(words) != 1:
        return None
    return 1 if words[0] == "true" else 0 if words[0] == "false" else int(words[0])


def _branch_list(instr: Instruction) -> list:
    if "true_computation" in instr.attrs:
        return [instr.called.get("true_computation"), instr.called.get("false_computation")]
    return [instr.called.get(f"branch_computations.{k}") for k in range(len(instr.operands) - 1)]


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
def conditional_reads(instr: Instruction, output_index: int, out_point: tuple, operand_index: int,
                      runtime_values: Optional[dict]) -> set:
    if instr.operands[operand_index].shape.is_tuple:
        raise ValueError("conditional: a tuple-shaped operand's elements are read separately (element_reads)")
    per_element = _conditional_reads(instr, output_index, out_point, operand_index)
    return next(iter(per_element.values()), set())
