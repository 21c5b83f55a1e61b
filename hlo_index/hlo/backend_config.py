"""``backend_config`` as a JSON object, read leniently the way XLA dumps and tests write it.

Forms seen in real dumps and XLA's tests: ``backend_config={"gemm_backend_config":{...}}`` (JSON),
``backend_config="{\\"algorithm\\":\\"0\\"}"`` (a quoted, escaped string), and hand-written
``{conv_result_scale:1}`` with bare keys. Anything else gives None: callers treat a missing
configuration as "semantics unknown", never guess.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .attributes import split_top_level
from .model import Instruction

_BARE_KEY = re.compile(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:")


def parse_backend_config(text: Any) -> dict[str, Any] | None:
    """The configuration as a dict, or None when absent or unreadable."""
    if isinstance(text, dict):
        return text
    if not isinstance(text, str):
        return None
    text = text.strip()
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        try:
            text = json.loads(text)
        except ValueError:
            text = text[1:-1].replace('\\"', '"')
    if not text.startswith("{"):
        return None
    for candidate in (text, _BARE_KEY.sub(r'\1"\2":', text)):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        return value if isinstance(value, dict) else None
    return None


def backend_config(instr: Instruction) -> dict[str, Any] | None:
    return parse_backend_config(instr.attrs.get("backend_config"))


def int_list(value: Any) -> tuple[int, ...] | None:
    """``["1", "0"]`` or ``[1, 0]`` (protobuf JSON writes int64 as strings) as ints; None if not a list."""
    if value is None:
        return ()
    if not isinstance(value, list):
        return None
    try:
        return tuple(int(v) for v in value)
    except (TypeError, ValueError):
        return None


def parse_typed_attributes(text: Any) -> dict[str, Any] | None:
    """An MLIR dictionary attribute, as typed-FFI custom-calls write their ``backend_config``:
    ``{attn_heads = 64 : i64, is_training = true, dropout_probability = 0.000000e+00 : f64}``.

    Integers and floats lose their ``: type`` suffix, ``true`` / ``false`` become booleans, quoted
    strings are unquoted; any other value (arrays, nested dictionaries) is kept as its text. None
    when the text is not such a dictionary."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    found: dict[str, Any] = {}
    items = split_top_level(text[1:-1], "([{<", ")]}>", strings=True)
    for item in items[:-1] if not items[-1].strip() else items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not _MLIR_KEY.fullmatch(key):
            return None
        found[key] = _typed_value(value.strip())
    return found


_MLIR_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
_NUMBER = re.compile(r"([-+]?[0-9][0-9.eE+-]*)\s*:\s*[a-z][a-z0-9]*")


def _typed_value(value: str) -> Any:
    if value in ("true", "false"):
        return value == "true"
    number = _NUMBER.fullmatch(value)
    if number:
        literal = number.group(1)
        try:
            return int(literal)
        except ValueError:
            try:
                return float(literal)
            except ValueError:
                return value
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    return value
