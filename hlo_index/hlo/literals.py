"""Constant literal text: checked as XLA's parser checks it (``ParseDenseLiteral`` and
``SetValueInLiteral`` in ``hlo_parser.cc``: the nesting matches the shape, each value fits the
element type, NaN payloads fit the type's mantissa), and read into typed values
(``literal_values``, what ``Instruction.literal_values()`` returns). Both walk one tokenizer, so
the rules, the analyses and the reference never read literal text themselves.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .model import Shape

_TOKEN = re.compile(  # /*i0=0*/ index comments, as XLA prints big literals, are skipped
    r"(?:\s|/\*.*?\*/)*(?:(?P<open>\{)|(?P<close>\})|(?P<comma>,)|(?P<dots>\.\.\.)"
    r"|(?P<complex>\(\s*[^()]*\))"
    r"|(?P<nan>-?nan(?:\(0x[0-9a-fA-F]+\))?)|(?P<inf>-?inf)|(?P<bool>true|false)"
    r"|(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?))"
)

# (exponent bits, mantissa bits, has infinity, NaN payload bits) of the floating-point types
_FLOATS = {
    "f16": (5, 10, True, 10),
    "bf16": (8, 7, True, 7),
    "f32": (8, 23, True, 23),
    "f64": (11, 52, True, 52),
    "f8e5m2": (5, 2, True, 2),
    "f8e4m3": (4, 3, True, 3),
    "f8e3m4": (3, 4, True, 4),
    "f8e4m3fn": (4, 3, False, 0),
    "f8e4m3b11fnuz": (4, 3, False, 0),
    "f8e4m3fnuz": (4, 3, False, 0),
    "f8e5m2fnuz": (5, 2, False, 0),
    "f8e8m0fnu": (8, 0, False, 0),
    "f4e2m1fn": (2, 1, False, 0),
    "f6e2m3fn": (2, 3, False, 0),
    "f6e3m2fn": (3, 2, False, 0),
}
# largest finite values where the generic formula does not give them
_MAX_FINITE = {
    "f8e4m3fn": 448.0,
    "f8e4m3b11fnuz": 30.0,
    "f8e4m3fnuz": 240.0,
    "f8e5m2fnuz": 57344.0,
    "f8e8m0fnu": 2.0**127,
    "f4e2m1fn": 6.0,
    "f6e2m3fn": 7.5,
    "f6e3m2fn": 28.0,
}
_COMPONENT = {"c64": "f32", "c128": "f64"}


class LiteralError(ValueError):
    """A literal XLA's parser rejects; the message is XLA's wording."""


def _max_finite(element: str) -> float:
    if element in _MAX_FINITE:
        return _MAX_FINITE[element]
    e, m, _, _ = _FLOATS[element]
    bias = (1 << (e - 1)) - 1
    return (2.0 - 2.0**-m) * 2.0**bias


def _rounds_to_infinity(element: str, value: float) -> bool:
    """True when ``value`` is beyond what rounding to ``element`` keeps finite (XLA checks the
    value after the cast, so values just above the largest finite one that round down pass)."""
    if element == "f64":
        return math.isinf(value)
    largest = _max_finite(element)
    _, m, has_inf, _ = _FLOATS[element]
    half_ulp = 2.0 ** (math.floor(math.log2(largest)) - m - 1) if m else largest / 2
    limit = largest + half_ulp
    # a tie rounds to even, which past the largest finite value (odd mantissa) is infinity
    return abs(value) >= limit if has_inf else abs(value) > largest


def _check_float(element: str, text: str) -> None:
    value = float(text)
    if math.isinf(value) and "inf" not in text:
        raise LiteralError(f"Constant is out of range for double (+/-1.79769e+308) and so is unparsable: {text}")
    if not math.isfinite(value):  # inf and nan are never out of range
        return
    if _rounds_to_infinity(element, value):
        largest = _max_finite(element)
        raise LiteralError(
            f"value {text} is out of range for literal's primitive type {element.upper()} "
            f"namely [{-largest:g}, {largest:g}]."
        )


def _check_int(element: str, text: str) -> None:
    try:
        value = int(text)
    except ValueError:
        raise LiteralError(f"expects integer for primitive type: {element.upper()}") from None
    if element == "pred":
        return
    bits = int(re.sub(r"\D", "", element))
    lo, hi = (0, (1 << bits) - 1) if element.startswith("u") else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if not -(1 << 63) <= value < (1 << 64):
        raise LiteralError(f"value {text} does not fit in 64 bits")
    if element.startswith("u"):
        value %= 1 << 64  # XLA compares as uint64: -1 is 2^64-1, fine for u64 only
    if value < lo or value > hi:
        raise LiteralError(
            f"value {text} is out of range for literal's primitive type {element.upper()} namely [{lo}, {hi}]."
        )


def _check_nan(element: str, text: str, shape: Shape) -> None:
    m = re.search(r"\(0x([0-9a-fA-F]+)\)", text)
    if m is None:
        return
    payload = int(m.group(1), 16)
    bits = _FLOATS.get(element, (0, 0, False, 0))[3]
    if bits == 0:
        raise LiteralError(
            f"tries to set NaN payload 0x{payload:x} to a literal in shape {shape}, but "
            f"{element} does not support payloads"
        )
    if payload > (1 << bits) - 1:
        raise LiteralError(
            f"tries to set NaN payload 0x{payload:x} to a literal in shape {shape}, but the "
            f"NaN payload is out of range (0x{(1 << bits) - 1:x})"
        )


# a complex literal's part as XLA's lexer reads it: a minus sign at most, digits first (not "+1" or ".5"), inf or nan
_FLOAT_TEXT = re.compile(r"-?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan(?:\(0x[0-9a-fA-F]+\))?)")


def _check_value(shape: Shape, kind: str, text: str) -> None:
    element = shape.element_type
    if element in _COMPONENT:
        if kind != "complex":
            raise LiteralError(f"expects a complex value (re, im) for {element}")
        parts = [p.strip() for p in text.strip()[1:-1].split(",")]
        if len(parts) != 2:
            raise LiteralError(f"expects (real, imaginary) for {element}, got {text}")
        for name, part in zip(("real", "imaginary"), parts):
            if _FLOAT_TEXT.fullmatch(part) is None:  # XLA's message
                raise LiteralError(f"expect floating-point value for {name} part of complex number")
            try:
                _check_float(_COMPONENT[element], part)
            except LiteralError:
                raise LiteralError(
                    f"{name} part {part} is out of range for literal's primitive type {element.upper()}"
                ) from None
        return
    if kind == "complex":
        raise LiteralError("unexpected '(' in literal. Parens are only valid for complex literals")
    if element in _FLOATS:
        if kind == "nan":
            _check_nan(element, text, shape)
        elif kind == "number":
            _check_float(element, text)
        return
    if kind == "bool":
        return
    if kind == "number":
        if element != "pred" and re.search(r"[.eE]", text):
            raise LiteralError(f"expects integer for primitive type: {element.upper()}")
        _check_int(element, text)


def check_literal(shape: Shape, text: str) -> str | None:
    """XLA's complaint about ``text`` as a literal of array ``shape``, or None when it reads it."""
    if shape.element_type in ("token", "opaque"):
        # no value to write: XLA's parser fails a check (shape.IsArray(); jaxlib 0.10.2 aborts)
        return f"a constant holds an array, not a {shape.element_type}"
    if shape.is_tuple or shape.element_type == "unknown" or not text:
        return None
    try:
        _walk(shape, text)
    except LiteralError as e:
        return str(e)
    return None


def _walk(shape: Shape, text: str) -> None:
    rank = shape.rank
    dims = shape.dims
    seen = [0] * rank
    level = 0
    pos = 0
    n = len(text)
    values = 0
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                raise LiteralError(f"unexpected text {text[pos : pos + 20]!r} in a literal")
            break
        pos = m.end()
        kind: str = m.lastgroup  # type: ignore[assignment]  # every alternative is a named group
        if kind == "open":
            level += 1
            if level > rank:
                raise LiteralError(f"expects nested array in rank {rank}, but sees larger")
            if level > 1:
                seen[level - 2] += 1
                if seen[level - 2] > dims[level - 2]:
                    raise LiteralError(
                        f"expects {dims[level - 2]} elements in the "
                        f"[{','.join(str(s - 1) for s in seen[: level - 2])}]th element, but sees more"
                    )
        elif kind == "close":
            if level == 0:
                raise LiteralError("unexpected '}' token")
            level -= 1
            if seen[level] != dims[level]:
                raise LiteralError(
                    f"expects {dims[level]} elements in the "
                    f"[{','.join(str(s - 1) for s in seen[:level])}]th element, but sees {seen[level]}"
                )
            seen[level] = 0
        elif kind == "comma":
            continue
        elif kind == "dots":
            if level != 1:
                raise LiteralError(f"expects `...` at nest level 1, but sees it at nest level {level}")
            seen[0] = dims[0]
        else:
            if rank > 0 and level == 0 and not values:
                pass  # XLA reads a lone value as element 0 (it notes the nesting, then goes on)
            elif rank > 0:
                if level != rank:
                    raise LiteralError(f"expects nested array in rank {rank}, but sees {level}")
                seen[rank - 1] += 1
                if seen[rank - 1] > dims[rank - 1]:
                    raise LiteralError(f"expects {dims[rank - 1]} elements on the minor-most dimension, but sees more")
            elif values:
                raise LiteralError("a scalar literal holds one value")
            values += 1
            _check_value(shape, kind, m.group(kind))
    if level:
        raise LiteralError("unclosed '{' in a literal")


def literal_values(shape: Shape, text: str | None) -> np.ndarray | None:
    """The values of an array literal, shaped like ``shape``: bool for pred, int64 for the
    integer types (uint64 for u64), float64 for the floating-point types, complex128 for the
    complex ones. None for a literal it cannot read completely: a tuple, token or opaque shape,
    ``...`` elisions, a count of values that does not fill the shape, text it does not tokenize."""
    import numpy as np

    if text is None or shape.is_tuple or shape.element_type not in _DTYPE_NAMES:
        return None
    words: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip():
                return None
            break
        pos = m.end()
        kind: str = m.lastgroup  # type: ignore[assignment]  # every alternative is a named group
        if kind == "dots":
            return None
        if kind not in ("open", "close", "comma"):
            words.append((kind, m.group(kind)))
    if len(words) != shape.num_elements:
        return None
    dtype = getattr(np, _DTYPE_NAMES[shape.element_type])
    try:
        values = [_value(dtype, kind, word) for kind, word in words]
        return np.asarray(values, dtype=dtype).reshape(shape.dims)
    except (ValueError, OverflowError):
        return None


def _value(dtype: type, kind: str, word: str) -> bool | complex | float | int:
    import numpy as np

    if kind == "bool":
        return word == "true"
    if dtype is np.complex128:
        if kind != "complex":
            raise ValueError(word)
        real, imaginary = (float(part) for part in word.strip()[1:-1].split(","))
        return complex(real, imaginary)
    if kind == "complex":
        raise ValueError(word)
    if dtype is np.float64:
        return float(word.split("(", maxsplit=1)[0])  # a NaN payload is not kept
    if kind != "number" or any(c in word for c in ".eE"):
        raise ValueError(word)
    return int(word)


# numpy's type per element type, by name: numpy itself is imported when a literal is first read
_DTYPE_NAMES: dict[str, str] = {"pred": "bool_", "u64": "uint64", "c64": "complex128", "c128": "complex128"}
_DTYPE_NAMES.update({f"{k}{bits}": "int64" for k in "su" for bits in (1, 2, 4, 8, 16, 32, 64) if f"{k}{bits}" != "u64"})
_DTYPE_NAMES.update(dict.fromkeys(_FLOATS, "float64"))
