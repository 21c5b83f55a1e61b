"""Model → HLO text in a canonical short form (parse → print → parse gives the same graph).

Short form: no stack-frame tables (metadata keeps the resolved source file and line instead), no
``/*index=N*/`` comments, attributes printed from their typed values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .attributes import CALLEE_ROLES, quote
from .model import (
    Computation,
    ConvDimLabels,
    Instruction,
    Metadata,
    Module,
    PadDim,
    SliceDim,
    WindowDim,
)
from .shape_format import format_shape

_QUOTED_ATTRS = frozenset({"custom_call_target", "execution_thread"})
# derived by the parser from other attributes ("type", "replica_groups")
_SYNTHESIZED_ATTRS = frozenset({"comparison_type", "replica_groups_typed"})


def format_attribute(key: str, value: Any) -> str:
    """``key=value`` text for a typed attribute value."""
    if key in CALLEE_ROLES or (key == "control-predecessors" and not isinstance(value, str)):
        if isinstance(value, str):
            return f"{key}=%{value}"
        return f"{key}={{" + ", ".join(f"%{n}" for n in value) + "}"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, str):
        text = quote(value) if key in _QUOTED_ATTRS else value
    elif isinstance(value, ConvDimLabels):
        text = format_dim_labels(value)
    elif isinstance(value, tuple):
        if value and isinstance(value[0], SliceDim):
            text = "{" + ", ".join(f"[{s.start}:{s.limit}:{s.stride}]" for s in value) + "}"
        elif value and isinstance(value[0], PadDim):
            text = "x".join(f"{p.low}_{p.high}_{p.interior}" for p in value)
        elif value and isinstance(value[0], WindowDim):
            text = format_window(value)
        else:
            text = "{" + ",".join(str(v) for v in value) + "}"
    else:
        text = str(value)
    return f"{key}={text}"


def format_window(window: tuple[WindowDim, ...]) -> str:
    parts = ["size=" + "x".join(str(w.size) for w in window)]
    fields: list[tuple[str, Callable[[WindowDim], object], object]] = [
        ("stride", lambda w: w.stride, 1),
        ("pad", lambda w: f"{w.pad_low}_{w.pad_high}", "0_0"),
        ("lhs_dilate", lambda w: w.base_dilation, 1),
        ("rhs_dilate", lambda w: w.window_dilation, 1),
        ("rhs_reversal", lambda w: int(w.reversal), 0),
    ]
    for name, get, default in fields:
        values = [get(w) for w in window]
        if any(v != default for v in values):
            parts.append(name + "=" + "x".join(str(v) for v in values))
    return "{" + " ".join(parts) + "}"


def format_dim_labels(labels: ConvDimLabels) -> str:
    def place(rank: int, named: dict[int, str], spatial: tuple[int, ...]) -> str:
        chars = ["?"] * rank
        for pos, c in named.items():
            chars[pos] = c
        for i, pos in enumerate(spatial):
            chars[pos] = str(i)
        return "".join(chars)

    lhs = place(
        2 + len(labels.input_spatial), {labels.input_batch: "b", labels.input_feature: "f"}, labels.input_spatial
    )
    rhs = place(
        2 + len(labels.kernel_spatial),
        {labels.kernel_input_feature: "i", labels.kernel_output_feature: "o"},
        labels.kernel_spatial,
    )
    out = place(
        2 + len(labels.output_spatial), {labels.output_batch: "b", labels.output_feature: "f"}, labels.output_spatial
    )
    return f"{lhs}_{rhs}->{out}"


def format_metadata(md: Metadata) -> str:
    parts = []
    if md.op_type:
        parts.append(f"op_type={quote(md.op_type)}")
    if md.op_name:
        parts.append(f"op_name={quote(md.op_name)}")
    if md.source_file:
        parts.append(f"source_file={quote(md.source_file)}")
    if md.source_line:
        parts.append(f"source_line={md.source_line}")
    if md.stack_frame_id:
        parts.append(f"stack_frame_id={md.stack_frame_id}")
    return "metadata={" + " ".join(parts) + "}"


def format_instruction(instr: Instruction) -> str:
    if instr.opcode == "parameter":
        inside = str(instr.parameter_number)
    elif instr.opcode == "constant":
        inside = instr.literal or ""
    else:
        inside = ", ".join(f"%{n}" for n in instr.operand_names)
    shape = format_shape(instr.shape)
    text = f"{'ROOT ' if instr.is_root else ''}%{instr.name} = {shape + ' ' if shape else ''}{instr.opcode}({inside})"
    for key, value in instr.attrs.items():
        if key not in _SYNTHESIZED_ATTRS:
            text += ", " + format_attribute(key, value)
    if instr.metadata is not None:
        text += ", " + format_metadata(instr.metadata)
    return text


def format_computation(comp: Computation) -> str:
    params = ", ".join(f"{p.name}: {format_shape(p.shape)}" for p in comp.parameters.values())
    head = f"{'ENTRY ' if comp.is_entry else ''}%{comp.name}"
    root = comp.root if comp.root is not None else (comp.instructions[-1] if comp.instructions else None)
    if root is not None and root.shape.element_type != "unknown":
        head += f" ({params}) -> {format_shape(root.shape)}"
    if comp.execution_thread:
        head += f", execution_thread={quote(comp.execution_thread)}"
    lines = [head + " {"]
    # an output reference "%x#k" prints as XLA writes it: in the operand list, not as an instruction
    lines.extend("  " + format_instruction(instr) for instr in comp.instructions if "#" not in instr.name)
    lines.append("}")
    return "\n".join(lines)


def format_module(module: Module) -> str:
    head = f"HloModule {module.name}"
    for key, value in module.attrs.items():
        head += f", {key}={value}"
    return head + "\n\n" + "\n\n".join(format_computation(c) for c in module.computations) + "\n"
