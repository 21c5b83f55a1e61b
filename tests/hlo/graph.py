"""A comparable summary of a parsed module: what "the same graph" means in the round-trip tests."""

from __future__ import annotations


def graph_signature(module) -> tuple:
    comps = []
    for comp in module.computations:
        instrs = tuple(
            (
                i.name,
                i.opcode,
                str(i.shape),
                i.shape,
                i.operand_names,
                tuple(o.name for o in i.operands),
                tuple(sorted((k, repr(v)) for k, v in i.attrs.items())),
                i.metadata,
                i.is_root,
                i.parameter_number,
                i.literal,
                tuple(sorted((k, c.name) for k, c in i.called.items())),
            )
            for i in comp.instructions
        )
        comps.append(
            (
                comp.name,
                comp.is_entry,
                comp.execution_thread,
                comp.root.name if comp.root else None,
                tuple(comp.parameters),
                instrs,
            )
        )
    return (module.name, module.entry.name if module.entry else None, tuple(comps))
