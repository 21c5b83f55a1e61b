"""The kernel a producer and a consumer would make together: one fusion whose computation holds
the producer's instructions feeding the consumer's (XLA's producer-consumer fusion analysis),
built as a small module of its own so that every analysis of a fusion applies to it.

``fuse(producer, consumer, multi_output)``: the fusion instruction (in a new module) whose
operands stand for the distinct operands of both, producer's first; with ``multi_output`` the
root is a tuple of the consumer's results and the producer's (the producer's value stays an
output, as in XLA's multi-output fusion).
"""

from __future__ import annotations

from dataclasses import replace

from ...hlo.model import Instruction, Module
from ...hlo.printer import format_attribute, format_computation, format_instruction
from ...hlo.shape_format import format_shape
from .hlo_cost import post_order


class _Body:
    """Instructions of the fused computation being written, with fresh names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = 0

    def fresh(self, base: str) -> str:
        self.count += 1
        return f"{base}.k{self.count}"

    def emit(self, instr: Instruction, name: str, operands: list[str]) -> None:
        written = replace(
            instr,
            name=name,
            operand_names=tuple(operands),
            is_root=False,
            metadata=None,
            attrs={k: v for k, v in instr.attrs.items() if k != "control-predecessors"},
        )
        self.lines.append("  " + format_instruction(written))


def _inline(body: _Body, instr: Instruction, args: list[str]) -> str:
    """Write ``instr`` applied to the values named ``args`` (a fusion: its computation inlined);
    returns the name of the result."""
    if instr.opcode != "fusion":
        name = body.fresh(instr.name)
        body.emit(instr, name, args)
        return name
    comp = instr.fused_computation
    assert comp is not None and comp.root is not None, instr.name
    names: dict[int, str] = {}
    for fused in post_order(comp):
        if fused.opcode == "parameter":
            assert fused.parameter_number is not None, fused.name
            names[id(fused)] = args[fused.parameter_number]
            continue
        name = body.fresh(fused.name)
        body.emit(fused, name, [names[id(o)] for o in fused.operands])
        names[id(fused)] = name
    return names[id(comp.root)]


def _called_texts(instrs) -> list[str]:
    out: list[str] = []
    seen: set[int] = set()

    def add(comp) -> None:
        if id(comp) in seen:
            return
        seen.add(id(comp))
        for i in comp.instructions:
            for c in i.called.values():
                add(c)
        text = format_computation(replace(comp, is_entry=False) if comp.is_entry else comp)
        out.append(text)

    for instr in instrs:
        for role, c in instr.called.items():
            if instr.opcode == "fusion" and role == "calls":
                for inner in c.instructions:
                    for cc in inner.called.values():
                        add(cc)
            else:
                add(c)
    return out


def fused_operands(producer: Instruction, consumer: Instruction) -> list[Instruction]:
    """The distinct operands of the fused kernel: the producer's, then the consumer's other ones."""
    out: dict[int, Instruction] = {}
    for o in producer.operands:
        out.setdefault(id(o), o)
    for o in consumer.operands:
        if o is producer or _element_of(o, producer) is not None:
            continue
        out.setdefault(id(o), o)
    return list(out.values())


def entry_root(module: Module) -> Instruction:
    """The ENTRY root of a module this file wrote (it has both)."""
    entry = module.entry
    assert entry is not None and entry.root is not None
    return entry.root


def _element_of(value: Instruction, producer: Instruction) -> int | None:
    if value.opcode == "get-tuple-element" and value.operands and value.operands[0] is producer:
        return int(value.attrs.get("index", 0))
    return None


def fuse(producer: Instruction, consumer: Instruction, multi_output: bool = False) -> Instruction:
    """The fusion instruction of ``producer`` fused into ``consumer`` (a new module)."""
    from ...hlo import parse_module_text

    operands = fused_operands(producer, consumer)
    body = _Body()
    params = []
    for k, o in enumerate(operands):
        params.append(f"  %param_{k}.k = {format_shape(o.shape)} parameter({k})")
    arg = {id(o): f"param_{k}.k" for k, o in enumerate(operands)}
    produced = _inline(body, producer, [arg[id(o)] for o in producer.operands])
    elements: dict[int, str] = {}
    if producer.shape.tuple_shapes is not None:
        for j, s in enumerate(producer.shape.tuple_shapes):
            name = body.fresh("gte")
            body.lines.append(f"  %{name} = {format_shape(s)} get-tuple-element(%{produced}), index={j}")
            elements[j] = name
    consumer_args = []
    for o in consumer.operands:
        if o is producer:
            consumer_args.append(produced)
        elif (index := _element_of(o, producer)) is not None:
            consumer_args.append(elements[index])
        else:
            consumer_args.append(arg[id(o)])
    result = _inline(body, consumer, consumer_args)
    lines = params + body.lines
    if multi_output:
        shape_text = f"({format_shape(consumer.shape)}, {format_shape(producer.shape)})"
        lines.append(f"  ROOT %fused_root.k = {shape_text} tuple(%{result}, %{produced})")
    else:
        shape_text = format_shape(consumer.shape)
        at = next(k for k, line in enumerate(lines) if line.startswith(f"  %{result} = "))
        lines[at] = "  ROOT " + lines[at][2:]
    fused = "%fused_kernel.k {\n" + "\n".join(lines) + "\n}"
    kind = (
        consumer.attrs.get("kind", "kLoop")
        if consumer.opcode == "fusion"
        else ("kInput" if consumer.opcode in ("reduce", "transpose", "scatter") else "kLoop")
    )
    entry_params = "\n".join(f"  %p{k} = {format_shape(o.shape)} parameter({k})" for k, o in enumerate(operands))
    args = ", ".join(f"%p{k}" for k in range(len(operands)))
    config = consumer.attrs.get("backend_config") if consumer.opcode == "fusion" else None
    extra = f", {format_attribute('backend_config', config)}" if config else ""
    entry = (
        f"ENTRY %fused_entry.k {{\n{entry_params}\n  ROOT %{consumer.name} = {shape_text} "
        f"fusion({args}), kind={kind}, calls=%fused_kernel.k{extra}\n}}"
    )
    module = producer.computation.module if producer.computation is not None else None
    text = "\n\n".join(
        [f"HloModule fused_{module.name if module else 'm'}"] + _called_texts([producer, consumer]) + [fused, entry]
    )
    return entry_root(parse_module_text(text))
