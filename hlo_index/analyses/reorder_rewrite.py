"""The rewrite of a legal reorder: the few instructions that replace the pair (always), and the
whole module with them in place (only on request: it is as large as the input)."""

from __future__ import annotations

import dataclasses

from ..hlo.model import Computation, Instruction, Module


def _users(comp: Computation, instr: Instruction) -> list[Instruction]:
    return [i for i in comp.instructions if instr.name in i.operand_names]


def module_names(module: Module) -> frozenset:
    return frozenset(i.name for c in module.computations for i in c.instructions)


def _replacement(
    module: Module,
    comp: Computation,
    first: Instruction,
    second: Instruction,
    swapped: tuple,
    names: frozenset | None = None,
) -> tuple[list[Instruction], bool]:
    """The instructions that replace ``second`` (new constants, the swapped pair; the pair's
    result keeps its name and ROOT mark, so users and the ENTRY are unchanged) and whether
    ``first`` goes away (it has no other user). ``names``: the module's instruction names, when
    the caller already has them (one set per module, not one per chain)."""
    taken = names if names is not None else module_names(module)
    added: set[str] = set()
    renamed: dict[str, str] = {}

    def fresh(name: str) -> str:
        while name in taken or name in added:
            name += "_"
        added.add(name)
        return name

    extras = []
    for c in swapped[2] if len(swapped) > 2 else ():
        renamed[c.name] = fresh(c.name)
        extras.append(dataclasses.replace(c, name=renamed[c.name], computation=comp))
    name = fresh(swapped[0].name)
    rename = lambda names: tuple(renamed.get(n, n) for n in names)  # noqa: E731
    new_first = dataclasses.replace(
        swapped[0], name=name, computation=comp, operand_names=rename(swapped[0].operand_names)
    )
    new_second = dataclasses.replace(
        swapped[1],
        operand_names=(name,) + rename(swapped[1].operand_names[1:]),
        operands=(new_first,) + tuple(swapped[1].operands[1:]),
        is_root=second.is_root,
        metadata=second.metadata,
        computation=comp,
        shape=second.shape,
    )
    drop_first = [u for u in _users(comp, first) if u is not second] == [] and not first.is_root
    return extras + [new_first, new_second], drop_first


def rewrite_instructions_text(
    module: Module,
    comp: Computation,
    first: Instruction,
    second: Instruction,
    swapped: tuple,
    names: frozenset | None = None,
) -> str:
    """HLO text of the instructions replacing the pair, one per line."""
    from ..hlo.printer import format_instruction

    new, _ = _replacement(module, comp, first, second, swapped, names)
    return "\n".join(format_instruction(i) for i in new)


def rewrite_module_text(
    module: Module, comp: Computation, first: Instruction, second: Instruction, swapped: tuple
) -> str:
    """The whole module with ``first -> second`` replaced by the swapped pair (``swapped`` is
    ``(new first, new second[, new constant offsets])``)."""
    from ..hlo.printer import format_module

    new, drop_first = _replacement(module, comp, first, second, swapped)
    new_second = new[-1]
    instructions = []
    for instr in comp.instructions:
        if instr is first and drop_first:
            continue  # a dropped dynamic slice's offsets stay: the swapped one may use them
        if instr is second:
            instructions.extend(new)
        else:
            instructions.append(instr)
    by_name = {i.name: i for i in instructions}
    new_comp = dataclasses.replace(
        comp, instructions=instructions, by_name=by_name, root=new_second if second.is_root else comp.root
    )
    computations = [new_comp if c is comp else c for c in module.computations]
    new_module = dataclasses.replace(
        module,
        computations=computations,
        entry=new_comp if module.entry is comp else module.entry,
        by_name={c.name: c for c in computations},
    )
    return format_module(new_module)
