"""Raw attribute / operand text → the typed values documented on ``Instruction``.

Each converter takes the raw value text and returns a typed value or raises ValueError with a
one-line reason. Unknown attribute names keep their raw text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..context import current, register_table
from .collectives import int_list_list
from .model import ConvDimLabels, Metadata, PadDim, SliceDim, SourceLocation, WindowDim

# ---- small pieces --------------------------------------------------------------------------

_NAME_LIST = re.compile(r"\{\s*(%?[\w.\-]+(?:\s*,\s*%?[\w.\-]+)*)?\s*\}\Z")
# ASCII names, as the lexer reads them; "%x#1" names output 1 of a tuple-shaped %x (XLA's printed
# form of a get-tuple-element, desugared when the computation is linked)
PERCENT_NAME = re.compile(r"%([\w.\-]+(?:#\d+)?)", re.ASCII)
_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_ESCAPE = re.compile(r"\\(.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


def unquote(text: str) -> str:
    """``"a\\"b"`` → ``a"b``; text without quotes is returned unchanged."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1]
        if "\\" in text:
            text = _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text)
    return text


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def int_list(value: str) -> tuple[int, ...]:
    """``{1,0}`` → (1, 0); ``{}`` → ()."""
    inner = value.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise ValueError(f"expected {{...}} list of integers, got {value!r}")
    inner = inner[1:-1].strip()
    return tuple(int(x) for x in inner.split(",")) if inner else ()


def to_int(value: str) -> int:
    return int(value)


def to_bool(value: str) -> bool:
    if value in ("true", "1"):
        return True
    if value in ("false", "0"):
        return False
    raise ValueError(f"expected true or false, got {value!r}")


_SLICE_RANGES = re.compile(r"\{\s*(?:\[[^\]]*\](?:\s*,\s*\[[^\]]*\])*)?\s*\}")


def slice_dims(value: str) -> tuple[SliceDim, ...]:
    """``{[0:4:1], [2:8]}``."""
    if not _SLICE_RANGES.fullmatch(value.strip()):
        raise ValueError(f"expects {{[start:limit(:stride)], ...}}, got {value!r}")
    out = []
    for part in re.findall(r"\[([^\]]*)\]", value):
        nums = [int(x) for x in part.split(":")]
        if len(nums) not in (2, 3):
            raise ValueError(f"malformed slice bound [{part}]")
        out.append(SliceDim(*nums))
    return tuple(out)


def pad_dims(value: str) -> tuple[PadDim, ...]:
    """``0_1x2_3_1`` (low_high[_interior] per dimension, ``x``-separated)."""
    if not value:
        return ()
    out = []
    for part in value.split("x"):
        nums = [int(x) for x in part.split("_")]
        if len(nums) not in (2, 3):
            raise ValueError(f"malformed padding {part!r}")
        out.append(PadDim(*nums))
    return tuple(out)


_WINDOW_FIELDS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")


def window_dims(value: str) -> tuple[WindowDim, ...]:
    """``{size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}``."""
    inner = value.strip()[1:-1]
    fields: dict[str, list[str]] = {}
    for item in inner.split():
        key, equals, val = item.partition("=")
        if not equals or key not in _WINDOW_FIELDS:
            # XLA's parser: "expects sub-attributes in window" ({{0,1}} once read as no window)
            raise ValueError(f"unexpected window field {item!r}: expects {', '.join(_WINDOW_FIELDS)}")
        fields[key] = val.split("x")
    size = [int(x) for x in fields.get("size", [])]
    rank = len(size)

    def ints(key: str, default: int) -> list[int]:
        vals = fields.get(key)
        if vals is None:
            return [default] * rank
        if len(vals) != rank:
            raise ValueError(f"window {key} has {len(vals)} entries for {rank} dimensions")
        return [int(v) for v in vals]

    stride, lhs, rhs, rev = ints("stride", 1), ints("lhs_dilate", 1), ints("rhs_dilate", 1), ints("rhs_reversal", 0)
    pads = fields.get("pad")
    if pads is None:
        lows = highs = [0] * rank
    else:
        if len(pads) != rank:
            raise ValueError(f"window pad has {len(pads)} entries for {rank} dimensions")
        pairs = [p.split("_") for p in pads]
        if any(len(p) != 2 for p in pairs):
            raise ValueError("expects padding_low and padding_high separated by '_'")
        lows, highs = [int(p[0]) for p in pairs], [int(p[1]) for p in pairs]
    return tuple(WindowDim(size[i], stride[i], lows[i], highs[i], rhs[i], lhs[i], bool(rev[i])) for i in range(rank))


def conv_dim_labels(value: str) -> ConvDimLabels:
    """``b01f_01io->b01f``: where batch, feature and each spatial dimension sit."""
    m = re.fullmatch(r"([\w?]+)_([\w?]+)->([\w?]+)", value)  # '?' marks a dimension of no role
    if m is None:
        raise ValueError(f"malformed dim_labels {value!r}")
    lhs, rhs, out = m.groups()

    def spatial(labels: str) -> tuple[int, ...]:
        digits = sorted((c, i) for i, c in enumerate(labels) if c.isdigit())
        return tuple(i for _, i in digits)

    try:
        labels = ConvDimLabels(
            lhs.index("b"),
            lhs.index("f"),
            spatial(lhs),
            rhs.index("i"),
            rhs.index("o"),
            spatial(rhs),
            out.index("b"),
            out.index("f"),
            spatial(out),
        )
    except ValueError:
        raise ValueError(f"dim_labels {value!r} lacks a batch/feature/input/output label") from None
    counts = (len(labels.input_spatial), len(labels.kernel_spatial), len(labels.output_spatial))
    if len(set(counts)) > 1:  # XLA's parser's message
        raise ValueError(
            "input, kernel, and output must have same number of spatial dimensions, but got "
            f"{counts[0]}, {counts[1]}, {counts[2]}, respectively."
        )
    return labels


# strings as "unrolled loops" (a run of plain characters, then (escape, run)*): the same matches as a
# per-character alternation, which Python's re runs ~5x slower on a dump's long op_name strings
_METADATA_FIELD = re.compile(r"""([\w]+)=\s*("[^"\\]*(?:\\.[^"\\]*)*"|'[^'\\]*(?:\\.[^'\\]*)*'|[^\s},]+)""")
METADATA_MEMO = _METADATA = register_table("hlo.attributes.metadata")  # text -> Metadata, per analysis context


def metadata(value: str) -> Metadata:
    ctx = current()
    cache: dict[str, Metadata] = ctx.tables[_METADATA]
    md = cache.get(value)
    if md is None:
        fields = dict(_METADATA_FIELD.findall(value))
        md = Metadata(
            op_type=unquote(fields.get("op_type", "")),
            op_name=unquote(fields.get("op_name", "")),
            source_file=unquote(fields.get("source_file", "")),
            source_line=int(fields.get("source_line", 0)),
            stack_frame_id=int(fields.get("stack_frame_id", 0)),
        )
        if len(cache) < ctx.budgets.parse_memo_entries:
            cache[value] = md
    return md


def instruction_names(value: str) -> tuple[str, ...]:
    """``{%a, %b}`` → ("a", "b") (``control-predecessors``)."""
    m = _NAME_LIST.match(value.strip())
    if m is None:
        raise ValueError(f"expected {{%name, ...}}, got {value.strip()[:40]!r}")
    return () if m.group(1) is None else tuple(n.strip().lstrip("%") for n in m.group(1).split(","))


_BRACKETS = {"}": "{", "]": "[", ")": "("}
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]()]')


def balanced(value: str) -> str:
    """``value`` unchanged if it is one ``{...}`` with properly nested brackets (strings skipped)."""
    if not value.startswith("{"):
        raise ValueError(f"expected {{...}}, got {value[:40]!r}")
    stack: list[str] = []
    for m in _STRING_OR_BRACKET.finditer(value):
        c = m.group()
        if c in "{[(":
            stack.append(c)
        elif c in _BRACKETS:
            if not stack or stack.pop() != _BRACKETS[c]:
                raise ValueError(f"unbalanced {c!r} at offset {m.start()}")
            if not stack and m.end() != len(value.rstrip()):
                raise ValueError(f"text after the closing '}}' at offset {m.end()}")
    if stack:
        raise ValueError(f"unclosed {stack[-1]!r}")
    return value


# ---- attribute table ---------------------------------------------------------------------

INT_LIST_ATTRS = frozenset(
    {
        "dimensions",
        "slice_sizes",
        "dynamic_slice_sizes",
        "lhs_batch_dims",
        "lhs_contracting_dims",
        "rhs_batch_dims",
        "rhs_contracting_dims",
        "offset_dims",
        "collapsed_slice_dims",
        "start_index_map",
        "operand_batching_dims",
        "start_indices_batching_dims",
        "update_window_dims",
        "inserted_window_dims",
        "scatter_dims_to_operand_dims",
        "input_batching_dims",
        "scatter_indices_batching_dims",
        "fft_length",
        "lhs_ragged_dims",
        "rhs_group_dims",
    }
)
INT_ATTRS = frozenset(
    {
        "index",
        "iota_dimension",
        "index_vector_dim",
        "feature_group_count",
        "batch_group_count",
        "k",
        "mantissa_bits",
        "exponent_bits",
        "channel_id",
    }
)
BOOL_ATTRS = frozenset({"is_stable", "largest", "indices_are_sorted", "unique_indices"})
STRING_ATTRS = frozenset(
    {
        "direction",
        "kind",
        "custom_call_target",
        "type",
        "fft_type",
        "api_version",
        "execution_thread",
        "algorithm",
        "distribution",
    }
)
# Attributes naming computations; the value is one name, or (for the plural ones) a tuple of names.
SINGLE_CALLEE_ROLES = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
)
MULTI_CALLEE_ROLES = ("branch_computations", "called_computations")
CALLEE_ROLES = frozenset(SINGLE_CALLEE_ROLES + MULTI_CALLEE_ROLES)

_CONVERTERS: dict[str, Callable[[str], Any]] = {}
_CONVERTERS.update(dict.fromkeys(INT_LIST_ATTRS, int_list))
_CONVERTERS.update(dict.fromkeys(INT_ATTRS, to_int))
_CONVERTERS.update(dict.fromkeys(BOOL_ATTRS, to_bool))
_CONVERTERS.update(dict.fromkeys(STRING_ATTRS, unquote))
_CONVERTERS.update(
    {
        "slice": slice_dims,
        "window": window_dims,
        "dim_labels": conv_dim_labels,
        "control-predecessors": instruction_names,
        "sharding": balanced,
    }
)

_TYPED = register_table("hlo.attributes.typed")  # (name, text) -> typed value, per analysis context


def typed_attribute(name: str, value: str, opcode: str) -> Any:
    """The typed value of attribute ``name`` (raw text if we do not interpret it)."""
    if name == "padding" and opcode == "pad":
        return pad_dims(value)
    if name == "slice_sizes" and opcode.startswith("collective-permute"):
        return int_list_list(value)  # one list of sizes per operand pair
    convert = _CONVERTERS.get(name)
    if convert is None:
        return value
    key = (name, value)
    ctx = current()
    cache = ctx.tables[_TYPED]
    typed = cache.get(key)
    if typed is None:
        typed = convert(value)
        if len(cache) < ctx.budgets.parse_memo_entries:
            cache[key] = typed
    return typed


def callee_names(value: str) -> tuple[str, ...] | None:
    """``%c`` → ("c",); ``{%a, %b}`` → ("a", "b"); None when the value is an inline computation."""
    value = value.strip()
    if not value.startswith("{"):
        return (value.removeprefix("%"),)
    m = _NAME_LIST.match(value)
    if m is None:
        return None
    if m.group(1) is None:
        return ()
    return tuple(n.strip().lstrip("%") for n in m.group(1).split(","))


# ---- operands ------------------------------------------------------------------------------


def operand_names(inner: str) -> tuple[str, ...]:
    """Names in an operand list: ``%a, f32[2]{0} %b, /*index=2*/c`` → ("a", "b", "c")."""
    if "%" in inner:
        names = PERCENT_NAME.findall(inner)
        # every operand named with its % (XLA prints one form): as many names as commas + 1. A list
        # with shapes, whose commas say nothing, is read again where its written shapes are checked
        # (``parser._check_written_operand_shapes``) unless its text is the one its names give.
        if "[" in inner or len(names) == inner.count(",") + 1:
            return tuple(names)
    inner = _COMMENT.sub("", inner).strip()
    if not inner:
        return ()
    names = []
    for part in split_top_level(inner):
        piece = part.split()
        if not piece:
            raise ValueError("empty operand")
        names.append(piece[-1].removeprefix("%"))
    return tuple(names)


def split_top_level(text: str, opening: str = "([{", closing: str = ")]}", strings: bool = False) -> list[str]:
    """``text`` cut at the commas outside any bracket (empty pieces kept, for callers to judge);
    with ``strings``, also outside double-quoted strings (``\\"`` escapes a quote)."""
    parts, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if quoted:
            quoted = c != '"' or text[i - 1] == "\\"
        elif c in opening:
            depth += 1
        elif c in closing:
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        elif c == '"' and strings:
            quoted = True
    parts.append(text[start:])
    return parts


# ---- stack-frame tables ---------------------------------------------------------------------

_TABLE_ROW = re.compile(r"^[ \t]*(\d+)[ \t]+(.*?)[ \t]*$", re.MULTILINE)
_KV = re.compile(r"(\w+)=(\d+)")


def stack_frames(tables: dict[str, str]) -> dict[int, SourceLocation]:
    """Resolve each StackFrames id to its innermost frame's location (file, line, function)."""

    def rows(name: str) -> dict[int, str]:
        return {int(i): v for i, v in _TABLE_ROW.findall(tables.get(name, "").partition("\n")[2])}

    files = {k: unquote(v) for k, v in rows("FileNames").items()}
    functions = {k: unquote(v) for k, v in rows("FunctionNames").items()}
    locations = {k: {a: int(b) for a, b in _KV.findall(v)} for k, v in rows("FileLocations").items()}
    out: dict[int, SourceLocation] = {}
    for frame_id, text in rows("StackFrames").items():
        loc = locations.get({a: int(b) for a, b in _KV.findall(text)}.get("file_location_id", -1))
        if loc is not None:
            out[frame_id] = SourceLocation(
                files.get(loc.get("file_name_id", -1), ""),
                loc.get("line", 0),
                functions.get(loc.get("function_name_id", -1), ""),
            )
    return out
