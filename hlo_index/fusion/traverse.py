"""Graph walks over one computation: reachable instructions in post-order, their users, and the
computation a fusion or call runs."""

from __future__ import annotations

from typing import TypeAlias

from ..hlo.model import Computation, Instruction, Shape
from ..hlo.shapes import compatible

Users: TypeAlias = dict[int, list[tuple[Instruction, int]]]  # id(instr) -> [(user, operand position)]


def post_order(comp: Computation) -> list[Instruction]:
    """Instructions reachable from the root, every operand before its users.

    XLA prints every operand before its users (the linker rejects other text: ``operands_above``),
    so the text order filtered to what the root reaches is such an order; a computation made
    otherwise gets it checked, and a depth-first post-order (iterative: deep graphs) where it fails."""
    order = _text_order(comp)
    return order if order is not None else _depth_first_post_order(comp)


def _text_order(comp: Computation) -> list[Instruction] | None:
    root = comp.root
    if root is None:
        return []
    instructions = comp.instructions
    if comp.operands_above:
        # from the last instruction up, each one's users come before it: it is live if one is
        live = {id(root)}
        order = []
        for instr in reversed(instructions):
            if id(instr) in live:
                order.append(instr)
                live.update(map(id, instr.operands))
        order.reverse()
        return order
    position = {id(instr): k for k, instr in enumerate(instructions)}
    if position.get(id(root)) is None:
        return None
    live = {id(root)}
    order = []
    for k in range(len(instructions) - 1, -1, -1):
        instr = instructions[k]
        if id(instr) in live:
            order.append(instr)
            for o in instr.operands:
                if position.get(id(o), k) >= k:  # used before defined (or not in this computation)
                    return None
                live.add(id(o))
    order.reverse()
    return order


def _depth_first_post_order(comp: Computation) -> list[Instruction]:
    root = comp.root
    if root is None:
        return []
    seen: set[int] = {id(root)}
    order: list[Instruction] = []
    stack: list[tuple[Instruction, int]] = [(root, 0)]
    while stack:
        instr, next_operand = stack[-1]
        if next_operand < len(instr.operands):
            stack[-1] = (instr, next_operand + 1)
            operand = instr.operands[next_operand]
            if id(operand) not in seen:
                seen.add(id(operand))
                stack.append((operand, 0))
        else:
            stack.pop()
            order.append(instr)
    return order


def users_of(order: list[Instruction]) -> Users:
    """id(instr) -> [(user, operand position)], users in post-order, positions ascending."""
    users: dict[int, list[tuple[Instruction, int]]] = {}
    for instr in order:
        for position, operand in enumerate(instr.operands):
            users.setdefault(id(operand), []).append((instr, position))
    return users


def tuple_element(instr: Instruction) -> int:
    """Which tuple element of its operand an instruction reads (get-tuple-element), else 0."""
    if instr.opcode == "get-tuple-element":
        return int(instr.attr("index", 0))
    return 0


def callee_of(instr: Instruction) -> Computation | None:
    """The computation a fusion or call runs (None for other ops)."""
    if instr.opcode == "fusion":
        return instr.called.get("calls")
    if instr.opcode == "call":
        return instr.called.get("to_apply") or instr.called.get("calls")
    return None


def callee_misfit(instr: Instruction, callee: Computation) -> str | None:
    """Why ``callee`` cannot stand for the fusion or call ``instr`` (XLA's verifier rejects either):
    its root does not give ``instr``'s shape, or it takes another number of parameters than
    ``instr`` has operands; None when it fits."""
    root = callee.root
    if root is not None and not compatible(root.shape, instr.shape):
        return f"%{callee.name} gives {root.shape}, %{instr.name} is {instr.shape}"
    if len(callee.parameters) != len(instr.operand_names):
        taken, given = len(callee.parameters), len(instr.operand_names)
        return f"%{callee.name} takes {taken} parameters, %{instr.name} has {given} operands"
    for number, param in sorted(callee.parameters.items()):
        if number < len(instr.operands) and not _same_dims(param.shape, instr.operands[number].shape):
            operand = instr.operands[number]
            return (
                f"%{callee.name}'s parameter {number} is {param.shape}, "
                f"%{instr.name}'s operand {number} (%{operand.name}) is {operand.shape}"
            )
    return None


def _same_dims(a: Shape, b: Shape) -> bool:
    """Whether ``a`` and ``b`` index alike: the same dims, tuple element by tuple element."""
    ta, tb = a.tuple_shapes, b.tuple_shapes
    if ta is not None or tb is not None:
        return ta is not None and tb is not None and len(ta) == len(tb) and all(map(_same_dims, ta, tb))
    return bool(a.dims == b.dims)
