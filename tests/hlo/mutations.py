"""Small edits of real HLO text, as a slip of a hand or of a generator makes them: a number, a
shape, a list of dimensions, an opcode, an attribute's value or an element type changed; a span
deleted; a line doubled; two operands swapped. Each mutant is text XLA's parser may accept or
reject; either way hlo-index must answer it (maps, or an error at a position), never fail itself.
"""

from __future__ import annotations

import random
import re

NUMBERS = ["0", "1", "-1", "2", "3", "7", "8", "16", "128", "1024", "65536", "2147483647", "4294967296", "-5"]
OPCODES = [
    "add", "multiply", "reshape", "transpose", "broadcast", "slice", "dynamic-slice", "gather", "scatter",
    "reduce", "concatenate", "pad", "bitcast", "copy", "dot", "convolution", "reverse", "iota", "select",
    "compare", "fusion", "custom-call", "reduce-window", "sort", "tuple", "get-tuple-element", "while", "call",
    "conditional", "dynamic-update-slice", "bitcast-convert", "convert", "all-reduce", "all-gather",
]  # fmt: skip
TYPES = ["f32", "bf16", "s32", "pred", "f16", "u8", "s4", "f8e4m3fn", "c64", "token"]
ATTRIBUTES = (
    "slice|dimensions|window|padding|dim_labels|index_vector_dim|offset_dims|collapsed_slice_dims|"
    "start_index_map|dynamic_slice_sizes|lhs_contracting_dims|rhs_contracting_dims|lhs_batch_dims|"
    "rhs_batch_dims|to_apply|calls|iota_dimension|replica_groups"
)
VALUES = ["{}", "{0}", "{1,0}", "{[0:1]}", "{[0:2:1], [1:3]}", "size=2x2", "0_0x1_1", "bf_io->bf", "{0,1,2}"]
VALUES += ["%nonexistent", "{{0,1}}", "7", "-1"]


def texts_of(paths: list[str]) -> list[str]:
    """The texts of ``paths``, read as the tests read a base to mutate (bytes that are not UTF-8 replaced)."""
    texts = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read())
    return texts


_NUMBER = re.compile(r"(?<![A-Za-z_.%])-?\d+")
_OPCODE = re.compile(r"\b(" + "|".join(map(re.escape, OPCODES)) + r")\(")
_DIMS = re.compile(r"\{[\d,]*\}")
_SHAPE_DIMS = re.compile(r"\[[\d,]*\]")
_TYPE = re.compile(r"\b(f32|bf16|s32|pred|f16|u8|s8|f64|u32|s64)\[")
_NAME = re.compile(r"%[\w.\-]+")
_ATTRIBUTE = re.compile(rf"({ATTRIBUTES})=")


def mutate(text: str, rng: random.Random) -> str:
    """``text`` with one edit, drawn from ``rng`` (unchanged where the edit drawn finds no place)."""
    kind = rng.randrange(9)
    if kind == 0:
        return _replace_match(text, _NUMBER, rng, lambda m: rng.choice(NUMBERS))
    if kind == 1:
        at = rng.randrange(len(text))
        return text[:at] + text[at + rng.randint(1, 12) :]
    if kind == 2:
        lines = text.split("\n")
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
        return "\n".join(lines)
    if kind == 3:
        return _replace_match(text, _OPCODE, rng, lambda m: rng.choice(OPCODES) + "(")
    if kind == 4:
        return _replace_match(
            text, _DIMS, rng, lambda m: "{" + ",".join(str(rng.randint(0, 4)) for _ in range(rng.randint(0, 4))) + "}"
        )
    if kind == 5:
        sizes = [0, 1, 2, 3, 4, 8, 16]
        return _replace_match(
            text,
            _SHAPE_DIMS,
            rng,
            lambda m: "[" + ",".join(str(rng.choice(sizes)) for _ in range(rng.randint(0, 4))) + "]",
        )
    if kind == 6:
        return _replace_match(text, _TYPE, rng, lambda m: rng.choice(TYPES) + "[")
    if kind == 7:
        lines = text.split("\n")
        at = rng.randrange(len(lines))
        names = _NAME.findall(lines[at])
        if len(names) >= 2:
            a, b = rng.sample(names, 2)
            lines[at] = lines[at].replace(a, "\0").replace(b, a).replace("\0", b)
        return "\n".join(lines)
    found = list(_ATTRIBUTE.finditer(text))
    if not found:
        return text
    start = rng.choice(found).end()
    end = start
    while end < len(text) and text[end] not in ",\n":
        end += 1
    return text[:start] + rng.choice(VALUES) + text[end:]


def _replace_match(text: str, pattern: re.Pattern[str], rng: random.Random, by) -> str:
    found = list(pattern.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start()] + by(m) + text[m.end() :]
