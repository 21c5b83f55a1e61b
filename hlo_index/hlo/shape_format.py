"""Shape and layout text in XLA's canonical form (``f32[4,8]{1,0:T(8,128)}``). The model's
``Shape.__str__`` prints through it, so it imports the model's types for annotations only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Layout, Shape


def format_shape(shape: Shape) -> str:
    if shape.tuple_shapes is not None:
        return "(" + ", ".join(format_shape(s) for s in shape.tuple_shapes) + ")"
    if shape.element_type == "unknown":
        return ""
    dims = ",".join(
        "?" if dyn and d < 0 else (f"<={d}" if dyn else str(d))
        for d, dyn in zip(shape.dims, shape.dynamic or (False,) * len(shape.dims))
    )
    text = f"{shape.element_type}[{dims}]"
    if shape.layout is not None and (shape.layout.minor_to_major or _has_suffix(shape.layout)):
        text += format_layout(shape.layout)  # an empty "{}" is not a layout to XLA's parser
    return f"b({text})" if shape.buffer else text


def _has_suffix(layout: Layout) -> bool:
    return bool(
        layout.tiles or layout.raw_suffixes or layout.element_size_bits is not None or layout.memory_space is not None
    )


def format_layout(layout: Layout) -> str:
    suffix = ""
    if layout.tiles:
        suffix += "T" + "".join(
            "(" + ",".join("*" if d == t.COMBINED else str(d) for d in t.dims) + ")" for t in layout.tiles
        )
    suffix += layout.raw_suffixes
    if layout.element_size_bits is not None:
        suffix += f"E({layout.element_size_bits})"
    if layout.memory_space is not None:
        suffix += f"S({layout.memory_space})"
    m2m = ",".join(str(d) for d in layout.minor_to_major)
    return "{" + m2m + (":" + suffix if suffix else "") + "}"
