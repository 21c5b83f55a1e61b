"""Graph walks over one computation: reachable instructions in post-order, and their users."""
from __future__ import annotations

from ..hlo.model import Computation, Instruction


def post_order(comp: Computation) -> list[Instruction]:
    """Instructions reachable from the root, every operand before its users (iterative: deep graphs)."""
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


def users_of(order: list[Instruction]) -> dict[int, list[tuple[Instruction, int]]]:
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
