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
